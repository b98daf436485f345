// Logits-side helpers, so a decode step returns a few bytes instead of the whole vocabulary.
// Order used throughout: larger value first, lower index on ties; NaN is never selected.
#include <math.h>

#include "status.cuh"

namespace zse {
namespace {

constexpr int kThreads = 1024;

struct Candidate {
    float value;
    int index;  // -1: none
};

__device__ __forceinline__ bool before(const Candidate &a, const Candidate &b) {
    if (a.index < 0) return false;
    if (b.index < 0) return true;
    return a.value > b.value || (a.value == b.value && a.index < b.index);
}

__device__ Candidate block_best(Candidate mine) {
    __shared__ Candidate per_warp[kThreads / 32];
    for (int offset = 16; offset > 0; offset /= 2) {
        Candidate other{__shfl_xor_sync(0xffffffffu, mine.value, offset),
                        __shfl_xor_sync(0xffffffffu, mine.index, offset)};
        if (before(other, mine)) mine = other;
    }
    if (threadIdx.x % 32 == 0) per_warp[threadIdx.x / 32] = mine;
    __syncthreads();
    Candidate best{-INFINITY, -1};
    for (int w = 0; w < static_cast<int>(blockDim.x / 32); w++) {
        if (before(per_warp[w], best)) best = per_warp[w];
    }
    __syncthreads();  // per_warp is reused by the next call
    return best;
}

// The best element of row that comes strictly after `previous` in the order (all of them when previous.index < 0).
__device__ Candidate best_after(const float *row, int vocab, Candidate previous) {
    Candidate mine{-INFINITY, -1};
    for (int i = threadIdx.x; i < vocab; i += blockDim.x) {
        Candidate c{row[i], i};
        if (isnan(c.value)) continue;
        if (previous.index >= 0 && !before(previous, c)) continue;
        if (before(c, mine)) mine = c;
    }
    return block_best(mine);
}

__global__ void __launch_bounds__(kThreads) argmax_kernel(const float *__restrict__ logits, int vocab,
                                                         int32_t *__restrict__ ids) {
    const float *row = logits + static_cast<int64_t>(blockIdx.x) * vocab;
    Candidate best = best_after(row, vocab, Candidate{0.f, -1});
    if (threadIdx.x == 0) ids[blockIdx.x] = best.index;
}

// k passes, each finding the next element in the order: O(k * vocab / 1024) per thread and no scratch memory.
__global__ void __launch_bounds__(kThreads) top_k_kernel(const float *__restrict__ logits, int vocab, int k,
                                                        float *__restrict__ values, int32_t *__restrict__ ids) {
    Candidate previous{0.f, -1};
    for (int r = 0; r < k; r++) {
        Candidate next = best_after(logits, vocab, previous);
        if (threadIdx.x == 0) {
            values[r] = next.index >= 0 ? next.value : -INFINITY;
            ids[r] = next.index;
        }
        if (next.index < 0) {
            for (int rest = r + 1 + threadIdx.x; rest < k; rest += blockDim.x) {
                values[rest] = -INFINITY;
                ids[rest] = -1;
            }
            return;
        }
        previous = next;
    }
}

}  // namespace
}  // namespace zse

extern "C" {

int zse_cuda_argmax(const float *logits, int n, int vocab, int32_t *ids, void *stream) {
    ZSE_REQUIRE(logits != nullptr && ids != nullptr && n > 0 && vocab > 0,
                "zse_cuda_argmax: NULL pointer or empty logits");
    ZSE_LAUNCH(zse::argmax_kernel, n, zse::kThreads, 0, static_cast<cudaStream_t>(stream))(logits, vocab, ids);
    return zse::launched("argmax_kernel");
}

int zse_cuda_top_k(const float *logits, int vocab, int k, float *values, int32_t *ids, void *stream) {
    ZSE_REQUIRE(logits != nullptr && values != nullptr && ids != nullptr, "zse_cuda_top_k: NULL pointer");
    ZSE_REQUIRE(vocab > 0 && k > 0 && k <= 1024 && k <= vocab, "zse_cuda_top_k: need 0 < k <= min(vocab, 1024)");
    ZSE_LAUNCH(zse::top_k_kernel, 1, zse::kThreads, 0, static_cast<cudaStream_t>(stream))(logits, vocab, k, values, ids);
    return zse::launched("top_k_kernel");
}

}  // extern "C"
