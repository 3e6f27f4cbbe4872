//! `sloth.LazyFrame`, `sloth.DataFrame` and the functions that make them.

use std::path::PathBuf;

use arrow::pyarrow::ToPyArrow;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyCapsule, PyDict, PyString, PyTuple};
use sloth::expr::{Expr, SortKey};
use sloth::io::{CsvOptions, FileFormat};
use sloth::plan::JoinType;
use sloth::sql::SqlContext;
use sloth::{DataFrame, LazyFrame, SessionConfig};

use crate::arrow_stream;
use crate::errors::IntoPyResult;
use crate::expr::{column_exprs, value_expr};
use crate::run::detached;

/// `settings` (keyword arguments: `threads=2`, `memory_limit="4GB"`,
/// `engine="sloth"`, ...; the names `SET` takes) applied to `config`.
fn configured(
    mut config: SessionConfig,
    settings: Option<&Bound<'_, PyDict>>,
) -> PyResult<SessionConfig> {
    for (name, value) in settings.into_iter().flatten() {
        let name: String = name.extract()?;
        if value.is_none() {
            continue;
        }
        let value = if value.is_instance_of::<PyBool>() {
            if value.extract::<bool>()? {
                "on"
            } else {
                "off"
            }
            .to_string()
        } else {
            value.str()?.to_string()
        };
        config.set(&name, &value).py()?;
    }
    Ok(config)
}

/// A query described step by step; nothing runs until `collect()` (or a
/// `sink_*`).
#[pyclass(name = "LazyFrame", module = "sloth", frozen, skip_from_py_object)]
#[derive(Clone)]
pub struct PyLazyFrame {
    pub frame: LazyFrame,
}

impl From<LazyFrame> for PyLazyFrame {
    fn from(frame: LazyFrame) -> Self {
        PyLazyFrame { frame }
    }
}

impl PyLazyFrame {
    /// Runs `work` on this frame with the GIL released, cancellable.
    fn run<T: Send>(
        &self,
        py: Python<'_>,
        work: impl FnOnce(LazyFrame) -> sloth::Result<T> + Send,
    ) -> PyResult<T> {
        let frame = self.frame.clone();
        detached(py, move |cancel| work(frame.with_cancel(cancel.clone())))
    }

    fn sink(&self, py: Python<'_>, path: PathBuf, format: FileFormat) -> PyResult<usize> {
        self.run(py, move |frame| frame.sink(&path, format))
    }
}

#[pymethods]
impl PyLazyFrame {
    /// Rows where every predicate holds.
    #[pyo3(signature = (*predicates))]
    fn filter(&self, predicates: &Bound<'_, PyTuple>) -> PyResult<Self> {
        let predicates = predicates
            .iter()
            .map(|p| value_expr(&p))
            .collect::<PyResult<Vec<_>>>()?;
        let predicate = Expr::conjunction(predicates)
            .ok_or_else(|| PyTypeError::new_err("filter() needs at least one predicate"))?;
        Ok(self.frame.filter(predicate).into())
    }

    /// These columns or expressions, in this order.
    #[pyo3(signature = (*exprs))]
    fn select(&self, exprs: &Bound<'_, PyTuple>) -> PyResult<Self> {
        Ok(self.frame.select(column_exprs(exprs)?).into())
    }

    /// Every column, with these added (or replaced, by name).
    #[pyo3(signature = (*exprs))]
    fn with_columns(&self, exprs: &Bound<'_, PyTuple>) -> PyResult<Self> {
        Ok(self.frame.with_columns(column_exprs(exprs)?).into())
    }

    /// Groups by these keys; `.agg(..)` says what each group gives.
    #[pyo3(signature = (*keys))]
    fn group_by(&self, keys: &Bound<'_, PyTuple>) -> PyResult<PyGroupBy> {
        Ok(PyGroupBy {
            frame: self.frame.clone(),
            keys: column_exprs(keys)?,
        })
    }

