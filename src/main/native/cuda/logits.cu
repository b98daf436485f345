// Logits-side helpers, so a decode step returns a few bytes instead of the whole vocabulary.
// Order used throughout: larger value first, lower index on ties; NaN is never selected.
#include <math.h>

#include "overlap.cuh"
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
// Every thread of the block gets the result.
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
    let_next_grid_start();
    wait_for_previous_grid();
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


constexpr int kMaxCandidates = 1024;

__device__ double block_sum(double mine) {
    __shared__ double per_warp[kThreads / 32];
    for (int offset = 16; offset > 0; offset /= 2) mine += __shfl_xor_sync(0xffffffffu, mine, offset);
    if (threadIdx.x % 32 == 0) per_warp[threadIdx.x / 32] = mine;
    __syncthreads();
    double total = 0;
    for (int w = 0; w < static_cast<int>(blockDim.x / 32); w++) total += per_warp[w];
    __syncthreads();
    return total;
}

// One row per block: the draw of io.zse.generate.Sampler (temperature, top-k, top-p, min-p, one uniform draw) with
// the uniform given by the host. p[t] = exp((l[t] - max) / temperature) in double; candidates are the tokens with
// p >= min_p and p > 0, in the order (float) p descending, then id ascending; top-k keeps the first k, top-p the
// shortest prefix whose share of the sum of all p reaches top_p; the token is the first of the kept ones at which
// u * (sum of their p) - (running sum of their p) turns negative, else the last kept one. The candidates are found
// one pass over the row at a time, in order, up to kMaxCandidates; a row whose kept prefix is longer gets id -1 (the
// host samples it). scratch [rows, vocab] holds the float keys.
__global__ void __launch_bounds__(kThreads) sample_kernel(const float *__restrict__ logits, int vocab,
                                                         const double *__restrict__ parameters,
                                                         float *__restrict__ scratch, int32_t *__restrict__ ids) {
    __shared__ int kept_ids[kMaxCandidates];
    __shared__ double kept_p[kMaxCandidates];
    __shared__ int kept_count;
    __shared__ bool decided;
    const float *row = logits + static_cast<int64_t>(blockIdx.x) * vocab;
    float *keys = scratch + static_cast<int64_t>(blockIdx.x) * vocab;
    const double *p = parameters + 5 * static_cast<int64_t>(blockIdx.x);
    const double temperature = p[0], top_p = p[2], min_p = p[3], u = p[4];
    const int top_k = static_cast<int>(p[1]);
    const Candidate best = best_after(row, vocab, Candidate{0.f, -1});
    if (temperature == 0 || best.index < 0) {
        if (threadIdx.x == 0) ids[blockIdx.x] = best.index;
        return;
    }
    const double max = best.value;
    double mine = 0;
    for (int t = threadIdx.x; t < vocab; t += blockDim.x) {
        const double probability = exp((static_cast<double>(row[t]) - max) / temperature);
        mine += probability;
        keys[t] = static_cast<float>(probability);
    }
    const double total = block_sum(mine);
    __syncthreads();  // keys written by every thread before the passes read them
    const int limit = top_k > 0 ? min(top_k, kMaxCandidates) : kMaxCandidates;
    if (threadIdx.x == 0) {
        kept_count = 0;
        decided = false;
    }
    Candidate previous{0.f, -1};
    double cumulative = 0;
    for (int pass = 0; pass < vocab; pass++) {
        const Candidate next = best_after(keys, vocab, previous);
        // Uniform across the block: every thread saw the same candidate and keeps the same running sums.
        if (next.index < 0 || next.value < static_cast<float>(min_p)) {
            decided = true;  // no candidate left (the float key orders like p up to ties, which are re-checked below)
            break;
        }
        previous = next;
        const double probability = exp((static_cast<double>(row[next.index]) - max) / temperature);
        if (!(probability >= min_p && probability > 0)) continue;  // the filter, exactly as in double
        if (kept_count >= limit) {  // read by all before thread 0 writes below
            decided = top_k > 0 && kept_count == top_k;
            break;
        }
        __syncthreads();
        if (threadIdx.x == 0) {
            kept_ids[kept_count] = next.index;
            kept_p[kept_count] = probability;
            kept_count++;
        }
        __syncthreads();
        cumulative += probability / total;
        if ((top_k > 0 && kept_count == top_k) || (top_p < 1 && cumulative >= top_p)) {
            decided = true;
            break;
        }
    }
    __syncthreads();
    if (threadIdx.x != 0) return;
    if (!decided || kept_count == 0) {
        ids[blockIdx.x] = kept_count == 0 && decided ? best.index : -1;
        return;
    }
    double sum = 0;
    for (int i = 0; i < kept_count; i++) sum += kept_p[i];
    double target = u * sum;
    int token = kept_ids[kept_count - 1];
    for (int i = 0; i < kept_count; i++) {
        target -= kept_p[i];
        if (target < 0) {
            token = kept_ids[i];
            break;
        }
    }
    ids[blockIdx.x] = token;
}

}  // namespace
}  // namespace zse

extern "C" {

int zse_cuda_argmax(const float *logits, int n, int vocab, int32_t *ids, void *stream) {
    ZSE_REQUIRE(logits != nullptr && ids != nullptr && n > 0 && vocab > 0,
                "zse_cuda_argmax: NULL pointer or empty logits");
    ZSE_LAUNCH_OVERLAPPING(zse::argmax_kernel, n, zse::kThreads, 0, static_cast<cudaStream_t>(stream))(logits, vocab,
                                                                                                     ids);
    return zse::launched("argmax_kernel");
}

int zse_cuda_top_k(const float *logits, int vocab, int k, float *values, int32_t *ids, void *stream) {
    ZSE_REQUIRE(logits != nullptr && values != nullptr && ids != nullptr, "zse_cuda_top_k: NULL pointer");
    ZSE_REQUIRE(vocab > 0 && k > 0 && k <= 1024 && k <= vocab, "zse_cuda_top_k: need 0 < k <= min(vocab, 1024)");
    ZSE_LAUNCH(zse::top_k_kernel, 1, zse::kThreads, 0, static_cast<cudaStream_t>(stream))(logits, vocab, k, values, ids);
    return zse::launched("top_k_kernel");
}

int zse_cuda_sample(const float *logits, int n, int vocab, const double *parameters, float *scratch, int32_t *ids,
                    void *stream) {
    ZSE_REQUIRE(logits != nullptr && parameters != nullptr && scratch != nullptr && ids != nullptr && n > 0 &&
                    vocab > 0,
                "zse_cuda_sample: NULL pointer or empty logits");
    ZSE_LAUNCH(zse::sample_kernel, n, zse::kThreads, 0, static_cast<cudaStream_t>(stream))(logits, vocab, parameters,
                                                                                           scratch, ids);
    return zse::launched("sample_kernel");
}

}  // extern "C"
