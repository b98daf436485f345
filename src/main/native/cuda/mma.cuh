// Warp-level 16 x 16 x 16 matrix products on shared-memory tiles, for the prefill kernels (tiled attention, matmul).
//
// A warp multiplies a 16 x 16 tile of A (row-major) by a 16 x 16 tile of B (row- or column-major) into a 16 x 16
// float accumulator it holds in registers. Element types: __half and __nv_bfloat16 run on tensor cores (wmma, sm_80+)
// in the real build; float runs as plain FMAs everywhere. Under the CPU emulation every type takes the FMA path (the
// emulation cannot express tensor-core fragments): that path is the portable twin of the wmma code, computing the
// same products from the same rounded half/bfloat16 tiles, so the emulated kernels round like the GPU's.
// Pointers must be 32-byte aligned and leading dimensions multiples of 8 elements (wmma's rules; the emulation runs
// the same kernels, so keeping them there keeps them on a GPU).
#ifndef ZSE_MMA_CUH
#define ZSE_MMA_CUH

#ifdef ZSE_CUDA_EMULATION
#include "emu/cuda_emu.h"
#else
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <mma.h>
#endif

#include <type_traits>

namespace zse {

constexpr int kMmaTile = 16;

__device__ __forceinline__ float mma_to_float(float v) { return v; }
__device__ __forceinline__ float mma_to_float(__half v) { return __half2float(v); }
__device__ __forceinline__ float mma_to_float(__nv_bfloat16 v) { return __bfloat162float(v); }

// float -> the tile element type, rounding to nearest even.
template <class T>
__device__ __forceinline__ T mma_from_float(float v) {
    if constexpr (std::is_same_v<T, __half>) {
        return __float2half_rn(v);
    } else if constexpr (std::is_same_v<T, __nv_bfloat16>) {
        return __float2bfloat16_rn(v);
    } else {
        return v;
    }
}

// The portable product: lane l owns accumulator elements l, l + 32, ... (row-major index over the 16 x 16 tile).
template <class T>
struct FmaTile {
    static constexpr int kPerLane = kMmaTile * kMmaTile / 32;
    float x[kPerLane];

    __device__ void zero() {
#pragma unroll
        for (int e = 0; e < kPerLane; e++) x[e] = 0.f;
    }
    __device__ void load(const float *c, int ldc) {
        const int lane = threadIdx.x % 32;
#pragma unroll
        for (int e = 0; e < kPerLane; e++) {
            const int i = lane + 32 * e;
            x[e] = c[(i / kMmaTile) * ldc + i % kMmaTile];
        }
    }
    __device__ void store(float *c, int ldc) const {
        const int lane = threadIdx.x % 32;
#pragma unroll
        for (int e = 0; e < kPerLane; e++) {
            const int i = lane + 32 * e;
            c[(i / kMmaTile) * ldc + i % kMmaTile] = x[e];
        }
        __syncwarp();  // as wmma's store: the whole tile is written before any lane reads it
    }
    // this += a (16 x 16, row-major, lda) * b (16 x 16; row-major: b[k * ldb + n], else b[n * ldb + k]).
    template <bool B_ROW_MAJOR>
    __device__ void mma(const T *a, int lda, const T *b, int ldb) {
        const int lane = threadIdx.x % 32;
#pragma unroll
        for (int e = 0; e < kPerLane; e++) {
            const int i = lane + 32 * e;
            const int row = i / kMmaTile, col = i % kMmaTile;
            float sum = x[e];
#pragma unroll
            for (int k = 0; k < kMmaTile; k++) {
                const T bk = B_ROW_MAJOR ? b[k * ldb + col] : b[col * ldb + k];
                sum = fmaf(mma_to_float(a[row * lda + k]), mma_to_float(bk), sum);
            }
            x[e] = sum;
        }
    }
};

#ifndef ZSE_CUDA_EMULATION
// Tensor cores: one wmma accumulator fragment.
template <class T>
struct WmmaTile {
    nvcuda::wmma::fragment<nvcuda::wmma::accumulator, 16, 16, 16, float> f;

    __device__ void zero() { nvcuda::wmma::fill_fragment(f, 0.f); }
    __device__ void load(const float *c, int ldc) {
        nvcuda::wmma::load_matrix_sync(f, c, ldc, nvcuda::wmma::mem_row_major);
    }
    __device__ void store(float *c, int ldc) const {
        nvcuda::wmma::store_matrix_sync(c, f, ldc, nvcuda::wmma::mem_row_major);
        __syncwarp();
    }
    template <bool B_ROW_MAJOR>
    __device__ void mma(const T *a, int lda, const T *b, int ldb) {
        using BLayout = std::conditional_t<B_ROW_MAJOR, nvcuda::wmma::row_major, nvcuda::wmma::col_major>;
        nvcuda::wmma::fragment<nvcuda::wmma::matrix_a, 16, 16, 16, T, nvcuda::wmma::row_major> fa;
        nvcuda::wmma::fragment<nvcuda::wmma::matrix_b, 16, 16, 16, T, BLayout> fb;
        nvcuda::wmma::load_matrix_sync(fa, a, lda);
        nvcuda::wmma::load_matrix_sync(fb, b, ldb);
        nvcuda::wmma::mma_sync(f, fa, fb, f);
    }
};

template <class T>
using MmaTile = std::conditional_t<std::is_same_v<T, float>, FmaTile<T>, WmmaTile<T>>;
#else
template <class T>
using MmaTile = FmaTile<T>;
#endif

}  // namespace zse

#endif
