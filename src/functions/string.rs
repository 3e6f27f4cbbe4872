//! String functions: `substr`, `length`, `upper`, `lower`, the trims,
//! `replace`, `strpos`, `left`, `right`, `lpad`, `rpad`, `split_part`,
//! `reverse`, `repeat`, `initcap`, `translate`, `octet_length`, and
//! `concat` (SQL's `||`).
//!
//! Lengths and positions count characters. Arguments after the string are
//! constants (read once per batch); a null one makes every row null.

use arrow::array::{Array, ArrayRef, new_null_array};
use arrow::datatypes::DataType;

use super::on_first;
use crate::error::{Result, SlothError};
use crate::expr::function::{
    ArgType, ColumnarValue, Signature, check_arity, constant_i64, constant_string, need_string,
};
use crate::expr::value::Value;
use crate::expr::{Expr, ScalarFunc, ScalarFunction, lit};
use crate::kernels::strings;

pub(super) fn functions() -> Vec<ScalarFunc> {
    vec![
        SUBSTR,
        LENGTH,
        UPPER,
        LOWER,
        TRIM,
        LTRIM,
        RTRIM,
        REPLACE,
        STRPOS,
        LEFT,
        RIGHT,
        LPAD,
        RPAD,
        SPLIT_PART,
        REVERSE,
        REPEAT,
        CONCAT,
        INITCAP,
        TRANSLATE,
        OCTET_LENGTH,
    ]
}

/// `substr(s, start [, len])`: 1-based, in characters.
pub const SUBSTR: ScalarFunc = ScalarFunc::new(&Substr);
/// Length in characters.
pub const LENGTH: ScalarFunc = ScalarFunc::new(&Length);
/// Upper case.
pub const UPPER: ScalarFunc = ScalarFunc::new(&MapText {
    names: &["upper"],
    map: |s, buf| buf.push_str(&s.to_uppercase()),
});
/// Lower case.
pub const LOWER: ScalarFunc = ScalarFunc::new(&MapText {
    names: &["lower"],
    map: |s, buf| buf.push_str(&s.to_lowercase()),
});
/// Leading and trailing spaces removed.
pub const TRIM: ScalarFunc = ScalarFunc::new(&MapText {
    names: &["trim", "btrim"],
    map: |s, buf| buf.push_str(s.trim_matches(' ')),
});
/// Leading spaces removed.
pub const LTRIM: ScalarFunc = ScalarFunc::new(&MapText {
    names: &["ltrim"],
    map: |s, buf| buf.push_str(s.trim_start_matches(' ')),
});
/// Trailing spaces removed.
pub const RTRIM: ScalarFunc = ScalarFunc::new(&MapText {
    names: &["rtrim"],
    map: |s, buf| buf.push_str(s.trim_end_matches(' ')),
});
/// The characters in reverse order.
pub const REVERSE: ScalarFunc = ScalarFunc::new(&MapText {
    names: &["reverse"],
    map: |s, buf| buf.extend(s.chars().rev()),
});
/// `translate(s, from, to)`: each character of `from` replaced by the
/// character at its position in `to`, or removed where `to` is shorter.
pub const TRANSLATE: ScalarFunc = ScalarFunc::new(&WithConstants {
    names: &["translate"],
    op: TextOp::Translate,
});
/// The length in bytes of the UTF-8 text.
pub const OCTET_LENGTH: ScalarFunc = ScalarFunc::new(&OctetLength);

/// Each word's first letter in upper case, the rest in lower case
/// (PostgreSQL's `initcap`: words are runs of letters and digits).
pub const INITCAP: ScalarFunc = ScalarFunc::new(&MapText {
    names: &["initcap"],
    map: initcap,
});

fn initcap(s: &str, buf: &mut String) {
    let mut in_word = false;
    for c in s.chars() {
        if in_word {
            buf.extend(c.to_lowercase());
        } else {
            buf.extend(c.to_uppercase());
        }
        in_word = c.is_alphanumeric();
    }
}

