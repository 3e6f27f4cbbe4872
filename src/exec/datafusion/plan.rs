//! sloth's logical plan nodes as DataFusion's.

use std::sync::Arc;

use arrow::datatypes::Schema;
use datafusion::common::{Column, DFSchema};
use datafusion::datasource::file_format::FileFormat;
use datafusion::datasource::file_format::arrow::ArrowFormat;
use datafusion::datasource::file_format::csv::CsvFormat;
use datafusion::datasource::file_format::parquet::ParquetFormat;
use datafusion::datasource::listing::{
    ListingOptions, ListingTable, ListingTableConfig, ListingTableUrl,
};
use datafusion::datasource::{MemTable, TableProvider, provider_as_source};
use datafusion::logical_expr::{
    Expr as DfExpr, ExprSchemable, JoinType as DfJoinType, LogicalPlan as DfPlan,
    LogicalPlanBuilder, cast,
};
use datafusion::prelude::SessionContext;

use super::df_error;
use crate::error::{Result, SlothError};
use crate::expr::Expr;
use crate::io::ScanSource;
use crate::plan::{
    Aggregate, Distinct, Filter, Join, JoinType, LogicalPlan, Project, Scan, Slice, Sort, Union,
    Window, join_schema,
};

/// Translates one plan; holds the DataFusion context whose functions the
/// expressions call, and numbers the relations it names.
pub(super) struct Translator<'a> {
    pub(super) ctx: &'a SessionContext,
    relations: usize,
    /// Whether the plan runs on a cluster, whose executors read every
    /// table themselves.
    distributed: bool,
}

/// Where an expression's columns come from: the sloth schema it was
/// written against (names) and the DataFusion schema of the translated
/// input (the same columns, in the same order).
pub(super) struct Scope<'a> {
    pub(super) sloth: &'a Schema,
    pub(super) df: &'a DFSchema,
}

impl Scope<'_> {
    /// The DataFusion column at the position of sloth's column `name`.
    pub(super) fn column(&self, name: &str) -> Result<DfExpr> {
        let i = self
            .sloth
            .index_of(name)
            .map_err(|_| SlothError::ColumnNotFound {
                name: name.to_string(),
                available: self
                    .sloth
                    .fields()
                    .iter()
                    .map(|f| f.name().clone())
                    .collect(),
            })?;
        let (qualifier, field) = self.df.qualified_field(i);
        Ok(DfExpr::Column(Column::new(
            qualifier.cloned(),
            field.name(),
        )))
    }
}

fn build(builder: datafusion::error::Result<LogicalPlanBuilder>) -> Result<DfPlan> {
    builder
        .and_then(LogicalPlanBuilder::build)
        .map_err(df_error)
}

impl<'a> Translator<'a> {
    pub(super) fn new(ctx: &'a SessionContext) -> Self {
        Translator {
            ctx,
            relations: 0,
            distributed: false,
        }
    }

    /// This translator for a plan that runs on a cluster: a table held in
    /// this process's memory is then an error, as executors cannot read it.
    pub(super) fn distributed(mut self, distributed: bool) -> Self {
        self.distributed = distributed;
        self
    }

    /// A relation name not used before in this plan.
    fn relation(&mut self, prefix: &str) -> String {
        self.relations += 1;
        format!("{prefix}_{}", self.relations)
    }

    /// `plan` translated, its columns named and typed as sloth's plan
    /// names and types them.
    pub(super) fn translate_root(&mut self, plan: &LogicalPlan) -> Result<DfPlan> {
        let schema = plan.schema()?;
        let df = self.translate(plan)?;
        let columns = (0..schema.fields().len())
            .map(|i| {
                let (qualifier, field) = df.schema().qualified_field(i);
                let column = DfExpr::Column(Column::new(qualifier.cloned(), field.name()));
                let wanted = schema.field(i);
                let column = match field.data_type() == wanted.data_type() {
                    true => column,
                    false => cast(column, wanted.data_type().clone()),
                };
                column.alias(wanted.name())
            })
            .collect::<Vec<_>>();
        build(LogicalPlanBuilder::from(df).project(columns))
    }

