//! CPU time and peak memory of this process, from `/proc` (Linux; `None` elsewhere).

use std::time::Duration;

/// User + system CPU time of the process so far.
pub fn cpu_time() -> Option<Duration> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the command name, which is in parentheses and may hold spaces.
    let rest = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // utime and stime are fields 14 and 15 of the line (11 and 12 of `rest`), in clock ticks.
    let ticks: u64 = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    Some(Duration::from_millis(ticks * 1000 / CLOCK_TICKS_PER_SECOND))
}

/// Linux's USER_HZ, fixed at 100 on the architectures sloth runs on.
const CLOCK_TICKS_PER_SECOND: u64 = 100;

/// Peak resident memory of the process so far, in bytes.
pub fn peak_rss() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}
