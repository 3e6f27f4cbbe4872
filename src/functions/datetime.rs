//! Date functions: the parts of a date (`year`, `month`, `day`, `quarter`,
//! `dayofweek`, `dayofyear`), `date_trunc(unit, date)`,
//! `make_date(year, month, day)` and `strftime(date, format)`.

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, Date32Array, StringBuilder};
use arrow::compute::kernels::temporal::{DatePart, date_part};
use arrow::datatypes::{DataType, Int64Type, TimeUnit, TimestampMicrosecondType};
use chrono::format::{Item, StrftimeItems};
use chrono::{Datelike, NaiveDate};

use super::{aligned, on_first};
use crate::error::{Result, SlothError};
use crate::expr::function::{
    ArgType, ColumnarValue, Signature, check_arity, constant_string, need_number,
};
use crate::expr::value::Value;
use crate::expr::{ScalarFunc, ScalarFunction};
use crate::kernels::date_trunc::{TruncUnit, date_trunc, truncate};

pub(super) fn functions() -> Vec<ScalarFunc> {
    vec![
        YEAR,
        MONTH,
        DAY,
        QUARTER,
        DAY_OF_WEEK,
        DAY_OF_YEAR,
        DATE_TRUNC,
        MAKE_DATE,
        STRFTIME,
    ]
}

/// Year of a date or timestamp.
pub const YEAR: ScalarFunc = ScalarFunc::new(&PartOf {
    names: &["year"],
    part: DatePart::Year,
});
/// Month (1–12).
pub const MONTH: ScalarFunc = ScalarFunc::new(&PartOf {
    names: &["month"],
    part: DatePart::Month,
});
/// Day of month (1–31).
pub const DAY: ScalarFunc = ScalarFunc::new(&PartOf {
    names: &["day"],
    part: DatePart::Day,
});
/// Quarter (1–4).
pub const QUARTER: ScalarFunc = ScalarFunc::new(&PartOf {
    names: &["quarter"],
    part: DatePart::Quarter,
});
/// Day of week, Sunday 0 to Saturday 6 (PostgreSQL's `dow`).
pub const DAY_OF_WEEK: ScalarFunc = ScalarFunc::new(&PartOf {
    names: &["dayofweek"],
    part: DatePart::DayOfWeekSunday0,
});
/// Day of year (1–366).
pub const DAY_OF_YEAR: ScalarFunc = ScalarFunc::new(&PartOf {
    names: &["dayofyear"],
    part: DatePart::DayOfYear,
});
/// `date_trunc(unit, date)`: the first day of the date's year, quarter,
/// month or ISO week, or the date (`day`); `unit` is a constant.
pub const DATE_TRUNC: ScalarFunc = ScalarFunc::new(&DateTrunc);
/// `make_date(year, month, day)`: the date, an error where there is none
/// (`make_date(2023, 2, 29)`), null where an argument is null.
pub const MAKE_DATE: ScalarFunc = ScalarFunc::new(&MakeDate);
/// `strftime(date_or_timestamp, format)`: the value as text, with the C
/// `strftime` codes (`%Y-%m-%d %H:%M:%S`, `%a`, `%B`, `%j`, ...); the
/// format is a constant.
pub const STRFTIME: ScalarFunc = ScalarFunc::new(&Strftime);

/// One part of a date, as an integer.
#[derive(Debug)]
struct PartOf {
    names: &'static [&'static str],
    part: DatePart,
}

impl PartOf {
    fn of(&self, date: NaiveDate) -> i64 {
        match self.part {
            DatePart::Year => date.year() as i64,
            DatePart::Month => date.month() as i64,
            DatePart::Quarter => date.month0() as i64 / 3 + 1,
            DatePart::DayOfWeekSunday0 => date.weekday().num_days_from_sunday() as i64,
            DatePart::DayOfYear => date.ordinal() as i64,
            _ => date.day() as i64,
        }
    }
}

