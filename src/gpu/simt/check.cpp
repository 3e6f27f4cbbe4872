// Runs the source of src/gpu/kernels.cu under the SIMT stand-in of simt.h,
// in the launch order and with the arguments of src/gpu/cuda.rs, and
// checks every result against a plain sequential reference: group-bys
// (each aggregate, both table variants, nulls in keys and values, few and
// many groups) and joins (nulls on both sides, duplicate keys).
//
//   c++ -std=c++20 -O2 -pthread src/gpu/simt/check.cpp -o check && ./check
//
// Prints one line per case and exits non-zero on the first mismatch.
#include "simt.h"

#include "../kernels.cu"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <type_traits>
#include <utility>

using u64 = unsigned long long;
using i64 = long long;

// The launch shape: a few small blocks, so that tests of a few thousand
// rows still span blocks and run their threads concurrently.
constexpr unsigned GRID = 3, BLOCK = 64;

static size_t capacity(size_t n) {  // emulate.rs's `capacity`
    size_t c = 1;
    while (c < std::max<size_t>(2 * n, 1024)) c <<= 1;
    return c;
}

static bool valid_at(const std::vector<unsigned char>& bits, size_t i) {
    return bits.empty() || ((bits[i >> 3] >> (i & 7)) & 1);
}

static const unsigned char* ptr(const std::vector<unsigned char>& bits) {
    return bits.empty() ? nullptr : bits.data();
}

static std::vector<unsigned char> bitmap(size_t n, size_t null_every) {
    std::vector<unsigned char> b((n + 7) / 8, 0);
    for (size_t i = 0; i < n; i++)
        if (null_every == 0 || i % null_every != 0) b[i >> 3] |= 1 << (i & 7);
    return b;
}

static void fail(const char* what, long long a, long long b) {
    std::printf("MISMATCH %s: %lld vs %lld\n", what, a, b);
    std::exit(1);
}

enum class Op { Sum, Min, Max, Count };

template <class T>
using Kernel = void (*)(const i64*, const unsigned char*, i64, i64*, u64, const T*,
                        const unsigned char*, T*, u64*, int*, int*);
template <class T>
using SharedKernel = void (*)(const i64*, const unsigned char*, i64, i64*, u64, const T*,
                              const unsigned char*, T*, u64*, int*, int*, T);

template <class T>
struct Lane;
template <>
struct Lane<i64> {
    static constexpr i64 highest = INT64_MAX, lowest = INT64_MIN;
    static Kernel<i64> global(Op op) {
        return op == Op::Sum ? gb_sum_i64 : op == Op::Min ? gb_min_i64 : gb_max_i64;
    }
    static SharedKernel<i64> shared(Op op) {
        return op == Op::Sum ? gb_sum_i64_shared
                             : op == Op::Min ? gb_min_i64_shared : gb_max_i64_shared;
    }
};
template <>
struct Lane<double> {
    static constexpr double highest = __builtin_inf(), lowest = -__builtin_inf();
    static Kernel<double> global(Op op) {
        return op == Op::Sum ? gb_sum_f64 : op == Op::Min ? gb_min_f64 : gb_max_f64;
    }
    static SharedKernel<double> shared(Op op) {
        return op == Op::Sum ? gb_sum_f64_shared
                             : op == Op::Min ? gb_min_f64_shared : gb_max_f64_shared;
    }
};
template <>
struct Lane<u64> {
    static constexpr u64 highest = ~0ULL, lowest = 0;
    static Kernel<u64> global(Op) { return gb_count_u64; }
    static SharedKernel<u64> shared(Op) { return gb_count_u64_shared; }
};

// A group-by's global state, as cuda.rs's `Pass` holds it.
struct Pass {
    const std::vector<i64>& keys;
    const std::vector<unsigned char>& kvalid;
    std::vector<i64> table;
    u64 mask;
    int null_seen = 0, overflow = 0;
    bool shared;
};

// cuda.rs's `slot_pass`: one aggregate kernel, per-slot accumulators and
// counts (the null slot last); without `counted`, a null count pointer.
template <class T>
static std::pair<std::vector<T>, std::vector<u64>> slot_pass(Pass& p, Op op, const std::vector<T>* values,
                                                             const std::vector<unsigned char>& vvalid,
                                                             bool counted = true) {
    size_t slots = p.mask + 2;
    T init = op == Op::Min ? Lane<T>::highest : op == Op::Max ? Lane<T>::lowest : T(0);
    // Counts keep no accumulator: one word stands in for it.
    std::vector<T> acc(values ? slots : 1, T(0));
    u64 bits;
    std::memcpy(&bits, &init, sizeof bits);
    if (bits != 0) simt_launch(fill_u64, GRID, BLOCK, (u64*)acc.data(), (i64)acc.size(), bits);
    std::vector<u64> counts(counted ? slots : 0, 0);
    u64* cnt = counted ? counts.data() : nullptr;
    i64 n = (i64)p.keys.size();
    const T* v = values ? values->data() : nullptr;
    if (p.shared)
        simt_launch(Lane<T>::shared(op), GRID, BLOCK, p.keys.data(), ptr(p.kvalid), n, p.table.data(),
                    p.mask, v, ptr(vvalid), acc.data(), cnt, &p.null_seen, &p.overflow, init);
    else
        simt_launch(Lane<T>::global(op), GRID, BLOCK, p.keys.data(), ptr(p.kvalid), n, p.table.data(),
                    p.mask, v, ptr(vvalid), acc.data(), cnt, &p.null_seen, &p.overflow);
    return {acc, counts};
}

