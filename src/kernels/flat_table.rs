//! An open-addressing table from fixed-width keys to group ids, built for
//! batch probes that prefetch.
//!
//! Integer and packed keys ([`super::hash_table::GroupTable`]) sit in one
//! flat array of `(key, group)` slots, probed linearly from the key hash's
//! low bits. A table past the caches costs one memory miss per probe, and
//! the rows of a batch are independent: the batch loops call
//! [`FlatTable::prefetch`] for a row some distance ahead
//! ([`PREFETCH_DISTANCE`]), so those misses overlap instead of following one
//! another. A general-purpose table (hashbrown's) keeps its buckets private,
//! so it cannot be prefetched into.
//!
//! The table holds at most half as many keys as slots: a probe that hits
//! reads about 1.5 slots, a miss about 2.5, mostly in the same cache line.

/// Rows ahead of the one being probed whose slot the batch loops prefetch:
/// enough to cover a memory miss at a few nanoseconds per probe.
pub const PREFETCH_DISTANCE: usize = 16;

/// In a batch loop at position `j` of `n`, hands `fetch` the hash of the
/// position [`PREFETCH_DISTANCE`] ahead (`hash_at` maps a position to its
/// row's hash), so the probe loops share one look-ahead rule.
#[inline(always)]
pub fn prefetch_ahead(j: usize, n: usize, hash_at: impl Fn(usize) -> u64, fetch: impl FnOnce(u64)) {
    if j + PREFETCH_DISTANCE < n {
        fetch(hash_at(j + PREFETCH_DISTANCE));
    }
}

/// A key a [`FlatTable`] holds: its stored form and its hash, which must be
/// the hash the caller probes with (the table recomputes it when it grows).
pub trait FlatKey: Copy {
    /// How a slot holds the key (`u128` as two words, so a slot is 24 bytes
    /// rather than 32 with `u128`'s alignment).
    type Stored: Copy + PartialEq + Default;
    /// The stored form of the key.
    fn store(self) -> Self::Stored;
    /// The hash of a stored key.
    fn hash_stored(k: Self::Stored) -> u64;
}

impl FlatKey for i64 {
    type Stored = i64;
    #[inline(always)]
    fn store(self) -> i64 {
        self
    }
    #[inline(always)]
    fn hash_stored(k: i64) -> u64 {
        super::hash_table::hash_i64(k)
    }
}

impl FlatKey for u128 {
    type Stored = [u64; 2];
    #[inline(always)]
    fn store(self) -> [u64; 2] {
        [self as u64, (self >> 64) as u64]
    }
    #[inline(always)]
    fn hash_stored(k: [u64; 2]) -> u64 {
        super::hash_table::hash_u128(k[0] as u128 | ((k[1] as u128) << 64))
    }
}

/// A slot's group when it holds no key.
const EMPTY: u32 = u32::MAX;

/// Slots of a new table.
const MIN_SLOTS: usize = 16;

#[derive(Clone, Copy)]
struct Slot<S> {
    key: S,
    group: u32,
}

impl<S> Slot<S> {
    #[inline(always)]
    fn free(&self) -> bool {
        self.group == EMPTY
    }
}

/// A wide table's slot, `[hash >> 32, group]`.
type WideSlot = [u32; 2];

#[inline(always)]
fn wide_free(s: &WideSlot) -> bool {
    s[1] == EMPTY
}

/// Probes `slots` linearly from `hash`'s low bits: `Ok` with the first slot
/// that `matches`, or `Err` with the first free one, whichever comes first.
/// The tables never fill past half, so a free slot always ends the walk.
#[inline(always)]
fn probe<S>(
    slots: &[S],
    mask: usize,
    hash: u64,
    free: impl Fn(&S) -> bool,
    matches: impl Fn(&S) -> bool,
) -> Result<usize, usize> {
    let mut i = hash as usize & mask;
    loop {
        let s = &slots[i];
        if free(s) {
            return Err(i);
        }
        if matches(s) {
            return Ok(i);
        }
        i = (i + 1) & mask;
    }
}

/// Fixed-width keys to group ids, by open addressing with linear probing.
pub struct FlatTable<K: FlatKey> {
    slots: Vec<Slot<K::Stored>>,
    /// `slots.len() - 1` (a power of two minus one).
    mask: usize,
    len: usize,
}

impl<K: FlatKey> FlatTable<K> {
    /// Bytes the table's slots take.
    pub fn memory_size(&self) -> usize {
        self.slots.capacity() * std::mem::size_of::<Slot<K::Stored>>()
    }
}

impl<K: FlatKey> Default for FlatTable<K> {
    fn default() -> Self {
        Self::with_slots(MIN_SLOTS)
    }
}

