//! Where each group-by and join of a plan is expected to run, for EXPLAIN.
//!
//! The executor decides per operator at run time, from the sizes of the
//! inputs it has in hand (`try_operator`). EXPLAIN runs nothing, so it
//! makes the same decision from the optimizer's row estimates
//! (`plan::cardinality`) and prints it with the cost model's
//! estimate, for instance
//!
//! ```text
//! HashAggregate keys=[#0] aggs=[sum(#1)]: gpu (GPU 0 (sm_90, 132 SMs)); est. 100000000 input rows; est cpu 402.00 ms, gpu 60.15 ms (transfer 80.00 + kernel 25.15)
//! HashJoin Inner on [#0 = #0]: cpu (gpu: no CUDA driver (libcuda) on this machine)
//! ```
//! `EXPLAIN ANALYZE` shows what actually happened, with the measured
//! transfer and kernel times.

use super::{Device, availability, operator_estimate, unsupported};
use crate::error::Result;
use crate::physical::PhysicalPlan;
use crate::physical::planner::create_physical_plan;
use crate::plan::cardinality;
use crate::plan::{Aggregate, Distinct, LogicalPlan};

/// One line per group-by and join of the optimized logical `plan`
/// (pre-order): the operator and where it would run under `device`, why,
/// and the cost model's estimate when the GPU is a candidate.
pub fn placement(plan: &LogicalPlan, device: Device) -> Result<Vec<String>> {
    let mut lines = Vec::new();
    visit(plan, device, &mut lines)?;
    Ok(lines)
}

fn visit(plan: &LogicalPlan, device: Device, lines: &mut Vec<String>) -> Result<()> {
    if matches!(
        plan,
        LogicalPlan::Aggregate(Aggregate { .. })
            | LogicalPlan::Join(_)
            | LogicalPlan::Distinct(Distinct { .. })
    ) {
        let physical = create_physical_plan(plan)?;
        if matches!(
            physical,
            PhysicalPlan::HashAggregate { .. } | PhysicalPlan::HashJoin { .. }
        ) {
            lines.push(format!(
                "{}: {}",
                physical.describe(),
                decide(plan, &physical, device)
            ));
        }
    }
    for input in plan.inputs() {
        visit(input, device, lines)?;
    }
    Ok(())
}

/// Where one operator would run, and why.
fn decide(logical: &LogicalPlan, physical: &PhysicalPlan, device: Device) -> String {
    if device == Device::Cpu {
        return "cpu (--device cpu)".into();
    }
    if let Some(why) = unsupported(physical) {
        return format!("cpu ({why})");
    }
    let gpu = match device {
        Device::Emulate => Ok("emulated gpu (the kernels' CPU port)".to_string()),
        _ => availability().map(|name| format!("gpu ({name})")),
    };
    let gpu = match gpu {
        Ok(gpu) => gpu,
        Err(why) => return format!("cpu (gpu: {why})"),
    };
    let rows: Vec<usize> = logical
        .inputs()
        .iter()
        .map(|input| cardinality::estimate(input).rows as usize)
        .collect();
    let Some(estimate) = operator_estimate(physical, &rows) else {
        return gpu;
    };
    let input_rows: usize = rows.iter().sum();
    let choice = if device == Device::Auto && !estimate.prefers_gpu() {
        "cpu (cost model)".to_string()
    } else {
        gpu
    };
    format!("{choice}; est. {input_rows} input rows; {estimate}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prelude::*;
    use arrow::array::{ArrayRef, Float64Array, Int64Array, RecordBatch};
    use std::sync::Arc;

    fn frame() -> LazyFrame {
        let k: ArrayRef = Arc::new(Int64Array::from_iter_values(0..1000));
        let x: ArrayRef = Arc::new(Float64Array::from_iter_values((0..1000).map(f64::from)));
        LazyFrame::from_batches(vec![
            RecordBatch::try_from_iter([("k", k), ("x", x)]).unwrap(),
        ])
        .unwrap()
    }

    fn lines(lf: &LazyFrame, device: Device) -> Vec<String> {
        placement(&lf.optimized_plan().unwrap(), device).unwrap()
    }

    #[test]
    fn each_group_by_and_join_gets_a_line_with_its_choice() {
        let lf = frame()
            .join(
                &frame().select([col("k").alias("k2")]),
                [col("k")],
                [col("k2")],
                JoinType::Inner,
            )
            .group_by([col("k")])
            .agg([col("x").sum()]);
        let emulated = lines(&lf, Device::Emulate);
        assert_eq!(emulated.len(), 2, "{emulated:?}");
        assert!(emulated[0].starts_with("HashAggregate"), "{emulated:?}");
        assert!(emulated[1].starts_with("HashJoin"), "{emulated:?}");
        for line in &emulated {
            assert!(line.contains(": emulated gpu"), "{line}");
            assert!(
                line.contains("est. ") && line.contains("transfer"),
                "{line}"
            );
        }
        assert!(
            emulated[0].contains("est. 1000 input rows"),
            "{}",
            emulated[0]
        );
        for line in lines(&lf, Device::Cpu) {
            assert!(line.ends_with(": cpu (--device cpu)"), "{line}");
        }
    }

    #[test]
    fn unsupported_operators_say_why() {
        let lf = frame().group_by([col("x")]).agg([col("k").sum()]);
        let [line] = lines(&lf, Device::Emulate).try_into().unwrap();
        assert!(
            line.contains("cpu (not supported on the GPU: a key that is not"),
            "{line}"
        );
    }

    #[test]
    fn without_a_gpu_auto_and_gpu_stay_on_the_cpu_and_say_why() {
        let Err(why) = availability() else {
            return; // a GPU is here: nothing to check
        };
        let lf = frame().group_by([col("k")]).agg([col("x").sum()]);
        for device in [Device::Auto, Device::Gpu] {
            let [line] = lines(&lf, device).try_into().unwrap();
            assert!(line.ends_with(&format!("cpu (gpu: {why})")), "{line}");
        }
    }
}
