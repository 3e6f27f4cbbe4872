//! Window frames: which rows of its partition each row's window aggregate
//! or value function reads.
//!
//! ```sql
//! sum(x) OVER (ORDER BY t ROWS BETWEEN 2 PRECEDING AND CURRENT ROW)   -- the row and the 2 before it
//! sum(x) OVER (ORDER BY t GROUPS BETWEEN 1 PRECEDING AND 1 FOLLOWING) -- its peers and the peer groups either side
//! sum(x) OVER (ORDER BY d RANGE BETWEEN INTERVAL 6 DAYS PRECEDING AND CURRENT ROW) -- rows whose d lies in [d - 6, d]
//! ```
//!
//! Every frame resolves, partition by partition, to one range of positions
//! per row ([`WindowFrame::partition_bounds`]); the executors fold those
//! ranges, whatever the units were. In all three units both ends of the
//! range only move forward as the row does, which the running folds rely
//! on.

use arrow::datatypes::{DataType, Date32Type, TimeUnit};

use crate::error::{Result, SlothError};

/// What a frame's offsets count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameUnits {
    /// Rows (`ROWS`).
    Rows,
    /// Groups of peers, rows tied in the window order (`GROUPS`).
    Groups,
    /// A distance in the value of the one order key (`RANGE`).
    Range,
}

/// One end of a frame, relative to the current row; negative: PRECEDING.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum FrameOffset {
    /// Rows (ROWS) or peer groups (GROUPS); 0 is CURRENT ROW in every unit
    /// (in RANGE and GROUPS the row's first or last peer).
    Count(isize),
    /// A RANGE distance in the order key's own units (days for a DATE).
    Value(f64),
    /// A RANGE distance over a DATE or TIMESTAMP order key: calendar
    /// months first (a day past a shorter month's end is its last day),
    /// then days and nanoseconds.
    Interval {
        /// Months.
        months: i32,
        /// Days.
        days: i32,
        /// Nanoseconds.
        nanos: i64,
    },
}

impl FrameOffset {
    /// Whether the offset is CURRENT ROW.
    fn is_current_row(self) -> bool {
        match self {
            FrameOffset::Count(n) => n == 0,
            FrameOffset::Value(v) => v == 0.0,
            FrameOffset::Interval {
                months,
                days,
                nanos,
            } => months == 0 && days == 0 && nanos == 0,
        }
    }

    /// Whether the offset lies before the current row.
    fn is_preceding(self) -> bool {
        match self {
            FrameOffset::Count(n) => n < 0,
            FrameOffset::Value(v) => v < 0.0,
            FrameOffset::Interval {
                months,
                days,
                nanos,
            } => months < 0 || days < 0 || nanos < 0,
        }
    }

    /// How the offset moves a value of an order key of type `key` (in
    /// days for a DATE, in the unit of a TIMESTAMP), for a RANGE frame.
    pub fn shift_of(self, key: &DataType) -> Result<Shift> {
        let unsupported = || {
            SlothError::plan(format!(
                "a RANGE frame offset {self} does not apply to an order key of type {key}"
            ))
        };
        let per_second = |unit: &TimeUnit| match unit {
            TimeUnit::Second => 1.0,
            TimeUnit::Millisecond => 1e3,
            TimeUnit::Microsecond => 1e6,
            TimeUnit::Nanosecond => 1e9,
        };
        let plain = |units: f64| Shift {
            months: 0,
            units,
            per_day: 1.0,
        };
        let numeric = key.is_numeric() || *key == DataType::Date32;
        match (self, key) {
            (FrameOffset::Count(0), _) => Ok(plain(0.0)),
            (FrameOffset::Count(n), _) if numeric => Ok(plain(n as f64)),
            (FrameOffset::Value(v), _) if numeric => Ok(plain(v)),
            (
                FrameOffset::Interval {
                    months,
                    days,
                    nanos,
                },
                DataType::Date32,
            ) if nanos % NANOS_PER_DAY == 0 => Ok(Shift {
                months,
                units: days as f64 + (nanos / NANOS_PER_DAY) as f64,
                per_day: 1.0,
            }),
            (
                FrameOffset::Interval {
                    months,
                    days,
                    nanos,
                },
                DataType::Timestamp(unit, _),
            ) => Ok(Shift {
                months,
                units: (days as f64 * 86_400.0 + nanos as f64 / 1e9) * per_second(unit),
                per_day: 86_400.0 * per_second(unit),
            }),
            _ => Err(unsupported()),
        }
    }
}

