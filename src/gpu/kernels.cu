// sloth's GPU kernels, compiled once per process by NVRTC (see cuda.rs).
// src/gpu/emulate.rs is a line-by-line CPU port of these kernels: change
// both together, and its tests check the port against the CPU operators.
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
__device__ long long find_or_insert(long long* table, unsigned long long mask, long long k) {
    unsigned long long h = mix64((unsigned long long)k) & mask;
    for (unsigned long long probe = 0; probe <= mask; probe++) {
        long long prev = (long long)atomicCAS((unsigned long long*)&table[h],
                                              (unsigned long long)EMPTY_KEY,
                                              (unsigned long long)k);
        if (prev == EMPTY_KEY || prev == k) return (long long)h;
        h = (h + 1) & mask;
    }
    return -1;
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

extern "C" __global__ void gb_insert(const long long* keys, const unsigned char* valid, long long n,
                                     long long* table, unsigned long long mask,
                                     long long* row_slot, int* overflow) {
    GRID_STRIDE(i, n) {
        if (!is_valid(valid, i)) { row_slot[i] = (long long)mask + 1; continue; }
        long long s = find_or_insert(table, mask, keys[i]);
        if (s < 0) *overflow = 1;
        row_slot[i] = s;
    }
}

// Dense group ids for the used slots (and the null slot when used).
// dense has mask + 2 entries: one per slot, then the null slot.
extern "C" __global__ void gb_assign(const long long* table, unsigned long long mask,
                                     int* dense, int* groups) {
    GRID_STRIDE(s, (long long)mask + 2) {
        dense[s] = (s <= (long long)mask && table[s] != EMPTY_KEY) ? atomicAdd(groups, 1) : -1;
    }
}

extern "C" __global__ void gb_null_group(const long long* row_slot, long long n,
                                         unsigned long long mask, int* dense, int* groups) {
    GRID_STRIDE(i, n) {
        if (row_slot[i] == (long long)mask + 1) {
            if (atomicCAS(&dense[mask + 1], -1, -2) == -1) dense[mask + 1] = atomicAdd(groups, 1);
        }
    }
}

extern "C" __global__ void gb_map(const long long* row_slot, const int* dense, long long n, int* row_group) {
    GRID_STRIDE(i, n) { row_group[i] = dense[row_slot[i]]; }
}

// --- aggregates over dense group ids: value + count of non-null inputs ---

extern "C" __global__ void agg_count(const int* grp, const unsigned char* valid, long long n,
                                     unsigned long long* cnt) {
    GRID_STRIDE(i, n) { if (is_valid(valid, i)) atomicAdd(&cnt[grp[i]], 1ULL); }
}

extern "C" __global__ void agg_sum_f64(const int* grp, const double* v, const unsigned char* valid,
                                       long long n, double* out, unsigned long long* cnt) {
    GRID_STRIDE(i, n) {
        if (is_valid(valid, i)) { atomicAdd(&out[grp[i]], v[i]); atomicAdd(&cnt[grp[i]], 1ULL); }
    }
}

extern "C" __global__ void agg_sum_i64(const int* grp, const long long* v, const unsigned char* valid,
                                       long long n, long long* out, unsigned long long* cnt) {
    GRID_STRIDE(i, n) {
        if (is_valid(valid, i)) {
            atomicAdd((unsigned long long*)&out[grp[i]], (unsigned long long)v[i]);
            atomicAdd(&cnt[grp[i]], 1ULL);
        }
    }
}

// Low cardinality: each block accumulates in shared memory, then merges
// its partial sums into the global ones (one global atomic per group per
// block instead of one per row).
extern "C" __global__ void agg_sum_f64_shared(const int* grp, const double* v, const unsigned char* valid,
                                              long long n, int groups, double* out, unsigned long long* cnt) {
    extern __shared__ unsigned char smem[];
    double* s = (double*)smem;
    unsigned long long* c = (unsigned long long*)(s + groups);
    for (int j = threadIdx.x; j < groups; j += blockDim.x) { s[j] = 0.0; c[j] = 0ULL; }
    __syncthreads();
    GRID_STRIDE(i, n) {
        if (is_valid(valid, i)) { atomicAdd(&s[grp[i]], v[i]); atomicAdd(&c[grp[i]], 1ULL); }
    }
    __syncthreads();
    for (int j = threadIdx.x; j < groups; j += blockDim.x) {
        if (c[j]) { atomicAdd(&out[j], s[j]); atomicAdd(&cnt[j], c[j]); }
    }
}

extern "C" __global__ void agg_sum_i64_shared(const int* grp, const long long* v, const unsigned char* valid,
                                              long long n, int groups, long long* out, unsigned long long* cnt) {
    extern __shared__ unsigned char smem[];
    unsigned long long* s = (unsigned long long*)smem;
    unsigned long long* c = s + groups;
    for (int j = threadIdx.x; j < groups; j += blockDim.x) { s[j] = 0ULL; c[j] = 0ULL; }
    __syncthreads();
    GRID_STRIDE(i, n) {
        if (is_valid(valid, i)) { atomicAdd(&s[grp[i]], (unsigned long long)v[i]); atomicAdd(&c[grp[i]], 1ULL); }
    }
    __syncthreads();
    for (int j = threadIdx.x; j < groups; j += blockDim.x) {
        if (c[j]) { atomicAdd((unsigned long long*)&out[j], s[j]); atomicAdd(&cnt[j], c[j]); }
    }
}

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

// `out` starts at +inf (min) or -inf (max); NaN inputs are left to the CPU
// (the host checks for them before choosing the GPU).
extern "C" __global__ void agg_min_f64(const int* grp, const double* v, const unsigned char* valid,
                                       long long n, double* out, unsigned long long* cnt) {
    GRID_STRIDE(i, n) {
        if (is_valid(valid, i)) { atomic_min_f64(&out[grp[i]], v[i]); atomicAdd(&cnt[grp[i]], 1ULL); }
    }
}

extern "C" __global__ void agg_max_f64(const int* grp, const double* v, const unsigned char* valid,
                                       long long n, double* out, unsigned long long* cnt) {
    GRID_STRIDE(i, n) {
        if (is_valid(valid, i)) { atomic_max_f64(&out[grp[i]], v[i]); atomicAdd(&cnt[grp[i]], 1ULL); }
    }
}

extern "C" __global__ void agg_min_i64(const int* grp, const long long* v, const unsigned char* valid,
                                       long long n, long long* out, unsigned long long* cnt) {
    GRID_STRIDE(i, n) {
        if (is_valid(valid, i)) { atomicMin(&out[grp[i]], v[i]); atomicAdd(&cnt[grp[i]], 1ULL); }
    }
}

extern "C" __global__ void agg_max_i64(const int* grp, const long long* v, const unsigned char* valid,
                                       long long n, long long* out, unsigned long long* cnt) {
    GRID_STRIDE(i, n) {
        if (is_valid(valid, i)) { atomicMax(&out[grp[i]], v[i]); atomicAdd(&cnt[grp[i]], 1ULL); }
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