impl ScalarFunction for PartOf {
    fn names(&self) -> &'static [&'static str] {
        self.names
    }
    fn signature(&self, args: &[ArgType]) -> Result<Signature> {
        check_arity(self.name(), args.len(), 1, 1)?;
        if !matches!(
            args[0].data_type,
            DataType::Date32 | DataType::Date64 | DataType::Timestamp(..)
        ) {
            return Err(SlothError::types(format!(
                "{}() needs a date or timestamp, got {}",
                self.name(),
                args[0].data_type
            )));
        }
        Ok(Signature::returning(1, DataType::Int32))
    }
    fn invoke(&self, args: &[ColumnarValue], _: &DataType, _: usize) -> Result<ColumnarValue> {
        on_first(args, |a| Ok(date_part(a, self.part)?))
    }
    fn invoke_row(&self, args: &[Value]) -> Option<Result<Value>> {
        // Timestamps run the columnar kernel on the row.
        let days = match args[0] {
            Value::Null => return Some(Ok(Value::Null)),
            Value::Date(d) => d,
            _ => return None,
        };
        let date = arrow::temporal_conversions::date32_to_datetime(days).map(|t| t.date());
        Some(Ok(date.map_or(Value::Null, |d| Value::Int(self.of(d)))))
    }
}

/// The unit of `date_trunc(unit, date)`: a string constant naming one.
fn trunc_unit(unit: Option<&ArrayRef>) -> Result<TruncUnit> {
    let name = unit
        .and_then(constant_string)
        .flatten()
        .ok_or_else(|| SlothError::plan("date_trunc() takes a constant unit, such as 'month'"))?;
    TruncUnit::parse(&name)
}

#[derive(Debug)]
struct DateTrunc;

impl ScalarFunction for DateTrunc {
    fn names(&self) -> &'static [&'static str] {
        &["date_trunc"]
    }
    fn signature(&self, args: &[ArgType]) -> Result<Signature> {
        check_arity("date_trunc", args.len(), 2, 2)?;
        trunc_unit(args[0].constant)?;
        if *args[1].data_type != DataType::Date32 {
            return Err(SlothError::types(format!(
                "date_trunc() needs a date, got {}",
                args[1].data_type
            )));
        }
        Ok(Signature::returning(2, DataType::Date32))
    }
    fn invoke(&self, args: &[ColumnarValue], _: &DataType, _: usize) -> Result<ColumnarValue> {
        let unit = trunc_unit(Some(args[0].array()))?;
        let dates = &args[1];
        Ok(ColumnarValue::wrap(
            date_trunc(dates.array(), unit),
            dates.is_scalar(),
        ))
    }
    fn invoke_row(&self, args: &[Value]) -> Option<Result<Value>> {
        let unit = match &args[0] {
            Value::Str(s) => TruncUnit::parse(s),
            _ => return Some(Ok(Value::Null)),
        };
        Some(unit.map(|unit| match args[1] {
            Value::Date(d) => Value::Date(truncate(d, unit)),
            _ => Value::Null,
        }))
    }
}

/// The epoch's day number of a proleptic Gregorian date.
fn days_since_epoch(date: NaiveDate) -> i32 {
    (date - NaiveDate::default()).num_days() as i32
}

#[derive(Debug)]
struct MakeDate;

impl MakeDate {
    fn date(year: i64, month: i64, day: i64) -> Result<i32> {
        let part = |v: i64| u32::try_from(v).ok();
        i32::try_from(year)
            .ok()
            .zip(part(month).zip(part(day)))
            .and_then(|(y, (m, d))| NaiveDate::from_ymd_opt(y, m, d))
            .map(days_since_epoch)
            .ok_or_else(|| {
                SlothError::Data(format!("make_date({year}, {month}, {day}) is not a date"))
            })
    }
}

