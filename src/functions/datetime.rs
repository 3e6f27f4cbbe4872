//! Date functions: the parts of a date (`year`, `month`, `day`, `quarter`,
//! `dayofweek`, `dayofyear`) and `date_trunc(unit, date)`.

use arrow::array::ArrayRef;
use arrow::compute::kernels::temporal::{DatePart, date_part};
use arrow::datatypes::DataType;
use chrono::{Datelike, NaiveDate};

use super::on_first;
use crate::error::{Result, SlothError};
use crate::expr::function::{ArgType, ColumnarValue, Signature, check_arity, constant_string};
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
}