    /// Joins `other` on equal keys: `on` names them on both sides, or
    /// `left_on` and `right_on` each side's. `how`: inner, left, right,
    /// full, semi, anti or cross (no keys).
    #[pyo3(signature = (other, on=None, how="inner", *, left_on=None, right_on=None))]
    fn join(
        &self,
        other: &PyLazyFrame,
        on: Option<&Bound<'_, PyAny>>,
        how: &str,
        left_on: Option<&Bound<'_, PyAny>>,
        right_on: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let how: JoinType = how.parse().py()?;
        let keys = |k: Option<&Bound<'_, PyAny>>| -> PyResult<Vec<Expr>> {
            match k {
                None => Ok(vec![]),
                Some(k) => column_exprs(&PyTuple::new(k.py(), [k])?),
            }
        };
        let (left, right) = match (on, left_on, right_on) {
            (Some(on), None, None) => (keys(Some(on))?, keys(Some(on))?),
            (None, l, r) => (keys(l)?, keys(r)?),
            _ => {
                return Err(PyValueError::new_err(
                    "give either on= or left_on= and right_on=, not both",
                ));
            }
        };
        if how != JoinType::Cross && (left.is_empty() || left.len() != right.len()) {
            return Err(PyValueError::new_err(format!(
                "a {how:?} join needs keys: on=, or as many left_on= as right_on= (got {} and {})",
                left.len(),
                right.len()
            )));
        }
        Ok(self.frame.join(&other.frame, left, right, how).into())
    }

    /// Sorts by one or more columns; `descending` is one flag for all or
    /// one per key.
    #[pyo3(signature = (by, *more_by, descending=None, nulls_last=false))]
    fn sort(
        &self,
        by: &Bound<'_, PyAny>,
        more_by: &Bound<'_, PyTuple>,
        descending: Option<&Bound<'_, PyAny>>,
        nulls_last: bool,
    ) -> PyResult<Self> {
        let mut keys = column_exprs(&PyTuple::new(by.py(), [by])?)?;
        keys.extend(column_exprs(more_by)?);
        let descending: Vec<bool> = match descending {
            None => vec![false; keys.len()],
            Some(d) if d.is_instance_of::<PyBool>() => vec![d.extract()?; keys.len()],
            Some(d) => d.extract()?,
        };
        if descending.len() != keys.len() {
            return Err(PyValueError::new_err(format!(
                "descending has {} flags for {} sort keys",
                descending.len(),
                keys.len()
            )));
        }
        let keys = keys
            .into_iter()
            .zip(descending)
            .map(|(expr, descending)| SortKey {
                expr,
                descending,
                nulls_last,
            })
            .collect();
        Ok(self.frame.sort_by(keys).into())
    }

    /// The first `n` rows.
    fn limit(&self, n: usize) -> Self {
        self.frame.limit(n).into()
    }

    /// The first `n` rows (5 unless given).
    #[pyo3(signature = (n=5))]
    fn head(&self, n: usize) -> Self {
        self.frame.limit(n).into()
    }

    /// `length` rows from `offset` (to the end if `length` is None).
    #[pyo3(signature = (offset, length=None))]
    fn slice(&self, offset: usize, length: Option<usize>) -> Self {
        self.frame.slice(offset, length).into()
    }

    /// Distinct rows.
    fn unique(&self) -> Self {
        self.frame.unique().into()
    }

    /// Every column but these.
    #[pyo3(signature = (*columns))]
    fn drop(&self, columns: Vec<String>) -> Self {
        self.frame.drop(columns.iter().map(String::as_str)).into()
    }

    /// Columns renamed by `{old: new}`.
    fn rename(&self, mapping: std::collections::BTreeMap<String, String>) -> Self {
        self.frame
            .rename(mapping.iter().map(|(o, n)| (o.as_str(), n.as_str())))
            .into()
    }

    /// This frame with settings changed (`threads=2`,
    /// `memory_limit="4GB"`, `optimizer=False`, ...).
    #[pyo3(signature = (**settings))]
    fn with_config(&self, settings: Option<&Bound<'_, PyDict>>) -> PyResult<Self> {
        let config = configured(self.frame.config().clone(), settings)?;
        Ok(self.frame.clone().with_config(config).into())
    }

    /// Runs the query (optimized, on all cores, the GIL released; Ctrl-C
    /// cancels it).
    fn collect(&self, py: Python<'_>) -> PyResult<PyDataFrame> {
        Ok(self.run(py, |frame| frame.collect())?.into())
    }

    /// The plans as text: as written, optimized, physical.
    #[pyo3(signature = (optimized=true))]
    fn explain(&self, optimized: bool) -> PyResult<String> {
        self.frame.explain(optimized).py()
    }

    /// Runs the query and returns each operator's rows, batches, bytes and
    /// time, and the memory the query held (EXPLAIN ANALYZE).
    fn profile(&self, py: Python<'_>) -> PyResult<String> {
        self.run(py, |frame| frame.profile())
    }

    /// The output columns and their types, as a `pyarrow.Schema`.
    #[getter]
    fn schema<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.frame.schema().py()?.as_ref().to_pyarrow(py)
    }

    /// The output column names.
    #[getter]
    fn columns(&self) -> PyResult<Vec<String>> {
        let schema = self.frame.schema().py()?;
        Ok(schema.fields().iter().map(|f| f.name().clone()).collect())
    }

    /// Runs the query into a Parquet file, written whole or not at all;
    /// returns the rows written.
    fn sink_parquet(&self, py: Python<'_>, path: PathBuf) -> PyResult<usize> {
        self.sink(py, path, FileFormat::Parquet)
    }

    /// Runs the query into a CSV file (atomically); returns the rows written.
    fn sink_csv(&self, py: Python<'_>, path: PathBuf) -> PyResult<usize> {
        self.sink(py, path, FileFormat::Csv)
    }

    /// Runs the query into an Arrow IPC file (atomically); returns the rows
    /// written.
    fn sink_ipc(&self, py: Python<'_>, path: PathBuf) -> PyResult<usize> {
        self.sink(py, path, FileFormat::Ipc)
    }

    fn __repr__(&self) -> String {
        format!("<sloth.LazyFrame>\n{}", self.frame.logical_plan())
    }
}

