//! Kernels: expression evaluation, hashing, hash tables and aggregate state,
//! all over whole Arrow arrays.

pub mod accumulators;
pub mod bloom;
pub mod date_trunc;

pub mod flat_table;
pub mod float_zero;

pub mod hash_table;
pub mod like;
pub mod math;
pub mod packed_keys;
pub mod range_keys;
pub mod strings;
pub mod wide_keys;

use arrow::array::ArrayRef;
use arrow::datatypes::DataType;

/// `array` as `to`: the same array when it already has that type (no copy),
/// a cast otherwise. Operators use it to match their declared output schema.
pub fn cast_if_needed(array: &ArrayRef, to: &DataType) -> crate::error::Result<ArrayRef> {
    Ok(if array.data_type() == to {
        array.clone()
    } else {
        arrow::compute::cast(array, to)?
    })
}
