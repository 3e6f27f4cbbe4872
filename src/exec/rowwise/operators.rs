//! Volcano-style operators: each `next()` call returns one row.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use arrow::datatypes::SchemaRef;
use arrow::record_batch::RecordBatch;

use super::aggregates::RowAcc;
use super::expr::eval;
use super::value::{Row, Value};
use crate::error::{Result, SlothError};
use crate::expr::{AggFunc, RangeMeasure, WindowFrame, WindowFunc};
use crate::physical::{AggregateExpr, Stage, join_outputs};
use crate::physical_expr::PhysicalExpr;
use crate::physical_expr::eval::evaluate_array;
use crate::plan::JoinType;

/// A tuple-at-a-time operator.
pub trait RowOperator {
    /// The next row, or `None` at the end.
    fn next(&mut self) -> Result<Option<Row>>;
}

/// Counts rows and time of the operator it wraps (time includes its inputs).
pub struct Metered {
    pub inner: Box<dyn RowOperator>,
    pub rows: usize,
    pub time: Duration,
}

impl Metered {
    pub fn next(&mut self) -> Result<Option<Row>> {
        let start = Instant::now();
        let r = self.inner.next();
        self.time += start.elapsed();
        if matches!(r, Ok(Some(_))) {
            self.rows += 1;
        }
        r
    }
}

/// Input of an operator, shared with the metrics table by index.
pub type Input = std::rc::Rc<std::cell::RefCell<Metered>>;

fn pull(input: &Input) -> Result<Option<Row>> {
    input.borrow_mut().next()
}

fn drain(input: &Input) -> Result<Vec<Row>> {
    let mut rows = Vec::new();
    while let Some(r) = pull(input)? {
        rows.push(r);
    }
    Ok(rows)
}

/// Rows of record batches, cell by cell; applies the scan's filters.
pub struct ScanOp {
    pub batches: Vec<RecordBatch>,
    pub filters: Vec<PhysicalExpr>,
    pub schema: SchemaRef,
    pub batch: usize,
    pub row: usize,
}

impl RowOperator for ScanOp {
    fn next(&mut self) -> Result<Option<Row>> {
        loop {
            let Some(b) = self.batches.get(self.batch) else {
                return Ok(None);
            };
            if self.row >= b.num_rows() {
                self.batch += 1;
                self.row = 0;
                continue;
            }
            let i = self.row;
            self.row += 1;
            let row = b
                .columns()
                .iter()
                .map(|c| Value::from_array(c.as_ref(), i))
                .collect::<Result<Row>>()?;
            if self.filters.iter().try_fold(true, |ok, f| {
                Ok::<_, crate::SlothError>(
                    ok && matches!(eval(f, &row, &self.schema)?, Value::Bool(true)),
                )
            })? {
                return Ok(Some(row));
            }
        }
    }
}

/// Filter and project stages, one row at a time.
pub struct PipelineOp {
    pub input: Input,
    /// Each stage with the schema of the rows it receives.
    pub stages: Vec<(Stage, SchemaRef)>,
}

impl RowOperator for PipelineOp {
    fn next(&mut self) -> Result<Option<Row>> {
        'rows: while let Some(mut row) = pull(&self.input)? {
            for (stage, schema) in &self.stages {
                match stage {
                    Stage::Filter(p) => {
                        if !matches!(eval(p, &row, schema)?, Value::Bool(true)) {
                            continue 'rows;
                        }
                    }
                    Stage::Project(exprs, _) => {
                        row = exprs
                            .iter()
                            .map(|e| eval(e, &row, schema))
                            .collect::<Result<Row>>()?;
                    }
                }
            }
            return Ok(Some(row));
        }
        Ok(None)
    }
}

/// Hash aggregation over a `HashMap` of key rows.
pub struct AggregateOp {
    pub input: Input,
    pub schema: SchemaRef,
    pub keys: Vec<PhysicalExpr>,
    pub aggs: Vec<AggregateExpr>,
    pub output: Option<std::vec::IntoIter<Row>>,
}

