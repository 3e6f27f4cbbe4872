//! Fused evaluation of arithmetic trees over primitive columns.
//!
//! Evaluated operator by operator, `price * (1 - discount) * (1 + tax)`
//! materializes an array per operator: four arrays of the batch's length
//! for one result. A [`FusedExpr`] compiles such a tree (`+ - *`, negation,
//! decimal rescaling, and one comparison at the root, over `Int64`,
//! `Float64` or `Decimal128` columns and constants) into a short program of
//! steps that runs over chunks of [`CHUNK`] rows: every intermediate lives
//! in a chunk-sized register that stays in L1, each step is a tight loop
//! over plain slices, and only the result is written at full length.
//!
//! Results are identical to the operator-by-operator path: nulls are the
//! union of the input columns' nulls (every step is strict), and when an
//! integer step overflows anywhere the batch is re-evaluated by that path,
//! which reports the overflow as it always does.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use arrow::array::{Array, ArrayRef, BooleanArray, PrimitiveArray, RecordBatch};
use arrow::buffer::{BooleanBuffer, NullBuffer, ScalarBuffer};
use arrow::datatypes::{ArrowPrimitiveType, DataType, Decimal128Type, Float64Type, Int64Type};

use crate::error::Result;
use crate::expr::Operator;
use crate::physical_expr::{Node, PhysicalExpr};

/// Rows per chunk: registers of this many values stay in L1.
pub const CHUNK: usize = 1024;

/// A value type the fused loops compute in.
trait Lane: Copy + Default + PartialOrd + Send + Sync + 'static {
    /// The value as SQL orders it, in a type with a total order.
    type Key: Ord + Copy;
    fn key(self) -> Self::Key;
    fn add(a: Self, b: Self) -> (Self, bool);
    fn sub(a: Self, b: Self) -> (Self, bool);
    fn mul(a: Self, b: Self) -> (Self, bool);
}

macro_rules! int_lane {
    ($($t:ty),*) => {$(
        impl Lane for $t {
            type Key = Self;
            fn key(self) -> Self { self }
            fn add(a: Self, b: Self) -> (Self, bool) { a.overflowing_add(b) }
            fn sub(a: Self, b: Self) -> (Self, bool) { a.overflowing_sub(b) }
            fn mul(a: Self, b: Self) -> (Self, bool) { a.overflowing_mul(b) }
        }
    )*};
}
int_lane!(i64);

impl Lane for i128 {
    type Key = Self;
    fn key(self) -> Self {
        self
    }
    fn add(a: Self, b: Self) -> (Self, bool) {
        a.overflowing_add(b)
    }
    fn sub(a: Self, b: Self) -> (Self, bool) {
        a.overflowing_sub(b)
    }
    /// Decimal values mostly fit in 64 bits, and the product of two such
    /// cannot overflow 128 bits: one 64x64->128 multiply, instead of the
    /// general overflow-checked 128-bit multiply (a library call).
    fn mul(a: Self, b: Self) -> (Self, bool) {
        match (i64::try_from(a), i64::try_from(b)) {
            (Ok(a), Ok(b)) => (a as i128 * b as i128, false),
            _ => a.overflowing_mul(b),
        }
    }
}

impl Lane for f64 {
    type Key = i64;
    /// SQL's order, unlike IEEE comparison: NaN equals NaN and is above
    /// every number, and `-0.0 = 0.0` (kernels/float_zero.rs). The
    /// canonical value's bits with the magnitude flipped for negatives
    /// order as `f64::total_cmp` does.
    fn key(self) -> i64 {
        let v = if self.is_nan() { f64::NAN } else { self + 0.0 };
        let bits = v.to_bits() as i64;
        bits ^ (((bits >> 63) as u64) >> 1) as i64
    }
    fn add(a: Self, b: Self) -> (Self, bool) {
        (a + b, false)
    }
    fn sub(a: Self, b: Self) -> (Self, bool) {
        (a - b, false)
    }
    fn mul(a: Self, b: Self) -> (Self, bool) {
        (a * b, false)
    }
}