const NANOS_PER_DAY: i64 = 86_400_000_000_000;

/// How a RANGE frame's end moves an order key's value: by calendar
/// months, then by a fixed distance in the key's units (`per_day` of them
/// make a day).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Shift {
    months: i32,
    units: f64,
    per_day: f64,
}

impl Default for Shift {
    fn default() -> Self {
        Shift {
            months: 0,
            units: 0.0,
            per_day: 1.0,
        }
    }
}

impl Shift {
    /// `v` moved by the shift, or by its opposite when `against`.
    fn apply(self, v: f64, against: bool) -> f64 {
        let (months, units) = if against {
            (-self.months, -self.units)
        } else {
            (self.months, self.units)
        };
        let moved = if months == 0 {
            v
        } else {
            let days = (v / self.per_day).floor();
            let time = v - days * self.per_day;
            add_months(days as i64, months) as f64 * self.per_day + time
        };
        moved + units
    }
}

/// The day `months` calendar months from day `days` (days since
/// 1970-01-01), kept within a shorter month as PostgreSQL and DuckDB do
/// (January 31 plus a month is the last day of February).
fn add_months(days: i64, months: i32) -> i64 {
    let epoch = chrono::NaiveDate::from_ymd_opt(1970, 1, 1).expect("a valid date");
    let Some(date) = epoch.checked_add_signed(chrono::TimeDelta::days(days)) else {
        return days;
    };
    let n = chrono::Months::new(months.unsigned_abs());
    let moved = if months >= 0 {
        date.checked_add_months(n)
    } else {
        date.checked_sub_months(n)
    };
    moved.map_or(days, |d| i64::from(Date32Type::from_naive_date(d)))
}

impl std::fmt::Display for FrameOffset {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.is_current_row() {
            return write!(f, "CURRENT ROW");
        }
        let side = if self.is_preceding() {
            "PRECEDING"
        } else {
            "FOLLOWING"
        };
        match *self {
            FrameOffset::Count(n) => write!(f, "{} {side}", n.unsigned_abs()),
            FrameOffset::Value(v) => write!(f, "{} {side}", v.abs()),
            FrameOffset::Interval {
                months,
                days,
                nanos,
            } => {
                let mut parts = Vec::new();
                if months != 0 {
                    parts.push(format!("{} months", months.unsigned_abs()));
                }
                if days != 0 || (months == 0 && nanos == 0) {
                    parts.push(format!("{} days", days.unsigned_abs()));
                }
                if nanos != 0 {
                    parts.push(format!("{} seconds", nanos.unsigned_abs() as f64 / 1e9));
                }
                write!(f, "INTERVAL '{}' {side}", parts.join(" "))
            }
        }
    }
}

/// A frame: `units BETWEEN start AND end`, `None` being UNBOUNDED (the
/// partition's first row for the start, its last for the end). The frame
/// is cut to the partition and may be empty (`1 FOLLOWING AND 2
/// FOLLOWING` on the last row).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WindowFrame {
    /// What the offsets count.
    pub units: FrameUnits,
    /// The first row, relative to the current one.
    pub start: Option<FrameOffset>,
    /// The last row, relative to the current one.
    pub end: Option<FrameOffset>,
}

impl WindowFrame {
    /// `ROWS BETWEEN start AND end`, in rows from the current one.
    pub fn rows(start: Option<isize>, end: Option<isize>) -> Self {
        Self::counted(FrameUnits::Rows, start, end)
    }

    /// `GROUPS BETWEEN start AND end`, in peer groups from the current row's.
    pub fn groups(start: Option<isize>, end: Option<isize>) -> Self {
        Self::counted(FrameUnits::Groups, start, end)
    }