impl RowOperator for AggregateOp {
    fn next(&mut self) -> Result<Option<Row>> {
        if self.output.is_none() {
            // Rows hold scalar values: a list has no row-wise form.
            if let Some(a) = (self.aggs.iter()).find(|a| matches!(a.func, AggFunc::ArrayAgg(_))) {
                return Err(SlothError::unsupported(format!(
                    "row-wise execution of {}() (its lists run columnar only)",
                    a.func.name()
                )));
            }
            let mut groups: HashMap<Row, usize> = HashMap::new();
            let mut states: Vec<(Row, Vec<RowAcc>)> = Vec::new();
            let fresh = || {
                self.aggs
                    .iter()
                    .map(|a| RowAcc::new(a.func, a.distinct))
                    .collect::<Vec<_>>()
            };
            if self.keys.is_empty() {
                states.push((vec![], fresh()));
            }
            while let Some(row) = pull(&self.input)? {
                let key = self
                    .keys
                    .iter()
                    .map(|k| eval(k, &row, &self.schema))
                    .collect::<Result<Row>>()?;
                let g = match groups.get(&key) {
                    Some(&g) => g,
                    None if self.keys.is_empty() => 0,
                    None => {
                        states.push((key.clone(), fresh()));
                        groups.insert(key, states.len() - 1);
                        states.len() - 1
                    }
                };
                for (acc, agg) in states[g].1.iter_mut().zip(&self.aggs) {
                    let args = agg
                        .args
                        .iter()
                        .map(|a| eval(a, &row, &self.schema))
                        .collect::<Result<Row>>()?;
                    acc.update(&args)?;
                }
            }
            let rows: Vec<Row> = states
                .into_iter()
                .map(|(mut k, accs)| {
                    k.extend(accs.iter().map(|a| a.finish()));
                    k
                })
                .collect();
            self.output = Some(rows.into_iter());
        }
        Ok(self.output.as_mut().and_then(|o| o.next()))
    }
}

/// The build side of a row-wise join: key → row positions, the rows, and
/// whether each row found a partner.
pub type BuiltSide = (HashMap<Row, Vec<usize>>, Vec<Row>, Vec<bool>);

/// Hash join: the right input is built into a `HashMap`, the left probes.
pub struct JoinOp {
    pub left: Input,
    pub right: Input,
    pub left_schema: SchemaRef,
    pub right_schema: SchemaRef,
    pub pair_schema: SchemaRef,
    pub left_keys: Vec<PhysicalExpr>,
    pub right_keys: Vec<PhysicalExpr>,
    pub how: JoinType,
    pub filter: Option<PhysicalExpr>,
    pub built: Option<BuiltSide>,
    pub pending: std::collections::VecDeque<Row>,
    pub probe_done: bool,
    /// The emitted positions of each full output row (`None`: all).
    pub output: Option<Vec<usize>>,
    pub right_width: usize,
    pub left_width: usize,
}

impl JoinOp {
    fn build(&mut self) -> Result<()> {
        let rows = drain(&self.right)?;
        let mut table: HashMap<Row, Vec<usize>> = HashMap::new();
        for (i, r) in rows.iter().enumerate() {
            let key = self
                .right_keys
                .iter()
                .map(|k| eval(k, r, &self.right_schema))
                .collect::<Result<Row>>()?;
            if key.iter().any(|v| v.is_null()) {
                continue;
            }
            table.entry(key).or_default().push(i);
        }
        self.right_width = self.right_schema.fields().len();
        self.left_width = self.left_schema.fields().len();
        let matched = vec![false; rows.len()];
        self.built = Some((table, rows, matched));
        Ok(())
    }
}