// gb_assign, then gb_gather of per-slot words into group order.
static std::vector<int> assign(Pass& p, int& groups) {
    std::vector<int> dense(p.mask + 2, 0);
    groups = 0;
    simt_launch(gb_assign, GRID, BLOCK, (const i64*)p.table.data(), p.mask, (const int*)&p.null_seen,
                dense.data(), &groups);
    return dense;
}

template <class T>
static std::vector<T> gather(const std::vector<T>& per_slot, const std::vector<int>& dense, size_t slots,
                             int groups) {
    std::vector<T> out(std::max(groups, 1));
    simt_launch(gb_gather, GRID, BLOCK, (const u64*)per_slot.data(), dense.data(), (i64)slots,
                (u64*)out.data());
    out.resize(groups);
    return out;
}

// One aggregate of one lane over the keys, checked against a sequential
// map; `T` is the lane (u64 for counts).
template <class T>
static void check_group_by(const char* name, size_t n, i64 groups, size_t key_nulls, size_t value_nulls,
                           Op op, bool shared) {
    std::vector<i64> keys(n);
    std::vector<T> values(n);
    for (size_t i = 0; i < n; i++) {
        keys[i] = (i64)((i * 7919) % (size_t)groups) - groups / 3;
        // Float values are multiples of 1/4: their sums are exact in any order.
        if constexpr (std::is_same_v<T, double>) values[i] = (double)(i % 64) * 0.25 - 3.0;
        if constexpr (std::is_same_v<T, i64>) values[i] = (i64)(i % 1000) - 400;
    }
    auto kvalid = key_nulls ? bitmap(n, key_nulls) : std::vector<unsigned char>{};
    auto vvalid = value_nulls ? bitmap(n, value_nulls) : std::vector<unsigned char>{};
    size_t cap = capacity(n);
    Pass p{keys, kvalid, std::vector<i64>(cap), cap - 1, 0, 0, shared};
    simt_launch(fill_u64, GRID, BLOCK, (u64*)p.table.data(), (i64)cap, (u64)EMPTY_KEY);
    bool count = std::is_same_v<T, u64>;
    // raw.rs's `needs_counts` (no mean here): counts, or values with nulls.
    bool counted = count || value_nulls != 0;
    auto [acc, counts] = slot_pass<T>(p, op, count ? nullptr : &values, vvalid, counted);
    if (p.overflow) fail("overflow", 1, 0);
    int ngroups = 0;
    auto dense = assign(p, ngroups);
    auto gkeys = gather(p.table, dense, cap, ngroups);
    auto gcounts = counted ? gather(counts, dense, cap + 1, ngroups) : std::vector<u64>();
    auto gacc = count ? std::vector<T>() : gather(acc, dense, cap + 1, ngroups);
    int null_group = dense[cap];

    // Keyed by (is the key valid, key): the null key sorts first.
    std::map<std::pair<bool, i64>, std::pair<T, u64>> want;
    T init = op == Op::Min ? Lane<T>::highest : op == Op::Max ? Lane<T>::lowest : T(0);
    for (size_t i = 0; i < n; i++) {
        std::pair<bool, i64> k = valid_at(kvalid, i) ? std::pair(true, keys[i]) : std::pair(false, 0LL);
        auto it = want.try_emplace(k, init, 0).first;
        if (!valid_at(vvalid, i)) continue;
        T& a = it->second.first;
        if (op == Op::Sum) a = (T)(a + values[i]);
        if (op == Op::Min && values[i] < a) a = values[i];
        if (op == Op::Max && values[i] > a) a = values[i];
        it->second.second++;
    }
    if ((size_t)ngroups != want.size()) fail("groups", ngroups, (long long)want.size());
    for (int g = 0; g < ngroups; g++) {
        std::pair<bool, i64> k = g == null_group ? std::pair(false, 0LL) : std::pair(true, gkeys[g]);
        auto it = want.find(k);
        if (it == want.end()) fail("unknown key", gkeys[g], g);
        if (counted && gcounts[g] != it->second.second)
            fail("count", (long long)gcounts[g], (long long)it->second.second);
        bool present = counted ? gcounts[g] > 0 : it->second.second > 0;
        if (!count && present && gacc[g] != it->second.first)
            fail("value", (long long)gacc[g], (long long)it->second.first);
    }
    std::printf("ok group-by %-5s %s rows=%zu groups=%d%s%s\n", name, shared ? "shared" : "global", n, ngroups,
                null_group >= 0 ? " (null key group)" : "", counted ? "" : " (not counted)");
}

