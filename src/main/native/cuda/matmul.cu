// Matrix products on weights in their .zse layout, and the embedding lookup.
//
// Decode (n <= kMaxVectorRows): one warp per weight row streams the row once with 16-byte loads, decodes runs of 16
// elements in registers (decode16, which the prefill tiles' staging shares) and dots each with the n F32 activation
// rows. Larger n (prefill): a tiled kernel decodes
// a 64 x 32 weight tile into shared memory once and multiplies it with a 64-token activation tile; F32 weights in
// FMAs, every other type dequantized to F16 (BF16 weights: BF16) tiles multiplied on tensor cores (mma.cuh). The
// backend sends Q8, Q4 and K-quant products of up to 16 rows to the integer kernels instead (integer_matvec.cu).
#include <cstdio>

#include "mma.cuh"
#include "status.cuh"
#include "warp.cuh"
#include "weights.cuh"

namespace zse {
namespace {

constexpr int kMatvecWarps = 8;
constexpr int kMaxVectorRows = 8;
constexpr int kRun = 16;  // consecutive elements decode16 reads

// Any storage type, decoded element by element (decode()): GGUF's Q5, the K-quants.
constexpr int kAnyType = -1;

// w[0..16) = elements col .. col + 15 of `row` (col a multiple of 16, inside the row; cols a multiple of 8), read with
// 16-byte loads for the types stored in runs of 16 elements or more (a Q4/NF4 group's byte j holds elements j and
// j + g/2, so 16 consecutive elements are the low or the high nibbles of 16 consecutive bytes).
template <int TYPE>
__device__ __forceinline__ void decode16(const Weight &m, int row, int col, float (&w)[16]) {
    const int64_t index = static_cast<int64_t>(row) * m.cols + col;
    if (TYPE == F32) {
#pragma unroll
        for (int v = 0; v < 4; v++) {
            const float4 f = __ldg(reinterpret_cast<const float4 *>(m.data) + index / 4 + v);
            w[4 * v] = f.x; w[4 * v + 1] = f.y; w[4 * v + 2] = f.z; w[4 * v + 3] = f.w;
        }
    } else if (TYPE == F16 || TYPE == BF16) {
#pragma unroll
        for (int v = 0; v < 2; v++) {
            const uint4 bits = __ldg(reinterpret_cast<const uint4 *>(m.data) + index / 8 + v);
            const uint16_t *h = reinterpret_cast<const uint16_t *>(&bits);
#pragma unroll
            for (int e = 0; e < 8; e++) {
                w[8 * v + e] = TYPE == F16 ? __half2float(__ushort_as_half(h[e])) : bf16_to_float(h[e]);
            }
        }
    } else if (TYPE == Q8) {
        const uint4 bits = __ldg(reinterpret_cast<const uint4 *>(m.data) + index / 16);
        const int8_t *q = reinterpret_cast<const int8_t *>(&bits);
        const float d = __half2float(m.scales[index / 32]);
#pragma unroll
        for (int e = 0; e < 16; e++) w[e] = q[e] * d;
    } else if (TYPE == Q4 || TYPE == NF4) {
        const int half = m.group / 2;
        const int64_t group = index / m.group;
        const int within = static_cast<int>(index - group * m.group);
        const int shift = within < half ? 0 : 4;
        const uint4 bits = __ldg(reinterpret_cast<const uint4 *>(m.data + group * half + within % half));
        const uint8_t *p = reinterpret_cast<const uint8_t *>(&bits);
        if (TYPE == Q4) {
            const float d = __half2float(m.scales[2 * group]), mn = __half2float(m.scales[2 * group + 1]);
#pragma unroll
            for (int e = 0; e < 16; e++) w[e] = ((p[e] >> shift) & 0x0F) * d + mn;
        } else {
            const float absmax = __half2float(m.scales[group]);
#pragma unroll
            for (int e = 0; e < 16; e++) w[e] = kNf4Codebook[(p[e] >> shift) & 0x0F] * absmax;
        }
    } else {
#pragma unroll
        for (int e = 0; e < 16; e++) w[e] = decode(m, row, col + e);
    }
}

// out[t, row] for t < n <= kMaxVectorRows; one warp per row, a run of 16 elements (decode16) per lane and step (cols
// a multiple of 16).
template <int TYPE>
__global__ void matvec_kernel(Weight m, const float *__restrict__ x, int n, float *__restrict__ out) {
    const int row = blockIdx.x * kMatvecWarps + threadIdx.x / kWarp;
    const int lane = threadIdx.x % kWarp;
    if (row >= m.rows) {
        return;
    }
    float acc[kMaxVectorRows] = {};
    for (int c = lane; c < m.cols / kRun; c += kWarp) {
        float w[kRun];
        decode16<TYPE>(m, row, c * kRun, w);
#pragma unroll
        for (int t = 0; t < kMaxVectorRows; t++) {
            if (t < n) {
                const float4 *xt = reinterpret_cast<const float4 *>(x + static_cast<int64_t>(t) * m.cols + c * kRun);
                float s = 0.f;
#pragma unroll
                for (int v = 0; v < kRun / 4; v++) {
                    const float4 a = __ldg(xt + v);
                    s = fmaf(w[4 * v], a.x, s);
                    s = fmaf(w[4 * v + 1], a.y, s);
                    s = fmaf(w[4 * v + 2], a.z, s);
                    s = fmaf(w[4 * v + 3], a.w, s);
                }
                acc[t] += s;
            }
        }
    }
#pragma unroll
    for (int t = 0; t < kMaxVectorRows; t++) {
        if (t < n) {
            float s = warp_sum(acc[t]);
            if (lane == 0) {
                out[static_cast<int64_t>(t) * m.rows + row] = s;
            }
        }
    }
}

// The same product element by element, for unquantized rows whose length is not a multiple of the chunk.
__global__ void matvec_scalar_kernel(Weight m, const float *__restrict__ x, int n, float *__restrict__ out) {
    const int row = blockIdx.x * kMatvecWarps + threadIdx.x / kWarp;
    const int lane = threadIdx.x % kWarp;
    if (row >= m.rows) {
        return;
    }
    for (int t = 0; t < n; t++) {
        const float *xt = x + static_cast<int64_t>(t) * m.cols;
        float s = 0.f;
        for (int k = lane; k < m.cols; k += kWarp) {
            s = fmaf(decode(m, row, k), xt[k], s);
        }
        s = warp_sum(s);
        if (lane == 0) {
            out[static_cast<int64_t>(t) * m.rows + row] = s;
        }
    }
}

// TERNARY (BitNet b1.58): a block takes kMatvecWarps weight rows and up to kMaxVectorRows activation rows, which it
// quantizes as BitLinear does while reading them: int8 codes round-half-even(x·d) clamped to [-128, 127], with the
// row's d = 127 / max(absmax, 1e-5) (one warp per row finds the absmax). Each output is the exact integer Σ t·q times
// the tensor's scale, divided by d, in that order (io.zse.backend.cpu.TernaryActivations).
__global__ void ternary_matmul_kernel(Weight m, const float *__restrict__ x, int n, float *__restrict__ out) {
    __shared__ float divisor[kMaxVectorRows];
    const int first = blockIdx.y * kMaxVectorRows;
    const int count = min(kMaxVectorRows, n - first);
    const int warp = threadIdx.x / kWarp, lane = threadIdx.x % kWarp;
    if (warp < count) {
        const float *xt = x + static_cast<int64_t>(first + warp) * m.cols;
        float absmax = 0.f;
        for (int k = lane; k < m.cols; k += kWarp) absmax = fmaxf(absmax, fabsf(xt[k]));
#pragma unroll
        for (int offset = kWarp / 2; offset > 0; offset /= 2) {
            absmax = fmaxf(absmax, __shfl_xor_sync(0xffffffffu, absmax, offset));
        }
        if (lane == 0) divisor[warp] = 127.f / fmaxf(absmax, 1e-5f);
    }
    __syncthreads();
    const int row = blockIdx.x * kMatvecWarps + warp;
    if (row >= m.rows) return;
    const float scale = *reinterpret_cast<const float *>(m.scales);
    const uint8_t *codes = m.data + static_cast<int64_t>(row) * (m.cols / 4);
    for (int t = 0; t < count; t++) {
        const float *xt = x + static_cast<int64_t>(first + t) * m.cols;
        const float d = divisor[t];
        int dot = 0;
        for (int k = lane; k < m.cols; k += kWarp) {
            const int q = static_cast<int>(fmaxf(-128.f, fminf(127.f, rintf(xt[k] * d))));
            dot += (ternary_code(codes, k) - 1) * q;
        }
#pragma unroll
        for (int offset = kWarp / 2; offset > 0; offset /= 2) dot += __shfl_xor_sync(0xffffffffu, dot, offset);
        if (lane == 0) out[static_cast<int64_t>(first + t) * m.rows + row] = static_cast<float>(dot) * scale / d;
    }
}

constexpr int kTileRows = 64;    // weight rows per block
constexpr int kTileTokens = 64;  // activation rows per block
constexpr int kTileK = 32;       // columns per step

// out[n, rows] = x[n, cols] . w^T, 256 threads each computing a 4 x 4 block of the 64 x 64 output tile.
__global__ void __launch_bounds__(256) matmul_tiled_kernel(Weight m, const float *__restrict__ x, int n,
                                                           float *__restrict__ out) {
    __shared__ float ws[kTileK][kTileRows + 1];
    __shared__ float xs[kTileK][kTileTokens + 1];
    const int row0 = blockIdx.x * kTileRows;
    const int token0 = blockIdx.y * kTileTokens;
    const int tr = (threadIdx.x % 16) * 4;  // this thread's first weight row in the tile
    const int tt = (threadIdx.x / 16) * 4;  // its first token
    float acc[4][4] = {};
    for (int k0 = 0; k0 < m.cols; k0 += kTileK) {
        for (int i = threadIdx.x; i < kTileK * kTileRows; i += blockDim.x) {
            int r = i / kTileK, k = i % kTileK;
            int row = row0 + r, col = k0 + k;
            ws[k][r] = row < m.rows && col < m.cols ? decode(m, row, col) : 0.f;
        }
        for (int i = threadIdx.x; i < kTileK * kTileTokens; i += blockDim.x) {
            int t = i / kTileK, k = i % kTileK;
            int token = token0 + t, col = k0 + k;
            xs[k][t] = token < n && col < m.cols ? x[static_cast<int64_t>(token) * m.cols + col] : 0.f;
        }
        __syncthreads();
#pragma unroll 8
        for (int k = 0; k < kTileK; k++) {
            float wr[4], xr[4];
#pragma unroll
            for (int a = 0; a < 4; a++) {
                wr[a] = ws[k][tr + a];
                xr[a] = xs[k][tt + a];
            }
#pragma unroll
            for (int a = 0; a < 4; a++) {
#pragma unroll
                for (int b = 0; b < 4; b++) {
                    acc[b][a] = fmaf(xr[b], wr[a], acc[b][a]);
                }
            }
        }
        __syncthreads();
    }
    for (int b = 0; b < 4; b++) {
        for (int a = 0; a < 4; a++) {
            int token = token0 + tt + b, row = row0 + tr + a;
            if (token < n && row < m.rows) {
                out[static_cast<int64_t>(token) * m.rows + row] = acc[b][a];
            }
        }
    }
}

// What one thread stages per step of the tensor-core product: elements col .. col + 15 of weight row `row` and of
// activation row `token` rounded to T, 0 outside the matrices; 16-byte loads (decode16) where the run lies inside a
// row whose length is a multiple of 8.
template <class T, int TYPE>
__device__ __forceinline__ void load_runs(const Weight &m, const float *__restrict__ x, int n, int row, int token,
                                          int col, T (&w)[16], T (&a)[16]) {
    const bool whole_run = (m.cols & 7) == 0 && col + 16 <= m.cols;
    float v[16];
    if (whole_run && row < m.rows) {
        decode16<TYPE>(m, row, col, v);
    } else {
#pragma unroll
        for (int e = 0; e < 16; e++) v[e] = col + e < m.cols && row < m.rows ? decode(m, row, col + e) : 0.f;
    }
#pragma unroll
    for (int e = 0; e < 16; e++) w[e] = mma_from_float<T>(v[e]);
    const float *xt = x + static_cast<int64_t>(token) * m.cols + col;
    if (whole_run && token < n) {
#pragma unroll
        for (int q = 0; q < 4; q++) {
            const float4 f = __ldg(reinterpret_cast<const float4 *>(xt) + q);
            v[4 * q] = f.x; v[4 * q + 1] = f.y; v[4 * q + 2] = f.z; v[4 * q + 3] = f.w;
        }
    } else {
#pragma unroll
        for (int e = 0; e < 16; e++) v[e] = col + e < m.cols && token < n ? xt[e] : 0.f;
    }
#pragma unroll
    for (int e = 0; e < 16; e++) a[e] = mma_from_float<T>(v[e]);
}

// Tile shapes of the prefill product on tensor cores: a block computes SIZE tokens x SIZE weight rows with WT x WR
// warps, each owning (SIZE / WT) x (SIZE / WR) outputs as 16 x 16 accumulators; per step each thread stages one run
// of 16 elements of a weight row and one of an activation row (2 SIZE threads). The larger tile reads each weight
// tile for 128 tokens and each activation tile for 128 rows, half the loads a product of the smaller one makes. A
// warp loads its fragments once for all of its products: 6 for 8 products in the larger tile, 5 for 4 in the smaller.
template <int SIZE, int WT, int WR>
struct PrefillTile {
    static constexpr int kSize = SIZE, kWarpsR = WR, kThreads = WT * WR * kWarp;
    static constexpr int kFragTokens = SIZE / WT / kMmaTile, kFragRows = SIZE / WR / kMmaTile;
    static_assert(2 * SIZE == kThreads && kFragTokens * kMmaTile * WT == SIZE && kFragRows * kMmaTile * WR == SIZE,
                  "one weight run and one activation run a thread; whole fragments a warp");
};
using SmallTile = PrefillTile<64, 4, 1>;
using LargeTile = PrefillTile<128, 2, 4>;

// A run of 16 staged elements to shared memory (16-byte aligned) in 16-byte stores.
template <class T>
__device__ __forceinline__ void store_run(T *to, const T (&run)[kRun]) {
#pragma unroll
    for (int v = 0; v < kRun * static_cast<int>(sizeof(T)) / 16; v++) {
        reinterpret_cast<uint4 *>(to)[v] = reinterpret_cast<const uint4 *>(run)[v];
    }
}

// The prefill product on tensor cores: out[n, rows] = x[n, cols] . w^T with the weight tile dequantized and the
// activation tile rounded to T (F16, or BF16 for BF16 weights: their own rounding) in shared memory, accumulated in
// float. Two staging buffers: a step stores the runs it loaded into one while the other may still be read, so one
// barrier a step suffices, and the next step's runs load while the tensor cores work on this step's.
template <class Tile, class T, int TYPE>
__global__ void __launch_bounds__(Tile::kThreads) matmul_mma_kernel(Weight m, const float *__restrict__ x, int n,
                                                                    float *__restrict__ out) {
    constexpr int S = Tile::kSize;
    constexpr int ld = kTileK + 8;     // T elements per staged row: a multiple of 8, rows off the same banks
    constexpr int kStep = 2 * S * ld;  // T elements of one step's staging: S weight rows, then S activation rows
    constexpr int ldc = kMmaTile + 4;  // floats per row of a warp's output tile in the epilogue
    constexpr size_t kStaging = 2 * kStep * sizeof(T);
    constexpr size_t kEpilogue = Tile::kThreads / kWarp * kMmaTile * ldc * sizeof(float);
    __align__(128) __shared__ unsigned char staging[kStaging > kEpilogue ? kStaging : kEpilogue];
    using Acc = MmaTile<T>;
    using OperandA = typename Acc::OperandA;
    using OperandB = typename Acc::template OperandB<false>;
    const int row0 = blockIdx.x * S, token0 = blockIdx.y * S;
    const int warp = threadIdx.x / kWarp, lane = threadIdx.x % kWarp;
    const int warp_tokens = warp / Tile::kWarpsR * Tile::kFragTokens * kMmaTile;
    const int warp_rows = warp % Tile::kWarpsR * Tile::kFragRows * kMmaTile;
    const int r = threadIdx.x / 2, k_run = (threadIdx.x % 2) * kRun;  // this thread's staged row (and token) and run
    Acc acc[Tile::kFragTokens][Tile::kFragRows];
#pragma unroll
    for (int i = 0; i < Tile::kFragTokens; i++) {
#pragma unroll
        for (int j = 0; j < Tile::kFragRows; j++) acc[i][j].zero();
    }
    alignas(16) T w[kRun];
    alignas(16) T a[kRun];
    load_runs<T, TYPE>(m, x, n, row0 + r, token0 + r, k_run, w, a);
    int buffer = 0;
    for (int k0 = 0; k0 < m.cols; k0 += kTileK, buffer ^= 1) {
        T *ws = reinterpret_cast<T *>(staging) + buffer * kStep;  // [row][k]: B, column-major
        T *xs = ws + S * ld;                                       // [token][k]: A, row-major
        store_run(ws + r * ld + k_run, w);
        store_run(xs + r * ld + k_run, a);
        // This step's tiles are whole; and every warp is past the step before, so none reads the buffer the next
        // step overwrites.
        __syncthreads();
        if (k0 + kTileK < m.cols) {
            load_runs<T, TYPE>(m, x, n, row0 + r, token0 + r, k0 + kTileK + k_run, w, a);
        }
#pragma unroll
        for (int kk = 0; kk < kTileK; kk += kMmaTile) {
            OperandA fa[Tile::kFragTokens];
            OperandB fb[Tile::kFragRows];
#pragma unroll
            for (int i = 0; i < Tile::kFragTokens; i++) fa[i].load(xs + (warp_tokens + kMmaTile * i) * ld + kk, ld);
#pragma unroll
            for (int j = 0; j < Tile::kFragRows; j++) fb[j].load(ws + (warp_rows + kMmaTile * j) * ld + kk, ld);
#pragma unroll
            for (int i = 0; i < Tile::kFragTokens; i++) {
#pragma unroll
                for (int j = 0; j < Tile::kFragRows; j++) acc[i][j].mma(fa[i], fb[j]);
            }
        }
    }
    __syncthreads();  // the staging now holds each warp's output tile in turn
    float *c = reinterpret_cast<float *>(staging) + warp * kMmaTile * ldc;
#pragma unroll
    for (int i = 0; i < Tile::kFragTokens; i++) {
#pragma unroll
        for (int j = 0; j < Tile::kFragRows; j++) {
            acc[i][j].store(c, ldc);
            for (int e = lane; e < kMmaTile * kMmaTile; e += kWarp) {
                const int token = token0 + warp_tokens + kMmaTile * i + e / kMmaTile;
                const int row = row0 + warp_rows + kMmaTile * j + e % kMmaTile;
                if (token < n && row < m.rows) {
                    out[static_cast<int64_t>(token) * m.rows + row] = c[e / kMmaTile * ldc + e % kMmaTile];
                }
            }
            __syncwarp();  // every lane has read the tile before the next one is stored
        }
    }
}

template <class Tile, class T, int TYPE>
void launch_mma(const Weight &m, const float *x, int n, float *out, cudaStream_t stream) {
    const dim3 grid((m.rows + Tile::kSize - 1) / Tile::kSize, (n + Tile::kSize - 1) / Tile::kSize);
    const auto kernel = matmul_mma_kernel<Tile, T, TYPE>;
    ZSE_LAUNCH(kernel, grid, Tile::kThreads, 0, stream)(m, x, n, out);
}

template <class T, int TYPE>
void launch_mma(const Weight &m, const float *x, int n, float *out, int tile, cudaStream_t stream) {
    if (tile == LargeTile::kSize) {
        launch_mma<LargeTile, T, TYPE>(m, x, n, out, stream);
    } else {
        launch_mma<SmallTile, T, TYPE>(m, x, n, out, stream);
    }
}

bool vector_path_fits(const Weight &m) {
    return m.cols % kRun == 0;
}

template <int TYPE>
void launch_matvec(const Weight &m, const float *x, int n, float *out, cudaStream_t stream) {
    dim3 grid((m.rows + kMatvecWarps - 1) / kMatvecWarps);
    if (vector_path_fits(m)) {
        ZSE_LAUNCH(matvec_kernel<TYPE>, grid, kMatvecWarps * kWarp, 0, stream)(m, x, n, out);
    } else {
        ZSE_LAUNCH(matvec_scalar_kernel, grid, kMatvecWarps * kWarp, 0, stream)(m, x, n, out);
    }
}

__global__ void embed_kernel(Weight m, const int32_t *__restrict__ tokens, float *__restrict__ out) {
    const int i = blockIdx.x;
    const int token = tokens[i];
    float *row_out = out + static_cast<int64_t>(i) * m.cols;
    const bool valid = token >= 0 && token < m.rows;  // the host checks ids; this keeps a bad id from reading past the table
    for (int k = threadIdx.x; k < m.cols; k += blockDim.x) {
        row_out[k] = valid ? decode(m, token, k) : __int_as_float(0x7fc00000);
    }
}

}  // namespace

int check_weight(const Weight &m, const char *entry) {
    if (m.data == nullptr) return refuse(entry, "weight data is NULL");
    if (m.rows <= 0 || m.cols <= 0) return refuse(entry, "weight shape must be positive");
    switch (m.type) {
        case F32:
        case F16:
        case BF16:
            return 0;
        case Q8:
            if (m.group != 32) return refuse(entry, "Q8 groups are 32 elements");
            break;
        case Q4:
            if (m.group != 32 && m.group != 64 && m.group != 128) return refuse(entry, "Q4 groups are 32, 64 or 128");
            break;
        case NF4:
            if (m.group != 64) return refuse(entry, "NF4 groups are 64 elements");
            break;
        case Q5:
            if (m.group != 32) return refuse(entry, "Q5 groups are 32 elements");
            break;
        case Q4_K:
        case Q5_K:
        case Q6_K:
            if (m.group != 256) return refuse(entry, "K-quant super-blocks are 256 elements");
            break;
        case TERNARY:
            if (m.group != 128) return refuse(entry, "TERNARY blocks are 128 elements");
            break;
        default:
            return refuse(entry, "unknown storage type code");
    }
    if (m.scales == nullptr) return refuse(entry, "quantized weight without scales");
    if (m.cols % m.group != 0) return refuse(entry, "row length is not a multiple of the group size");
    return 0;
}

}  // namespace zse

