//! Kernels: expression evaluation, hashing, hash tables and aggregate state,
//! all over whole Arrow arrays.

pub mod accumulators;
pub mod eval;
pub mod fused;
pub mod hash_table;
pub mod strings;