#[derive(Debug, Clone, Copy)]
enum Src {
    /// The i-th column the program reads.
    Input(usize),
    Reg(usize),
    Const(usize),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ArithOp {
    Add,
    Sub,
    Mul,
}

#[derive(Debug, Clone)]
struct Step {
    op: ArithOp,
    a: Src,
    b: Src,
    dst: usize,
}

#[derive(Debug, Clone)]
enum Root {
    Value(Src),
    Compare(Operator, Src, Src),
}

/// A compiled program over one value type.
#[derive(Debug, Clone)]
struct Program<T> {
    /// Batch column of each input.
    inputs: Vec<usize>,
    consts: Vec<T>,
    steps: Vec<Step>,
    registers: usize,
    root: Root,
}

#[derive(Debug, Clone)]
enum Typed {
    I64(Program<i64>),
    I128(Program<i128>),
    F64(Program<f64>),
}

/// An expression evaluated by a fused program, with the tree it replaces.
#[derive(Debug)]
pub struct FusedExpr {
    /// The operator-by-operator tree: the fallback, and what `explain` shows.
    pub original: PhysicalExpr,
    program: Typed,
    /// Bytes of intermediate arrays not materialized, over all batches.
    bytes_saved: AtomicUsize,
}

impl FusedExpr {
    /// Compiles `expr` when it is a fusable tree with at least two steps.
    pub fn compile(expr: &PhysicalExpr) -> Option<Arc<FusedExpr>> {
        let domain = match &expr.node {
            Node::Binary(l, op, _) if op.is_comparison() => l.data_type.clone(),
            _ => expr.data_type.clone(),
        };
        let program = match domain {
            DataType::Int64 => Typed::I64(Builder::new(&domain).build(expr)?),
            DataType::Float64 => Typed::F64(Builder::new(&domain).build(expr)?),
            DataType::Decimal128(..) => Typed::I128(Builder::new(&domain).build(expr)?),
            _ => return None,
        };
        Some(Arc::new(FusedExpr {
            original: expr.clone(),
            program,
            bytes_saved: AtomicUsize::new(0),
        }))
    }

    /// Bytes of intermediate arrays that fusion did not materialize so far.
    pub fn bytes_saved(&self) -> usize {
        self.bytes_saved.load(Ordering::Relaxed)
    }

    /// Evaluates over `batch`; `None` when an integer step overflowed (the
    /// caller then evaluates [`FusedExpr::original`]).
    pub fn evaluate(&self, batch: &RecordBatch) -> Result<Option<ArrayRef>> {
        let out = match &self.program {
            Typed::I64(p) => run::<Int64Type>(p, batch, &self.original.data_type)?,
            Typed::I128(p) => run::<Decimal128Type>(p, batch, &self.original.data_type)?,
            Typed::F64(p) => run::<Float64Type>(p, batch, &self.original.data_type)?,
        };
        if out.is_some() {
            let (steps, width) = match &self.program {
                Typed::I64(p) => (p.intermediates(), 8),
                Typed::I128(p) => (p.intermediates(), 16),
                Typed::F64(p) => (p.intermediates(), 8),
            };
            self.bytes_saved
                .fetch_add(steps * width * batch.num_rows(), Ordering::Relaxed);
        }
        Ok(out)
    }
}

impl<T> Program<T> {
    /// Arrays the operator-by-operator path would build besides the result.
    fn intermediates(&self) -> usize {
        match self.root {
            Root::Value(_) => self.steps.len().saturating_sub(1),
            Root::Compare(..) => self.steps.len(),
        }
    }
}

/// Lowers a [`PhysicalExpr`] tree into steps.
struct Builder<T> {
    domain: DataType,
    program: Program<T>,
}

trait FromLiteral: Sized {
    fn from_literal(a: &ArrayRef) -> Option<Self>;
    fn power_of_ten(k: u32) -> Option<Self>;
}

macro_rules! from_literal {
    ($t:ty, $arrow:ty) => {
        impl FromLiteral for $t {
            fn from_literal(a: &ArrayRef) -> Option<Self> {
                let a = a.as_any().downcast_ref::<PrimitiveArray<$arrow>>()?;
                (a.len() == 1 && a.is_valid(0)).then(|| a.value(0))
            }
            fn power_of_ten(k: u32) -> Option<Self> {
                (10 as $t).checked_pow(k)
            }
        }
    };
}
from_literal!(i64, Int64Type);
from_literal!(i128, Decimal128Type);
impl FromLiteral for f64 {
    fn from_literal(a: &ArrayRef) -> Option<Self> {
        let a = a.as_any().downcast_ref::<PrimitiveArray<Float64Type>>()?;
        (a.len() == 1 && a.is_valid(0)).then(|| a.value(0))
    }
    fn power_of_ten(_: u32) -> Option<Self> {
        None
    }
}

fn scale(t: &DataType) -> i8 {
    match t {
        DataType::Decimal128(_, s) => *s,
        _ => 0,
    }
}

impl<T: Lane + FromLiteral> Builder<T> {
    fn new(domain: &DataType) -> Self {
        Builder {
            domain: domain.clone(),
            program: Program {
                inputs: vec![],
                consts: vec![],
                steps: vec![],
                registers: 0,
                root: Root::Value(Src::Const(0)),
            },
        }
    }

