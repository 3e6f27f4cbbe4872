// sloth's GPU kernels, compiled once per process by NVRTC (see cuda.rs).
// src/gpu/emulate.rs is a line-by-line CPU port of these kernels: change
// both together, and its tests check the port against the CPU operators.
// This source itself also runs on the CPU, under src/gpu/simt/simt.h
// (CUDA's execution model on OS threads), in src/gpu/simt/check.cpp.
//
// Validity is an Arrow-style bitmap (bit i of byte i/8), or null when the
// column has no nulls. Loops are grid-stride, so any launch size is valid.

#define EMPTY_KEY (-9223372036854775807LL - 1)

__device__ __forceinline__ unsigned long long mix64(unsigned long long k) {
    k ^= k >> 33; k *= 0xff51afd7ed558ccdULL;
    k ^= k >> 33; k *= 0xc4ceb9fe1a85ec53ULL;
    k ^= k >> 33; return k;
}

__device__ __forceinline__ bool is_valid(const unsigned char* v, long long i) {
    return v == 0 || ((v[i >> 3] >> (i & 7)) & 1);
}

#define GRID_STRIDE(i, n) \
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < (n); \
         i += (long long)gridDim.x * blockDim.x)

// Inserts every key into an open-addressing table (linear probing,
// atomicCAS on the key) and writes each row's slot. Null keys go to slot
// `mask + 1`. A full table sets *overflow (the host then falls back).
// Linear probing over at most `probes` slots (global or shared memory).
// A slot's key never changes once set, so a plain read that finds the key
// (the common case once the groups exist) needs no atomic; only an empty
// slot is claimed with atomicCAS.
__device__ __forceinline__ long long probe_insert(long long* table, unsigned long long mask,
                                                  long long k, unsigned long long probes) {
    unsigned long long h = mix64((unsigned long long)k) & mask;
    for (unsigned long long probe = 0; probe < probes; probe++) {
        long long cur = ((volatile long long*)table)[h];
        if (cur == k) return (long long)h;
        if (cur == EMPTY_KEY) {
            cur = (long long)atomicCAS((unsigned long long*)&table[h],
                                       (unsigned long long)EMPTY_KEY, (unsigned long long)k);
            if (cur == EMPTY_KEY || cur == k) return (long long)h;
        }
        h = (h + 1) & mask;
    }
    return -1;
}

__device__ long long find_or_insert(long long* table, unsigned long long mask, long long k) {
    return probe_insert(table, mask, k, mask + 1);
}

__device__ long long find(const long long* table, unsigned long long mask, long long k) {
    unsigned long long h = mix64((unsigned long long)k) & mask;
    for (unsigned long long probe = 0; probe <= mask; probe++) {
        long long cur = table[h];
        if (cur == k) return (long long)h;
        if (cur == EMPTY_KEY) return -1;
        h = (h + 1) & mask;
    }
    return -1;
}

// Fills n 64-bit words with one bit pattern: tables start at EMPTY_KEY,
// join chains at -1, minima at +inf, maxima at -inf. Filling on the device
// saves uploading a table that is mostly empty.
extern "C" __global__ void fill_u64(unsigned long long* p, long long n, unsigned long long v) {
    GRID_STRIDE(i, n) { p[i] = v; }
}

// --- group-by: one pass per aggregate over keys and values ---
//
// Each aggregate kernel finds (or inserts) each row's key in the global
// table and updates that slot's accumulator and count of non-null inputs
// with atomics (`cnt` is null when no count is needed: a sum, minimum or
// maximum of a column without nulls, whose every group has a value; an
// untouched accumulator then merges as its starting value, a no-op): the keys and values are read once, and nothing per row is
// written back to memory. Slot mask + 1 belongs to the null key, and
// *null_seen records that it was used. The first aggregate inserts every
// key; the others find them again. With no aggregate (DISTINCT), a count
// into scratch space inserts the keys.
//
// The `_shared` variants first try a small table in each block's shared
// memory (low cardinality: most updates stay on chip), send a row whose
// key finds no room there to the global table, and merge the block's
// table into the global one at the end. Any cardinality is correct with
// either variant; the host picks by a sample of the keys.

#define SHARED_SLOTS 1024
#define SHARED_PROBES 16