impl RowOperator for JoinOp {
    fn next(&mut self) -> Result<Option<Row>> {
        if self.built.is_none() {
            self.build()?;
        }
        loop {
            if let Some(r) = self.pending.pop_front() {
                return Ok(Some(join_outputs(r, self.output.as_deref())));
            }
            if self.probe_done {
                return Ok(None);
            }
            let Some(left) = pull(&self.left)? else {
                self.probe_done = true;
                // Unmatched right rows of right/full joins.
                if matches!(self.how, JoinType::Right | JoinType::Full) {
                    let (_, rows, matched) = self.built.as_ref().expect("built");
                    for (r, m) in rows.iter().zip(matched) {
                        if !m {
                            let mut out = vec![Value::Null; self.left_width];
                            out.extend(r.iter().cloned());
                            self.pending.push_back(out);
                        }
                    }
                }
                continue;
            };
            let key = self
                .left_keys
                .iter()
                .map(|k| eval(k, &left, &self.left_schema))
                .collect::<Result<Row>>()?;
            let (table, rows, matched) = self.built.as_mut().expect("built");
            let candidates: &[usize] = if key.iter().any(|v| v.is_null()) {
                &[]
            } else {
                table.get(&key).map_or(&[], |v| v.as_slice())
            };
            let mut hit = false;
            for &i in candidates {
                let mut pair = left.clone();
                pair.extend(rows[i].iter().cloned());
                if let Some(f) = &self.filter
                    && !matches!(eval(f, &pair, &self.pair_schema)?, Value::Bool(true))
                {
                    continue;
                }
                hit = true;
                matched[i] = true;
                match self.how {
                    JoinType::Semi | JoinType::Anti => break,
                    _ => self.pending.push_back(pair),
                }
            }
            match self.how {
                JoinType::Semi if hit => self.pending.push_back(left),
                JoinType::Anti if !hit => self.pending.push_back(left),
                JoinType::Left | JoinType::Full if !hit => {
                    let mut out = left;
                    out.extend(std::iter::repeat_n(Value::Null, self.right_width));
                    self.pending.push_back(out);
                }
                _ => {}
            }
        }
    }
}

/// Every pair of rows, left-major.
pub struct CrossJoinOp {
    pub left: Input,
    pub right: Input,
    pub right_rows: Option<Vec<Row>>,
    pub current: Option<Row>,
    pub pos: usize,
}

impl RowOperator for CrossJoinOp {
    fn next(&mut self) -> Result<Option<Row>> {
        if self.right_rows.is_none() {
            self.right_rows = Some(drain(&self.right)?);
        }
        let right = self.right_rows.as_ref().expect("drained");
        loop {
            if let Some(l) = &self.current
                && self.pos < right.len()
            {
                let mut out = l.clone();
                out.extend(right[self.pos].iter().cloned());
                self.pos += 1;
                return Ok(Some(out));
            }
            match pull(&self.left)? {
                Some(l) => {
                    self.current = Some(l);
                    self.pos = 0;
                }
                None => return Ok(None),
            }
        }
    }
}

/// Sort (top-k with `limit`): collects, sorts with a comparator, emits.
pub struct SortOp {
    pub input: Input,
    pub schema: SchemaRef,
    pub keys: Vec<(PhysicalExpr, arrow::compute::SortOptions)>,
    pub limit: Option<usize>,
    pub output: Option<std::vec::IntoIter<Row>>,
}