    /// Same kind of type as the domain (decimals may differ in scale).
    fn in_domain(&self, t: &DataType) -> bool {
        matches!(
            (&self.domain, t),
            (DataType::Int64, DataType::Int64)
                | (DataType::Float64, DataType::Float64)
                | (DataType::Decimal128(..), DataType::Decimal128(..))
        )
    }

    fn build(mut self, expr: &PhysicalExpr) -> Option<Program<T>> {
        let root = match &expr.node {
            Node::Binary(l, op, r) if op.is_comparison() => {
                if l.data_type != r.data_type {
                    return None;
                }
                Root::Compare(*op, self.lower(l)?, self.lower(r)?)
            }
            _ => Root::Value(self.lower(expr)?),
        };
        let ops = self.program.steps.len() + matches!(root, Root::Compare(..)) as usize;
        // One operator is left to the array kernels, but for a decimal
        // multiply: theirs checks every 128-bit product for overflow, ours
        // multiplies 64-bit operands in one instruction (`Lane for i128`).
        let decimal_mul = matches!(expr.data_type, DataType::Decimal128(..))
            && self.program.steps.iter().any(|s| s.op == ArithOp::Mul);
        self.program.root = root;
        (ops >= 2 || decimal_mul).then_some(self.program)
    }

    fn constant(&mut self, v: T) -> Src {
        self.program.consts.push(v);
        Src::Const(self.program.consts.len() - 1)
    }

    fn step(&mut self, op: ArithOp, a: Src, b: Src) -> Src {
        let dst = self.program.registers;
        self.program.registers += 1;
        self.program.steps.push(Step { op, a, b, dst });
        Src::Reg(dst)
    }

    /// `src` (at scale `from`) rescaled to scale `to`.
    fn rescale(&mut self, src: Src, from: i8, to: i8) -> Option<Src> {
        if from == to {
            return Some(src);
        }
        if from > to {
            return None;
        }
        let factor = T::power_of_ten((to - from) as u32)?;
        // Constants are rescaled here, once.
        if let Src::Const(i) = src {
            let (v, overflow) = T::mul(self.program.consts[i], factor);
            return (!overflow).then(|| self.constant(v));
        }
        let c = self.constant(factor);
        Some(self.step(ArithOp::Mul, src, c))
    }