/// `frame` under the settings of the environment (`SLOTH_THREADS`,
/// `SLOTH_MEMORY_LIMIT`, ...), as the command line runs.
fn from_env(frame: sloth::Result<LazyFrame>) -> PyResult<PyLazyFrame> {
    let config = SessionConfig::from_env().py()?;
    Ok(frame.py()?.with_config(config).into())
}

/// A `LazyFrame` grouped by keys, waiting for its aggregates.
#[pyclass(name = "GroupBy", module = "sloth", frozen)]
pub struct PyGroupBy {
    frame: LazyFrame,
    keys: Vec<Expr>,
}

#[pymethods]
impl PyGroupBy {
    /// One row per group: the keys, then these aggregates.
    #[pyo3(signature = (*aggs))]
    fn agg(&self, aggs: &Bound<'_, PyTuple>) -> PyResult<PyLazyFrame> {
        Ok(self
            .frame
            .group_by(self.keys.clone())
            .agg(column_exprs(aggs)?)
            .into())
    }
}

/// A query's result: Arrow record batches, handed to pyarrow, pandas and
/// Polars without copying fixed-width columns.
#[pyclass(name = "DataFrame", module = "sloth", frozen)]
pub struct PyDataFrame {
    frame: DataFrame,
}

impl From<DataFrame> for PyDataFrame {
    fn from(frame: DataFrame) -> Self {
        PyDataFrame { frame }
    }
}