    /// `RANGE BETWEEN start AND end`.
    pub fn range(start: Option<FrameOffset>, end: Option<FrameOffset>) -> Self {
        WindowFrame {
            units: FrameUnits::Range,
            start,
            end,
        }
    }

    fn counted(units: FrameUnits, start: Option<isize>, end: Option<isize>) -> Self {
        WindowFrame {
            units,
            start: start.map(FrameOffset::Count),
            end: end.map(FrameOffset::Count),
        }
    }

    /// Whether the frame needs the order key's values (a RANGE frame with
    /// an offset other than CURRENT ROW), and so exactly one numeric,
    /// DATE or TIMESTAMP order key.
    pub fn needs_key_values(&self) -> bool {
        self.units == FrameUnits::Range
            && [self.start, self.end]
                .into_iter()
                .flatten()
                .any(|o| !o.is_current_row())
    }

    /// Checks that a RANGE frame's offsets measure distances in an order
    /// key of type `key`.
    pub fn check_key(&self, key: &DataType) -> Result<()> {
        self.measure(key, false).map(|_| ())
    }

    /// How the frame's ends move the values of an order key of type `key`
    /// sorted `descending` or not (a RANGE frame with offsets).
    pub fn measure(&self, key: &DataType, descending: bool) -> Result<RangeMeasure> {
        if !self.needs_key_values() {
            return Ok(RangeMeasure::default());
        }
        let shift = |o: Option<FrameOffset>| o.map_or(Ok(Shift::default()), |o| o.shift_of(key));
        Ok(RangeMeasure {
            start: shift(self.start)?,
            end: shift(self.end)?,
            descending,
        })
    }

    /// Checks the frame's shape: an offset of the frame's units, and a
    /// start no later than its end where both are counts.
    pub fn validate(&self) -> Result<()> {
        for offset in [self.start, self.end].into_iter().flatten() {
            let fits = matches!(
                (self.units, offset),
                (_, FrameOffset::Count(_)) | (FrameUnits::Range, _)
            );
            if !fits {
                return Err(SlothError::plan(format!(
                    "a {} frame counts rows or groups, not '{offset}'",
                    self.units
                )));
            }
        }
        if let (Some(FrameOffset::Count(s)), Some(FrameOffset::Count(e))) = (self.start, self.end)
            && s > e
        {
            return Err(SlothError::plan(format!(
                "the frame '{self}' starts after it ends"
            )));
        }
        Ok(())
    }

    /// Each row's frame in a partition of `len` rows, as positions
    /// `lo..hi` (empty when `lo >= hi`). `peer(k)` says whether position
    /// `k` (from 1) ties with `k - 1` in the window order; `key(k)` is the
    /// order key at `k` as a number (days for a DATE, the unit of a
    /// TIMESTAMP; `None` for null), read only when
    /// [`Self::needs_key_values`], and `measure` ([`Self::measure`]) how the
    /// frame's ends move it.
    pub fn partition_bounds(
        &self,
        len: usize,
        peer: impl Fn(usize) -> bool,
        key: impl Fn(usize) -> Option<f64>,
        measure: RangeMeasure,
    ) -> Vec<(usize, usize)> {
        match self.units {
            FrameUnits::Rows => (0..len).map(|k| self.row_bounds(k, len)).collect(),
            FrameUnits::Groups => self.group_bounds(len, peer),
            FrameUnits::Range if !self.needs_key_values() => self.group_bounds(len, peer),
            FrameUnits::Range => self.value_bounds(len, peer, key, measure),
        }
    }

    fn count(offset: Option<FrameOffset>) -> Option<isize> {
        offset.map(|o| match o {
            FrameOffset::Count(n) => n,
            _ => 0,
        })
    }

    fn row_bounds(&self, k: usize, len: usize) -> (usize, usize) {
        let at = |o: isize| (k as isize + o).clamp(0, len as isize) as usize;
        let lo = Self::count(self.start).map_or(0, at);
        let hi = Self::count(self.end).map_or(len, |o| at(o + 1));
        (lo, hi)
    }

