//! The bivariate statistics (`corr`, `covar_*`, `regr_*`) from co-moments:
//! per group the count, both means, both sums of squared deviations and the
//! sum of products of deviations, updated one pair at a time (Welford's
//! method, stable where the textbook sums cancel) and merged across threads
//! with Chan's formula. The row-wise executor keeps the same state.

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, Float64Array};
use arrow::datatypes::Float64Type;

use super::{Accumulator, grow, same};
use crate::error::Result;
use crate::expr::Bivariate;

/// Co-moments of the pairs `(y, x)` seen so far.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct CoMoments {
    n: f64,
    mean_y: f64,
    mean_x: f64,
    /// Sum of squared deviations of y.
    syy: f64,
    /// Sum of squared deviations of x.
    sxx: f64,
    /// Sum of products of the deviations.
    sxy: f64,
}

impl CoMoments {
    /// Adds one pair.
    pub(crate) fn push(&mut self, y: f64, x: f64) {
        self.n += 1.0;
        let (dy, dx) = (y - self.mean_y, x - self.mean_x);
        self.mean_y += dy / self.n;
        self.mean_x += dx / self.n;
        self.syy += dy * (y - self.mean_y);
        self.sxx += dx * (x - self.mean_x);
        self.sxy += dy * (x - self.mean_x);
    }

    /// Adds the pairs another state saw.
    pub(crate) fn merge(&mut self, other: &CoMoments) {
        if other.n == 0.0 {
            return;
        }
        let n = self.n + other.n;
        let (dy, dx) = (other.mean_y - self.mean_y, other.mean_x - self.mean_x);
        let w = self.n * other.n / n;
        self.syy += other.syy + dy * dy * w;
        self.sxx += other.sxx + dx * dx * w;
        self.sxy += other.sxy + dy * dx * w;
        self.mean_y += dy * other.n / n;
        self.mean_x += dx * other.n / n;
        self.n = n;
    }

    /// The statistic, as PostgreSQL defines it.
    pub(crate) fn finish(&self, stat: Bivariate) -> Option<f64> {
        let CoMoments {
            n,
            mean_y,
            mean_x,
            syy,
            sxx,
            sxy,
        } = *self;
        if n == 0.0 {
            return None;
        }
        let slope = (sxx != 0.0).then(|| sxy / sxx);
        match stat {
            Bivariate::Corr => (sxx != 0.0 && syy != 0.0).then(|| sxy / (sxx * syy).sqrt()),
            Bivariate::CovarPop => Some(sxy / n),
            Bivariate::CovarSamp => (n > 1.0).then(|| sxy / (n - 1.0)),
            Bivariate::RegrSlope => slope,
            Bivariate::RegrIntercept => slope.map(|s| mean_y - s * mean_x),
            Bivariate::RegrR2 => match (sxx, syy) {
                (0.0, _) => None,
                (_, 0.0) => Some(1.0),
                _ => Some(sxy * sxy / (sxx * syy)),
            },
            Bivariate::RegrAvgX => Some(mean_x),
            Bivariate::RegrAvgY => Some(mean_y),
            Bivariate::RegrSxx => Some(sxx),
            Bivariate::RegrSyy => Some(syy),
            Bivariate::RegrSxy => Some(sxy),
        }
    }
}

/// [`CoMoments`] per group; the inputs are Float64 `(y, x)`.
pub(super) struct BivariateAcc {
    pub(super) stat: Bivariate,
    pub(super) state: Vec<CoMoments>,
}