    fn lower(&mut self, e: &PhysicalExpr) -> Option<Src> {
        if !self.in_domain(&e.data_type) {
            return None;
        }
        match &e.node {
            Node::Column(i) => {
                self.program.inputs.push(*i);
                Some(Src::Input(self.program.inputs.len() - 1))
            }
            Node::Literal(a) => {
                let v = T::from_literal(a)?;
                Some(self.constant(v))
            }
            Node::Negative(x) => {
                let x = self.lower(x)?;
                let zero = self.constant(T::default());
                Some(self.step(ArithOp::Sub, zero, x))
            }
            Node::Cast(x) if self.in_domain(&x.data_type) => {
                let src = self.lower(x)?;
                self.rescale(src, scale(&x.data_type), scale(&e.data_type))
            }
            Node::Binary(l, op, r) => {
                let op = match op {
                    Operator::Plus => ArithOp::Add,
                    Operator::Minus => ArithOp::Sub,
                    Operator::Multiply => ArithOp::Mul,
                    _ => return None,
                };
                let (sl, sr, so) = (
                    scale(&l.data_type),
                    scale(&r.data_type),
                    scale(&e.data_type),
                );
                let (a, b) = (self.lower(l)?, self.lower(r)?);
                let (a, b) = match op {
                    // Decimal products add scales; sums align them first.
                    ArithOp::Mul if sl + sr == so => (a, b),
                    ArithOp::Add | ArithOp::Sub if sl.max(sr) == so => {
                        (self.rescale(a, sl, so)?, self.rescale(b, sr, so)?)
                    }
                    _ => return None,
                };
                Some(self.step(op, a, b))
            }
            _ => None,
        }
    }
}

enum Operand<'a, T> {
    Slice(&'a [T]),
    Const(T),
}

/// One step over a chunk; returns whether any lane overflowed.
fn apply<T: Lane>(
    a: Operand<'_, T>,
    b: Operand<'_, T>,
    out: &mut [T],
    f: impl Fn(T, T) -> (T, bool),
) -> bool {
    let mut overflow = false;
    match (a, b) {
        (Operand::Slice(x), Operand::Slice(y)) => {
            for ((o, &x), &y) in out.iter_mut().zip(x).zip(y) {
                let (v, of) = f(x, y);
                *o = v;
                overflow |= of;
            }
        }
        (Operand::Slice(x), Operand::Const(c)) => {
            for (o, &x) in out.iter_mut().zip(x) {
                let (v, of) = f(x, c);
                *o = v;
                overflow |= of;
            }
        }
        (Operand::Const(c), Operand::Slice(y)) => {
            for (o, &y) in out.iter_mut().zip(y) {
                let (v, of) = f(c, y);
                *o = v;
                overflow |= of;
            }
        }
        (Operand::Const(c), Operand::Const(d)) => {
            let (v, of) = f(c, d);
            out.fill(v);
            overflow = of;
        }
    }
    overflow
}

fn operand<'a, T: Copy>(
    columns: &[&'a [T]],
    regs: &'a [Vec<T>],
    consts: &[T],
    s: Src,
    rows: std::ops::Range<usize>,
) -> Operand<'a, T> {
    match s {
        Src::Input(i) => Operand::Slice(&columns[i][rows]),
        Src::Const(c) => Operand::Const(consts[c]),
        Src::Reg(r) => Operand::Slice(&regs[r][..rows.len()]),
    }
}

fn compare<T: Lane>(op: Operator) -> fn(T, T) -> bool {
    match op {
        Operator::Eq => |a, b| a.key() == b.key(),
        Operator::NotEq => |a, b| a.key() != b.key(),
        Operator::Lt => |a, b| a.key() < b.key(),
        Operator::LtEq => |a, b| a.key() <= b.key(),
        Operator::Gt => |a, b| a.key() > b.key(),
        _ => |a, b| a.key() >= b.key(),
    }
}