/// `replace(s, from, to)`: every `from` (a constant) replaced by `to`.
pub const REPLACE: ScalarFunc = ScalarFunc::new(&Replace);
/// `strpos(s, sub)`: 1-based character position of `sub`, 0 if absent.
pub const STRPOS: ScalarFunc = ScalarFunc::new(&WithConstants {
    names: &["strpos", "instr"],
    op: TextOp::StrPos,
});
/// `left(s, n)`: the first n characters (all but the last -n if n < 0).
pub const LEFT: ScalarFunc = ScalarFunc::new(&WithConstants {
    names: &["left"],
    op: TextOp::Left,
});
/// `right(s, n)`: the last n characters (all but the first -n if n < 0).
pub const RIGHT: ScalarFunc = ScalarFunc::new(&WithConstants {
    names: &["right"],
    op: TextOp::Right,
});
/// `lpad(s, n [, fill])`: `s` padded on the left (or cut) to n characters.
pub const LPAD: ScalarFunc = ScalarFunc::new(&WithConstants {
    names: &["lpad"],
    op: TextOp::Lpad,
});
/// `rpad(s, n [, fill])`: padded on the right.
pub const RPAD: ScalarFunc = ScalarFunc::new(&WithConstants {
    names: &["rpad"],
    op: TextOp::Rpad,
});
/// `split_part(s, delimiter, n)`: the n-th field (from the end if n < 0).
pub const SPLIT_PART: ScalarFunc = ScalarFunc::new(&WithConstants {
    names: &["split_part"],
    op: TextOp::SplitPart,
});
/// `repeat(s, n)`: `s` n times.
pub const REPEAT: ScalarFunc = ScalarFunc::new(&WithConstants {
    names: &["repeat"],
    op: TextOp::Repeat,
});
/// `a || b || ..`: the arguments as text, joined; null if any is null.
/// SQL's `concat(..)`, which reads a null as '', is planned as this over
/// coalesced arguments.
pub const CONCAT: ScalarFunc = ScalarFunc::new(&Concat);

/// The text argument of a row, `None` for a null.
fn text(v: &Value) -> Option<&str> {
    match v {
        Value::Str(s) => Some(s),
        _ => None,
    }
}

/// Checks that the arguments after the first are constants.
fn constants_after_first(name: &str, args: &[ArgType]) -> Result<()> {
    if args[1..].iter().any(|a| a.constant.is_none()) {
        return Err(SlothError::unsupported(format!(
            "{name}() arguments after the first must be constants"
        )));
    }
    Ok(())
}

#[derive(Debug)]
struct Substr;

impl ScalarFunction for Substr {
    fn names(&self) -> &'static [&'static str] {
        &["substr", "substring"]
    }
    fn signature(&self, args: &[ArgType]) -> Result<Signature> {
        check_arity("substr", args.len(), 2, 3)?;
        need_string("substr", args[0].data_type)?;
        if args[1..]
            .iter()
            .any(|a| a.constant.is_none() || !a.data_type.is_integer())
        {
            return Err(SlothError::unsupported(
                "substr() start and length must be integer constants",
            ));
        }
        // Views stay views (`kernels::strings::substr`).
        let output = match args[0].data_type {
            DataType::Utf8View => DataType::Utf8View,
            _ => DataType::Utf8,
        };
        Ok(Signature::returning(args.len(), output))
    }
    fn invoke(&self, args: &[ColumnarValue], _: &DataType, _: usize) -> Result<ColumnarValue> {
        let start = constant_i64(args[1].array())?;
        let len = args.get(2).map(|a| constant_i64(a.array())).transpose()?;
        on_first(args, |a| strings::substr(a, start, len))
    }
    fn invoke_row(&self, args: &[Value]) -> Option<Result<Value>> {
        let Some(s) = text(&args[0]) else {
            return Some(Ok(Value::Null));
        };
        let (Value::Int(start), len) = (&args[1], args.get(2)) else {
            return None;
        };
        let len = match len {
            Some(Value::Int(l)) => Some(*l),
            None => None,
            Some(_) => return None,
        };
        let from = (start.max(&1) - 1) as usize;
        let take = match len {
            Some(l) => (start.saturating_add(l.max(0)) - start.max(&1)).max(0) as usize,
            None => usize::MAX,
        };
        Some(Ok(Value::Str(
            s.chars().skip(from).take(take).collect::<String>().into(),
        )))
    }
}

