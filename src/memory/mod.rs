//! Memory accounting and spilling: the budget every operator of a query
//! draws from, and the temporary files an operator writes when its state
//! would not fit.
//!
//! A query runs under one `MemoryPool` whose limit comes from the
//! `memory_limit` setting (by default 80% of the memory this process may
//! use: the cgroup limit where one is set, else the machine's). An
//! operator that builds state (a hash aggregate's groups, a sort's rows)
//! holds a `Reservation` and grows it *before* it grows the state; when
//! the pool refuses, the operator spills to a `SpillDir` instead of
//! growing, and fails with [`SlothError::MemoryLimit`] only when a single
//! unit of work cannot fit.
//!
//! [`SlothError::MemoryLimit`]: crate::error::SlothError::MemoryLimit

mod pool;
mod size;
mod spill;
mod system;

pub(crate) use pool::{MemoryPool, Reservation};
pub use pool::{PressureHook, set_pressure_hook};
pub use size::{format_bytes, parse_bytes};
pub use spill::{SpillCompression, remove_spill_dirs};
pub(crate) use spill::{SpillDir, SpillFile, SpillWriter};
pub use system::{default_memory_limit, system_memory};
