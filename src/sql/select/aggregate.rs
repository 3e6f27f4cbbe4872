//! GROUP BY, the aggregation, HAVING and QUALIFY.
//!
//! The aggregation computes each grouping key and each distinct aggregate
//! once, as columns `__k<i>` and `__a<i>`; the select items, HAVING,
//! QUALIFY and ORDER BY are rewritten to read those, and any column they
//! still read outside an aggregate is an error. HAVING and QUALIFY may
//! name select-list aliases (`having n > 1` for `count(*) as n`).

use std::sync::Arc;

use sqlparser::ast;

use super::projection::Item;
use crate::error::{Result, SlothError};
use crate::expr::{Expr, ScalarValue, col, lit};
use crate::functions::GROUPING;
use crate::physical_expr::expr_field;
use crate::plan::LogicalPlan;
use crate::sql::expr::{Resolver, convert};
use crate::sql::planner::{ident, ordinal, replace_top_down};
use crate::sql::subquery::{PendingJoin, SelectResolver};

/// What a SELECT outputs and orders by: the parts the aggregation rewrites.
pub(super) struct Outputs<'o> {
    /// The select items (visible ones, then correlated columns).
    pub items: Vec<Item>,
    /// HAVING.
    pub having: Option<Expr>,
    /// QUALIFY: filters after the window functions, as HAVING does after
    /// the aggregation.
    pub qualify: Option<Expr>,
    /// The ORDER BY keys.
    pub sort_exprs: Vec<(Expr, &'o ast::OrderByExpr)>,
}

impl Outputs<'_> {
    fn exprs(&self) -> impl Iterator<Item = &Expr> {
        self.items
            .iter()
            .map(|(e, _)| e)
            .chain(self.having.iter())
            .chain(self.qualify.iter())
            .chain(self.sort_exprs.iter().map(|(e, _)| e))
    }
}

/// HAVING and QUALIFY, with the select list's `aliased` items' names.
pub(super) fn having_and_qualify(
    resolver: &SelectResolver,
    s: &ast::Select,
    aliased: &[Item],
) -> Result<(Option<Expr>, Option<Expr>)> {
    let with_aliases = WithAliases {
        inner: resolver,
        items: aliased,
    };
    let convert = |e: &Option<ast::Expr>| e.as_ref().map(|e| with_aliases.convert(e)).transpose();
    Ok((convert(&s.having)?, convert(&s.qualify)?))
}

/// Whether the SELECT aggregates: GROUP BY, HAVING, or an aggregate
/// anywhere in its outputs.
pub(super) fn needs_aggregate(s: &ast::Select, outputs: &Outputs) -> bool {
    let grouped = match &s.group_by {
        ast::GroupByExpr::Expressions(e, _) => !e.is_empty(),
        ast::GroupByExpr::All(_) => true,
    };
    grouped || outputs.having.is_some() || outputs.exprs().any(Expr::contains_agg)
}

/// What GROUP BY groups by: its distinct key expressions, and for
/// `GROUPING SETS`, `ROLLUP` and `CUBE` the sets of them that each group by
/// (positions in `keys`).
pub(super) struct Grouping {
    /// Every key, once.
    pub keys: Vec<Expr>,
    /// The grouping sets; `None` is one set of all keys.
    pub sets: Option<Vec<Vec<usize>>>,
}

impl Grouping {
    /// Adds keys that every grouping set groups by.
    pub fn add_keys(&mut self, keys: impl IntoIterator<Item = Expr>) {
        for k in keys {
            let i = self.keys.len();
            self.keys.push(k);
            for set in self.sets.iter_mut().flatten() {
                set.push(i);
            }
        }
    }
}