#[derive(Debug)]
struct OctetLength;

impl ScalarFunction for OctetLength {
    fn names(&self) -> &'static [&'static str] {
        &["octet_length"]
    }
    fn signature(&self, args: &[ArgType]) -> Result<Signature> {
        check_arity("octet_length", args.len(), 1, 1)?;
        need_string("octet_length", args[0].data_type)?;
        Ok(Signature::all_cast(1, DataType::Utf8, DataType::Int64))
    }
    fn invoke(&self, args: &[ColumnarValue], _: &DataType, _: usize) -> Result<ColumnarValue> {
        on_first(args, |a| {
            let lengths = arrow::compute::kernels::length::length(a)?;
            Ok(arrow::compute::cast(&lengths, &DataType::Int64)?)
        })
    }
    fn invoke_row(&self, args: &[Value]) -> Option<Result<Value>> {
        Some(Ok(match text(&args[0]) {
            Some(s) => Value::Int(s.len() as i64),
            None => Value::Null,
        }))
    }
}

#[derive(Debug)]
struct Length;

impl ScalarFunction for Length {
    fn names(&self) -> &'static [&'static str] {
        &["length", "char_length", "character_length", "len"]
    }
    fn signature(&self, args: &[ArgType]) -> Result<Signature> {
        check_arity("length", args.len(), 1, 1)?;
        need_string("length", args[0].data_type)?;
        Ok(Signature::returning(1, DataType::Int64))
    }
    fn invoke(&self, args: &[ColumnarValue], _: &DataType, _: usize) -> Result<ColumnarValue> {
        on_first(args, strings::char_length)
    }
    fn invoke_row(&self, args: &[Value]) -> Option<Result<Value>> {
        Some(Ok(match text(&args[0]) {
            Some(s) => Value::Int(s.chars().count() as i64),
            None => Value::Null,
        }))
    }
}

/// A function of one string that writes each value's result text.
#[derive(Debug)]
pub(super) struct MapText {
    /// The SQL names.
    pub(super) names: &'static [&'static str],
    /// Appends the result for one value.
    pub(super) map: fn(&str, &mut String),
}

impl ScalarFunction for MapText {
    fn names(&self) -> &'static [&'static str] {
        self.names
    }
    fn signature(&self, args: &[ArgType]) -> Result<Signature> {
        check_arity(self.name(), args.len(), 1, 1)?;
        need_string(self.name(), args[0].data_type)?;
        Ok(Signature::returning(1, DataType::Utf8))
    }
    fn invoke(&self, args: &[ColumnarValue], _: &DataType, _: usize) -> Result<ColumnarValue> {
        on_first(args, |a| strings::map_str(a, self.map))
    }
    fn invoke_row(&self, args: &[Value]) -> Option<Result<Value>> {
        Some(Ok(match text(&args[0]) {
            Some(s) => {
                let mut out = String::new();
                (self.map)(s, &mut out);
                Value::Str(out.into())
            }
            None => Value::Null,
        }))
    }
}

#[derive(Debug)]
struct Replace;

impl ScalarFunction for Replace {
    fn names(&self) -> &'static [&'static str] {
        &["replace"]
    }
    fn signature(&self, args: &[ArgType]) -> Result<Signature> {
        check_arity("replace", args.len(), 3, 3)?;
        need_string("replace", args[0].data_type)?;
        if args[1..].iter().any(|a| a.constant.is_none()) {
            return Err(SlothError::unsupported(
                "replace() search and replacement must be constants",
            ));
        }
        Ok(Signature::returning(3, DataType::Utf8))
    }
    fn invoke(&self, args: &[ColumnarValue], _: &DataType, _: usize) -> Result<ColumnarValue> {
        let constant = |v: &ColumnarValue| -> Result<Option<String>> {
            constant_string(v.array())
                .ok_or_else(|| SlothError::plan("replace() takes constant search and replacement"))
        };
        let (from, to) = (constant(&args[1])?, constant(&args[2])?);
        on_first(args, |a| match (&from, &to) {
            (Some(from), Some(to)) => strings::map_str(a, |s, buf| {
                if from.is_empty() {
                    buf.push_str(s)
                } else {
                    buf.push_str(&s.replace(from.as_str(), to))
                }
            }),
            _ => Ok(new_null_array(&DataType::Utf8, a.len())),
        })
    }
}

