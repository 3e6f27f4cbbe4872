//! Data generators: TPC-H (through `tpchgen-arrow`) and the db-benchmark
//! ("h2o") group-by and join tables.
//!
//! Both are deterministic: the same arguments give the same rows.

mod h2o;
mod tpch;

pub use h2o::{h2o_groupby, h2o_join};
pub use tpch::{TPCH_TABLES, tpch_table, write_tpch};

/// SplitMix64: a tiny, fast, deterministic generator (no dependency needed
/// for benchmark data).
#[derive(Debug, Clone)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    /// A generator from a seed.
    pub fn new(seed: u64) -> Self {
        SplitMix64(seed)
    }
    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in `1..=n`.
    pub fn one_to(&mut self, n: u64) -> u64 {
        1 + self.next_u64() % n.max(1)
    }
    /// Uniform in `[0, 1)`.
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}