/// The grouping keys: GROUP BY's expressions (ordinals and output aliases
/// allowed), or for `GROUP BY ALL` every one of the first `visible` items
/// without an aggregate or a window.
pub(super) fn group_keys(
    resolver: &SelectResolver,
    s: &ast::Select,
    items: &[Item],
    visible: usize,
) -> Result<Grouping> {
    let (group_exprs, modifiers) = match &s.group_by {
        ast::GroupByExpr::Expressions(e, m) => (e, m),
        ast::GroupByExpr::All(_) => {
            let keys = items[..visible]
                .iter()
                .filter(|(e, _)| !e.contains_agg() && !e.contains_window())
                .map(|(e, _)| e.clone())
                .collect();
            return Ok(Grouping { keys, sets: None });
        }
    };
    let key = |g: &ast::Expr| group_key(resolver, items, g);
    let keys_of = |lists: &[Vec<ast::Expr>]| -> Result<Vec<Vec<Expr>>> {
        lists.iter().map(|l| l.iter().map(key).collect()).collect()
    };
    let with_modifier = match modifiers.as_slice() {
        [] => None,
        [ast::GroupByWithModifier::Rollup] => Some(false),
        [ast::GroupByWithModifier::Cube] => Some(true),
        [other, ..] => {
            return Err(SlothError::unsupported(format!("GROUP BY .. {other}")));
        }
    };
    // Each element of GROUP BY gives its sets; the query's sets are their
    // cross product (`GROUP BY a, ROLLUP (b, c)`: (a, b, c), (a, b), (a)).
    let has_sets = with_modifier.is_some()
        || group_exprs.iter().any(|g| {
            matches!(
                g,
                ast::Expr::Rollup(_) | ast::Expr::Cube(_) | ast::Expr::GroupingSets(_)
            )
        });
    let mut sets: Vec<Vec<Expr>> = vec![vec![]];
    for g in group_exprs {
        let element: Vec<Vec<Expr>> = match g {
            ast::Expr::Rollup(lists) => rollup(keys_of(lists)?),
            ast::Expr::Cube(lists) => cube(keys_of(lists)?),
            ast::Expr::GroupingSets(lists) => keys_of(lists)?,
            plain => vec![vec![key(plain)?]],
        };
        sets = sets
            .iter()
            .flat_map(|set| {
                element
                    .iter()
                    .map(move |e| [set.clone(), e.clone()].concat())
            })
            .collect();
    }
    // `GROUP BY a, b WITH ROLLUP` (MySQL) is `GROUP BY ROLLUP (a, b)`.
    if let Some(cube_all) = with_modifier {
        let [plain] = <[Vec<Expr>; 1]>::try_from(sets).map_err(|_| {
            SlothError::unsupported("WITH ROLLUP / WITH CUBE after ROLLUP, CUBE or GROUPING SETS")
        })?;
        let lists = plain.into_iter().map(|k| vec![k]).collect();
        sets = if cube_all { cube(lists) } else { rollup(lists) };
    }
    let mut keys: Vec<Expr> = Vec::new();
    let positions: Vec<Vec<usize>> = sets
        .iter()
        .map(|set| {
            let mut positions: Vec<usize> = Vec::new();
            for k in set {
                let i = keys.iter().position(|x| x == k).unwrap_or_else(|| {
                    keys.push(k.clone());
                    keys.len() - 1
                });
                if !positions.contains(&i) {
                    positions.push(i);
                }
            }
            positions
        })
        .collect();
    Ok(Grouping {
        keys,
        sets: has_sets.then_some(positions),
    })
}

/// `ROLLUP (a, b)`: (a, b), (a), ().
fn rollup(lists: Vec<Vec<Expr>>) -> Vec<Vec<Expr>> {
    (0..=lists.len())
        .rev()
        .map(|n| lists[..n].concat())
        .collect()
}

/// `CUBE (a, b)`: (a, b), (a), (b), (): every subset, largest first.
fn cube(lists: Vec<Vec<Expr>>) -> Vec<Vec<Expr>> {
    let n = lists.len();
    (0..1u32 << n)
        .rev()
        .map(|mask| {
            (0..n)
                .filter(|i| mask & (1 << (n - 1 - i)) != 0)
                .flat_map(|i| lists[i].clone())
                .collect()
        })
        .collect()
}

/// One GROUP BY expression: an ordinal, an expression over the FROM
/// scope, or an output alias.
fn group_key(resolver: &SelectResolver, items: &[Item], g: &ast::Expr) -> Result<Expr> {
    if let Some(i) = ordinal(g)? {
        return items.get(i).map(|(e, _)| e.clone()).ok_or_else(|| {
            SlothError::plan(format!("GROUP BY position {} is out of range", i + 1))
        });
    }
    match convert(g, resolver) {
        Ok(e) => Ok(e),
        // GROUP BY an output alias.
        Err(err) => match g {
            ast::Expr::Identifier(i) => items
                .iter()
                .find(|(_, n)| *n == ident(i))
                .map(|(e, _)| e.clone())
                .ok_or(err),
            _ => Err(err),
        },
    }
}

