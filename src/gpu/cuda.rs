//! The CUDA runtime: driver and NVRTC through `cudarc`, loaded at run time.
//!
//! [`runtime`] checks that the driver and NVRTC libraries can be loaded
//! before making any call (a machine without them gets a reason, never a
//! panic), creates a context on device 0, compiles `kernels.cu` for the
//! device's architecture once, and keeps the module for the process.

use std::sync::{Arc, OnceLock};

use cudarc::driver::sys::CUevent_flags;
use cudarc::driver::{
    CudaContext, CudaFunction, CudaModule, CudaSlice, CudaStream, LaunchArgs, LaunchConfig,
    PushKernelArg,
};

use super::emulate::{EMPTY_KEY, TablePlan, capacity};
use super::raw::{AggKind, JoinPairs, RawAgg, RawGroupBy, RawValues, Values, needs_counts};

const KERNELS: &str = include_str!("kernels.cu");
const BLOCK: u32 = 256;

/// A device with the kernels loaded.
pub struct Gpu {
    stream: Arc<CudaStream>,
    module: Arc<CudaModule>,
    /// Device name and architecture, for reports.
    pub name: String,
    blocks: u32,
}

/// What the cost model needs to know of the device (see `cost.rs`).
#[derive(Debug, Clone, Copy)]
pub struct DeviceRates {
    /// Host↔device bytes per second.
    pub pcie_bytes_per_s: f64,
    /// Group-by rows per second in the kernels.
    pub gpu_rows_per_s: f64,
    /// Seconds a GPU operator costs whatever its size.
    pub gpu_fixed_s: f64,
}

/// Transfer and kernel time of one operator (events, synchronized).
#[derive(Debug, Default, Clone, Copy)]
pub struct Timing {
    /// Host→device and device→host copies, ms.
    pub transfer_ms: f64,
    /// Kernels, ms.
    pub kernel_ms: f64,
}

/// The process's GPU, or why there is none.
pub fn runtime() -> Result<&'static Gpu, String> {
    static GPU: OnceLock<Result<Gpu, String>> = OnceLock::new();
    GPU.get_or_init(|| {
        // Safety: these only try to dlopen the libraries.
        if !unsafe { cudarc::driver::sys::is_culib_present() } {
            return Err("no CUDA driver (libcuda) on this machine".into());
        }
        if !unsafe { cudarc::nvrtc::sys::is_culib_present() } {
            return Err("no NVRTC library on this machine".into());
        }
        std::panic::catch_unwind(init)
            .unwrap_or_else(|_| Err("the CUDA libraries could not be used".into()))
    })
    .as_ref()
    .map_err(|e| e.clone())
}

fn init() -> Result<Gpu, String> {
    let ctx = CudaContext::new(0).map_err(|e| format!("no usable GPU: {e}"))?;
    let (major, minor) = ctx
        .compute_capability()
        .map_err(|e| format!("device query failed: {e}"))?;
    let arch: &'static str = Box::leak(format!("sm_{major}{minor}").into_boxed_str());
    let ptx = compile_kernels(arch)?;
    let module = ctx
        .load_module(ptx)
        .map_err(|e| format!("loading the kernels failed: {e}"))?;
    let sms = ctx
        .attribute(
            cudarc::driver::sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
        )
        .unwrap_or(80);
    Ok(Gpu {
        stream: ctx.default_stream(),
        module,
        name: format!("GPU 0 ({arch}, {sms} SMs)"),
        blocks: (sms as u32) * 8,
    })
}

/// Compiles `kernels.cu` to PTX for `arch` (such as `sm_90`) with NVRTC
/// alone. It needs neither a driver nor a GPU, so a machine without one
/// (CI) can still check that the kernels compile.
pub fn compile_kernels(arch: &'static str) -> Result<cudarc::nvrtc::Ptx, String> {
    // Safety: this only tries to dlopen the library.
    if !unsafe { cudarc::nvrtc::sys::is_culib_present() } {
        return Err("no NVRTC library on this machine".into());
    }
    let opts = cudarc::nvrtc::CompileOptions {
        arch: Some(arch),
        ..Default::default()
    };
    cudarc::nvrtc::compile_ptx_with_opts(KERNELS, opts)
        .map_err(|e| format!("NVRTC failed to compile the kernels: {e}"))
}