fn run<A>(
    p: &Program<A::Native>,
    batch: &RecordBatch,
    out_type: &DataType,
) -> Result<Option<ArrayRef>>
where
    A: ArrowPrimitiveType,
    A::Native: Lane,
{
    let n = batch.num_rows();
    let mut columns: Vec<&[A::Native]> = Vec::with_capacity(p.inputs.len());
    let mut nulls: Option<NullBuffer> = None;
    for &i in &p.inputs {
        let Some(a) = batch.column(i).as_any().downcast_ref::<PrimitiveArray<A>>() else {
            return Ok(None);
        };
        columns.push(a.values());
        nulls = NullBuffer::union(nulls.as_ref(), a.nulls());
    }
    let mut regs: Vec<Vec<A::Native>> = vec![vec![A::Native::default(); CHUNK]; p.registers];
    // The last step writes straight into the result when it is the result.
    let last_is_root = matches!((p.root.clone(), p.steps.last()), (Root::Value(Src::Reg(r)), Some(s)) if s.dst == r);
    let mut values: Vec<A::Native> = match p.root {
        Root::Value(_) if last_is_root => vec![A::Native::default(); n],
        Root::Value(_) => Vec::with_capacity(n),
        Root::Compare(..) => Vec::new(),
    };
    let mut bits: Vec<bool> = Vec::new();
    if let Root::Compare(..) = p.root {
        bits.reserve_exact(n);
    }
    let mut overflow = false;
    for start in (0..n).step_by(CHUNK) {
        let len = CHUNK.min(n - start);
        let range = start..start + len;
        macro_rules! get {
            ($src:expr) => {
                operand(&columns, &regs, &p.consts, $src, range.clone())
            };
        }
        for (k, step) in p.steps.iter().enumerate() {
            // Registers are written once (SSA), so the destination is never an operand.
            let mut reg = std::mem::take(&mut regs[step.dst]);
            let out = if last_is_root && k + 1 == p.steps.len() {
                &mut values[range.clone()]
            } else {
                &mut reg[..len]
            };
            let (a, b) = (get!(step.a), get!(step.b));
            overflow |= match step.op {
                ArithOp::Add => apply(a, b, out, Lane::add),
                ArithOp::Sub => apply(a, b, out, Lane::sub),
                ArithOp::Mul => apply(a, b, out, Lane::mul),
            };
            regs[step.dst] = reg;
        }
        match p.root {
            Root::Value(_) if last_is_root => {}
            Root::Value(s) => match get!(s) {
                Operand::Slice(x) => values.extend_from_slice(x),
                Operand::Const(c) => values.extend(std::iter::repeat_n(c, len)),
            },
            Root::Compare(op, a, b) => {
                let f = compare::<A::Native>(op);
                match (get!(a), get!(b)) {
                    (Operand::Slice(x), Operand::Slice(y)) => {
                        bits.extend(x.iter().zip(y).map(|(&x, &y)| f(x, y)))
                    }
                    (Operand::Slice(x), Operand::Const(c)) => {
                        bits.extend(x.iter().map(|&x| f(x, c)))
                    }
                    (Operand::Const(c), Operand::Slice(y)) => {
                        bits.extend(y.iter().map(|&y| f(c, y)))
                    }
                    (Operand::Const(c), Operand::Const(d)) => {
                        bits.extend(std::iter::repeat_n(f(c, d), len))
                    }
                }
            }
        }
    }
    if overflow {
        return Ok(None);
    }
    Ok(Some(match p.root {
        Root::Value(_) => Arc::new(
            PrimitiveArray::<A>::new(ScalarBuffer::from(values), nulls)
                .with_data_type(out_type.clone()),
        ),
        Root::Compare(..) => Arc::new(BooleanArray::new(BooleanBuffer::from(bits), nulls)),
    }))
}

#[cfg(test)]
mod tests {
    use arrow::array::{Decimal128Array, Float64Array, Int64Array};
    use arrow::datatypes::{Field, Schema};

    use super::*;
    use crate::expr::{Expr, col, lit};
    use crate::physical_expr::eval::evaluate_array;

    #[test]
    fn wide_multiplies_match_the_checked_one() {
        let big = i128::MAX / 3;
        for (a, b) in [
            (7i128, -9i128),
            (i64::MAX as i128, i64::MIN as i128),
            (i64::MAX as i128 + 1, 2),
            (big, 2),
            (big, 4),
            (-big, 3),
            (i128::MIN, -1),
        ] {
            assert_eq!(<i128 as Lane>::mul(a, b), a.overflowing_mul(b), "{a} * {b}");
        }
    }

    /// 3,000 rows (three chunks, the last partial) with nulls.
    fn batch() -> RecordBatch {
        let n = 3000i64;
        let a = Int64Array::from_iter((0..n).map(|i| (i % 7 != 0).then_some(i - 1500)));
        let b = Int64Array::from_iter((0..n).map(|i| (i % 11 != 0).then_some(i % 13)));
        let price = Decimal128Array::from_iter((0..n).map(|i| Some(i as i128 * 137)))
            .with_precision_and_scale(15, 2)
            .unwrap();
        let disc =
            Decimal128Array::from_iter((0..n).map(|i| (i % 5 != 0).then_some(i as i128 % 10)))
                .with_precision_and_scale(15, 2)
                .unwrap();
        let x = Float64Array::from_iter((0..n).map(|i| Some(i as f64 * 0.5)));
        RecordBatch::try_from_iter([
            ("a", Arc::new(a) as ArrayRef),
            ("b", Arc::new(b) as ArrayRef),
            ("price", Arc::new(price) as ArrayRef),
            ("disc", Arc::new(disc) as ArrayRef),
            ("x", Arc::new(x) as ArrayRef),
        ])
        .unwrap()
    }

    /// Fused and operator-by-operator results of `e`; asserts it fused.
    fn both(e: Expr, batch: &RecordBatch) -> (ArrayRef, ArrayRef) {
        let schema: Schema = batch.schema().as_ref().clone();
        let fused = PhysicalExpr::compile(&e, &schema).unwrap();
        assert!(
            matches!(fused.node, Node::Fused(_)),
            "{e} did not fuse: {fused}"
        );
        let plain = fused.unfuse();
        (
            evaluate_array(&fused, batch).unwrap(),
            evaluate_array(&plain, batch).unwrap(),
        )
    }

