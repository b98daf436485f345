// Warp-level 16 x 16 x 16 matrix products on shared-memory tiles, for the prefill kernels (tiled attention, matmul);
// and the int8 16 x 8 x 32 and 16 x 8 x 16 products on registers of the batched integer products (at the end).
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

#include <stdint.h>

#include <type_traits>

namespace zse {

constexpr int kMmaTile = 16;

__device__ __forceinline__ float mma_to_float(float v) { return v; }
__device__ __forceinline__ float mma_to_float(__half v) { return __half2float(v); }
__device__ __forceinline__ float mma_to_float(__nv_bfloat16 v) { return __bfloat162float(v); }
// An INT8 KV row's code, unscaled (kv_rows.cuh).
__device__ __forceinline__ float mma_to_float(int8_t v) { return static_cast<float>(v); }

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
    // The operands are where the tiles lie: the portable product reads them from memory as it multiplies.
    struct OperandA {
        const T *p;
        int ld;
        __device__ void load(const T *a, int lda) {
            p = a;
            ld = lda;
        }
    };
    template <bool B_ROW_MAJOR>
    struct OperandB : OperandA {};

    // this += a (16 x 16, row-major, lda) * b (16 x 16; row-major: b[k * ldb + n], else b[n * ldb + k]).
    template <bool B_ROW_MAJOR>
    __device__ void mma(const OperandA &a, const OperandB<B_ROW_MAJOR> &b) {
        const int lane = threadIdx.x % 32;
#pragma unroll
        for (int e = 0; e < kPerLane; e++) {
            const int i = lane + 32 * e;
            const int row = i / kMmaTile, col = i % kMmaTile;
            float sum = x[e];
#pragma unroll
            for (int k = 0; k < kMmaTile; k++) {
                const T bk = B_ROW_MAJOR ? b.p[k * b.ld + col] : b.p[col * b.ld + k];
                sum = fmaf(mma_to_float(a.p[row * a.ld + k]), mma_to_float(bk), sum);
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
    // Operands loaded into fragments once, for a warp that multiplies each with several others.
    struct OperandA {
        nvcuda::wmma::fragment<nvcuda::wmma::matrix_a, 16, 16, 16, T, nvcuda::wmma::row_major> f;
        __device__ void load(const T *a, int lda) { nvcuda::wmma::load_matrix_sync(f, a, lda); }
    };
    template <bool B_ROW_MAJOR>
    struct OperandB {
        using Layout = std::conditional_t<B_ROW_MAJOR, nvcuda::wmma::row_major, nvcuda::wmma::col_major>;
        nvcuda::wmma::fragment<nvcuda::wmma::matrix_b, 16, 16, 16, T, Layout> f;
        __device__ void load(const T *b, int ldb) { nvcuda::wmma::load_matrix_sync(f, b, ldb); }
    };
    template <bool B_ROW_MAJOR>
    __device__ void mma(const OperandA &a, const OperandB<B_ROW_MAJOR> &b) {
        nvcuda::wmma::mma_sync(f, a.f, b.f, f);
    }
};

template <class T>
using MmaTile = std::conditional_t<std::is_same_v<T, float>, FmaTile<T>, WmmaTile<T>>;
#else
template <class T>
using MmaTile = FmaTile<T>;
#endif

// acc += a (16 x 16, row-major, lda) * b (16 x 16; row-major: b[k * ldb + n], else b[n * ldb + k]), both loaded for
// this product alone.
template <bool B_ROW_MAJOR, class T>
__device__ __forceinline__ void multiply_tiles(MmaTile<T> &acc, const T *a, int lda, const T *b, int ldb) {
    typename MmaTile<T>::OperandA fa;
    typename MmaTile<T>::template OperandB<B_ROW_MAJOR> fb;
    fa.load(a, lda);
    fb.load(b, ldb);
    acc.mma(fa, fb);
}

// One warp's int8 tensor-core product d += a . b: a 16 x 32 (row-major), b 32 x 8 (column-major), d 16 x 8 int32,
// in the registers of PTX's mma.sync.m16n8k32.row.col.s32.s8.s8.s32. With g = lane / 4 and t = lane % 4, a lane holds
//   a[0]: row g, columns 4t .. 4t + 3 (one byte each); a[1]: row g + 8, the same; a[2], a[3]: as a[0], a[1], 16 on;
//   b[0]: column g, rows 4t .. 4t + 3; b[1]: the same, 16 on;
//   d[0], d[1]: row g, columns 2t and 2t + 1; d[2], d[3]: row g + 8, the same.
// The emulation's twin computes the same sums from the same registers, exchanged through the block's memory.
__device__ __forceinline__ void mma_s8_16x8x32(const uint32_t (&a)[4], const uint32_t (&b)[2], int (&d)[4]) {
#ifndef ZSE_CUDA_EMULATION
    asm volatile("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
                 "{%0, %1, %2, %3};"
                 : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#else
    constexpr int kMaxWarps = 32;
    __shared__ uint32_t exchange[kMaxWarps][32][6];  // blocks run one at a time: this is the block's
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
    uint32_t *mine = exchange[warp][lane];
    for (int r = 0; r < 4; r++) mine[r] = a[r];
    mine[4] = b[0];
    mine[5] = b[1];
    __syncwarp();
    const auto byte = [](uint32_t word, int k) { return static_cast<int>(static_cast<int8_t>(word >> (8 * (k % 4)))); };
    for (int e = 0; e < 4; e++) {
        const int row = g + 8 * (e / 2), col = 2 * t + e % 2;
        int sum = 0;
        for (int k = 0; k < 32; k++) {
            const uint32_t *a_lane = exchange[warp][(row % 8) * 4 + (k % 16) / 4];
            const uint32_t *b_lane = exchange[warp][col * 4 + (k % 16) / 4];
            sum += byte(a_lane[row / 8 + 2 * (k / 16)], k) * byte(b_lane[4 + k / 16], k);
        }
        d[e] += sum;
    }
    __syncwarp();
#endif
}

// The same product over 16 columns (mma.sync.m16n8k16.row.col.s32.s8.s8.s32): a[0], a[1] and b as the first halves of
// mma_s8_16x8x32's. The emulation's twin is that product with zero second halves.
__device__ __forceinline__ void mma_s8_16x8x16(const uint32_t (&a)[2], uint32_t b, int (&d)[4]) {
#ifndef ZSE_CUDA_EMULATION
    asm volatile("mma.sync.aligned.m16n8k16.row.col.s32.s8.s8.s32 {%0, %1, %2, %3}, {%4, %5}, {%6}, {%0, %1, %2, %3};"
                 : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(b));
#else
    mma_s8_16x8x32({a[0], a[1], 0u, 0u}, {b, 0u}, d);
#endif
}

}  // namespace zse

#endif