#[pymethods]
impl PyDataFrame {
    /// The Arrow PyCapsule stream interface: `pyarrow.table(df)`,
    /// `polars.DataFrame(df)` and others read the batches in place.
    #[pyo3(signature = (requested_schema=None))]
    fn __arrow_c_stream__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        // A consumer may ask for another schema; the batches are offered as
        // they are, which the protocol allows.
        let _ = requested_schema;
        arrow_stream::export(
            py,
            self.frame.schema().clone(),
            self.frame.batches().to_vec(),
        )
    }

    /// The result as a `pyarrow.Table` (no copy).
    fn to_arrow<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        slf.py().import("pyarrow")?.call_method1("table", (slf,))
    }

    /// The result as a `pandas.DataFrame`, through pyarrow's `to_pandas`:
    /// dates as `datetime64` (as Polars gives them; pyarrow's default,
    /// Python `date` objects, takes a Python object per value), one block
    /// per column (no consolidating copy). Keyword arguments go to
    /// `pyarrow.Table.to_pandas` and override these.
    #[pyo3(signature = (**kwargs))]
    fn to_pandas<'py>(
        slf: &Bound<'py, Self>,
        kwargs: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let options = PyDict::new(slf.py());
        options.set_item("date_as_object", false)?;
        options.set_item("split_blocks", true)?;
        if let Some(kwargs) = kwargs {
            options.update(kwargs.as_mapping())?;
        }
        Self::to_arrow(slf)?.call_method("to_pandas", (), Some(&options))
    }

    /// The result as a `polars.DataFrame` (no copy of fixed-width columns).
    fn to_polars<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        let table = Self::to_arrow(slf)?;
        slf.py()
            .import("polars")?
            .call_method1("from_arrow", (table,))
    }

    /// The result as `{column: [values]}`.
    fn to_dict<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        Self::to_arrow(slf)?.call_method0("to_pydict")
    }

    /// A `LazyFrame` over this result, to query it further.
    fn lazy(&self) -> PyResult<PyLazyFrame> {
        let batches = self.frame.batches().to_vec();
        from_env(LazyFrame::from_batches_with_schema(
            self.frame.schema().clone(),
            batches,
        ))
    }

    /// The column names.
    #[getter]
    fn columns(&self) -> Vec<String> {
        self.frame.column_names()
    }

    /// The columns and their types, as a `pyarrow.Schema`.
    #[getter]
    fn schema<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.frame.schema().as_ref().to_pyarrow(py)
    }

    /// (rows, columns).
    #[getter]
    fn shape(&self) -> (usize, usize) {
        (self.frame.num_rows(), self.frame.schema().fields().len())
    }

    /// The number of rows.
    #[getter]
    fn height(&self) -> usize {
        self.frame.num_rows()
    }

    /// The number of columns.
    #[getter]
    fn width(&self) -> usize {
        self.frame.schema().fields().len()
    }

    /// Writes the result as Parquet (atomically).
    fn write_parquet(&self, py: Python<'_>, path: PathBuf) -> PyResult<()> {
        py.detach(|| self.frame.write_parquet(path)).py()
    }

    /// Writes the result as CSV (atomically).
    fn write_csv(&self, py: Python<'_>, path: PathBuf) -> PyResult<()> {
        py.detach(|| self.frame.write_csv(path)).py()
    }

    /// Writes the result as an Arrow IPC file (atomically).
    fn write_ipc(&self, py: Python<'_>, path: PathBuf) -> PyResult<()> {
        py.detach(|| self.frame.write_ipc(path)).py()
    }

    fn __len__(&self) -> usize {
        self.frame.num_rows()
    }

    fn __repr__(&self) -> String {
        let (rows, columns) = self.shape();
        format!(
            "shape: ({rows}, {columns})\n{}",
            self.frame.to_table_string(20)
        )
    }
}

/// `data` as a frame: a `LazyFrame` or `DataFrame` of sloth, a path to a
/// file or directory, or Arrow data (anything with `__arrow_c_stream__`).
fn as_frame(data: &Bound<'_, PyAny>) -> PyResult<LazyFrame> {
    if let Ok(lazy) = data.cast::<PyLazyFrame>() {
        return Ok(lazy.get().frame.clone());
    }
    if let Ok(frame) = data.cast::<PyDataFrame>() {
        return frame.get().lazy().map(|l| l.frame);
    }
    if data.is_instance_of::<PyString>() || data.hasattr("__fspath__")? {
        let path: PathBuf = data.extract()?;
        return from_env(LazyFrame::scan_path(path)).map(|l| l.frame);
    }
    from_arrow(data).map(|l| l.frame)
}