    /// One node and its inputs.
    pub(super) fn translate(&mut self, plan: &LogicalPlan) -> Result<DfPlan> {
        match plan {
            LogicalPlan::Scan(scan) => self.scan(scan),
            LogicalPlan::Filter(Filter {
                input, predicate, ..
            }) => {
                let (df, sloth) = (self.translate(input)?, input.schema()?);
                let predicate = self.expr(
                    predicate,
                    &Scope {
                        sloth: &sloth,
                        df: df.schema(),
                    },
                )?;
                build(LogicalPlanBuilder::from(df).filter(predicate))
            }
            LogicalPlan::Project(Project { input, exprs, .. }) => {
                let df = self.translate(input)?;
                let (sloth, out) = (input.schema()?, plan.schema()?);
                let exprs = self.named(exprs, &sloth, &out, df.schema(), 0)?;
                build(LogicalPlanBuilder::from(df).project(exprs))
            }
            LogicalPlan::Aggregate(Aggregate {
                input, keys, aggs, ..
            }) => {
                let df = self.translate(input)?;
                let (sloth, out) = (input.schema()?, plan.schema()?);
                let keys = self.named(keys, &sloth, &out, df.schema(), 0)?;
                let aggs = self.named(aggs, &sloth, &out, df.schema(), keys.len())?;
                build(LogicalPlanBuilder::from(df).aggregate(keys, aggs))
            }
            LogicalPlan::Join(join) => self.join(join),
            LogicalPlan::Sort(Sort { input, by, .. }) => {
                let (df, sloth) = (self.translate(input)?, input.schema()?);
                let scope = Scope {
                    sloth: &sloth,
                    df: df.schema(),
                };
                let sorts = by
                    .iter()
                    .map(|k| {
                        Ok(self
                            .expr(&k.expr, &scope)?
                            .sort(!k.descending, !k.nulls_last))
                    })
                    .collect::<Result<Vec<_>>>()?;
                build(LogicalPlanBuilder::from(df).sort(sorts))
            }
            LogicalPlan::Slice(Slice {
                input, offset, len, ..
            }) => {
                let df = self.translate(input)?;
                build(LogicalPlanBuilder::from(df).limit(*offset, *len))
            }
            LogicalPlan::Window(Window { input, exprs, .. }) => {
                let df = self.translate(input)?;
                let (sloth, out) = (input.schema()?, plan.schema()?);
                let first = sloth.fields().len();
                let inputs: Vec<DfExpr> = (0..first)
                    .map(|i| {
                        let (q, f) = df.schema().qualified_field(i);
                        DfExpr::Column(Column::new(q.cloned(), f.name()))
                    })
                    .collect();
                let scope = Scope {
                    sloth: &sloth,
                    df: df.schema(),
                };
                let exprs = exprs
                    .iter()
                    .map(|e| self.expr(e.unalias(), &scope))
                    .collect::<Result<Vec<_>>>()?;
                // One window node per distinct PARTITION BY / ORDER BY, as
                // DataFusion's planner requires; then sloth's columns, in
                // its order and with its names.
                let outputs: Vec<DfExpr> = exprs
                    .iter()
                    .zip(&out.fields()[first..])
                    .map(|(e, f)| {
                        DfExpr::Column(Column::new_unqualified(e.schema_name().to_string()))
                            .alias(f.name())
                    })
                    .collect();
                let windowed = LogicalPlanBuilder::window_plan(df, exprs).map_err(df_error)?;
                build(LogicalPlanBuilder::from(windowed).project(inputs.into_iter().chain(outputs)))
            }
            LogicalPlan::Distinct(Distinct { input, .. }) => {
                let df = self.translate(input)?;
                build(LogicalPlanBuilder::from(df).distinct())
            }
            LogicalPlan::Union(Union { inputs, .. }) => {
                let out = plan.schema()?;
                let mut translated = inputs
                    .iter()
                    .map(|input| {
                        // Each input in the union's types and names.
                        let df = self.translate(input)?;
                        let columns = (0..out.fields().len())
                            .map(|i| {
                                let (q, f) = df.schema().qualified_field(i);
                                let c = DfExpr::Column(Column::new(q.cloned(), f.name()));
                                cast(c, out.field(i).data_type().clone()).alias(out.field(i).name())
                            })
                            .collect::<Vec<_>>();
                        build(LogicalPlanBuilder::from(df).project(columns))
                    })
                    .collect::<Result<Vec<_>>>()?
                    .into_iter();
                let first = translated
                    .next()
                    .ok_or_else(|| SlothError::plan("union of no inputs"))?;
                let mut builder = Ok(LogicalPlanBuilder::from(first));
                for other in translated {
                    builder = builder.and_then(|b| b.union(other));
                }
                build(builder)
            }
        }
    }

