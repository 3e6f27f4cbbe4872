//! Indented tree display of logical plans (what `explain` prints).

use std::fmt;

use super::{Join, JoinType, LogicalPlan};
use crate::plan::{Aggregate, Distinct, Filter, Project, Slice, Sort, Union, Window};

fn list(exprs: &[crate::expr::Expr]) -> String {
    exprs
        .iter()
        .map(|e| e.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

impl LogicalPlan {
    fn fmt_node(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LogicalPlan::Scan(scan) => {
                write!(f, "Scan {}", scan.source)?;
                let schema = scan.schema();
                if scan.projection.is_some() {
                    let names: Vec<&str> =
                        schema.fields().iter().map(|f| f.name().as_str()).collect();
                    write!(f, " columns=[{}]", names.join(", "))?;
                }
                if !scan.filters.is_empty() {
                    write!(f, " filters=[{}]", list(&scan.filters))?;
                }
                Ok(())
            }
            LogicalPlan::Filter(Filter { predicate, .. }) => write!(f, "Filter {predicate}"),
            LogicalPlan::Project(Project { exprs, .. }) => write!(f, "Project [{}]", list(exprs)),
            LogicalPlan::Aggregate(Aggregate { keys, aggs, .. }) => {
                write!(f, "Aggregate keys=[{}] aggs=[{}]", list(keys), list(aggs))
            }
            LogicalPlan::Join(Join {
                left_on,
                right_on,
                how,
                filter,
                ..
            }) => {
                if *how == JoinType::Cross {
                    return write!(f, "CrossJoin");
                }
                let on: Vec<String> = left_on
                    .iter()
                    .zip(right_on)
                    .map(|(l, r)| format!("{l} = {r}"))
                    .collect();
                write!(f, "Join {how:?} on [{}]", on.join(", "))?;
                match filter {
                    Some(p) => write!(f, " filter {p}"),
                    None => Ok(()),
                }
            }
            LogicalPlan::Sort(Sort { by, .. }) => {
                let keys: Vec<String> = by
                    .iter()
                    .map(|k| {
                        format!(
                            "{} {}{}",
                            k.expr,
                            if k.descending { "DESC" } else { "ASC" },
                            if k.nulls_last { " NULLS LAST" } else { "" }
                        )
                    })
                    .collect();
                write!(f, "Sort [{}]", keys.join(", "))
            }
            LogicalPlan::Slice(Slice { offset, len, .. }) => match len {
                Some(n) => write!(f, "Slice offset={offset} len={n}"),
                None => write!(f, "Slice offset={offset}"),
            },
            LogicalPlan::Distinct(Distinct { .. }) => write!(f, "Distinct"),
            LogicalPlan::Window(Window { exprs, .. }) => write!(f, "Window [{}]", list(exprs)),
            LogicalPlan::Union(Union { .. }) => write!(f, "Union"),
        }
    }

    fn fmt_tree(&self, f: &mut fmt::Formatter<'_>, depth: usize) -> fmt::Result {
        write!(f, "{:indent$}", "", indent = depth * 2)?;
        self.fmt_node(f)?;
        writeln!(f)?;
        for input in self.inputs() {
            input.fmt_tree(f, depth + 1)?;
        }
        Ok(())
    }
}

impl fmt::Display for LogicalPlan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.fmt_tree(f, 0)
    }
}