/// Plans a SQL query. `data` registers every file of a directory as a table
/// named by its stem; `tables` maps names to frames, Arrow data or paths;
/// `params` are the values of `$1`, `$2`, ..; keyword arguments are
/// settings (`threads=2`, `memory_limit="4GB"`).
#[pyfunction]
#[pyo3(signature = (query, data=None, tables=None, params=None, **settings))]
pub fn sql(
    query: &str,
    data: Option<PathBuf>,
    tables: Option<&Bound<'_, PyDict>>,
    params: Option<Vec<Bound<'_, PyAny>>>,
    settings: Option<&Bound<'_, PyDict>>,
) -> PyResult<PyLazyFrame> {
    let config = configured(SessionConfig::from_env().py()?, settings)?;
    let mut context = SqlContext::new().with_config(config);
    if let Some(dir) = data {
        context.register_dir(dir).py()?;
    }
    for (name, table) in tables.into_iter().flatten() {
        context.register(&name.extract::<String>()?, as_frame(&table)?);
    }
    let params = (params.iter().flatten())
        .map(crate::expr::scalar)
        .collect::<PyResult<Vec<_>>>()?;
    Ok(context.sql_with_params(query, &params).py()?.into())
}

/// A lazy scan of a Parquet file (or a directory or glob of them).
#[pyfunction]
pub fn scan_parquet(path: PathBuf) -> PyResult<PyLazyFrame> {
    from_env(LazyFrame::scan_parquet(path))
}

/// A lazy scan of an Arrow IPC file.
#[pyfunction]
pub fn scan_ipc(path: PathBuf) -> PyResult<PyLazyFrame> {
    from_env(LazyFrame::scan_ipc(path))
}

/// A lazy scan of a CSV file, its column types inferred from the first
/// `infer_schema_length` rows; `date_format` / `timestamp_format` (strftime
/// codes, `"%d/%m/%Y"`) read dates written otherwise than in ISO form.
#[pyfunction]
#[pyo3(signature = (path, *, has_header=true, separator=",", quote_char="\"", null_value=None, infer_schema_length=1000, date_format=None, timestamp_format=None))]
#[allow(clippy::too_many_arguments)]
pub fn scan_csv(
    path: PathBuf,
    has_header: bool,
    separator: &str,
    quote_char: &str,
    null_value: Option<String>,
    infer_schema_length: usize,
    date_format: Option<String>,
    timestamp_format: Option<String>,
) -> PyResult<PyLazyFrame> {
    let byte = |name: &str, s: &str| -> PyResult<u8> {
        match s.as_bytes() {
            [b] => Ok(*b),
            _ => Err(PyValueError::new_err(format!(
                "{name} must be one ASCII character, got {s:?}"
            ))),
        }
    };
    let options = CsvOptions {
        has_header,
        delimiter: byte("separator", separator)?,
        quote: byte("quote_char", quote_char)?,
        null_value,
        infer_rows: infer_schema_length,
        date_format,
        timestamp_format,
        ..CsvOptions::default()
    };
    from_env(LazyFrame::scan_csv_with(path, options))
}

/// A `LazyFrame` over Arrow data: a pyarrow Table, RecordBatch or
/// RecordBatchReader, a Polars DataFrame, or anything else with
/// `__arrow_c_stream__`. The buffers are shared, not copied.
#[pyfunction]
pub fn from_arrow(data: &Bound<'_, PyAny>) -> PyResult<PyLazyFrame> {
    let (schema, batches) = arrow_stream::import(data)?;
    from_env(LazyFrame::from_batches_with_schema(schema, batches))
}