    /// `exprs` over `input`, each named as field `first + i` of `out`.
    fn named(
        &mut self,
        exprs: &[Expr],
        input: &Schema,
        out: &Schema,
        df: &DFSchema,
        first: usize,
    ) -> Result<Vec<DfExpr>> {
        let scope = Scope { sloth: input, df };
        exprs
            .iter()
            .enumerate()
            .map(|(i, e)| {
                let name = out.field(first + i).name();
                Ok(self.expr(e.unalias(), &scope)?.alias(name))
            })
            .collect()
    }

    /// A scan: the file as a listing table (batches as a memory table)
    /// under a name of its own, its filters, then its projection.
    fn scan(&mut self, scan: &Scan) -> Result<DfPlan> {
        let (provider, prefix): (Arc<dyn TableProvider>, &str) = match &scan.source {
            ScanSource::Json { path, .. } if self.distributed => {
                return Err(SlothError::unsupported(format!(
                    "JSON file '{}' on a Ballista cluster: its executors read Parquet, \
                     CSV and Arrow files (COPY it to Parquet and scan that)",
                    path.display()
                )));
            }
            ScanSource::Memory { .. } if self.distributed => {
                return Err(SlothError::unsupported(
                    "a table held in this process's memory on a Ballista cluster: its \
                     executors read only files (write the table to Parquet and scan that)",
                ));
            }
            ScanSource::Memory { schema, batches } => (
                Arc::new(
                    MemTable::try_new(schema.clone(), vec![batches.to_vec()]).map_err(df_error)?,
                ),
                "memory",
            ),
            // JSON arrays are not a DataFusion format: sloth reads the
            // file and hands its batches over.
            ScanSource::Json { schema, .. } => {
                let batches = scan.source.read(None, &[], &Default::default(), None)?;
                (
                    Arc::new(MemTable::try_new(schema.clone(), vec![batches]).map_err(df_error)?),
                    "json",
                )
            }
            ScanSource::Parquet { path, schema } => (
                listing(path, schema, Arc::new(ParquetFormat::default()))?,
                "parquet",
            ),
            ScanSource::Ipc { path, schema } => {
                (listing(path, schema, Arc::new(ArrowFormat))?, "ipc")
            }
            ScanSource::Csv {
                path,
                schema,
                options,
            } => {
                let format = CsvFormat::default()
                    .with_has_header(options.has_header)
                    .with_delimiter(options.delimiter)
                    .with_quote(options.quote)
                    .with_escape(options.escape)
                    .with_null_regex(
                        options
                            .null_value
                            .as_ref()
                            .map(|n| format!("^{}$", regex::escape(n))),
                    );
                (listing(path, schema, Arc::new(format))?, "csv")
            }
        };
        let name = self.relation(prefix);
        let full = scan.source.schema();
        let mut builder =
            LogicalPlanBuilder::scan(name, provider_as_source(provider), None).map_err(df_error)?;
        if !scan.filters.is_empty() {
            let df = builder.schema().clone();
            let scope = Scope {
                sloth: &full,
                df: &df,
            };
            for f in &scan.filters {
                let predicate = self.expr(f, &scope)?;
                builder = builder.filter(predicate).map_err(df_error)?;
            }
        }
        if let Some(projection) = &scan.projection {
            let df = builder.schema().clone();
            let columns = projection
                .iter()
                .map(|&i| {
                    let (q, f) = df.qualified_field(i);
                    DfExpr::Column(Column::new(q.cloned(), f.name()))
                })
                .collect::<Vec<_>>();
            builder = builder.project(columns).map_err(df_error)?;
        }
        builder.build().map_err(df_error)
    }

