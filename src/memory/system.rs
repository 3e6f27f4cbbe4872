//! How much memory this process may use: the cgroup limit where one is
//! set (a container, a systemd slice), else the machine's memory.

use std::fs;

/// Share of the usable memory a query may hold by default (DuckDB's).
const DEFAULT_SHARE: f64 = 0.8;

/// Bytes of memory this process may use, if the system says: the smaller
/// of the cgroup's limit (v2 `memory.max`, v1 `memory.limit_in_bytes`) and
/// `MemTotal` of `/proc/meminfo`. Read once per process.
pub fn system_memory() -> Option<u64> {
    static MEMORY: std::sync::OnceLock<Option<u64>> = std::sync::OnceLock::new();
    *MEMORY.get_or_init(|| match (meminfo_total(), cgroup_limit()) {
        (Some(t), Some(c)) => Some(t.min(c)),
        (t, c) => t.or(c),
    })
}

/// The default `memory_limit`: 80% of [`system_memory`], or no limit
/// where the system does not say how much there is.
pub fn default_memory_limit() -> u64 {
    system_memory().map_or(u64::MAX, |m| (m as f64 * DEFAULT_SHARE) as u64)
}

fn meminfo_total() -> Option<u64> {
    let text = fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// The memory limit of this process's cgroup, if one is set.
fn cgroup_limit() -> Option<u64> {
    for path in [
        "/sys/fs/cgroup/memory.max",
        "/sys/fs/cgroup/memory/memory.limit_in_bytes",
    ] {
        if let Ok(text) = fs::read_to_string(path) {
            // "max" (v2) or a page-rounded i64::MAX (v1) mean no limit.
            return text.trim().parse::<u64>().ok().filter(|&n| n < (1 << 60));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_limit_is_a_share_of_what_the_system_reports() {
        match system_memory() {
            Some(m) => {
                assert!(m > 1 << 20, "{m}");
                assert!(default_memory_limit() < m);
            }
            None => assert_eq!(default_memory_limit(), u64::MAX),
        }
    }
}