extern "C" {

int zse_cuda_matmul(const void *data, const void *scales, int type, int group_size, int rows, int cols,
                    const float *x, int n, int tile, float *out, void *stream) {
    using namespace zse;
    Weight m{static_cast<const uint8_t *>(data), static_cast<const __half *>(scales), type, group_size, rows, cols};
    if (int status = check_weight(m, "zse_cuda_matmul")) return status;
    ZSE_REQUIRE(x != nullptr && out != nullptr && n > 0, "zse_cuda_matmul: NULL activations or n <= 0");
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    if (type == TERNARY) {
        ZSE_REQUIRE((n + kMaxVectorRows - 1) / kMaxVectorRows <= 65535, "zse_cuda_matmul: n above 65535 * 8");
        dim3 grid((rows + kMatvecWarps - 1) / kMatvecWarps, (n + kMaxVectorRows - 1) / kMaxVectorRows);
        ZSE_LAUNCH(ternary_matmul_kernel, grid, kMatvecWarps * kWarp, 0, s)(m, x, n, out);
        return launched("ternary_matmul_kernel");
    }
    ZSE_REQUIRE(tile == SmallTile::kSize || tile == LargeTile::kSize, "zse_cuda_matmul: tile must be 64 or 128");
    if (n > kMaxVectorRows) {
        ZSE_REQUIRE((n + kTileTokens - 1) / kTileTokens <= 65535, "zse_cuda_matmul: n above 65535 * 64");
        if (type == F32) {
            dim3 grid((rows + kTileRows - 1) / kTileRows, (n + kTileTokens - 1) / kTileTokens);
            ZSE_LAUNCH(matmul_tiled_kernel, grid, 256, 0, s)(m, x, n, out);
            return launched("matmul_tiled_kernel");
        }
        switch (type) {
            case BF16: launch_mma<__nv_bfloat16, BF16>(m, x, n, out, tile, s); break;
            case F16: launch_mma<__half, F16>(m, x, n, out, tile, s); break;
            case Q8: launch_mma<__half, Q8>(m, x, n, out, tile, s); break;
            case Q4: launch_mma<__half, Q4>(m, x, n, out, tile, s); break;
            case NF4: launch_mma<__half, NF4>(m, x, n, out, tile, s); break;
            default: launch_mma<__half, kAnyType>(m, x, n, out, tile, s); break;
        }
        return launched("matmul_mma_kernel");
    }
    switch (type) {
        case F32: launch_matvec<F32>(m, x, n, out, s); break;
        case F16: launch_matvec<F16>(m, x, n, out, s); break;
        case BF16: launch_matvec<BF16>(m, x, n, out, s); break;
        case Q8: launch_matvec<Q8>(m, x, n, out, s); break;
        case Q4: launch_matvec<Q4>(m, x, n, out, s); break;
        case Q5: launch_matvec<Q5>(m, x, n, out, s); break;
        case Q4_K: launch_matvec<Q4_K>(m, x, n, out, s); break;
        case Q5_K: launch_matvec<Q5_K>(m, x, n, out, s); break;
        case Q6_K: launch_matvec<Q6_K>(m, x, n, out, s); break;
        default: launch_matvec<NF4>(m, x, n, out, s); break;
    }
    return launched("matvec_kernel");
}

int zse_cuda_embed(const void *data, const void *scales, int type, int group_size, int rows, int cols,
                   const int32_t *tokens, int n, float *out, void *stream) {
    using namespace zse;
    Weight m{static_cast<const uint8_t *>(data), static_cast<const __half *>(scales), type, group_size, rows, cols};
    if (int status = check_weight(m, "zse_cuda_embed")) return status;
    ZSE_REQUIRE(tokens != nullptr && out != nullptr && n > 0, "zse_cuda_embed: NULL tokens/output or n <= 0");
    ZSE_LAUNCH(embed_kernel, n, 256, 0, static_cast<cudaStream_t>(stream))(m, tokens, out);
    return launched("embed_kernel");
}

}  // extern "C"