/// Aggregates `plan` by `keys`, rewriting `outputs` to read the keys and
/// aggregates by name. Of the subquery joins still `pending`, those a key
/// or an aggregate reads (`GROUP BY 1` of a scalar subquery, `count(*)
/// FILTER (WHERE EXISTS ..)`) join before the aggregation, the others
/// after it.
pub(super) fn aggregate(
    resolver: &SelectResolver,
    plan: LogicalPlan,
    grouping: Grouping,
    outputs: &mut Outputs,
    pending: Vec<PendingJoin>,
) -> Result<LogicalPlan> {
    let Grouping { keys, sets } = grouping;
    let mut early_columns: Vec<String> = keys.iter().flat_map(Expr::columns).collect();
    for e in outputs.exprs() {
        e.visit(&mut |n| {
            if matches!(n, Expr::Agg { .. }) {
                early_columns.extend(n.columns());
            }
        });
    }
    let (early, late): (Vec<_>, Vec<_>) = pending
        .into_iter()
        .partition(|p| p.provides_any(&early_columns));
    resolver.pending.borrow_mut().extend(early);
    let plan = resolver.apply_pending(plan)?;
    let mut aggs: Vec<Expr> = Vec::new();
    for e in outputs.exprs() {
        e.visit(&mut |n| {
            if matches!(n, Expr::Agg { .. }) && !aggs.contains(n) {
                aggs.push(n.clone());
            }
        })
    }
    let key_names: Vec<String> = (0..keys.len()).map(|i| format!("__k{i}")).collect();
    let agg_names: Vec<String> = (0..aggs.len()).map(|i| format!("__a{i}")).collect();
    let sets = sets.unwrap_or_else(|| vec![(0..keys.len()).collect()]);
    for e in outputs.exprs() {
        check_grouping_calls(e, &keys)?;
    }
    let rewrite = |e: &Expr| -> Result<Expr> {
        let out = replace_top_down(e, &|n| {
            if let Expr::Function(f, args) = n
                && *f == GROUPING
            {
                return Some(grouping_value(args, &keys, &sets));
            }
            if let Some(i) = keys.iter().position(|k| k == n) {
                return Some(col(key_names[i].as_str()));
            }
            if let Some(i) = aggs.iter().position(|a| a == n) {
                return Some(col(agg_names[i].as_str()));
            }
            None
        });
        for c in out.columns() {
            if !c.starts_with("__k")
                && !c.starts_with("__a")
                && c != GROUPING_SET
                && !c.starts_with("__sq")
                && !c.starts_with('\u{0}')
            {
                return Err(SlothError::plan(format!(
                    "column '{c}' must appear in GROUP BY or be used in an aggregate function"
                )));
            }
        }
        Ok(out)
    };
    for (e, _) in outputs.items.iter_mut() {
        *e = rewrite(e)?;
    }
    let having = outputs.having.take().map(|h| rewrite(&h)).transpose()?;
    outputs.qualify = outputs.qualify.take().map(|q| rewrite(&q)).transpose()?;
    for (e, _) in outputs.sort_exprs.iter_mut() {
        *e = rewrite(e)?;
    }
    let late = late
        .into_iter()
        .map(|p| p.map_outer_keys(rewrite))
        .collect::<Result<Vec<_>>>()?;
    let keys: Vec<Expr> = keys
        .into_iter()
        .zip(&key_names)
        .map(|(k, n)| k.alias(n.as_str()))
        .collect();
    let aggs: Vec<Expr> = aggs
        .into_iter()
        .zip(&agg_names)
        .map(|(a, n)| a.alias(n.as_str()))
        .collect();
    let mut plan = match <[Vec<usize>; 1]>::try_from(sets) {
        Ok([set]) if set.len() == keys.len() => LogicalPlan::aggregate(Arc::new(plan), keys, aggs),
        Ok([set]) => grouping_sets(plan, &keys, &aggs, vec![set])?,
        Err(sets) => grouping_sets(plan, &keys, &aggs, sets)?,
    };
    resolver.pending.borrow_mut().extend(late);
    plan = resolver.apply_pending(plan)?;
    if let Some(h) = having {
        plan = LogicalPlan::filter(Arc::new(plan), h);
    }
    Ok(plan)
}

/// The column that numbers a row's grouping set (0, 1, ..) after
/// `GROUPING SETS`, `ROLLUP` or `CUBE`.
const GROUPING_SET: &str = "__grouping_set";