    #[test]
    fn matches_the_operator_by_operator_path() {
        let b = batch();
        let one = || Expr::Literal(crate::expr::ScalarValue::Decimal128(Some(100), 15, 2));
        for e in [
            (col("a") + col("b")) * lit(3i64) - col("a"),
            -(col("a") * col("b")) + lit(7i64),
            col("x") * (lit(1.5f64) - col("x")),
            col("price") * (one() - col("disc")),
            col("price") * col("disc"),
            col("price") * (one() - col("disc")) * (one() + col("disc")),
            (col("price") + col("disc") * col("disc")).gt(col("price")),
            (col("a") * col("b")).lt_eq(lit(100i64)),
        ] {
            let (fused, plain) = both(e.clone(), &b);
            assert_eq!(fused.data_type(), plain.data_type(), "{e}");
            assert_eq!(fused.to_data(), plain.to_data(), "{e}");
        }
    }

    /// NaN (of either sign), zeros of either sign and infinities compare as
    /// SQL compares them on both paths: NaN = NaN, NaN above every number,
    /// `-0.0 = 0.0`.
    #[test]
    fn comparisons_of_edge_floats_follow_sql_on_both_paths() {
        let edges = [
            f64::NAN,
            -f64::NAN,
            -0.0,
            0.0,
            1.5,
            -1.5,
            f64::INFINITY,
            f64::NEG_INFINITY,
        ];
        let x: ArrayRef = Arc::new(Float64Array::from_iter_values(edges.iter().copied()));
        let b = RecordBatch::try_from_iter([("x", x)]).unwrap();
        let negated = -(col("x") * lit(1.0f64));
        for c in [f64::NAN, -0.0, 0.0, -1.5, f64::INFINITY] {
            for e in [
                negated.clone().gt(lit(c)),
                negated.clone().eq(lit(c)),
                negated.clone().lt_eq(lit(c)),
                negated.clone().neq(lit(c)),
            ] {
                let (fused, plain) = both(e.clone(), &b);
                assert_eq!(fused.to_data(), plain.to_data(), "{e}");
            }
        }
        // -(x * 1) > -1.5 holds for both NaNs, both zeros and the
        // negations of -1.5 and -inf: not for those of 1.5 and inf.
        let (fused, _) = both(negated.gt(lit(-1.5f64)), &b);
        let hits = arrow::array::AsArray::as_boolean(&fused).true_count();
        assert_eq!(hits, 6);
    }

    #[test]
    fn single_operators_are_left_to_the_array_kernels() {
        let schema = Schema::new(vec![Field::new("a", DataType::Int64, true)]);
        let e = PhysicalExpr::compile(&(col("a") + lit(1i64)), &schema).unwrap();
        assert!(matches!(e.node, Node::Binary(..)));
    }

    #[test]
    fn overflow_falls_back_and_reports_like_the_kernels() {
        let a: ArrayRef = Arc::new(Int64Array::from(vec![i64::MAX, 1]));
        let batch = RecordBatch::try_from_iter([("a", a)]).unwrap();
        let schema: Schema = batch.schema().as_ref().clone();
        let e = PhysicalExpr::compile(&(col("a") * lit(2i64) + lit(1i64)), &schema).unwrap();
        let Node::Fused(f) = &e.node else {
            panic!("not fused")
        };
        assert!(f.evaluate(&batch).unwrap().is_none());
        let err = evaluate_array(&e, &batch).unwrap_err();
        assert!(err.to_string().contains("verflow"), "{err}");
    }

    #[test]
    fn counts_the_bytes_it_does_not_materialize() {
        let b = batch();
        let schema: Schema = b.schema().as_ref().clone();
        let e =
            PhysicalExpr::compile(&((col("a") + col("b")) * col("b") - col("a")), &schema).unwrap();
        evaluate_array(&e, &b).unwrap();
        let mut saved = 0;
        e.visit_fused(&mut |f| saved += f.bytes_saved());
        // Two of the three operators' arrays, 8 bytes a row.
        assert_eq!(saved, 2 * 8 * 3000);
    }
}