impl RowOperator for SortOp {
    fn next(&mut self) -> Result<Option<Row>> {
        if self.output.is_none() {
            let rows = drain(&self.input)?;
            let mut keyed: Vec<(Row, Row)> = rows
                .into_iter()
                .map(|r| {
                    Ok((
                        self.keys
                            .iter()
                            .map(|(k, _)| eval(k, &r, &self.schema))
                            .collect::<Result<Row>>()?,
                        r,
                    ))
                })
                .collect::<Result<_>>()?;
            let opts: Vec<_> = self.keys.iter().map(|(_, o)| *o).collect();
            keyed.sort_by(|(a, _), (b, _)| {
                for ((x, y), o) in a.iter().zip(b).zip(&opts) {
                    let mut ord = x.sort_cmp(y, o.nulls_first);
                    if o.descending && !x.is_null() && !y.is_null() {
                        ord = ord.reverse();
                    }
                    if ord.is_ne() {
                        return ord;
                    }
                }
                std::cmp::Ordering::Equal
            });
            if let Some(l) = self.limit {
                keyed.truncate(l);
            }
            self.output = Some(
                keyed
                    .into_iter()
                    .map(|(_, r)| r)
                    .collect::<Vec<_>>()
                    .into_iter(),
            );
        }
        Ok(self.output.as_mut().and_then(|o| o.next()))
    }
}

/// Skips `offset` rows, then passes at most `len`.
pub struct SliceOp {
    pub input: Input,
    pub offset: usize,
    pub len: Option<usize>,
    pub seen: usize,
}

impl RowOperator for SliceOp {
    fn next(&mut self) -> Result<Option<Row>> {
        while self.seen < self.offset {
            if pull(&self.input)?.is_none() {
                return Ok(None);
            }
            self.seen += 1;
        }
        if self.len.is_some_and(|l| self.seen >= self.offset + l) {
            return Ok(None);
        }
        let r = pull(&self.input)?;
        if r.is_some() {
            self.seen += 1;
        }
        Ok(r)
    }
}

/// Inputs one after the other.
pub struct UnionOp {
    pub inputs: Vec<Input>,
    pub current: usize,
}

impl RowOperator for UnionOp {
    fn next(&mut self) -> Result<Option<Row>> {
        while let Some(i) = self.inputs.get(self.current) {
            if let Some(r) = pull(i)? {
                return Ok(Some(r));
            }
            self.current += 1;
        }
        Ok(None)
    }
}

/// row_number / rank / dense_rank over sorted partitions, or an aggregate
/// of each whole partition.
pub struct WindowOp {
    pub input: Input,
    pub schema: SchemaRef,
    pub func: WindowFunc,
    /// The aggregate's arguments.
    pub args: Vec<PhysicalExpr>,
    pub partition_by: Vec<PhysicalExpr>,
    pub order_by: Vec<(PhysicalExpr, arrow::compute::SortOptions)>,
    /// Rows kept per partition (the first, in window order).
    pub limit: Option<usize>,
    pub output: Option<std::vec::IntoIter<Row>>,
}

