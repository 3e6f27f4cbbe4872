//! `sloth._sloth`: the Python extension module of sloth.
//!
//! A thin layer over sloth's public Rust API: [`frame`] wraps `LazyFrame`
//! and `DataFrame`, [`expr`] wraps `Expr`, [`arrow_stream`] moves batches
//! in and out through the Arrow PyCapsule interface without copying,
//! [`run`] runs a query with the GIL released, and [`errors`] turns
//! `SlothError` into the exceptions of `sloth.exceptions`. The Python
//! package `sloth` (sloth/__init__.py) re-exports what users call.

mod arrow_stream;
mod errors;
mod expr;
mod frame;
mod run;

use pyo3::prelude::*;

/// The classes and functions `sloth/__init__.py` re-exports.
#[pymodule]
fn _sloth(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<expr::PyExpr>()?;
    m.add_class::<expr::PyWhen>()?;
    m.add_class::<expr::PyThen>()?;
    m.add_class::<frame::PyLazyFrame>()?;
    m.add_class::<frame::PyGroupBy>()?;
    m.add_class::<frame::PyDataFrame>()?;
    m.add_function(wrap_pyfunction!(expr::col, m)?)?;
    m.add_function(wrap_pyfunction!(expr::lit, m)?)?;
    m.add_function(wrap_pyfunction!(expr::when, m)?)?;
    m.add_function(wrap_pyfunction!(expr::count, m)?)?;
    m.add_function(wrap_pyfunction!(expr::call, m)?)?;
    m.add_function(wrap_pyfunction!(frame::sql, m)?)?;
    m.add_function(wrap_pyfunction!(frame::scan_parquet, m)?)?;
    m.add_function(wrap_pyfunction!(frame::scan_csv, m)?)?;
    m.add_function(wrap_pyfunction!(frame::scan_ipc, m)?)?;
    m.add_function(wrap_pyfunction!(frame::from_arrow, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