/// The group-by kernel for one aggregate: `op` is sum, min or max over
/// lane i64 or f64, or count over lane u64; each has a variant with a
/// shared-memory table per block.
pub fn value_kernel(op: &str, lane: &str, shared: bool) -> String {
    format!("gb_{op}_{lane}{}", if shared { "_shared" } else { "" })
}

type DResult<T> = Result<T, String>;

/// An accumulator type of the kernels: its lane suffix and its bits (for
/// `fill_u64`).
trait Lane: cudarc::driver::DeviceRepr + cudarc::driver::ValidAsZeroBits + Copy {
    const LANE: &'static str;
    const ZERO: Self;
    /// Where a minimum starts (every value is at most this).
    const HIGHEST: Self;
    /// Where a maximum starts.
    const LOWEST: Self;
    fn bits(self) -> u64;
}

impl Lane for i64 {
    const LANE: &'static str = "i64";
    const ZERO: i64 = 0;
    const HIGHEST: i64 = i64::MAX;
    const LOWEST: i64 = i64::MIN;
    fn bits(self) -> u64 {
        self as u64
    }
}

impl Lane for f64 {
    const LANE: &'static str = "f64";
    const ZERO: f64 = 0.0;
    const HIGHEST: f64 = f64::INFINITY;
    const LOWEST: f64 = f64::NEG_INFINITY;
    fn bits(self) -> u64 {
        self.to_bits()
    }
}

impl Lane for u64 {
    const LANE: &'static str = "u64";
    const ZERO: u64 = 0;
    const HIGHEST: u64 = u64::MAX;
    const LOWEST: u64 = 0;
    fn bits(self) -> u64 {
        self
    }
}

/// The state the aggregate kernels of one group-by share: the keys, the
/// global table and its flags.
struct Pass<'a> {
    keys: (&'a CudaSlice<i64>, &'a Option<CudaSlice<u8>>, usize),
    table: &'a mut CudaSlice<i64>,
    mask: u64,
    null_seen: CudaSlice<i32>,
    overflow: CudaSlice<i32>,
    shared: bool,
}

/// An aggregate's per-slot accumulators on the device.
enum SlotValues {
    F64(CudaSlice<f64>),
    I64(CudaSlice<i64>),
    None,
}

/// Pushes a validity bitmap argument, or a null pointer when the column
/// has no nulls (the kernels' `is_valid` treats null as all valid).
fn push_validity<'a>(b: &mut LaunchArgs<'a>, valid: &'a Option<CudaSlice<u8>>) {
    static NULL: u64 = 0;
    match valid {
        Some(v) => b.arg(v),
        None => b.arg(&NULL),
    };
}

fn err(e: impl std::fmt::Display) -> String {
    let s = e.to_string();
    if s.contains("OUT_OF_MEMORY") {
        format!("device out of memory ({s})")
    } else {
        format!("CUDA error: {s}")
    }
}

impl Gpu {
    fn f(&self, name: &str) -> DResult<CudaFunction> {
        self.module.load_function(name).map_err(err)
    }

    fn cfg(&self, n: usize, shared: u32) -> LaunchConfig {
        let needed = n.div_ceil(BLOCK as usize).max(1) as u32;
        LaunchConfig {
            grid_dim: (needed.min(self.blocks), 1, 1),
            block_dim: (BLOCK, 1, 1),
            shared_mem_bytes: shared,
        }
    }

    fn upload<T: cudarc::driver::DeviceRepr>(&self, v: &[T]) -> DResult<CudaSlice<T>> {
        self.stream.clone_htod(v).map_err(err)
    }

    fn upload_validity(&self, v: Option<&[u8]>) -> DResult<Option<CudaSlice<u8>>> {
        v.map(|v| self.upload(v)).transpose()
    }