impl RowOperator for WindowOp {
    fn next(&mut self) -> Result<Option<Row>> {
        if self.output.is_none() {
            let rows = drain(&self.input)?;
            let mut keyed: Vec<(Row, Row, Row)> = rows
                .into_iter()
                .map(|r| {
                    let p = self
                        .partition_by
                        .iter()
                        .map(|k| eval(k, &r, &self.schema))
                        .collect::<Result<Row>>()?;
                    let o = self
                        .order_by
                        .iter()
                        .map(|(k, _)| eval(k, &r, &self.schema))
                        .collect::<Result<Row>>()?;
                    Ok((p, o, r))
                })
                .collect::<Result<_>>()?;
            let opts: Vec<_> = self.order_by.iter().map(|(_, o)| *o).collect();
            let cmp_order = |a: &Row, b: &Row| {
                for ((x, y), o) in a.iter().zip(b).zip(&opts) {
                    let mut ord = x.sort_cmp(y, o.nulls_first);
                    if o.descending && !x.is_null() && !y.is_null() {
                        ord = ord.reverse();
                    }
                    if ord.is_ne() {
                        return ord;
                    }
                }
                std::cmp::Ordering::Equal
            };
            keyed.sort_by(|a, b| {
                let p =
                    a.0.iter()
                        .zip(&b.0)
                        .map(|(x, y)| x.sort_cmp(y, true))
                        .find(|o| o.is_ne());
                p.unwrap_or_else(|| cmp_order(&a.1, &b.1))
            });
            let peers = |a: &Row, b: &Row| cmp_order(a, b).is_eq();
            if let WindowFunc::FramedAggregate(func, frame) = self.func {
                let bounds = self.frame_bounds(frame, &keyed, &peers)?;
                self.output = Some(self.aggregate_frames(func, &bounds, keyed)?.into_iter());
                return Ok(self.output.as_mut().and_then(|o| o.next()));
            }
            if let WindowFunc::Aggregate(func) = self.func {
                let running = !self.order_by.is_empty();
                self.output = Some(self.aggregate_partitions(func, keyed, running)?.into_iter());
                return Ok(self.output.as_mut().and_then(|o| o.next()));
            }
            if let WindowFunc::Value(pick, frame) = self.func {
                let bounds = match frame {
                    Some(frame) => Some(self.frame_bounds(frame, &keyed, &peers)?),
                    None => None,
                };
                let frames = (bounds.as_deref(), &peers as &Peers<'_>);
                self.output = Some(self.frame_values(pick, frames, keyed)?.into_iter());
                return Ok(self.output.as_mut().and_then(|o| o.next()));
            }
            if self.func.is_distribution() {
                // Within one partition: peers tie on the order keys.
                let peers = |a: &KeyedRow, b: &KeyedRow| cmp_order(&a.1, &b.1).is_eq();
                self.output = Some(distribution_rows(self.func, keyed, &peers).into_iter());
                return Ok(self.output.as_mut().and_then(|o| o.next()));
            }
            if let Some(shift) = self.func.shift() {
                let mut out = Vec::with_capacity(keyed.len());
                let values = keyed
                    .iter()
                    .map(|k| eval(&self.args[0], &k.2, &self.schema))
                    .collect::<Result<Vec<_>>>()?;
                for (start, end) in partitions(&keyed) {
                    let present = |j: usize| !values[start + j].is_null();
                    for (k, (_, _, row)) in keyed[start..end].iter().enumerate() {
                        let source = WindowFunc::shifted_position(shift, k, end - start, present);
                        let value = match (source, self.args.get(1)) {
                            (Some(j), _) => values[start + j].clone(),
                            // lag/lead(x, n, default): the default, of this row.
                            (None, Some(default)) => eval(default, row, &self.schema)?,
                            (None, None) => Value::Null,
                        };
                        let mut r = row.clone();
                        r.push(value);
                        out.push(r);
                    }
                }
                self.output = Some(out.into_iter());
                return Ok(self.output.as_mut().and_then(|o| o.next()));
            }
            let mut out = Vec::with_capacity(keyed.len());
            let (mut row_number, mut rank, mut dense) = (0i64, 0i64, 0i64);
            for i in 0..keyed.len() {
                let new_partition = i == 0 || keyed[i].0 != keyed[i - 1].0;
                let new_peer = new_partition || cmp_order(&keyed[i].1, &keyed[i - 1].1).is_ne();
                if new_partition {
                    row_number = 0;
                    dense = 0;
                }
                row_number += 1;
                if new_peer {
                    rank = row_number;
                    dense += 1;
                }
                if self.limit.is_some_and(|k| row_number > k as i64) {
                    continue;
                }
                let mut r = keyed[i].2.clone();
                r.push(Value::Int(match self.func {
                    WindowFunc::RowNumber => row_number,
                    WindowFunc::Rank => rank,
                    WindowFunc::DenseRank => dense,
                    WindowFunc::PercentRank
                    | WindowFunc::CumeDist
                    | WindowFunc::Ntile(_)
                    | WindowFunc::Aggregate(_)
                    | WindowFunc::FramedAggregate(..)
                    | WindowFunc::Lag(_)
                    | WindowFunc::Lead(_)
                    | WindowFunc::ShiftPresent(_)
                    | WindowFunc::Value(..) => unreachable!("returned above"),
                }));
                out.push(r);
            }
            self.output = Some(out.into_iter());
        }
        Ok(self.output.as_mut().and_then(|o| o.next()))
    }
}

/// A row with its partition key values and order key values in front:
/// (partition, order, row).
type KeyedRow = (Row, Row, Row);

/// Whether two rows' order keys tie.
type Peers<'a> = dyn Fn(&Row, &Row) -> bool + 'a;

/// `percent_rank`, `cume_dist` or `ntile` (`func`) of each row of `keyed`
/// (partition, order keys, row; sorted), appended to the row: a row's
/// partition is the run of rows with its partition values, its peers the
/// run within that which `peers` ties.
fn distribution_rows(
    func: WindowFunc,
    keyed: Vec<KeyedRow>,
    peers: &dyn Fn(&KeyedRow, &KeyedRow) -> bool,
) -> Vec<Row> {
    let mut out = Vec::with_capacity(keyed.len());
    let mut start = 0;
    while start < keyed.len() {
        let end = (start + 1..keyed.len())
            .find(|&i| keyed[i].0 != keyed[start].0)
            .unwrap_or(keyed.len());
        let mut first = start;
        while first < end {
            let last = (first + 1..end)
                .find(|&i| !peers(&keyed[i], &keyed[first]))
                .unwrap_or(end);
            for (k, (_, _, row)) in keyed[first..last].iter().enumerate() {
                let value = func
                    .distribution(first + k - start, end - start, first - start..last - start)
                    .expect("a distribution function");
                let mut row = row.clone();
                row.push(match func {
                    WindowFunc::Ntile(_) => Value::Int(value as i64),
                    _ => Value::Float(value),
                });
                out.push(row);
            }
            first = last;
        }
        start = end;
    }
    out
}

impl WindowOp {
    /// Each row's `frame` in `keyed` (sorted by partition, then order), as
    /// positions `lo..hi`; `peers` says whether two rows' order keys tie.
    fn frame_bounds(
        &self,
        frame: WindowFrame,
        keyed: &[KeyedRow],
        peers: &dyn Fn(&Row, &Row) -> bool,
    ) -> Result<Vec<(usize, usize)>> {
        let measure = match (frame.needs_key_values(), self.order_by.as_slice()) {
            (false, _) => RangeMeasure::default(),
            (true, [(key, options)]) => {
                // The key's type: the key evaluated over no rows.
                let none = RecordBatch::new_empty(self.schema.clone());
                let key_type = evaluate_array(key, &none)?.data_type().clone();
                frame.measure(&key_type, options.descending)?
            }
            (true, _) => {
                return Err(SlothError::plan(format!(
                    "'{frame}' needs exactly one ORDER BY key"
                )));
            }
        };
        let mut bounds = Vec::with_capacity(keyed.len());
        for (start, end) in partitions(keyed) {
            let part = &keyed[start..end];
            let peer = |k: usize| peers(&part[k - 1].1, &part[k].1);
            let key = |k: usize| match part[k].1.first()? {
                Value::Date(days) => Some(f64::from(*days)),
                v => v.as_f64(),
            };
            let local = frame.partition_bounds(part.len(), peer, key, measure);
            bounds.extend(local.into_iter().map(|(lo, hi)| (start + lo, start + hi)));
        }
        Ok(bounds)
    }