    fn group_bounds(&self, len: usize, peer: impl Fn(usize) -> bool) -> Vec<(usize, usize)> {
        // The first position of each peer group, then `len`.
        let mut firsts: Vec<usize> = (0..len).filter(|&k| k == 0 || !peer(k)).collect();
        let groups = firsts.len() as isize;
        firsts.push(len);
        let at = |g: isize| firsts[g.clamp(0, groups) as usize];
        let mut out = Vec::with_capacity(len);
        for g in 0..groups {
            let lo = Self::count(self.start).map_or(0, |o| at(g + o));
            let hi = Self::count(self.end).map_or(len, |o| at(g + o + 1));
            let size = firsts[g as usize + 1] - firsts[g as usize];
            out.extend(std::iter::repeat_n((lo, hi), size));
        }
        out
    }

    fn value_bounds(
        &self,
        len: usize,
        peer: impl Fn(usize) -> bool,
        key: impl Fn(usize) -> Option<f64>,
        measure: RangeMeasure,
    ) -> Vec<(usize, usize)> {
        // Values that grow along the window order: DESC negates them, and
        // moves them against the offsets.
        let sign = if measure.descending { -1.0 } else { 1.0 };
        let keys: Vec<Option<f64>> = (0..len).map(|k| key(k).map(|v| sign * v)).collect();
        let limit = |shift: Shift, w: f64| sign * shift.apply(sign * w, measure.descending);
        // Nulls sort together, first or last: the values lie in a..b.
        let a = keys.iter().position(Option::is_some).unwrap_or(len);
        let b = keys.iter().rposition(Option::is_some).map_or(a, |p| p + 1);
        let values: Vec<f64> = keys[a..b].iter().map(|v| v.unwrap_or(f64::NAN)).collect();
        // A null's frame, offsets aside, is its peers: the other nulls
        // (found only where there are nulls).
        let peers = if a > 0 || b < len {
            WindowFrame::groups(Some(0), Some(0)).group_bounds(len, peer)
        } else {
            Vec::new()
        };
        (0..len)
            .map(|k| match keys[k] {
                None => (
                    self.start.map_or(0, |_| peers[k].0),
                    self.end.map_or(len, |_| peers[k].1),
                ),
                Some(w) => (
                    self.start.map_or(0, |_| {
                        let lower = limit(measure.start, w);
                        a + values.partition_point(|&x| x < lower)
                    }),
                    self.end.map_or(len, |_| {
                        let upper = limit(measure.end, w);
                        a + values.partition_point(|&x| x <= upper)
                    }),
                ),
            })
            .collect()
    }
}

/// How a RANGE frame with offsets measures, for one order key: its ends'
/// shifts and the key's direction ([`WindowFrame::measure`]).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct RangeMeasure {
    start: Shift,
    end: Shift,
    descending: bool,
}

impl std::fmt::Display for FrameUnits {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            FrameUnits::Rows => "ROWS",
            FrameUnits::Groups => "GROUPS",
            FrameUnits::Range => "RANGE",
        })
    }
}

