//! `date_trunc(unit, date)`: each date moved back to the first day of its
//! year, quarter, month or ISO week (Monday), or left as it is for `day`.
//! The unit is a constant, checked when the expression is planned.

use std::sync::Arc;

use arrow::array::{ArrayRef, AsArray, Date32Array};
use arrow::datatypes::Date32Type;
use chrono::{Datelike, NaiveDate};

use crate::error::{Result, SlothError};

/// What `date_trunc` truncates to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TruncUnit {
    /// January 1st.
    Year,
    /// The first day of January, April, July or October.
    Quarter,
    /// The first of the month.
    Month,
    /// The Monday of the ISO week.
    Week,
    /// The date itself.
    Day,
}

impl TruncUnit {
    /// The unit `name` names (any case), or an error listing the units.
    pub fn parse(name: &str) -> Result<TruncUnit> {
        Ok(match name.to_ascii_lowercase().as_str() {
            "year" => TruncUnit::Year,
            "quarter" => TruncUnit::Quarter,
            "month" => TruncUnit::Month,
            "week" => TruncUnit::Week,
            "day" => TruncUnit::Day,
            _ => {
                return Err(SlothError::plan(format!(
                    "date_trunc() unit '{name}' is not one of year, quarter, month, week, day"
                )));
            }
        })
    }
}

/// Days from 0001-01-01 (chrono's day 1) to 1970-01-01 (Date32's day 0).
const UNIX_EPOCH_FROM_CE: i32 = 719_163;

/// `days` (since 1970-01-01) truncated to `unit`; a date chrono cannot
/// represent is left as it is.
pub fn truncate(days: i32, unit: TruncUnit) -> i32 {
    let Some(date) = days
        .checked_add(UNIX_EPOCH_FROM_CE)
        .and_then(NaiveDate::from_num_days_from_ce_opt)
    else {
        return days;
    };
    let start = match unit {
        TruncUnit::Year => date.with_ordinal(1),
        TruncUnit::Quarter => NaiveDate::from_ymd_opt(date.year(), date.month0() / 3 * 3 + 1, 1),
        TruncUnit::Month => date.with_day(1),
        TruncUnit::Week => {
            Some(date - chrono::Days::new(date.weekday().num_days_from_monday() as u64))
        }
        TruncUnit::Day => Some(date),
    };
    start.map_or(days, |d| d.num_days_from_ce() - UNIX_EPOCH_FROM_CE)
}

/// `date_trunc` over a Date32 array.
pub fn date_trunc(dates: &ArrayRef, unit: TruncUnit) -> ArrayRef {
    let out: Date32Array = dates
        .as_primitive::<Date32Type>()
        .unary(|d| truncate(d, unit));
    Arc::new(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expr::parse_date32;

    fn trunc(date: &str, unit: &str) -> i32 {
        truncate(parse_date32(date).unwrap(), TruncUnit::parse(unit).unwrap())
    }

    #[test]
    fn each_unit_moves_to_its_first_day() {
        let day = |s: &str| parse_date32(s).unwrap();
        assert_eq!(trunc("1996-08-17", "year"), day("1996-01-01"));
        assert_eq!(trunc("1996-08-17", "QUARTER"), day("1996-07-01"));
        assert_eq!(trunc("1996-08-17", "month"), day("1996-08-01"));
        // 1996-08-17 was a Saturday; its ISO week began on Monday the 12th.
        assert_eq!(trunc("1996-08-17", "week"), day("1996-08-12"));
        assert_eq!(trunc("1996-08-12", "week"), day("1996-08-12"));
        assert_eq!(trunc("1996-08-17", "day"), day("1996-08-17"));
        // Before 1970, and across a year boundary.
        assert_eq!(trunc("1969-12-31", "quarter"), day("1969-10-01"));
        assert_eq!(trunc("2021-01-01", "week"), day("2020-12-28"));
    }

    #[test]
    fn unknown_units_are_refused_with_the_list() {
        let err = TruncUnit::parse("fortnight").unwrap_err().to_string();
        assert!(err.contains("year, quarter, month, week, day"), "{err}");
    }
}