    /// Each row of `keyed` with the aggregate of the rows of its frame,
    /// positions `bounds` ([`Self::frame_bounds`]): a fresh aggregate
    /// state per row over its frame's rows.
    fn aggregate_frames(
        &self,
        func: AggFunc,
        bounds: &[(usize, usize)],
        keyed: Vec<(Row, Row, Row)>,
    ) -> Result<Vec<Row>> {
        let mut out = Vec::with_capacity(keyed.len());
        for (i, &(lo, hi)) in bounds.iter().enumerate() {
            let mut acc = RowAcc::new(func, false);
            for (_, _, row) in &keyed[lo..hi.max(lo)] {
                self.update(&mut acc, row)?;
            }
            let mut r = keyed[i].2.clone();
            r.push(acc.finish());
            out.push(r);
        }
        Ok(out)
    }

    /// Each row of `keyed` (sorted by partition, then order) with the value
    /// of the row `pick` chooses from its frame: its explicit frame's
    /// positions if any ([`Self::frame_bounds`]), else the partition's
    /// start to the row's last peer (rows whose order keys `peers` calls
    /// equal).
    fn frame_values(
        &self,
        pick: crate::expr::FramePick,
        (bounds, peers): (Option<&[(usize, usize)]>, &Peers<'_>),
        keyed: Vec<(Row, Row, Row)>,
    ) -> Result<Vec<Row>> {
        let mut out = Vec::with_capacity(keyed.len());
        for (start, end) in partitions(&keyed) {
            let len = end - start;
            for k in 0..len {
                let (lo, hi) = match bounds {
                    Some(b) => (b[start + k].0 - start, b[start + k].1 - start),
                    None => {
                        let mut hi = k;
                        while hi + 1 < len && peers(&keyed[start + k].1, &keyed[start + hi + 1].1) {
                            hi += 1;
                        }
                        (0, hi + 1)
                    }
                };
                let values = |i: usize| eval(&self.args[0], &keyed[start + i].2, &self.schema);
                let present = |i: usize| values(i).is_ok_and(|v| !v.is_null());
                let value = match pick.pick(lo, hi, present) {
                    Some(i) => values(i)?,
                    None => Value::Null,
                };
                let mut r = keyed[start + k].2.clone();
                r.push(value);
                out.push(r);
            }
        }
        Ok(out)
    }

    /// Adds `row`'s arguments to `acc`.
    fn update(&self, acc: &mut RowAcc, row: &Row) -> Result<()> {
        let args = self
            .args
            .iter()
            .map(|a| eval(a, row, &self.schema))
            .collect::<Result<Vec<_>>>()?;
        acc.update(&args)
    }

    /// Each row of `keyed` (partition key, order key, row; sorted by
    /// partition, then order) with its partition's aggregate appended: of
    /// the whole partition, or (`running`) of its rows up to the current
    /// row's last peer (the rows with its order key).
    fn aggregate_partitions(
        &self,
        func: AggFunc,
        keyed: Vec<(Row, Row, Row)>,
        running: bool,
    ) -> Result<Vec<Row>> {
        let mut out = Vec::with_capacity(keyed.len());
        for (start, end) in partitions(&keyed) {
            let mut acc = RowAcc::new(func, false);
            let mut peers_start = start;
            while peers_start < end {
                let peers_end = if running {
                    (peers_start..end)
                        .find(|&i| keyed[i].1 != keyed[peers_start].1)
                        .unwrap_or(end)
                } else {
                    end
                };
                for (_, _, row) in &keyed[peers_start..peers_end] {
                    self.update(&mut acc, row)?;
                }
                let value = acc.finish();
                for (_, _, row) in &keyed[peers_start..peers_end] {
                    let mut r = row.clone();
                    r.push(value.clone());
                    out.push(r);
                }
                peers_start = peers_end;
            }
        }
        Ok(out)
    }
}

/// The partitions of `keyed` (sorted by partition key, the first of each
/// triple), as `start..end` ranges.
fn partitions(keyed: &[(Row, Row, Row)]) -> impl Iterator<Item = (usize, usize)> + '_ {
    let mut start = 0;
    std::iter::from_fn(move || {
        (start < keyed.len()).then(|| {
            let end = (start..keyed.len())
                .find(|&i| keyed[i].0 != keyed[start].0)
                .unwrap_or(keyed.len());
            let range = (start, end);
            start = end;
            range
        })
    })
}