impl std::fmt::Display for WindowFrame {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let units = self.units;
        let bound = |b: Option<FrameOffset>, unbounded: &str| match b {
            None => format!("UNBOUNDED {unbounded}"),
            Some(o) => o.to_string(),
        };
        write!(
            f,
            "{units} BETWEEN {} AND {}",
            bound(self.start, "PRECEDING"),
            bound(self.end, "FOLLOWING")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bounds(frame: WindowFrame, keys: &[Option<f64>]) -> Vec<(usize, usize)> {
        let peer = |k: usize| keys[k] == keys[k - 1];
        let measure = frame.measure(&DataType::Float64, false).unwrap();
        frame.partition_bounds(keys.len(), peer, |k| keys[k], measure)
    }

    #[test]
    fn rows_frames_are_cut_to_the_partition() {
        let keys = [Some(1.0); 5];
        let b = bounds(WindowFrame::rows(Some(-1), Some(1)), &keys);
        assert_eq!(b, [(0, 2), (0, 3), (1, 4), (2, 5), (3, 5)]);
        let b = bounds(WindowFrame::rows(Some(1), Some(2)), &keys);
        assert!(b[4].0 >= b[4].1, "past the end: empty");
        let b = bounds(WindowFrame::rows(Some(-3), Some(-2)), &keys);
        assert!(b[1].0 >= b[1].1, "before the start: empty");
    }

    #[test]
    fn groups_frames_count_peer_groups() {
        // Groups: {0, 1}, {2}, {3, 4, 5}.
        let keys = [1.0, 1.0, 2.0, 3.0, 3.0, 3.0].map(Some);
        let b = bounds(WindowFrame::groups(Some(-1), Some(0)), &keys);
        assert_eq!(b, [(0, 2), (0, 2), (0, 3), (2, 6), (2, 6), (2, 6)]);
        let b = bounds(WindowFrame::groups(Some(1), None), &keys);
        assert_eq!(b[0], (2, 6));
        assert!(b[5].0 >= b[5].1, "no group follows the last");
    }

    #[test]
    fn range_frames_compare_key_values_and_keep_nulls_with_their_peers() {
        let keys = [None, None, Some(1.0), Some(2.0), Some(2.0), Some(5.0)];
        let frame = WindowFrame::range(Some(FrameOffset::Value(-1.0)), Some(FrameOffset::Count(0)));
        let b = bounds(frame, &keys);
        // 1 → [1]; 2 → [1, 2, 2]; 5 → [5]; nulls → the nulls.
        assert_eq!(b, [(0, 2), (0, 2), (2, 3), (2, 5), (2, 5), (5, 6)]);
        let frame = WindowFrame::range(None, Some(FrameOffset::Value(3.0)));
        let b = bounds(frame, &keys);
        assert_eq!(
            b[2],
            (0, 5),
            "unbounded preceding takes the leading nulls too"
        );
        assert_eq!(b[5], (0, 6));
        // CURRENT ROW alone needs no values: the row's peers.
        let frame = WindowFrame::range(Some(FrameOffset::Count(0)), Some(FrameOffset::Count(0)));
        assert!(!frame.needs_key_values());
        assert_eq!(bounds(frame, &keys)[3], (3, 5));
    }

    #[test]
    fn offsets_move_values_in_the_order_keys_units() {
        let week = FrameOffset::Interval {
            months: 0,
            days: -7,
            nanos: 0,
        };
        let moved =
            |o: FrameOffset, key: &DataType, v: f64| o.shift_of(key).unwrap().apply(v, false);
        assert_eq!(moved(week, &DataType::Date32, 100.0), 93.0);
        let us = DataType::Timestamp(TimeUnit::Microsecond, None);
        assert_eq!(moved(week, &us, 0.0), -7.0 * 86_400e6);
        assert!(week.shift_of(&DataType::Utf8).is_err());
        assert_eq!(moved(FrameOffset::Value(2.5), &DataType::Float64, 1.0), 3.5);
        // A month back from 2024-03-31 is 2024-02-29; forward from
        // 2024-01-31 (noon), 2024-02-29 (noon).
        let month = |m| FrameOffset::Interval {
            months: m,
            days: 0,
            nanos: 0,
        };
        let day = |y, m, d| {
            f64::from(Date32Type::from_naive_date(
                chrono::NaiveDate::from_ymd_opt(y, m, d).unwrap(),
            ))
        };
        assert_eq!(
            moved(month(-1), &DataType::Date32, day(2024, 3, 31)),
            day(2024, 2, 29)
        );
        let noon = 43_200e6;
        let at = day(2024, 1, 31) * 86_400e6 + noon;
        assert_eq!(moved(month(1), &us, at), day(2024, 2, 29) * 86_400e6 + noon);
        let frame = WindowFrame::range(Some(week), None);
        assert_eq!(
            frame.to_string(),
            "RANGE BETWEEN INTERVAL '7 days' PRECEDING AND UNBOUNDED FOLLOWING"
        );
        assert!(WindowFrame::rows(Some(2), Some(1)).validate().is_err());
        let bad = WindowFrame {
            units: FrameUnits::Rows,
            start: Some(FrameOffset::Value(1.5)),
            end: None,
        };
        assert!(bad.validate().is_err());
    }
}