/// What a [`WithConstants`] function does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TextOp {
    StrPos,
    Left,
    Right,
    Lpad,
    Rpad,
    SplitPart,
    Repeat,
    Translate,
}

/// A function of a string and constants.
#[derive(Debug)]
struct WithConstants {
    names: &'static [&'static str],
    op: TextOp,
}

impl WithConstants {
    /// An error, before anything is made, if the result could pass the
    /// most text one Arrow string array holds (offsets are 32-bit).
    fn check_output_bytes(&self, bytes: u128) -> Result<()> {
        const MOST: u128 = i32::MAX as u128;
        if bytes > MOST {
            return Err(SlothError::Data(format!(
                "{}() would make up to {bytes} bytes of text in one batch; at most {MOST} fit",
                self.name()
            )));
        }
        Ok(())
    }

    fn apply(&self, a: &ArrayRef, consts: &[&ArrayRef]) -> Result<ArrayRef> {
        let text = |i: usize| -> Result<String> {
            constant_string(consts[i])
                .flatten()
                .ok_or_else(|| SlothError::types(format!("{}() needs text arguments", self.name())))
        };
        let int = |i: usize| constant_i64(consts[i]);
        match self.op {
            TextOp::StrPos => strings::strpos(a, &text(0)?),
            TextOp::Left => {
                let n = int(0)?;
                strings::map_str(a, |s, buf| buf.push_str(strings::left(s, n)))
            }
            TextOp::Right => {
                let n = int(0)?;
                strings::map_str(a, |s, buf| buf.push_str(strings::right(s, n)))
            }
            TextOp::Lpad | TextOp::Rpad => {
                let n = int(0)?;
                let fill = if consts.len() > 1 {
                    text(1)?
                } else {
                    " ".into()
                };
                // Every row becomes n characters of at most 4 bytes each.
                let rows = (a.len() - a.logical_null_count()) as u128;
                self.check_output_bytes(rows * n.max(0) as u128 * 4)?;
                let on_left = self.op == TextOp::Lpad;
                strings::map_str(a, |s, buf| strings::pad(s, n, &fill, on_left, buf))
            }
            TextOp::SplitPart => {
                let (delimiter, n) = (text(0)?, int(1)?);
                strings::map_str(a, |s, buf| {
                    buf.push_str(strings::split_part(s, &delimiter, n))
                })
            }
            TextOp::Translate => {
                let (from, to): (Vec<char>, Vec<char>) =
                    (text(0)?.chars().collect(), text(1)?.chars().collect());
                strings::map_str(a, |s, buf| {
                    for c in s.chars() {
                        match from.iter().position(|f| *f == c) {
                            Some(i) => buf.extend(to.get(i)),
                            None => buf.push(c),
                        }
                    }
                })
            }
            TextOp::Repeat => {
                let n = int(0)?.max(0) as usize;
                let text_bytes = strings::total_bytes(a)? as u128;
                self.check_output_bytes(text_bytes * n as u128)?;
                strings::map_str(a, |s, buf| {
                    for _ in 0..n {
                        buf.push_str(s)
                    }
                })
            }
        }
    }
}

impl ScalarFunction for WithConstants {
    fn names(&self) -> &'static [&'static str] {
        self.names
    }
    fn signature(&self, args: &[ArgType]) -> Result<Signature> {
        let (min, max, output) = match self.op {
            TextOp::StrPos => (2, 2, DataType::Int64),
            TextOp::Lpad | TextOp::Rpad => (2, 3, DataType::Utf8),
            TextOp::SplitPart | TextOp::Translate => (3, 3, DataType::Utf8),
            TextOp::Left | TextOp::Right | TextOp::Repeat => (2, 2, DataType::Utf8),
        };
        check_arity(self.name(), args.len(), min, max)?;
        need_string(self.name(), args[0].data_type)?;
        constants_after_first(self.name(), args)?;
        Ok(Signature::returning(args.len(), output))
    }
    fn invoke(&self, args: &[ColumnarValue], output: &DataType, _: usize) -> Result<ColumnarValue> {
        let consts: Vec<&ArrayRef> = args[1..].iter().map(ColumnarValue::array).collect();
        if consts.iter().any(|c| c.logical_null_count() > 0) {
            return on_first(args, |a| Ok(new_null_array(output, a.len())));
        }
        on_first(args, |a| self.apply(a, &consts))
    }
}