__device__ void atomic_min_f64(double* addr, double v) {
    unsigned long long* p = (unsigned long long*)addr;
    unsigned long long old = *p;
    while (v < __longlong_as_double(old)) {
        unsigned long long prev = atomicCAS(p, old, __double_as_longlong(v));
        if (prev == old) break;
        old = prev;
    }
}

__device__ void atomic_max_f64(double* addr, double v) {
    unsigned long long* p = (unsigned long long*)addr;
    unsigned long long old = *p;
    while (v > __longlong_as_double(old)) {
        unsigned long long prev = atomicCAS(p, old, __double_as_longlong(v));
        if (prev == old) break;
        old = prev;
    }
}

__device__ __forceinline__ void op_sum(long long* a, long long v) {
    atomicAdd((unsigned long long*)a, (unsigned long long)v);
}
__device__ __forceinline__ void op_sum(double* a, double v) { atomicAdd(a, v); }
__device__ __forceinline__ void op_min(long long* a, long long v) { atomicMin(a, v); }
__device__ __forceinline__ void op_min(double* a, double v) { atomic_min_f64(a, v); }
__device__ __forceinline__ void op_max(long long* a, long long v) { atomicMax(a, v); }
__device__ __forceinline__ void op_max(double* a, double v) { atomic_max_f64(a, v); }
// count(x) and count(*): the counts are all there is (no values to read).
__device__ __forceinline__ void op_count(unsigned long long*, unsigned long long) {}

// The global slot of row i's key (mask + 1 for a null key), or -1 when
// the table is full.
__device__ __forceinline__ long long global_slot(const long long* keys, const unsigned char* kvalid,
                                                 long long i, long long* table,
                                                 unsigned long long mask, int* null_seen) {
    if (!is_valid(kvalid, i)) { *null_seen = 1; return (long long)mask + 1; }
    return find_or_insert(table, mask, keys[i]);
}

// The slot of key k in a block's shared table, or -1 when it finds no room
// within SHARED_PROBES probes.
__device__ __forceinline__ int shared_slot(long long* sk, long long k) {
    return (int)probe_insert(sk, SHARED_SLOTS - 1, k, SHARED_PROBES);
}

#define GB_AGG_ARGS(T)                                                                          \
    const long long *keys, const unsigned char *kvalid, long long n, long long *table,           \
        unsigned long long mask, const T *v, const unsigned char *vvalid, T *acc,               \
        unsigned long long *cnt, int *null_seen, int *overflow

