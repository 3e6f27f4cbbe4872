//! Fused filter/project stages, run per batch on all cores.
//!
//! A batch goes through every stage before the next batch is touched, so a
//! chain of filters and projections never materializes an intermediate table.

use arrow::record_batch::{RecordBatch, RecordBatchOptions};
use rayon::prelude::*;

use crate::error::Result;
use crate::physical::Stage;
use crate::physical_expr::eval::{evaluate_array, evaluate_mask, keep_rows};

/// Applies `stages` to every batch (in parallel), dropping empty results.
pub fn run_pipeline(batches: Vec<RecordBatch>, stages: &[Stage]) -> Result<Vec<RecordBatch>> {
    if stages.is_empty() {
        return Ok(batches);
    }
    let out: Vec<Option<RecordBatch>> = batches
        .into_par_iter()
        .map(|b| apply_stages(b, stages))
        .collect::<Result<_>>()?;
    Ok(out.into_iter().flatten().collect())
}

pub(crate) fn apply_stages(
    mut batch: RecordBatch,
    stages: &[Stage],
) -> Result<Option<RecordBatch>> {
    for stage in stages {
        match stage {
            Stage::Filter(predicate) => {
                let mask = evaluate_mask(predicate, &batch)?;
                match keep_rows(batch, &mask)? {
                    Some(kept) => batch = kept,
                    None => return Ok(None),
                }
            }
            Stage::Project(exprs, schema) => {
                let columns = exprs
                    .iter()
                    .map(|e| evaluate_array(e, &batch))
                    .collect::<Result<Vec<_>>>()?;
                let options = RecordBatchOptions::new().with_row_count(Some(batch.num_rows()));
                batch = RecordBatch::try_new_with_options(schema.clone(), columns, &options)?;
            }
        }
    }
    Ok(Some(batch))
}