#[derive(Debug)]
struct Concat;

impl ScalarFunction for Concat {
    fn names(&self) -> &'static [&'static str] {
        &["concat"]
    }
    // SQL's concat(..) reads a null as ''; it is planned over this.
    fn planner_only(&self) -> bool {
        true
    }
    fn signature(&self, args: &[ArgType]) -> Result<Signature> {
        check_arity("concat", args.len(), 2, usize::MAX)?;
        // Numbers and dates join as their text, as in PostgreSQL.
        let casts = args
            .iter()
            .map(|a| match a.data_type {
                DataType::Utf8 | DataType::Utf8View | DataType::LargeUtf8 => None,
                _ => Some(DataType::Utf8),
            })
            .collect();
        Ok(Signature {
            casts,
            output: DataType::Utf8,
        })
    }
    fn invoke(&self, args: &[ColumnarValue], _: &DataType, rows: usize) -> Result<ColumnarValue> {
        let parts: Vec<(ArrayRef, bool)> = args
            .iter()
            .map(|v| (v.array().clone(), v.is_scalar()))
            .collect();
        let all_scalar = parts.iter().all(|(_, constant)| *constant);
        let rows = if all_scalar { 1 } else { rows };
        Ok(ColumnarValue::wrap(
            strings::concat(&parts, rows)?,
            all_scalar,
        ))
    }
    fn invoke_row(&self, args: &[Value]) -> Option<Result<Value>> {
        let mut out = String::new();
        for v in args {
            match v {
                Value::Null => return Some(Ok(Value::Null)),
                v => out.push_str(text(v)?),
            }
        }
        Some(Ok(Value::Str(out.into())))
    }
}

impl Expr {
    /// Characters `start..start+len` (1-based start, as SQL).
    pub fn substr(self, start: i64, len: Option<i64>) -> Expr {
        let mut args = vec![self, lit(start)];
        if let Some(len) = len {
            args.push(lit(len));
        }
        Expr::Function(SUBSTR, args)
    }
}