    /// Times `f` with events around it on the stream.
    fn timed<T>(&self, f: impl FnOnce() -> DResult<T>) -> DResult<(T, f64)> {
        let ctx = self.stream.context();
        let start = ctx
            .new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
            .map_err(err)?;
        let end = ctx
            .new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
            .map_err(err)?;
        start.record(&self.stream).map_err(err)?;
        let out = f()?;
        end.record(&self.stream).map_err(err)?;
        let ms = start.elapsed_ms(&end).map_err(err)?; // synchronizes both events
        Ok((out, ms as f64))
    }

    /// Group-by on one Int64 key with a table as `plan` says: one aggregate
    /// kernel per aggregate (the shared-memory variants when it says so),
    /// `gb_assign`, then `gb_gather` so that only one word per group and
    /// aggregate comes back. [`super::TABLE_FULL`] when the table fills.
    pub fn group_by(
        &self,
        keys: &[i64],
        valid: Option<&[u8]>,
        aggs: &[(AggKind, Values<'_>)],
        plan: TablePlan,
    ) -> DResult<(RawGroupBy, Timing)> {
        let n = keys.len();
        let (cap, shared) = (plan.capacity, plan.shared);
        let mut timing = Timing::default();
        let ((d_keys, d_valid), ms) =
            self.timed(|| Ok((self.upload(keys)?, self.upload_validity(valid)?)))?;
        timing.transfer_ms += ms;
        let (mut table, ms) = self.timed(|| self.filled::<i64>(cap, EMPTY_KEY as u64))?;
        timing.kernel_ms += ms;
        let mut pass = Pass {
            keys: (&d_keys, &d_valid, n),
            table: &mut table,
            mask: cap as u64 - 1,
            null_seen: self.stream.alloc_zeros::<i32>(1).map_err(err)?,
            overflow: self.stream.alloc_zeros::<i32>(1).map_err(err)?,
            shared,
        };
        let mut per_slot = Vec::with_capacity(aggs.len());
        for (kind, values) in aggs {
            per_slot.push(self.aggregate(&mut pass, *kind, values, &mut timing)?);
        }
        if aggs.is_empty() {
            // DISTINCT: a count into scratch space inserts the keys.
            self.aggregate(&mut pass, AggKind::Count, &Values::Rows, &mut timing)?;
        }
        let ((dense, groups, null_group), ms) = self.timed(|| {
            if self.stream.clone_dtoh(&pass.overflow).map_err(err)?[0] != 0 {
                return Err(super::TABLE_FULL.into());
            }
            let mut dense = self.stream.alloc_zeros::<i32>(cap + 1).map_err(err)?;
            let mut groups = self.stream.alloc_zeros::<i32>(1).map_err(err)?;
            let f = self.f("gb_assign")?;
            let mut b = self.stream.launch_builder(&f);
            b.arg(&*pass.table)
                .arg(&pass.mask)
                .arg(&pass.null_seen)
                .arg(&mut dense)
                .arg(&mut groups);
            unsafe { b.launch(self.cfg(cap + 1, 0)) }.map_err(err)?;
            let groups = self.stream.clone_dtoh(&groups).map_err(err)?[0] as usize;
            let null = self.stream.clone_dtoh(&dense.slice(cap..)).map_err(err)?[0];
            Ok((dense, groups, usize::try_from(null).ok()))
        })?;
        timing.kernel_ms += ms;
        let keys = self.gather(&*pass.table, &dense, cap, groups, &mut timing)?;
        let mut raw_aggs = Vec::with_capacity(per_slot.len());
        for (values, counts) in per_slot {
            let values = match values {
                SlotValues::F64(v) => {
                    RawValues::F64(self.gather(&v, &dense, cap + 1, groups, &mut timing)?)
                }
                SlotValues::I64(v) => {
                    RawValues::I64(self.gather(&v, &dense, cap + 1, groups, &mut timing)?)
                }
                SlotValues::None => RawValues::None,
            };
            let counts = match counts {
                Some(c) => Some(self.gather(&c, &dense, cap + 1, groups, &mut timing)?),
                None => None,
            };
            raw_aggs.push(RawAgg { values, counts });
        }
        Ok((
            RawGroupBy {
                keys,
                null_group,
                aggs: raw_aggs,
            },
            timing,
        ))
    }

    /// The device's rates for the cost model, measured once per process:
    /// a group-by sum of 1K rows (the fixed cost of an operator) and one of
    /// 4M rows (the marginal transfer and kernel rates).
    pub fn rates(&self) -> Result<DeviceRates, String> {
        static RATES: OnceLock<Result<DeviceRates, String>> = OnceLock::new();
        RATES
            .get_or_init(|| {
                let run = |rows: usize| {
                    let keys: Vec<i64> = (0..rows as i64).map(|i| (i * 7919) % 1000).collect();
                    let lanes = [(AggKind::Sum, Values::I64(&keys, None))];
                    let plan = TablePlan::for_keys(&keys);
                    self.group_by(&keys, None, &lanes, plan)?; // warm-up
                    Ok::<_, String>(self.group_by(&keys, None, &lanes, plan)?.1)
                };
                let (small, big) = (run(1 << 10)?, run(1 << 22)?);
                let rows = ((1 << 22) - (1 << 10)) as f64;
                let (transfer_s, kernel_s) = (
                    (big.transfer_ms - small.transfer_ms) / 1e3,
                    (big.kernel_ms - small.kernel_ms) / 1e3,
                );
                if transfer_s <= 0.0 || kernel_s <= 0.0 {
                    return Err(format!(
                        "the probe's timings are not usable ({small:?}, {big:?})"
                    ));
                }
                Ok(DeviceRates {
                    pcie_bytes_per_s: 16.0 * rows / transfer_s,
                    gpu_rows_per_s: rows / kernel_s,
                    gpu_fixed_s: (small.transfer_ms + small.kernel_ms) / 1e3,
                })
            })
            .clone()
    }

    /// Device memory bandwidth as a device-to-device copy of `bytes`
    /// achieves it (each byte read once and written once), bytes per second.
    #[cfg(feature = "datagen")]
    pub fn copy_bandwidth(&self, bytes: usize) -> Result<f64, String> {
        let words = bytes / 8;
        let src = self.stream.alloc_zeros::<u64>(words).map_err(err)?;
        let mut dst = self.stream.alloc_zeros::<u64>(words).map_err(err)?;
        self.stream.memcpy_dtod(&src, &mut dst).map_err(err)?; // warm-up
        let ((), ms) = self.timed(|| self.stream.memcpy_dtod(&src, &mut dst).map_err(err))?;
        Ok(2.0 * (words * 8) as f64 / (ms / 1e3))
    }

    /// A device buffer of `len` 64-bit words, each `bits` (`fill_u64`).
    fn filled<T: cudarc::driver::DeviceRepr + cudarc::driver::ValidAsZeroBits>(
        &self,
        len: usize,
        bits: u64,
    ) -> DResult<CudaSlice<T>> {
        let mut out = self.stream.alloc_zeros::<T>(len.max(1)).map_err(err)?;
        if bits != 0 {
            let n = len as i64;
            let f = self.f("fill_u64")?;
            let mut b = self.stream.launch_builder(&f);
            b.arg(&mut out).arg(&n).arg(&bits);
            unsafe { b.launch(self.cfg(len, 0)) }.map_err(err)?;
        }
        Ok(out)
    }

    /// `gb_gather`: the first `slots` per-slot words in group order, on
    /// the host.
    fn gather<T: cudarc::driver::DeviceRepr + cudarc::driver::ValidAsZeroBits>(
        &self,
        per_slot: &CudaSlice<T>,
        dense: &CudaSlice<i32>,
        slots: usize,
        groups: usize,
        timing: &mut Timing,
    ) -> DResult<Vec<T>> {
        let (out, ms) = self.timed(|| {
            let mut out = self.stream.alloc_zeros::<T>(groups.max(1)).map_err(err)?;
            let s = slots as i64;
            let f = self.f("gb_gather")?;
            let mut b = self.stream.launch_builder(&f);
            b.arg(per_slot).arg(dense).arg(&s).arg(&mut out);
            unsafe { b.launch(self.cfg(slots, 0)) }.map_err(err)?;
            Ok(out)
        })?;
        timing.kernel_ms += ms;
        let (mut v, ms) = self.timed(|| self.stream.clone_dtoh(&out).map_err(err))?;
        timing.transfer_ms += ms;
        v.truncate(groups);
        Ok(v)
    }

    /// One aggregate kernel over the keys: per-slot accumulators (none for
    /// counts) and counts (when [`needs_counts`]), left on the device.
    fn aggregate(
        &self,
        pass: &mut Pass<'_>,
        kind: AggKind,
        values: &Values<'_>,
        timing: &mut Timing,
    ) -> DResult<(SlotValues, Option<CudaSlice<u64>>)> {
        let counted = needs_counts(kind, values);
        let op = match kind {
            AggKind::Count => "count",
            AggKind::Sum | AggKind::Mean => "sum",
            AggKind::Min => "min",
            AggKind::Max => "max",
        };
        Ok(match (op, values) {
            ("count", v) | (_, v @ Values::Rows) => {
                let (acc, counts) =
                    self.slot_pass::<u64>(pass, "count", (None, v.validity()), true, timing)?;
                drop(acc);
                (SlotValues::None, counts)
            }
            (_, Values::F64(v, valid)) => {
                let (acc, counts) = self.slot_pass(pass, op, (Some(v), *valid), counted, timing)?;
                (SlotValues::F64(acc), counts)
            }
            (_, Values::I64(v, valid)) => {
                let (acc, counts) = self.slot_pass(pass, op, (Some(v), *valid), counted, timing)?;
                (SlotValues::I64(acc), counts)
            }
        })
    }

    /// Launches `gb_{op}_{lane}` (or `_shared`) over `values` (none for
    /// counts): accumulators (minima start at the lane's highest value,
    /// maxima at its lowest, sums at 0) and, when `counted`, counts, one
    /// per slot (a null pointer tells the kernel not to count).
    fn slot_pass<T: Lane>(
        &self,
        pass: &mut Pass<'_>,
        op: &str,
        (values, valid): (Option<&[T]>, Option<&[u8]>),
        counted: bool,
        timing: &mut Timing,
    ) -> DResult<(CudaSlice<T>, Option<CudaSlice<u64>>)> {
        static NULL: u64 = 0;
        let init = match op {
            "min" => T::HIGHEST,
            "max" => T::LOWEST,
            _ => T::ZERO,
        };
        let ((d_values, d_valid), ms) = self.timed(|| {
            Ok((
                values.map(|v| self.upload(v)).transpose()?,
                self.upload_validity(valid)?,
            ))
        })?;
        timing.transfer_ms += ms;
        let slots = pass.mask as usize + 2;
        let (out, ms) = self.timed(|| {
            // Counts keep no accumulator: one word stands in for it.
            let acc_len = if values.is_some() { slots } else { 1 };
            let mut acc = self.filled::<T>(acc_len, init.bits())?;
            let mut counts = counted
                .then(|| self.stream.alloc_zeros::<u64>(slots))
                .transpose()
                .map_err(err)?;
            let f = self.f(&value_kernel(op, T::LANE, pass.shared))?;
            let (d_keys, d_kvalid, n) = pass.keys;
            let n = n as i64;
            let mut b = self.stream.launch_builder(&f);
            b.arg(d_keys);
            push_validity(&mut b, d_kvalid);
            b.arg(&n).arg(&mut *pass.table).arg(&pass.mask);
            match &d_values {
                Some(v) => b.arg(v),
                None => b.arg(&NULL),
            };
            push_validity(&mut b, &d_valid);
            b.arg(&mut acc);
            match &mut counts {
                Some(c) => b.arg(c),
                None => b.arg(&NULL),
            };
            b.arg(&mut pass.null_seen).arg(&mut pass.overflow);
            if pass.shared {
                b.arg(&init);
            }
            unsafe { b.launch(self.cfg(n as usize, 0)) }.map_err(err)?;
            Ok((acc, counts))
        })?;
        timing.kernel_ms += ms;
        Ok(out)
    }

    /// Hash join on one Int64 key: (build row, probe row) pairs and the
    /// match count of each probe row.
    pub fn join(
        &self,
        build: (&[i64], Option<&[u8]>),
        probe: (&[i64], Option<&[u8]>),
    ) -> DResult<(JoinPairs, Timing)> {
        let mut timing = Timing::default();
        let cap = capacity(build.0.len());
        let mask = cap as u64 - 1;
        let (nb, np) = (build.0.len() as i64, probe.0.len() as i64);
        let ((bk, bv, pk, pv), ms) = self.timed(|| {
            Ok((
                self.upload(build.0)?,
                self.upload_validity(build.1)?,
                self.upload(probe.0)?,
                self.upload_validity(probe.1)?,
            ))
        })?;
        timing.transfer_ms += ms;
        let ((mut table, mut heads), ms) = self.timed(|| {
            Ok((
                self.filled::<i64>(cap, EMPTY_KEY as u64)?,
                self.filled::<i64>(cap, u64::MAX)?,
            ))
        })?;
        timing.kernel_ms += ms;
        let ((next, counts), ms) = self.timed(|| {
            let mut next = self
                .stream
                .alloc_zeros::<i64>(build.0.len().max(1))
                .map_err(err)?;
            let mut overflow = self.stream.alloc_zeros::<i32>(1).map_err(err)?;
            let mut counts = self
                .stream
                .alloc_zeros::<u32>(probe.0.len().max(1))
                .map_err(err)?;
            let f = self.f("join_build")?;
            let mut b = self.stream.launch_builder(&f);
            b.arg(&bk);
            push_validity(&mut b, &bv);
            b.arg(&nb)
                .arg(&mut table)
                .arg(&mask)
                .arg(&mut heads)
                .arg(&mut next)
                .arg(&mut overflow);
            unsafe { b.launch(self.cfg(build.0.len(), 0)) }.map_err(err)?;
            let f = self.f("join_count")?;
            let mut b = self.stream.launch_builder(&f);
            b.arg(&pk);
            push_validity(&mut b, &pv);
            b.arg(&np)
                .arg(&table)
                .arg(&mask)
                .arg(&heads)
                .arg(&next)
                .arg(&mut counts);
            unsafe { b.launch(self.cfg(probe.0.len(), 0)) }.map_err(err)?;
            if self.stream.clone_dtoh(&overflow).map_err(err)?[0] != 0 {
                return Err(super::TABLE_FULL.into());
            }
            Ok((next, counts))
        })?;
        timing.kernel_ms += ms;
        let (counts, ms) = self.timed(|| self.stream.clone_dtoh(&counts).map_err(err))?;
        timing.transfer_ms += ms;
        let counts = counts[..probe.0.len()].to_vec();
        let mut offsets = Vec::with_capacity(counts.len());
        let mut total = 0u64;
        for &c in &counts {
            offsets.push(total);
            total += c as u64;
        }
        let t = (total as usize).max(1);
        let (d_offsets, ms) = self.timed(|| self.upload(&offsets))?;
        timing.transfer_ms += ms;
        let ((ob, op), ms) = self.timed(|| {
            let mut ob = self.stream.alloc_zeros::<i64>(t).map_err(err)?;
            let mut op = self.stream.alloc_zeros::<i64>(t).map_err(err)?;
            let f = self.f("join_emit")?;
            let mut b = self.stream.launch_builder(&f);
            b.arg(&pk);
            push_validity(&mut b, &pv);
            b.arg(&np)
                .arg(&table)
                .arg(&mask)
                .arg(&heads)
                .arg(&next)
                .arg(&d_offsets)
                .arg(&mut ob)
                .arg(&mut op);
            unsafe { b.launch(self.cfg(probe.0.len(), 0)) }.map_err(err)?;
            Ok((ob, op))
        })?;
        timing.kernel_ms += ms;
        let ((mut ob, mut op), ms) = self.timed(|| {
            Ok((
                self.stream.clone_dtoh(&ob).map_err(err)?,
                self.stream.clone_dtoh(&op).map_err(err)?,
            ))
        })?;
        timing.transfer_ms += ms;
        ob.truncate(total as usize);
        op.truncate(total as usize);
        Ok(((ob, op, counts), timing))
    }
}