impl<K: FlatKey> FlatTable<K> {
    fn with_slots(n: usize) -> Self {
        let empty = Slot {
            key: K::Stored::default(),
            group: EMPTY,
        };
        FlatTable {
            slots: vec![empty; n],
            mask: n - 1,
            len: 0,
        }
    }

    /// Keys held.
    #[cfg(any(test, feature = "internals"))]
    pub fn len(&self) -> usize {
        self.len
    }

    /// True if no key is held.
    #[cfg(any(test, feature = "internals"))]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Makes room for `additional` more keys without growing.
    pub fn reserve(&mut self, additional: usize) {
        let want = (self.len + additional).saturating_mul(2);
        if want > self.slots.len() {
            self.resize(want.next_power_of_two());
        }
    }

    fn resize(&mut self, n: usize) {
        let old = std::mem::replace(self, Self::with_slots(n));
        self.len = old.len;
        for s in old.slots.into_iter().filter(|s| s.group != EMPTY) {
            let free = probe(
                &self.slots,
                self.mask,
                K::hash_stored(s.key),
                Slot::free,
                |_| false,
            );
            self.slots[free.unwrap_err()] = s;
        }
    }

    /// Asks the CPU to fetch the slot where a probe for `hash` starts.
    #[inline(always)]
    pub fn prefetch(&self, hash: u64) {
        prefetch(&self.slots[hash as usize & self.mask]);
    }

    /// The group of `key`, if held.
    #[inline]
    pub fn find(&self, key: K, hash: u64) -> Option<u32> {
        let k = key.store();
        let at = probe(&self.slots, self.mask, hash, Slot::free, |s| s.key == k);
        at.ok().map(|i| self.slots[i].group)
    }

    /// The group of `key`; if not held, it is added with group `next`
    /// (which the caller recognizes as new).
    #[inline]
    pub fn find_or_insert(&mut self, key: K, hash: u64, next: u32) -> u32 {
        if (self.len + 1) * 2 > self.slots.len() {
            self.resize(self.slots.len() * 2);
        }
        let k = key.store();
        match probe(&self.slots, self.mask, hash, Slot::free, |s| s.key == k) {
            Ok(i) => self.slots[i].group,
            Err(free) => {
                self.slots[free] = Slot {
                    key: k,
                    group: next,
                };
                self.len += 1;
                next
            }
        }
    }
}

/// Fixed-width byte keys ([`super::wide_keys`]) to group ids, by open
/// addressing: a slot holds a group id and 32 bits of its hash (compared
/// first, so a probe reads a key only when they agree); the keys, back to
/// back, and their hashes are kept in group order.
pub struct WideTable {
    /// The group [`EMPTY`] in a free slot.
    slots: Vec<WideSlot>,
    mask: usize,
    /// Bytes per key.
    width: usize,
    keys: Vec<u8>,
    hashes: Vec<u64>,
}

impl WideTable {
    /// Bytes the table's slots, keys and hashes take.
    pub fn memory_size(&self) -> usize {
        self.slots.capacity() * std::mem::size_of::<WideSlot>()
            + self.keys.capacity()
            + self.hashes.capacity() * 8
    }

    /// An empty table for keys of `width` bytes.
    pub fn new(width: usize) -> Self {
        WideTable {
            slots: vec![[0, EMPTY]; MIN_SLOTS],
            mask: MIN_SLOTS - 1,
            width,
            keys: Vec::new(),
            hashes: Vec::new(),
        }
    }

    /// Groups held.
    pub fn len(&self) -> usize {
        self.hashes.len()
    }

    /// True if no group is held.
    #[cfg(any(test, feature = "internals"))]
    pub fn is_empty(&self) -> bool {
        self.hashes.is_empty()
    }

    /// The keys of all groups, back to back in group order.
    pub fn keys(&self) -> &[u8] {
        &self.keys
    }

    /// The key of group `g`.
    #[inline]
    pub fn key(&self, g: u32) -> &[u8] {
        let at = g as usize * self.width;
        &self.keys[at..at + self.width]
    }

    /// The hash of group `g`.
    #[inline]
    pub fn hash_of(&self, g: u32) -> u64 {
        self.hashes[g as usize]
    }

    /// Makes room for `additional` more groups without growing.
    pub fn reserve(&mut self, additional: usize) {
        let want = (self.len() + additional).saturating_mul(2);
        if want > self.slots.len() {
            self.resize(want.next_power_of_two());
        }
        self.keys.reserve(additional * self.width);
        self.hashes.reserve(additional);
    }

    fn resize(&mut self, n: usize) {
        self.slots = vec![[0, EMPTY]; n];
        self.mask = n - 1;
        for (g, &h) in self.hashes.iter().enumerate() {
            let free = probe(&self.slots, self.mask, h, wide_free, |_| false);
            self.slots[free.unwrap_err()] = [(h >> 32) as u32, g as u32];
        }
    }

