//! Results of repeated subplans, computed once per execution.
//!
//! SQL repeats subplans: a view or CTE used twice (TPC-H Q15's `revenue`),
//! a subquery over the same join as the outer query (Q11), or an input the
//! optimizer copied to filter another one (semi-join reductions). Before a
//! run, every operator subtree that occurs more than once (same text: same
//! sources, columns, filters and operators) is marked; the first run of it
//! keeps its batches and later occurrences reuse them. Scans are never
//! kept: re-reading a file costs less memory than holding it, and the
//! costly part of re-reading, zstd, is done once for columns that several
//! scans read ([`crate::io::SharedPages`]).

use std::collections::HashMap;
use std::sync::Mutex;

use arrow::record_batch::RecordBatch;

use crate::physical::PhysicalPlan;

/// The first run of a subtree: its pre-order node id and its output.
type FirstRun = (usize, Vec<RecordBatch>);

/// Marked subtrees and, once computed, their output.
#[derive(Debug, Default)]
pub struct SharedResults {
    /// Subtree text → its first run, once there was one.
    slots: Mutex<HashMap<String, Option<FirstRun>>>,
}

impl SharedResults {
    /// Marks the subtrees of `plan` that occur more than once.
    pub fn for_plan(plan: &PhysicalPlan) -> Self {
        fn walk(p: &PhysicalPlan, seen: &mut HashMap<String, usize>) {
            if !matches!(p, PhysicalPlan::Scan { .. }) {
                *seen.entry(p.to_string()).or_default() += 1;
            }
            p.children().into_iter().for_each(|c| walk(c, seen));
        }
        let mut seen = HashMap::new();
        walk(plan, &mut seen);
        let slots = seen
            .into_iter()
            .filter(|(_, n)| *n > 1)
            .map(|(k, _)| (k, None))
            .collect();
        SharedResults {
            slots: Mutex::new(slots),
        }
    }

    /// The key of `plan` when it is a marked subtree.
    pub fn key(&self, plan: &PhysicalPlan) -> Option<String> {
        let slots = self.slots.lock().expect("shared results lock");
        if slots.is_empty() || matches!(plan, PhysicalPlan::Scan { .. }) {
            return None;
        }
        let key = plan.to_string();
        slots.contains_key(&key).then_some(key)
    }

    /// The id of the first run of the subtree with `key` and its output,
    /// if it has run already.
    pub fn get(&self, key: &str) -> Option<FirstRun> {
        self.slots
            .lock()
            .expect("shared results lock")
            .get(key)
            .cloned()
            .flatten()
    }

    /// Keeps the output of the subtree with `key`, first run as node `id`.
    pub fn put(&self, key: String, id: usize, batches: &[RecordBatch]) {
        self.slots
            .lock()
            .expect("shared results lock")
            .insert(key, Some((id, batches.to_vec())));
    }
}

/// Nodes in `plan`'s subtree (itself included).
pub fn node_count(plan: &PhysicalPlan) -> usize {
    1 + plan.children().into_iter().map(node_count).sum::<usize>()
}
