//! The memory budget of one query, and the reservations operators hold
//! against it.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use super::size::format_bytes;
use crate::error::{Result, SlothError};

/// A hook told when memory gets tight: `true` once some query's
/// reservations pass a quarter of its limit, `false` once no query's are
/// above an eighth of its limit any more (see [`set_pressure_hook`]).
pub type PressureHook = fn(bool);

static PRESSURE_HOOK: std::sync::OnceLock<PressureHook> = std::sync::OnceLock::new();

/// Pools whose reservations passed a quarter of their limit and have not
/// yet fallen below an eighth of it.
static PRESSED_POOLS: Mutex<usize> = Mutex::new(0);

/// Registers the process's [`PressureHook`] (the first call wins).
///
/// A program that keeps freed memory in its allocator for speed (the CLI
/// does: giving pages back and faulting them in again zeroed is slow) can
/// give it back while a query nears its limit, and keep it otherwise: a
/// query that reserves a fraction of its limit then runs as fast as
/// without one.
pub fn set_pressure_hook(hook: PressureHook) {
    let _ = PRESSURE_HOOK.set(hook);
}

/// Adds one pool to the pressed set (`pressed`) or takes one away,
/// telling the hook when the set turns non-empty or empty. Called with
/// the set's lock held, so that the hook hears the turns in order.
fn count_pressed(pools: &mut usize, pressed: bool) {
    let before = *pools;
    *pools = if pressed {
        before + 1
    } else {
        before.saturating_sub(1)
    };
    if (before == 0) != (*pools == 0)
        && let Some(hook) = PRESSURE_HOOK.get()
    {
        hook(pressed);
    }
}

/// A query's memory budget: the sum of all live [`Reservation`]s never
/// exceeds `limit`. Also counts what operators spilled, for `EXPLAIN
/// ANALYZE`.
#[derive(Debug)]
pub struct MemoryPool {
    limit: usize,
    used: AtomicUsize,
    /// Whether the reservations passed a quarter of the limit (and have
    /// not since fallen below an eighth): counted in [`PRESSED_POOLS`].
    pressed: std::sync::atomic::AtomicBool,
    peak: AtomicUsize,
    spilled_bytes: AtomicU64,
    spill_files: AtomicUsize,
    /// Per consumer: bytes held now, and the most held at once.
    consumers: Mutex<Vec<(&'static str, usize, usize)>>,
}

impl MemoryPool {
    /// A pool of `limit` bytes.
    pub fn new(limit: u64) -> Arc<Self> {
        Arc::new(MemoryPool {
            limit: usize::try_from(limit).unwrap_or(usize::MAX),
            used: AtomicUsize::new(0),
            pressed: std::sync::atomic::AtomicBool::new(false),
            peak: AtomicUsize::new(0),
            spilled_bytes: AtomicU64::new(0),
            spill_files: AtomicUsize::new(0),
            consumers: Mutex::new(Vec::new()),
        })
    }

    /// Each consumer's peak: the most bytes its reservations held at once,
    /// in the order consumers first reserved.
    pub fn peaks(&self) -> Vec<(&'static str, usize)> {
        let consumers = self.consumers.lock().unwrap_or_else(|e| e.into_inner());
        consumers
            .iter()
            .map(|&(name, _, peak)| (name, peak))
            .collect()
    }

    /// Adds `delta` bytes (negative: gives back) to `consumer`'s count.
    fn count(&self, consumer: &'static str, delta: isize) {
        let mut consumers = self.consumers.lock().unwrap_or_else(|e| e.into_inner());
        let i = match consumers.iter().position(|c| c.0 == consumer) {
            Some(i) => i,
            None => {
                consumers.push((consumer, 0, 0));
                consumers.len() - 1
            }
        };
        let entry = &mut consumers[i];
        entry.1 = entry.1.saturating_add_signed(delta);
        entry.2 = entry.2.max(entry.1);
    }