impl ScalarFunction for MakeDate {
    fn names(&self) -> &'static [&'static str] {
        &["make_date"]
    }
    fn signature(&self, args: &[ArgType]) -> Result<Signature> {
        check_arity("make_date", args.len(), 3, 3)?;
        for a in args {
            need_number("make_date", a.data_type)?;
        }
        Ok(Signature::all_cast(3, DataType::Int64, DataType::Date32))
    }
    fn invoke(&self, args: &[ColumnarValue], _: &DataType, rows: usize) -> Result<ColumnarValue> {
        let (arrays, constant) = aligned(args, rows)?;
        let [y, m, d] = [0, 1, 2].map(|i| arrays[i].as_primitive::<Int64Type>());
        let dates = (0..y.len())
            .map(|i| match y.is_valid(i) && m.is_valid(i) && d.is_valid(i) {
                true => Self::date(y.value(i), m.value(i), d.value(i)).map(Some),
                false => Ok(None),
            })
            .collect::<Result<Date32Array>>()?;
        Ok(ColumnarValue::wrap(Arc::new(dates), constant))
    }
    fn invoke_row(&self, args: &[Value]) -> Option<Result<Value>> {
        Some(match args {
            [Value::Int(y), Value::Int(m), Value::Int(d)] => {
                Self::date(*y, *m, *d).map(Value::Date)
            }
            _ => Ok(Value::Null),
        })
    }
}

/// A strftime format parsed once: an error names the bad format.
fn strftime_items(format: Option<&ArrayRef>) -> Result<Vec<Item<'static>>> {
    let format = format.and_then(constant_string).flatten().ok_or_else(|| {
        SlothError::plan("strftime() takes a constant format, such as '%Y-%m-%d'")
    })?;
    StrftimeItems::new(&format)
        .parse_to_owned()
        .map_err(|_| SlothError::plan(format!("strftime() format '{format}' is not valid")))
}

#[derive(Debug)]
struct Strftime;

impl ScalarFunction for Strftime {
    fn names(&self) -> &'static [&'static str] {
        &["strftime"]
    }
    fn signature(&self, args: &[ArgType]) -> Result<Signature> {
        check_arity("strftime", args.len(), 2, 2)?;
        strftime_items(args[1].constant)?;
        if !matches!(
            args[0].data_type,
            DataType::Date32 | DataType::Date64 | DataType::Timestamp(_, None) | DataType::Null
        ) {
            return Err(SlothError::types(format!(
                "strftime() needs a date or timestamp, got {}",
                args[0].data_type
            )));
        }
        let micros = DataType::Timestamp(TimeUnit::Microsecond, None);
        Ok(Signature {
            casts: vec![Some(micros), None],
            output: DataType::Utf8,
        })
    }
    fn invoke(&self, args: &[ColumnarValue], _: &DataType, _: usize) -> Result<ColumnarValue> {
        let items = strftime_items(Some(args[1].array()))?;
        on_first(args, |a| {
            let times = a.as_primitive::<TimestampMicrosecondType>();
            let mut out = StringBuilder::with_capacity(times.len(), times.len() * 16);
            for i in 0..times.len() {
                let time = times
                    .is_valid(i)
                    .then(|| times.value_as_datetime(i))
                    .flatten();
                match time {
                    Some(t) => out.append_value(t.format_with_items(items.iter()).to_string()),
                    None => out.append_null(),
                }
            }
            Ok(Arc::new(out.finish()) as ArrayRef)
        })
    }
}