    /// A join: each input under a relation name of its own (two inputs
    /// may have columns of one name), keys over each side, the condition
    /// over both.
    fn join(&mut self, join: &Join) -> Result<DfPlan> {
        let (left, right) = (&join.left, &join.right);
        let (how, filter) = (join.how, join.filter.as_ref());
        let (ls, rs) = (left.schema()?, right.schema()?);
        let l = self.translate(left)?;
        let l = build(LogicalPlanBuilder::from(l).alias(self.relation("left")))?;
        let r = self.translate(right)?;
        let r = build(LogicalPlanBuilder::from(r).alias(self.relation("right")))?;
        if how == JoinType::Cross {
            return build(LogicalPlanBuilder::from(l).cross_join(r));
        }
        let keys = |exprs: &[Expr], sloth: &Schema, df: &DFSchema, me: &mut Self| {
            let scope = Scope { sloth, df };
            exprs
                .iter()
                .map(|e| me.expr(e, &scope))
                .collect::<Result<Vec<_>>>()
        };
        let left_keys = keys(&join.left_on, &ls, l.schema(), self)?;
        let right_keys = keys(&join.right_on, &rs, r.schema(), self)?;
        // Keys of one type on both sides, as sloth's planner casts them.
        let (left_keys, right_keys) = common_key_types(left_keys, right_keys, (&l, &r))?;
        let filter = match filter {
            Some(f) => {
                let pair = join_schema(&ls, &rs, JoinType::Inner);
                let df = l.schema().join(r.schema()).map_err(df_error)?;
                Some(self.expr(
                    f,
                    &Scope {
                        sloth: &pair,
                        df: &df,
                    },
                )?)
            }
            None => None,
        };
        let join_type = match how {
            JoinType::Inner => DfJoinType::Inner,
            JoinType::Left => DfJoinType::Left,
            JoinType::Right => DfJoinType::Right,
            JoinType::Full => DfJoinType::Full,
            JoinType::Semi => DfJoinType::LeftSemi,
            JoinType::Anti => DfJoinType::LeftAnti,
            JoinType::Cross => unreachable!("cross joins return above"),
        };
        build(LogicalPlanBuilder::from(l).join_with_expr_keys(
            r,
            join_type,
            (left_keys, right_keys),
            filter,
        ))
    }
}

/// Each pair of join keys cast to their common type where they differ.
fn common_key_types(
    left: Vec<DfExpr>,
    right: Vec<DfExpr>,
    (l, r): (&DfPlan, &DfPlan),
) -> Result<(Vec<DfExpr>, Vec<DfExpr>)> {
    let mut out = (Vec::new(), Vec::new());
    for (a, b) in left.into_iter().zip(right) {
        let ta = a.get_type(l.schema()).map_err(df_error)?;
        let tb = b.get_type(r.schema()).map_err(df_error)?;
        if ta == tb {
            out.0.push(a);
            out.1.push(b);
            continue;
        }
        let t = crate::expr::common_type(&ta, &tb).ok_or_else(|| {
            SlothError::types(format!(
                "join keys of types {ta} and {tb} cannot be compared"
            ))
        })?;
        out.0.push(cast(a, t.clone()));
        out.1.push(cast(b, t));
    }
    Ok(out)
}

/// A listing table over one file, with sloth's schema for it.
fn listing(
    path: &std::path::Path,
    schema: &arrow::datatypes::SchemaRef,
    format: Arc<dyn FileFormat>,
) -> Result<Arc<dyn TableProvider>> {
    let absolute = std::path::absolute(path)?;
    let url = ListingTableUrl::parse(absolute.to_string_lossy()).map_err(df_error)?;
    let extension = path
        .extension()
        .map(|e| format!(".{}", e.to_string_lossy()))
        .unwrap_or_default();
    let options = ListingOptions::new(format).with_file_extension(extension);
    let config = ListingTableConfig::new(url)
        .with_listing_options(options)
        .with_schema(schema.clone());
    Ok(Arc::new(ListingTable::try_new(config).map_err(df_error)?))
}
