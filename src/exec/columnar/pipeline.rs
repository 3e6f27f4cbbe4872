//! Fused filter/project stages, run per batch on all cores.
//!
//! A batch goes through every stage before the next batch is touched, so a
//! chain of filters and projections never materializes an intermediate table.

use arrow::compute::filter_record_batch;
use arrow::record_batch::{RecordBatch, RecordBatchOptions};
use rayon::prelude::*;

use crate::error::Result;
use crate::kernels::eval::{evaluate_array, evaluate_mask};
use crate::physical::Stage;

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
                let kept = mask.true_count();
                if kept == 0 {
                    return Ok(None);
                }
                if kept < batch.num_rows() {
                    batch = filter_record_batch(&batch, &mask)?;
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