    /// A pool without a limit.
    #[cfg(test)]
    pub fn unbounded() -> Arc<Self> {
        Self::new(u64::MAX)
    }

    /// The limit in bytes.
    pub fn limit(&self) -> usize {
        self.limit
    }

    /// Bytes reserved now.
    #[cfg(test)]
    pub fn used(&self) -> usize {
        self.used.load(Ordering::Relaxed)
    }

    /// The most bytes ever reserved at once.
    pub fn peak(&self) -> usize {
        self.peak.load(Ordering::Relaxed)
    }

    /// Bytes written to spill files, and how many files.
    pub fn spilled(&self) -> (u64, usize) {
        (
            self.spilled_bytes.load(Ordering::Relaxed),
            self.spill_files.load(Ordering::Relaxed),
        )
    }

    pub(super) fn count_spill(&self, bytes: u64) {
        self.spilled_bytes.fetch_add(bytes, Ordering::Relaxed);
        self.spill_files.fetch_add(1, Ordering::Relaxed);
    }

    /// An empty reservation for `consumer` (an operator's name, for errors).
    pub fn reservation(self: &Arc<Self>, consumer: &'static str) -> Reservation {
        Reservation {
            pool: self.clone(),
            size: 0,
            consumer,
        }
    }

    fn try_grow(&self, bytes: usize, consumer: &'static str) -> Result<()> {
        let mut used = self.used.load(Ordering::Relaxed);
        loop {
            let new = used.saturating_add(bytes);
            if new > self.limit {
                return Err(SlothError::MemoryLimit(format!(
                    "{consumer} needs {} more with {} of the {} limit in use; \
                     raise it with --memory-limit or SET memory_limit",
                    format_bytes(bytes as u64),
                    format_bytes(used as u64),
                    format_bytes(self.limit as u64),
                )));
            }
            match self
                .used
                .compare_exchange_weak(used, new, Ordering::Relaxed, Ordering::Relaxed)
            {
                Ok(_) => {
                    self.peak.fetch_max(new, Ordering::Relaxed);
                    self.track_pressure(new);
                    self.count(consumer, bytes as isize);
                    return Ok(());
                }
                Err(now) => used = now,
            }
        }
    }

    /// Whether `used` bytes reserved press on the limit: above a quarter
    /// of it yes, below an eighth no, in between as before. A quarter,
    /// not more: what operators reserve is not all a query holds (batches
    /// in flight, file pages), and memory freed but kept by the allocator
    /// comes on top; a 100M x 100M-row join under a 2 GB limit reserved
    /// 763 MiB and held 1.4 GB.
    fn pressed_at(&self, used: usize) -> Option<bool> {
        if used > self.limit / 4 {
            Some(true)
        } else if used < self.limit / 8 {
            Some(false)
        } else {
            None
        }
    }

    /// Moves the pool into or out of the pressed set as `used` (bytes
    /// reserved after a change) says. Only a turn takes the set's lock,
    /// and the pool's state is judged again under it, from what is
    /// reserved then, so that racing reservations cannot leave the pool
    /// counted wrongly.
    fn track_pressure(&self, used: usize) {
        if self
            .pressed_at(used)
            .is_none_or(|p| p == self.pressed.load(Ordering::Relaxed))
        {
            return;
        }
        let mut pools = PRESSED_POOLS.lock().unwrap_or_else(|e| e.into_inner());
        let now = self.pressed_at(self.used.load(Ordering::Relaxed));
        if let Some(p) = now
            && p != self.pressed.load(Ordering::Relaxed)
        {
            self.pressed.store(p, Ordering::Relaxed);
            count_pressed(&mut pools, p);
        }
    }