/// One aggregation per grouping set over the same input, each with every
/// key column (null where its set does not group by the key) and a
/// [`GROUPING_SET`] column with the set's number, appended in set order.
fn grouping_sets(
    input: LogicalPlan,
    keys: &[Expr],
    aggs: &[Expr],
    sets: Vec<Vec<usize>>,
) -> Result<LogicalPlan> {
    let input = Arc::new(input);
    let schema = input.schema()?;
    let branches = sets
        .into_iter()
        .enumerate()
        .map(|(number, set)| {
            let aggregate = LogicalPlan::aggregate(
                input.clone(),
                set.iter().map(|&i| keys[i].clone()).collect(),
                aggs.to_vec(),
            );
            let mut exprs = Vec::with_capacity(keys.len() + aggs.len() + 1);
            for (i, key) in keys.iter().enumerate() {
                let name = key.output_name();
                exprs.push(if set.contains(&i) {
                    col(name.as_str())
                } else {
                    let key_type = expr_field(key, &schema)?.data_type().clone();
                    lit(ScalarValue::Null).cast(key_type).alias(name.as_str())
                });
            }
            exprs.extend(aggs.iter().map(|a| col(a.output_name().as_str())));
            exprs.push(lit(number as i64).alias(GROUPING_SET));
            Ok(Arc::new(LogicalPlan::project(Arc::new(aggregate), exprs)))
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(LogicalPlan::union(branches))
}

/// Checks that each `GROUPING(..)` in `e` names grouping keys only.
fn check_grouping_calls(e: &Expr, keys: &[Expr]) -> Result<()> {
    let mut bad: Option<String> = None;
    e.visit(&mut |n| {
        if let Expr::Function(f, args) = n
            && *f == GROUPING
            && let Some(a) = args.iter().find(|a| !keys.contains(a))
        {
            bad.get_or_insert_with(|| a.to_string());
        }
    });
    match bad {
        Some(a) => Err(SlothError::plan(format!(
            "GROUPING() takes grouping columns; '{a}' is not one of GROUP BY's"
        ))),
        None => Ok(()),
    }
}

/// `GROUPING(args)` for each row: a bit per argument, the first the
/// highest, set where the row's grouping set leaves that key out.
fn grouping_value(args: &[Expr], keys: &[Expr], sets: &[Vec<usize>]) -> Expr {
    let value = |set: &Vec<usize>| -> i64 {
        args.iter().fold(0, |bits, a| {
            let absent = keys
                .iter()
                .position(|k| k == a)
                .is_some_and(|i| !set.contains(&i));
            bits << 1 | absent as i64
        })
    };
    match sets {
        [set] => lit(value(set)),
        _ => Expr::Case {
            when_then: (sets.iter().enumerate())
                .map(|(number, set)| (col(GROUPING_SET).eq(lit(number as i64)), lit(value(set))))
                .collect(),
            otherwise: None,
        },
    }
}

/// Resolves names in the FROM scope first and then among the select
/// list's aliases, which become marker columns that [`WithAliases::convert`]
/// replaces by the aliased expressions.
struct WithAliases<'a> {
    inner: &'a dyn Resolver,
    items: &'a [(Expr, String)],
}

/// Starts a marker column that stands for a select-list alias.
const ALIAS_MARK: char = '\u{2}';

impl WithAliases<'_> {
    fn convert(&self, e: &ast::Expr) -> Result<Expr> {
        let converted = convert(e, self)?;
        Ok(replace_top_down(&converted, &|n| match n {
            Expr::Column(c) => c.strip_prefix(ALIAS_MARK).and_then(|alias| {
                self.items
                    .iter()
                    .find(|(_, name)| name == alias)
                    .map(|(e, _)| e.clone())
            }),
            _ => None,
        }))
    }
}

impl Resolver for WithAliases<'_> {
    fn parameter(&self, n: usize) -> Result<Expr> {
        self.inner.parameter(n)
    }
    fn named_window(&self, name: &str) -> Option<ast::NamedWindowExpr> {
        self.inner.named_window(name)
    }
    fn resolve(&self, qualifier: Option<&str>, name: &str) -> Result<String> {
        match self.inner.resolve(qualifier, name) {
            Err(SlothError::ColumnNotFound { .. })
                if qualifier.is_none() && self.items.iter().any(|(_, n)| n == name) =>
            {
                Ok(format!("{ALIAS_MARK}{name}"))
            }
            other => other,
        }
    }
    fn scalar_subquery(&self, q: &ast::Query) -> Result<Expr> {
        self.inner.scalar_subquery(q)
    }
}