// A table sized from a misleading sample (1,024 slots for 5,000 keys)
// must report itself full, so that the host retries with a larger one.
static void check_overflow(bool shared) {
    size_t n = 5000;
    std::vector<i64> keys(n);
    for (size_t i = 0; i < n; i++) keys[i] = (i64)i;
    std::vector<unsigned char> none;
    Pass p{keys, none, std::vector<i64>(1024), 1023, 0, 0, shared};
    simt_launch(fill_u64, GRID, BLOCK, (u64*)p.table.data(), (i64)1024, (u64)EMPTY_KEY);
    slot_pass<u64>(p, Op::Count, nullptr, none);
    if (!p.overflow) fail("overflow not reported", 0, 1);
    std::printf("ok overflow %s: a full table is reported\n", shared ? "shared" : "global");
}

// join_build, join_count, a host scan, join_emit: pairs against a nested
// loop.
static void check_join(size_t nb, size_t np, i64 keys_mod) {
    std::vector<i64> bk(nb), pk(np);
    for (size_t i = 0; i < nb; i++) bk[i] = (i64)(i % (size_t)keys_mod);
    for (size_t i = 0; i < np; i++) pk[i] = (i64)((i * 31) % (size_t)(keys_mod + keys_mod / 3));
    auto bv = bitmap(nb, 11), pv = bitmap(np, 7);
    size_t cap = capacity(nb);
    u64 mask = cap - 1;
    std::vector<i64> table(cap), heads(cap), next(std::max<size_t>(nb, 1));
    simt_launch(fill_u64, GRID, BLOCK, (u64*)table.data(), (i64)cap, (u64)EMPTY_KEY);
    simt_launch(fill_u64, GRID, BLOCK, (u64*)heads.data(), (i64)cap, ~0ULL);
    int overflow = 0;
    simt_launch(join_build, GRID, BLOCK, (const i64*)bk.data(), (const unsigned char*)bv.data(), (i64)nb,
                table.data(), mask, heads.data(), next.data(), &overflow);
    std::vector<unsigned> counts(np);
    simt_launch(join_count, GRID, BLOCK, (const i64*)pk.data(), (const unsigned char*)pv.data(), (i64)np,
                (const i64*)table.data(), mask, (const i64*)heads.data(), (const i64*)next.data(),
                counts.data());
    std::vector<u64> offsets(np);
    u64 total = 0;
    for (size_t i = 0; i < np; i++) offsets[i] = total, total += counts[i];
    std::vector<i64> ob(std::max<u64>(total, 1)), op(std::max<u64>(total, 1));
    simt_launch(join_emit, GRID, BLOCK, (const i64*)pk.data(), (const unsigned char*)pv.data(), (i64)np,
                (const i64*)table.data(), mask, (const i64*)heads.data(), (const i64*)next.data(),
                (const u64*)offsets.data(), ob.data(), op.data());
    std::vector<std::pair<i64, i64>> got, want;
    for (u64 j = 0; j < total; j++) got.push_back({ob[j], op[j]});
    for (size_t j = 0; j < np; j++)
        for (size_t i = 0; i < nb; i++)
            if (valid_at(bv, i) && valid_at(pv, j) && bk[i] == pk[j]) want.push_back({(i64)i, (i64)j});
    std::sort(got.begin(), got.end());
    std::sort(want.begin(), want.end());
    if (overflow) fail("join overflow", 1, 0);
    if (got != want) fail("join pairs", (long long)got.size(), (long long)want.size());
    for (size_t j = 0; j < np; j++) {
        u64 c = 0;
        for (auto& w : want) c += (size_t)w.second == j;
        if (counts[j] != c) fail("join count", counts[j], (long long)c);
    }
    std::printf("ok join build=%zu probe=%zu pairs=%llu\n", nb, np, total);
}

int main() {
    for (bool shared : {false, true}) {
        for (auto [n, groups] : {std::pair<size_t, i64>{1, 1}, {1000, 7}, {5000, 3000}}) {
            check_group_by<i64>("sum", n, groups, 13, 7, Op::Sum, shared);
            check_group_by<i64>("nsum", n, groups, 13, 0, Op::Sum, shared);
            check_group_by<i64>("min", n, groups, 13, 0, Op::Min, shared);
            check_group_by<i64>("max", n, groups, 0, 5, Op::Max, shared);
            check_group_by<double>("fsum", n, groups, 13, 7, Op::Sum, shared);
            check_group_by<double>("fmin", n, groups, 0, 7, Op::Min, shared);
            check_group_by<double>("fmax", n, groups, 13, 0, Op::Max, shared);
            check_group_by<u64>("count", n, groups, 13, 7, Op::Count, shared);
        }
    }
    check_overflow(false);
    check_overflow(true);
    check_join(1, 1, 1);
    check_join(500, 800, 97);
    check_join(3000, 2000, 1000);
    std::printf("all kernels agree with the sequential reference\n");
    return 0;
}