super::unary_builders! {
    /// The year of a date or timestamp.
    year => YEAR;
    /// The month (1–12).
    month => MONTH;
    /// The day of the month (1–31).
    day => DAY;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expr::{Expr, col, lit};
    use crate::functions::test_util::eval;
    use arrow::array::{Array, Date32Array};
    use std::sync::Arc;

    #[test]
    fn parts_and_truncation_agree_row_by_row_with_nulls() {
        // 1998-12-01 (a Tuesday), 2024-02-29, null.
        let days = vec![Some(10561), Some(19782), None];
        let dates: ArrayRef = Arc::new(Date32Array::from(days.clone()));
        let input = [("d", dates)];
        let expected = [
            (YEAR, [1998, 2024]),
            (MONTH, [12, 2]),
            (DAY, [1, 29]),
            (QUARTER, [4, 1]),
            (DAY_OF_WEEK, [2, 4]),
            (DAY_OF_YEAR, [335, 60]),
        ];
        for (f, want) in expected {
            let out = eval(Expr::Function(f, vec![col("d")]), &input);
            for (i, day) in days.iter().enumerate() {
                let cell = Value::from_array(out.as_ref(), i).unwrap();
                let row = f
                    .function()
                    .invoke_row(&[day.map_or(Value::Null, Value::Date)])
                    .unwrap()
                    .unwrap();
                assert_eq!(format!("{cell:?}"), format!("{row:?}"), "{}", f.name());
                if i < 2 {
                    assert_eq!(format!("{cell:?}"), format!("{:?}", Value::Int(want[i])));
                }
            }
        }
        let month = eval(
            Expr::Function(DATE_TRUNC, vec![lit("month"), col("d")]),
            &input,
        );
        let month = month.as_any().downcast_ref::<Date32Array>().unwrap();
        assert_eq!(month.value(0), 10561, "already the first of its month");
        assert_eq!(month.value(1), 19782 - 28);
        assert!(month.is_null(2));
    }

    #[test]
    fn make_date_builds_dates_on_both_paths_and_refuses_impossible_ones() {
        use crate::functions::test_util::try_eval;
        use arrow::array::Int64Array;
        let ints = |v: &[Option<i64>]| -> ArrayRef { Arc::new(Int64Array::from(v.to_vec())) };
        let input = [
            ("y", ints(&[Some(2024), Some(1970), None])),
            ("m", ints(&[Some(2), Some(1), Some(1)])),
            ("d", ints(&[Some(29), Some(1), Some(1)])),
        ];
        let call = || Expr::Function(MAKE_DATE, vec![col("y"), col("m"), col("d")]);
        let out = eval(call(), &input);
        let out = out.as_any().downcast_ref::<Date32Array>().unwrap();
        assert_eq!(out.value(0), 19782, "2024-02-29");
        assert_eq!(out.value(1), 0, "the epoch");
        assert!(out.is_null(2));
        let row =
            MAKE_DATE
                .function()
                .invoke_row(&[Value::Int(2024), Value::Int(2), Value::Int(29)]);
        assert_eq!(
            format!("{:?}", row.unwrap().unwrap()),
            format!("{:?}", Value::Date(19782))
        );
        for (y, m, d) in [(2023, 2, 29), (2024, 13, 1), (2024, 0, 1), (2024, 1, -1)] {
            let input = [
                ("y", ints(&[Some(y)])),
                ("m", ints(&[Some(m)])),
                ("d", ints(&[Some(d)])),
            ];
            let e = try_eval(call(), &input).unwrap_err().to_string();
            assert!(
                e.contains(&format!("make_date({y}, {m}, {d}) is not a date")),
                "{e}"
            );
        }
    }

    #[test]
    fn strftime_formats_dates_and_timestamps_with_c_codes() {
        use crate::functions::test_util::try_eval;
        use arrow::array::{AsArray, TimestampMicrosecondArray};
        let dates: ArrayRef = Arc::new(Date32Array::from(vec![Some(19787), None]));
        let out = eval(
            Expr::Function(STRFTIME, vec![col("d"), lit("%Y/%m/%d %a %j %B")]),
            &[("d", dates.clone())],
        );
        let out = out.as_string::<i32>();
        assert_eq!(out.value(0), "2024/03/05 Tue 065 March");
        assert!(out.is_null(1));
        // 2024-03-05 13:04:05.
        let micros = 1_709_643_845_000_000;
        let times: ArrayRef = Arc::new(TimestampMicrosecondArray::from(vec![micros]));
        let out = eval(
            Expr::Function(STRFTIME, vec![col("t"), lit("%H:%M:%S %p")]),
            &[("t", times)],
        );
        assert_eq!(out.as_string::<i32>().value(0), "13:04:05 PM");
        let bad = Expr::Function(STRFTIME, vec![col("d"), lit("%Q")]);
        let e = try_eval(bad, &[("d", dates)]).unwrap_err().to_string();
        assert!(e.contains("format '%Q' is not valid"), "{e}");
    }
}
