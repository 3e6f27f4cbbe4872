// A CPU stand-in for the parts of CUDA that src/gpu/kernels.cu uses, so
// that the kernels' own source compiles with a C++ compiler and runs with
// CUDA's execution model: the threads of a block run concurrently as OS
// threads (with a real barrier for __syncthreads and real atomics on
// shared and global memory), and the blocks of a grid run one after
// another, which is one of the schedules a GPU may choose.
//
// Used only by tests (check.cpp; `gpu::the_kernel_source_runs_under_simt`
// in tests/gpu.rs): it checks the kernels' logic and their use of atomics
// and barriers, not their speed.
#pragma once

#include <barrier>
#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

struct simt_index {
    unsigned x, y, z;
};

inline thread_local simt_index threadIdx, blockIdx;
inline simt_index blockDim, gridDim;
inline std::barrier<>* simt_block_barrier = nullptr;

#define __global__
#define __device__
#define __forceinline__ inline
// One copy per kernel; blocks run one at a time, so each block has it alone.
#define __shared__ static

inline void __syncthreads() { simt_block_barrier->arrive_and_wait(); }

// CUDA's overloads (not a template, so arguments convert as they do there).
template <class T>
inline T simt_cas(T* p, T expected, T desired) {
    __atomic_compare_exchange_n(p, &expected, desired, false, __ATOMIC_SEQ_CST,
                                __ATOMIC_SEQ_CST);
    return expected;
}
inline int atomicCAS(int* p, int expected, int desired) { return simt_cas(p, expected, desired); }
inline unsigned long long atomicCAS(unsigned long long* p, unsigned long long expected,
                                    unsigned long long desired) {
    return simt_cas(p, expected, desired);
}

inline int atomicAdd(int* p, int v) { return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST); }
inline unsigned long long atomicAdd(unsigned long long* p, unsigned long long v) {
    return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST);
}

inline double __longlong_as_double(long long bits) {
    double d;
    std::memcpy(&d, &bits, sizeof d);
    return d;
}

inline long long __double_as_longlong(double d) {
    long long bits;
    std::memcpy(&bits, &d, sizeof bits);
    return bits;
}

inline double atomicAdd(double* p, double v) {
    auto* bits = reinterpret_cast<unsigned long long*>(p);
    unsigned long long old = __atomic_load_n(bits, __ATOMIC_SEQ_CST);
    for (;;) {
        double sum = __longlong_as_double((long long)old) + v;
        unsigned long long seen = atomicCAS(bits, old, (unsigned long long)__double_as_longlong(sum));
        if (seen == old) return __longlong_as_double((long long)old);
        old = seen;
    }
}

inline long long atomicMin(long long* p, long long v) {
    long long old = __atomic_load_n(p, __ATOMIC_SEQ_CST);
    while (v < old && !__atomic_compare_exchange_n(p, &old, v, false, __ATOMIC_SEQ_CST,
                                                   __ATOMIC_SEQ_CST)) {
    }
    return old;
}

inline long long atomicMax(long long* p, long long v) {
    long long old = __atomic_load_n(p, __ATOMIC_SEQ_CST);
    while (v > old && !__atomic_compare_exchange_n(p, &old, v, false, __ATOMIC_SEQ_CST,
                                                   __ATOMIC_SEQ_CST)) {
    }
    return old;
}

inline unsigned long long atomicExch(unsigned long long* p, unsigned long long v) {
    return __atomic_exchange_n(p, v, __ATOMIC_SEQ_CST);
}

// kernel<<<grid, block>>>(args...): each block's threads concurrently, the
// blocks in turn.
template <class... P, class... A>
void simt_launch(void (*kernel)(P...), unsigned grid, unsigned block, A... args) {
    gridDim = {grid, 1, 1};
    blockDim = {block, 1, 1};
    for (unsigned b = 0; b < grid; b++) {
        std::barrier<> barrier((std::ptrdiff_t)block);
        simt_block_barrier = &barrier;
        std::vector<std::thread> threads;
        threads.reserve(block);
        for (unsigned t = 0; t < block; t++) {
            threads.emplace_back([=] {
                blockIdx = {b, 0, 0};
                threadIdx = {t, 0, 0};
                kernel(args...);
            });
        }
        for (auto& t : threads) t.join();
    }
}