    /// Asks the CPU to fetch the slot where a probe for `hash` starts.
    #[inline(always)]
    pub fn prefetch(&self, hash: u64) {
        prefetch(&self.slots[hash as usize & self.mask]);
    }

    /// The group of `key`, if held.
    #[inline]
    pub fn find(&self, key: &[u8], hash: u64) -> Option<u32> {
        let at = probe(
            &self.slots,
            self.mask,
            hash,
            wide_free,
            self.holds(key, hash),
        );
        at.ok().map(|i| self.slots[i][1])
    }

    /// Whether a used slot holds `key`: its hash tag agrees, then its bytes.
    #[inline(always)]
    fn holds<'a>(&'a self, key: &'a [u8], hash: u64) -> impl Fn(&WideSlot) -> bool + 'a {
        let tag = (hash >> 32) as u32;
        move |&[t, g]| t == tag && self.key(g) == key
    }

    /// The group of `key`, added as the next group if not held.
    #[inline]
    pub fn find_or_insert(&mut self, key: &[u8], hash: u64) -> u32 {
        if (self.len() + 1) * 2 > self.slots.len() {
            self.resize(self.slots.len() * 2);
        }
        match probe(
            &self.slots,
            self.mask,
            hash,
            wide_free,
            self.holds(key, hash),
        ) {
            Ok(i) => self.slots[i][1],
            Err(free) => {
                let next = self.hashes.len() as u32;
                self.slots[free] = [(hash >> 32) as u32, next];
                self.keys.extend_from_slice(key);
                self.hashes.push(hash);
                next
            }
        }
    }
}

/// Asks the CPU to fetch the cache line of `item`.
#[inline(always)]
fn prefetch<T>(item: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is a hint; it reads nothing the program sees and
    // cannot fault. The address is that of a live value.
    unsafe {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        _mm_prefetch::<_MM_HINT_T0>((item as *const T).cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = item;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::hash_table::{hash_i64, hash_u128};

    #[test]
    fn keys_get_the_ids_they_were_inserted_with_across_growth() {
        let mut t = FlatTable::<i64>::default();
        // Keys with equal low hash bits collide, and growth rehashes them.
        let keys: Vec<i64> = (0..10_000).map(|i| (i * 7919) % 5003 - 2500).collect();
        let mut ids = Vec::new();
        let mut next = 0;
        for &k in &keys {
            let g = t.find_or_insert(k, hash_i64(k), next);
            if g == next {
                next += 1;
            }
            ids.push(g);
        }
        assert_eq!(t.len(), next as usize);
        assert_eq!(t.len(), 5003);
        for (&k, &g) in keys.iter().zip(&ids) {
            assert_eq!(t.find(k, hash_i64(k)), Some(g));
            assert_eq!(keys[ids.iter().position(|&x| x == g).unwrap()], k);
        }
        assert_eq!(t.find(1 << 40, hash_i64(1 << 40)), None);
    }

    #[test]
    fn packed_keys_differing_in_either_half_are_distinct() {
        let mut t = FlatTable::<u128>::default();
        t.reserve(100);
        let keys = [0u128, 1, 1 << 64, (1 << 64) | 1, u128::MAX];
        for (g, &k) in keys.iter().enumerate() {
            assert_eq!(t.find_or_insert(k, hash_u128(k), g as u32), g as u32);
        }
        for (g, &k) in keys.iter().enumerate() {
            assert_eq!(t.find_or_insert(k, hash_u128(k), 99), g as u32);
            t.prefetch(hash_u128(k));
        }
        assert_eq!(t.len(), keys.len());
    }

    #[test]
    fn wide_keys_get_dense_ids_and_keep_their_bytes_across_growth() {
        let mut t = WideTable::new(16);
        let key = |i: u64| [i.to_le_bytes(), (i % 3).to_le_bytes()].concat();
        // Hashes that share their high half exercise the key comparison.
        let hash = |i: u64| i % 1000;
        for round in 0..2 {
            for i in 0..5000u64 {
                assert_eq!(
                    t.find_or_insert(&key(i), hash(i)),
                    i as u32,
                    "round {round}"
                );
            }
        }
        t.reserve(10_000);
        for i in (0..5000u64).step_by(7) {
            assert_eq!(t.find(&key(i), hash(i)), Some(i as u32));
            assert_eq!(t.key(i as u32), key(i).as_slice());
            assert_eq!(t.hash_of(i as u32), hash(i));
        }
        assert_eq!(t.find(&key(5001), hash(5001)), None);
        assert_eq!(t.len(), 5000);
        assert_eq!(t.keys().len(), 5000 * 16);
    }
}