impl Accumulator for BivariateAcc {
    fn update(
        &mut self,
        values: &[ArrayRef],
        rows: &[u32],
        groups: &[u32],
        n: usize,
    ) -> Result<()> {
        grow(&mut self.state, n, CoMoments::default());
        let (y, x) = (
            values[0].as_primitive::<Float64Type>(),
            values[1].as_primitive::<Float64Type>(),
        );
        for (&r, &g) in rows.iter().zip(groups) {
            let r = r as usize;
            if y.is_valid(r) && x.is_valid(r) {
                self.state[g as usize].push(y.value(r), x.value(r));
            }
        }
        Ok(())
    }
    fn merge(&mut self, other: &dyn Accumulator, src: &[u32], dst: &[u32], n: usize) -> Result<()> {
        let other = same::<Self>(other);
        grow(&mut self.state, n, CoMoments::default());
        for (&s, &d) in src.iter().zip(dst) {
            if let Some(o) = other.state.get(s as usize) {
                self.state[d as usize].merge(o);
            }
        }
        Ok(())
    }
    fn finish(&mut self, n: usize) -> Result<ArrayRef> {
        grow(&mut self.state, n, CoMoments::default());
        let out: Float64Array = self.state.iter().map(|m| m.finish(self.stat)).collect();
        Ok(Arc::new(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The textbook sums, for pairs far from cancelling.
    fn direct(pairs: &[(f64, f64)], stat: Bivariate) -> f64 {
        let n = pairs.len() as f64;
        let (my, mx) = (
            pairs.iter().map(|p| p.0).sum::<f64>() / n,
            pairs.iter().map(|p| p.1).sum::<f64>() / n,
        );
        let sum = |f: &dyn Fn(f64, f64) -> f64| pairs.iter().map(|&(y, x)| f(y, x)).sum::<f64>();
        let sxx = sum(&|_, x| (x - mx) * (x - mx));
        let syy = sum(&|y, _| (y - my) * (y - my));
        let sxy = sum(&|y, x| (y - my) * (x - mx));
        match stat {
            Bivariate::Corr => sxy / (sxx * syy).sqrt(),
            Bivariate::CovarPop => sxy / n,
            Bivariate::CovarSamp => sxy / (n - 1.0),
            Bivariate::RegrSlope => sxy / sxx,
            Bivariate::RegrIntercept => my - sxy / sxx * mx,
            Bivariate::RegrR2 => sxy * sxy / (sxx * syy),
            Bivariate::RegrAvgX => mx,
            Bivariate::RegrAvgY => my,
            Bivariate::RegrSxx => sxx,
            Bivariate::RegrSyy => syy,
            Bivariate::RegrSxy => sxy,
        }
    }

    #[test]
    fn every_statistic_equals_its_textbook_sum_and_merging_changes_nothing() {
        let pairs: Vec<(f64, f64)> = (0..50)
            .map(|i| {
                (
                    ((i * 37) % 11) as f64 * 1.5 - 4.0,
                    (i % 7) as f64 + 0.25 * i as f64,
                )
            })
            .collect();
        let mut whole = CoMoments::default();
        pairs.iter().for_each(|&(y, x)| whole.push(y, x));
        let (mut left, mut right) = (CoMoments::default(), CoMoments::default());
        pairs[..17].iter().for_each(|&(y, x)| left.push(y, x));
        pairs[17..].iter().for_each(|&(y, x)| right.push(y, x));
        left.merge(&right);
        for (stat, name) in Bivariate::ALL {
            let want = direct(&pairs, stat);
            for (how, m) in [("one pass", whole), ("merged", left)] {
                let got = m.finish(stat).unwrap();
                assert!(
                    (got - want).abs() <= 1e-9 * want.abs().max(1.0),
                    "{name} {how}: {got} vs {want}"
                );
            }
        }
    }

    #[test]
    fn degenerate_groups_are_null_where_postgresql_divides_by_zero() {
        let of = |pairs: &[(f64, f64)]| {
            let mut m = CoMoments::default();
            pairs.iter().for_each(|&(y, x)| m.push(y, x));
            m
        };
        let empty = of(&[]);
        assert!(
            Bivariate::ALL
                .iter()
                .all(|(s, _)| empty.finish(*s).is_none())
        );
        let one = of(&[(1.0, 2.0)]);
        assert_eq!(one.finish(Bivariate::CovarPop), Some(0.0));
        assert_eq!(one.finish(Bivariate::CovarSamp), None);
        assert_eq!(one.finish(Bivariate::Corr), None);
        assert_eq!(one.finish(Bivariate::RegrSlope), None);
        assert_eq!(one.finish(Bivariate::RegrAvgX), Some(2.0));
        // y constant, x varies: the line is flat and fits exactly.
        let flat = of(&[(1.0, 2.0), (1.0, 3.0)]);
        assert_eq!(flat.finish(Bivariate::RegrSlope), Some(0.0));
        assert_eq!(flat.finish(Bivariate::RegrIntercept), Some(1.0));
        assert_eq!(flat.finish(Bivariate::RegrR2), Some(1.0));
        assert_eq!(flat.finish(Bivariate::Corr), None);
        // x constant: no line.
        let vertical = of(&[(1.0, 2.0), (2.0, 2.0)]);
        assert_eq!(vertical.finish(Bivariate::RegrSlope), None);
        assert_eq!(vertical.finish(Bivariate::RegrIntercept), None);
        assert_eq!(vertical.finish(Bivariate::RegrR2), None);
    }
}