#define GB_AGG(OP, T, LANE, V)                                                                   \
extern "C" __global__ void gb_##OP##_##LANE(GB_AGG_ARGS(T)) {                                   \
    GRID_STRIDE(i, n) {                                                                         \
        long long s = global_slot(keys, kvalid, i, table, mask, null_seen);                     \
        if (s < 0) { *overflow = 1; continue; }                                                 \
        if (is_valid(vvalid, i)) { op_##OP(&acc[s], V); if (cnt) atomicAdd(&cnt[s], 1ULL); }  \
    }                                                                                           \
}                                                                                               \
extern "C" __global__ void gb_##OP##_##LANE##_shared(GB_AGG_ARGS(T), T init) {                  \
    __shared__ long long sk[SHARED_SLOTS];                                                      \
    __shared__ T sa[SHARED_SLOTS + 1];                                                          \
    __shared__ unsigned long long sc[SHARED_SLOTS + 1];                                         \
    __shared__ int snull;                                                                       \
    for (int j = threadIdx.x; j <= SHARED_SLOTS; j += blockDim.x) {                             \
        if (j < SHARED_SLOTS) sk[j] = EMPTY_KEY;                                                \
        sa[j] = init; sc[j] = 0ULL;                                                             \
    }                                                                                           \
    if (threadIdx.x == 0) snull = 0;                                                            \
    __syncthreads();                                                                            \
    GRID_STRIDE(i, n) {                                                                         \
        int j = is_valid(kvalid, i) ? shared_slot(sk, keys[i]) : SHARED_SLOTS;                  \
        if (j == SHARED_SLOTS) snull = 1;                                                       \
        if (j >= 0) {                                                                           \
            if (is_valid(vvalid, i)) { op_##OP(&sa[j], V); if (cnt) atomicAdd(&sc[j], 1ULL); } \
            continue;                                                                           \
        }                                                                                       \
        long long s = find_or_insert(table, mask, keys[i]);                                     \
        if (s < 0) { *overflow = 1; continue; }                                                 \
        if (is_valid(vvalid, i)) { op_##OP(&acc[s], V); if (cnt) atomicAdd(&cnt[s], 1ULL); }  \
    }                                                                                           \
    __syncthreads();                                                                            \
    for (int j = threadIdx.x; j <= SHARED_SLOTS; j += blockDim.x) {                             \
        long long s;                                                                            \
        if (j == SHARED_SLOTS) {                                                                \
            if (!snull) continue;                                                               \
            *null_seen = 1; s = (long long)mask + 1;                                            \
        } else {                                                                                \
            if (sk[j] == EMPTY_KEY) continue;                                                   \
            s = find_or_insert(table, mask, sk[j]);                                             \
            if (s < 0) { *overflow = 1; continue; }                                             \
        }                                                                                       \
        if (sc[j] || !cnt) { op_##OP(&acc[s], sa[j]); if (cnt) atomicAdd(&cnt[s], sc[j]); }    \
    }                                                                                           \
}

// NaN orders differently in the float comparisons: the host leaves NaN
// inputs to the CPU. `min`/`max` accumulators start at +/-inf or the
// integer extremes (the host fills them).
GB_AGG(sum, long long, i64, v[i])
GB_AGG(min, long long, i64, v[i])
GB_AGG(max, long long, i64, v[i])
GB_AGG(sum, double, f64, v[i])
GB_AGG(min, double, f64, v[i])
GB_AGG(max, double, f64, v[i])
GB_AGG(count, unsigned long long, u64, 0ULL)

// Dense group ids for the used slots, then for the null slot when used.
// dense has mask + 2 entries: one per slot, then the null slot.
extern "C" __global__ void gb_assign(const long long* table, unsigned long long mask,
                                     const int* null_seen, int* dense, int* groups) {
    GRID_STRIDE(s, (long long)mask + 2) {
        bool used = s <= (long long)mask ? table[s] != EMPTY_KEY : *null_seen != 0;
        dense[s] = used ? atomicAdd(groups, 1) : -1;
    }
}

// Compacts per-slot words (keys, accumulators, counts) into per-group
// order, so only one word per group crosses back to the host.
extern "C" __global__ void gb_gather(const unsigned long long* per_slot, const int* dense,
                                     long long slots, unsigned long long* per_group) {
    GRID_STRIDE(s, slots) {
        int g = dense[s];
        if (g >= 0) per_group[g] = per_slot[s];
    }
}

// --- hash join on one Int64 key: build, count matches, emit pairs ---

// heads[slot] is the last build row with that key; next[row] the previous
// one (a chain per key). heads starts at -1.
extern "C" __global__ void join_build(const long long* keys, const unsigned char* valid, long long n,
                                      long long* table, unsigned long long mask,
                                      long long* heads, long long* next, int* overflow) {
    GRID_STRIDE(i, n) {
        if (!is_valid(valid, i)) { next[i] = -1; continue; }
        long long s = find_or_insert(table, mask, keys[i]);
        if (s < 0) { *overflow = 1; continue; }
        next[i] = (long long)atomicExch((unsigned long long*)&heads[s], (unsigned long long)i);
    }
}

extern "C" __global__ void join_count(const long long* keys, const unsigned char* valid, long long n,
                                      const long long* table, unsigned long long mask,
                                      const long long* heads, const long long* next,
                                      unsigned int* counts) {
    GRID_STRIDE(i, n) {
        unsigned int c = 0;
        if (is_valid(valid, i)) {
            long long s = find(table, mask, keys[i]);
            for (long long r = s < 0 ? -1 : heads[s]; r >= 0; r = next[r]) c++;
        }
        counts[i] = c;
    }
}

// offsets: exclusive prefix sum of counts.
extern "C" __global__ void join_emit(const long long* keys, const unsigned char* valid, long long n,
                                     const long long* table, unsigned long long mask,
                                     const long long* heads, const long long* next,
                                     const unsigned long long* offsets,
                                     long long* out_build, long long* out_probe) {
    GRID_STRIDE(i, n) {
        if (!is_valid(valid, i)) continue;
        long long s = find(table, mask, keys[i]);
        unsigned long long o = offsets[i];
        for (long long r = s < 0 ? -1 : heads[s]; r >= 0; r = next[r]) {
            out_build[o] = r; out_probe[o] = i; o++;
        }
    }
}