super::unary_builders! {
    /// The length in characters.
    str_len => LENGTH;
    /// Upper case.
    to_uppercase => UPPER;
    /// Lower case.
    to_lowercase => LOWER;
    /// The characters in reverse order.
    reverse => REVERSE;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expr::col;
    use crate::functions::test_util::{eval, strings, try_eval};
    use arrow::array::AsArray;

    fn texts(a: &ArrayRef) -> Vec<Option<String>> {
        let a = arrow::compute::cast(a, &DataType::Utf8).unwrap();
        a.as_string::<i32>()
            .iter()
            .map(|v| v.map(String::from))
            .collect()
    }

    #[test]
    fn functions_with_constants_count_characters_and_null_constants_give_nulls() {
        let s = &[("s", strings(&[Some("héllo"), None, Some("ab")]))];
        let call = |f, args: Vec<Expr>| {
            let mut all = vec![col("s")];
            all.extend(args);
            texts(&eval(Expr::Function(f, all), s))
        };
        let some = |v: &[&str]| v.iter().map(|s| Some(s.to_string())).collect::<Vec<_>>();
        let left = call(LEFT, vec![lit(2i64)]);
        assert_eq!(left, vec![Some("hé".into()), None, Some("ab".into())]);
        let padded = call(LPAD, vec![lit(4i64), lit("*")]);
        assert_eq!(padded, vec![Some("héll".into()), None, Some("**ab".into())]);
        let repeated = call(REPEAT, vec![lit(2i64)]);
        assert_eq!(repeated[0], Some("héllohéllo".into()));
        let part = texts(&eval(
            Expr::Function(SPLIT_PART, vec![lit("a,b,c"), lit(","), lit(-1i64)]),
            s,
        ));
        assert_eq!(part, some(&["c", "c", "c"]));
        let null_fill = call(LPAD, vec![lit(4i64), lit(crate::expr::ScalarValue::Null)]);
        assert_eq!(null_fill, vec![None, None, None]);
    }

    #[test]
    fn translate_maps_and_drops_characters_and_octet_length_counts_bytes() {
        let s = [("s", strings(&[Some("héllo"), None]))];
        let out = eval(
            Expr::Function(TRANSLATE, vec![col("s"), lit("hél"), lit("HE")]),
            &s,
        );
        assert_eq!(texts(&out), vec![Some("HEo".into()), None]);
        let bytes = eval(Expr::Function(OCTET_LENGTH, vec![col("s")]), &s);
        let bytes = arrow::compute::cast(&bytes, &DataType::Utf8).unwrap();
        assert_eq!(texts(&bytes), vec![Some("6".into()), None]);
    }

    #[test]
    fn initcap_capitalizes_each_word() {
        let s = strings(&[Some("hello wORLD-foo 2nd"), None, Some("élan")]);
        let out = texts(&eval(Expr::Function(INITCAP, vec![col("s")]), &[("s", s)]));
        assert_eq!(
            out,
            vec![
                Some("Hello World-Foo 2nd".into()),
                None,
                Some("Élan".into())
            ]
        );
    }

    #[test]
    fn row_forms_agree_with_the_columnar_kernels() {
        let input = strings(&[Some(" Mixed Case "), None]);
        for f in [UPPER, LOWER, TRIM, LTRIM, RTRIM, REVERSE, LENGTH, INITCAP] {
            let out = eval(Expr::Function(f, vec![col("s")]), &[("s", input.clone())]);
            for (i, v) in [Value::Str(" Mixed Case ".into()), Value::Null]
                .iter()
                .enumerate()
            {
                let row = f
                    .function()
                    .invoke_row(std::slice::from_ref(v))
                    .unwrap()
                    .unwrap();
                let cell = Value::from_array(out.as_ref(), i).unwrap();
                assert_eq!(format!("{row:?}"), format!("{cell:?}"), "{}", f.name());
            }
        }
        let sub = eval(col("s").substr(2, Some(3)), &[("s", input.clone())]);
        let row = SUBSTR
            .function()
            .invoke_row(&[
                Value::Str(" Mixed Case ".into()),
                Value::Int(2),
                Value::Int(3),
            ])
            .unwrap()
            .unwrap();
        assert_eq!(
            format!("{row:?}"),
            format!("{:?}", Value::from_array(sub.as_ref(), 0).unwrap())
        );
    }

    #[test]
    fn a_column_where_a_constant_belongs_is_refused_by_name() {
        let s = strings(&[Some("a")]);
        let err = try_eval(
            Expr::Function(LEFT, vec![col("s"), col("n")]),
            &[
                ("s", s.clone()),
                (
                    "n",
                    std::sync::Arc::new(arrow::array::Int64Array::from(vec![1])),
                ),
            ],
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("left() arguments after the first must be constants"),
            "{err}"
        );
    }

    #[test]
    fn results_past_what_a_string_array_holds_are_refused_before_they_are_made() {
        use crate::expr::lit;
        let s = strings(&[Some("ab"), None, Some("c")]);
        for (call, name) in [
            (
                Expr::Function(REPEAT, vec![col("s"), lit(1_000_000_000i64)]),
                "repeat",
            ),
            (Expr::Function(LPAD, vec![col("s"), lit(i64::MAX)]), "lpad"),
            (
                Expr::Function(RPAD, vec![col("s"), lit(600_000_000i64), lit("y")]),
                "rpad",
            ),
        ] {
            let err = try_eval(call, &[("s", s.clone())]).unwrap_err().to_string();
            assert!(err.contains(&format!("{name}() would make up to")), "{err}");
        }
        // Within the bound: made.
        let ok = eval(
            Expr::Function(REPEAT, vec![col("s"), lit(3i64)]),
            &[("s", s.clone())],
        );
        assert_eq!(
            texts(&ok),
            vec![Some("ababab".into()), None, Some("ccc".into())]
        );
    }
}