    fn shrink(&self, bytes: usize, consumer: &'static str) {
        let left = self.used.fetch_sub(bytes, Ordering::Relaxed) - bytes;
        self.track_pressure(left);
        if bytes > 0 {
            self.count(consumer, -(bytes as isize));
        }
    }
}

impl Drop for MemoryPool {
    fn drop(&mut self) {
        if *self.pressed.get_mut() {
            let mut pools = PRESSED_POOLS.lock().unwrap_or_else(|e| e.into_inner());
            count_pressed(&mut pools, false);
        }
    }
}

/// Bytes one operator holds against a [`MemoryPool`]; given back when
/// dropped.
#[derive(Debug)]
pub struct Reservation {
    pool: Arc<MemoryPool>,
    size: usize,
    consumer: &'static str,
}

impl Reservation {
    /// Bytes held.
    pub fn size(&self) -> usize {
        self.size
    }

    /// Holds `bytes` more, or fails with [`SlothError::MemoryLimit`]
    /// (holding what it held before).
    pub fn try_grow(&mut self, bytes: usize) -> Result<()> {
        self.pool.try_grow(bytes, self.consumer)?;
        self.size += bytes;
        Ok(())
    }

    /// Holds exactly `bytes`: grows (which may fail) or gives back.
    pub fn try_resize(&mut self, bytes: usize) -> Result<()> {
        if bytes > self.size {
            self.try_grow(bytes - self.size)
        } else {
            self.pool.shrink(self.size - bytes, self.consumer);
            self.size = bytes;
            Ok(())
        }
    }

    /// Gives everything back.
    pub fn free(&mut self) {
        self.pool.shrink(self.size, self.consumer);
        self.size = 0;
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        self.free();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reservations_stay_within_the_limit_and_give_back_on_drop() {
        let pool = MemoryPool::new(1000);
        let mut a = pool.reservation("sort");
        a.try_grow(600).unwrap();
        let mut b = pool.reservation("hash aggregate");
        let e = b.try_grow(500).unwrap_err().to_string();
        assert!(e.contains("hash aggregate needs 500 B more"), "{e}");
        assert!(e.contains("600 B of the 1000 B limit"), "{e}");
        assert_eq!(b.size(), 0);
        a.try_resize(100).unwrap();
        b.try_grow(500).unwrap();
        assert_eq!(pool.used(), 600);
        drop(a);
        drop(b);
        assert_eq!(pool.used(), 0);
        assert_eq!(pool.peak(), 600);
        assert_eq!(pool.peaks(), [("sort", 600), ("hash aggregate", 500)]);
    }

    #[test]
    fn a_pool_is_pressed_past_a_quarter_of_its_limit_until_below_an_eighth() {
        let pool = MemoryPool::new(1000);
        let pressed = || pool.pressed.load(Ordering::Relaxed);
        let mut r = pool.reservation("hash join");
        r.try_grow(250).unwrap();
        assert!(!pressed(), "a quarter of the limit is not past a quarter");
        r.try_grow(1).unwrap();
        assert!(pressed());
        r.try_resize(130).unwrap();
        assert!(
            pressed(),
            "between an eighth and a quarter it stays pressed"
        );
        r.try_resize(124).unwrap();
        assert!(!pressed());
        r.try_resize(200).unwrap();
        assert!(
            !pressed(),
            "between an eighth and a quarter it stays unpressed"
        );
        r.try_resize(900).unwrap();
        drop(r);
        assert!(!pressed(), "all given back");
    }

    #[test]
    fn concurrent_reservations_never_overshoot() {
        let pool = MemoryPool::new(10_000);
        let granted = AtomicUsize::new(0);
        std::thread::scope(|s| {
            for _ in 0..8 {
                s.spawn(|| {
                    let mut r = pool.reservation("t");
                    for _ in 0..1000 {
                        if r.try_grow(7).is_ok() {
                            granted.fetch_add(7, Ordering::Relaxed);
                        }
                    }
                    std::mem::forget(r);
                });
            }
        });
        assert!(pool.used() <= 10_000);
        assert_eq!(pool.used(), granted.load(Ordering::Relaxed));
    }
}
