// The integer products of decode and batches: Q8, Q4, Q4_K and Q6_K weights times up to 64 activation rows quantized
// to int8, as libzse_cpu's integer kernels compute them (src/main/native/cpu/zse_cpu.h), with DP4A up to 8 rows and
// on int8 tensor cores from 9 (staged_mma_kernel, integer_mma_kernel, below); prompts on the staged kernel too, in
// tiles of 64 tokens.
//
// Why: with F32 activations each weight byte costs a lane several float decodes and 4-8 bytes of activation loads,
// which keeps a one-row product far from the memory bandwidth; with int8 codes one DP4A multiplies 4 elements and the
// activations a lane loads are as many bytes as the elements it multiplies.
//
// zse_cuda_quantize_rows (or the kernel that produced the activations) writes per block of 32 activations the codes,
// scale and sum of quantize.cuh, as zse_cpu_quantize_rows does. One warp per weight row then streams the row,
// one chunk of 32 elements per lane and step (a Q8 block, 16 bytes of a Q4 group; the K-quants: struct Chunk):
//   Q8: sum += d_w * d_x * dot(w, q)
//   Q4: sum += d * (d_x,lo * dot(codes_lo, q_lo) + d_x,hi * dot(codes_hi, q_hi)) + m * s_x
// where a Q4 group's byte j holds element j (low nibble) and j + g/2 (high nibble), so a chunk's low and high
// nibbles are the 16 elements from 16c' and from 16c' + g/2 of the group (c' the chunk in the group); the chunks of a
// group and the activation blocks it spans are equally many, so chunk c adds m times block c's s.
#include <type_traits>

#include "async.cuh"
#include "gated.cuh"
#include "last_block.cuh"
#include "mma.cuh"
#include "norm.cuh"
#include "overlap.cuh"
#include "quantize.cuh"
#include "rope.cuh"
#include "status.cuh"
#include "warp.cuh"
#include "weights.cuh"

namespace zse {
namespace {

constexpr int kBlock = kQuantBlock; // activations per quantization block, elements per chunk
constexpr int kWarps = 8;          // weight rows per thread block
constexpr int kMaxWeights = 3;     // weights sharing one activation input in one launch (q, k, v)

// Up to kMaxWeights weights of one type, group and column count, whose rows one launch covers one after the other.
struct Products {
    const uint8_t *data[kMaxWeights];
    const __half *scales[kMaxWeights];
    float *out[kMaxWeights];
    int rows[kMaxWeights];
    int count;
    int group;
    int cols;
};

// Activations [n, cols] quantized per block of 32, in global memory (read through the read-only cache).
struct QuantizedRows {
    const int8_t *q;
    const float *d;
    const float *s;
};

// The same for the one row a block normed itself into shared memory (NormedInput, below), read by plain loads: the
// read-only path takes global addresses only.
struct SharedRows {
    const int8_t *q;
    const float *d;
    const float *s;
};

// One warp per block of 32 activations.
__global__ void quantize_rows_kernel(const float *__restrict__ x, int64_t blocks, QuantizedOut out) {
    let_next_grid_start();
    wait_for_previous_grid();
    const int64_t block = static_cast<int64_t>(blockIdx.x) * kWarps + threadIdx.x / kWarp;
    if (block < blocks) {
        quantize_block(x[block * kBlock + threadIdx.x % kWarp], block, out);
    }
}

__device__ __forceinline__ int dot16(const uint32_t (&w)[4], const int4 &x) {
    return __dp4a(static_cast<int>(w[3]), x.w,
                  __dp4a(static_cast<int>(w[2]), x.z,
                         __dp4a(static_cast<int>(w[1]), x.y, __dp4a(static_cast<int>(w[0]), x.x, 0))));
}

__device__ __forceinline__ float half_bits_to_float(uint32_t bits) {
    return __half2float(__ushort_as_half(static_cast<unsigned short>(bits)));
}

// One weight row in its stored form: the element bytes and the scale bytes (Q8: F16 d per block; Q4: F16 (d, m) per
// group; Q4_K, Q6_K: the super-blocks' records).
struct Row {
    const uint8_t *data;
    const uint8_t *scales;
};

template <int TYPE>
__device__ __forceinline__ Row row_of(const uint8_t *data, const uint8_t *scales, int64_t row, int cols, int shift) {
    const int64_t blocks = cols / kBlock, supers = cols / 256;
    switch (TYPE) {
        case Q8: return {data + row * cols, scales + row * blocks * 2};
        case Q4: return {data + row * cols / 2, scales + row * (blocks >> shift) * 4};
        case Q4_K: return {data + row * supers * 128, scales + row * supers * 16};
        default: return {data + row * supers * 192, scales + row * supers * 18};  // Q6_K
    }
}

// The low and high nibbles of 16 bytes, as 4-bit codes in bytes.
__device__ __forceinline__ void split_nibbles(const uint4 &v, uint32_t (&low)[4], uint32_t (&high)[4]) {
    const uint32_t packed[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
    for (int e = 0; e < 4; e++) {
        low[e] = packed[e] & 0x0F0F0F0Fu;
        high[e] = (packed[e] >> 4) & 0x0F0F0F0Fu;
    }
}

// An activation row's 16 codes from `element`, 8 from `element`, and block `block`'s scale d and sum s.
__device__ __forceinline__ int4 codes16(const QuantizedRows &x, int64_t element) {
    return __ldg(reinterpret_cast<const int4 *>(x.q + element));
}
__device__ __forceinline__ int4 codes16(const SharedRows &x, int64_t element) {
    return *reinterpret_cast<const int4 *>(x.q + element);
}
__device__ __forceinline__ int2 codes8(const QuantizedRows &x, int64_t element) {
    return __ldg(reinterpret_cast<const int2 *>(x.q + element));
}
__device__ __forceinline__ int2 codes8(const SharedRows &x, int64_t element) {
    return *reinterpret_cast<const int2 *>(x.q + element);
}
__device__ __forceinline__ float scale_of(const QuantizedRows &x, int64_t block) { return __ldg(x.d + block); }
__device__ __forceinline__ float scale_of(const SharedRows &x, int64_t block) { return x.d[block]; }
__device__ __forceinline__ float sum_of(const QuantizedRows &x, int64_t block) { return __ldg(x.s + block); }
__device__ __forceinline__ float sum_of(const SharedRows &x, int64_t block) { return x.s[block]; }

// Chunk c of a row (32 elements): load() issues its loads, decode() turns them into operands once, input() loads
// what one activation row holds for the chunk, and dot() is the chunk's contribution to that row's output.
template <int TYPE>
struct Chunk;

// Q8: a block of 32 codes and its d.
template <>
struct Chunk<Q8> {
    uint4 low, high;
    __half scale;
    uint32_t w[8];
    float d;
    struct Input {
        int4 low, high;
        float d;
    };
    __device__ __forceinline__ void load(const Row &r, int c, int) {
        low = __ldg(reinterpret_cast<const uint4 *>(r.data) + 2 * c);
        high = __ldg(reinterpret_cast<const uint4 *>(r.data) + 2 * c + 1);
        scale = __ldg(reinterpret_cast<const __half *>(r.scales) + c);
    }
    __device__ __forceinline__ void decode(int) {
        const uint32_t all[8] = {low.x, low.y, low.z, low.w, high.x, high.y, high.z, high.w};
#pragma unroll
        for (int e = 0; e < 8; e++) w[e] = all[e];
        d = __half2float(scale);
    }
    template <class Rows>
    __device__ __forceinline__ static Input input(const Rows &x, int64_t row, int c, int, int) {
        const int64_t at = row + kBlock * c;
        return {codes16(x, at), codes16(x, at + 16), scale_of(x, at / kBlock)};
    }
    __device__ __forceinline__ float dot(const Input &in) const {
        const uint32_t(&l)[4] = *reinterpret_cast<const uint32_t(*)[4]>(w);
        const uint32_t(&h)[4] = *reinterpret_cast<const uint32_t(*)[4]>(w + 4);
        return d * in.d * static_cast<float>(dot16(l, in.low) + dot16(h, in.high));
    }
};

// The first element of chunk c's low nibbles in a row of Q4 groups (2^shift chunks a group); the high nibbles' is
// half a group further.
__device__ __forceinline__ int q4_first(int c, int group, int shift) {
    return (c >> shift) * group + 16 * (c & ((1 << shift) - 1));
}

// Q4: 16 bytes of one group's nibbles and the group's (d, m) as one 32-bit word.
template <>
struct Chunk<Q4> {
    uint4 packed;
    uint32_t dm;
    uint32_t low[4], high[4];
    float d, m;
    struct Input {
        int4 low, high;
        float d_low, d_high, s;
    };
    __device__ __forceinline__ void load(const Row &r, int c, int shift) {
        packed = __ldg(reinterpret_cast<const uint4 *>(r.data) + c);
        dm = __ldg(reinterpret_cast<const uint32_t *>(r.scales) + (c >> shift));
    }
    __device__ __forceinline__ void decode(int) {
        split_nibbles(packed, low, high);
        d = half_bits_to_float(dm & 0xffffu);
        m = half_bits_to_float(dm >> 16);
    }
    template <class Rows>
    __device__ __forceinline__ static Input input(const Rows &x, int64_t row, int c, int group, int shift) {
        const int64_t first = row + q4_first(c, group, shift), second = first + group / 2;
        return {codes16(x, first), codes16(x, second), scale_of(x, first / kBlock), scale_of(x, second / kBlock),
                sum_of(x, row / kBlock + c)};
    }
    __device__ __forceinline__ float dot(const Input &in) const {
        const float scaled = in.d_low * static_cast<float>(dot16(low, in.low)) +
                             in.d_high * static_cast<float>(dot16(high, in.high));
        return fmaf(d, scaled, m * in.s);
    }
};

// Q4_K: 16 bytes of a super-block's codes, whose low nibbles are half of sub-block j = 2p and high nibbles the same
// half of sub-block j + 1 (c = 8 super-block + 2 p + half). The first half's lane adds both sub-blocks' min terms.
template <>
struct Chunk<Q4_K> {
    uint4 packed;
    const uint8_t *record;
    uint32_t low[4], high[4];
    float scale_low, scale_high, min_low, min_high;  // d and dmin applied
    struct Input {
        int4 low, high;
        float d_low, d_high, s_low, s_high;
    };
    __device__ __forceinline__ void load(const Row &r, int c, int) {
        packed = __ldg(reinterpret_cast<const uint4 *>(r.data) + c);
        record = r.scales + 16 * (c >> 3);
    }
    __device__ __forceinline__ void decode(int c) {
        split_nibbles(packed, low, high);
        const int j = 2 * ((c >> 1) & 3);
        int sl, ml, sh, mh;
        kquant_scale_min(record + 4, j, sl, ml);
        kquant_scale_min(record + 4, j + 1, sh, mh);
        const float d = f16_at(record), dmin = (c & 1) == 0 ? f16_at(record + 2) : 0.f;
        scale_low = d * static_cast<float>(sl);
        scale_high = d * static_cast<float>(sh);
        min_low = dmin * static_cast<float>(ml);
        min_high = dmin * static_cast<float>(mh);
    }
    template <class Rows>
    __device__ __forceinline__ static Input input(const Rows &x, int64_t row, int c, int, int) {
        const int64_t first = row + (c >> 3) * 256 + 64 * ((c >> 1) & 3) + 16 * (c & 1);
        const int64_t block = first / kBlock;  // sub-block j's activations; j + 1's follow
        return {codes16(x, first), codes16(x, first + kBlock), scale_of(x, block), scale_of(x, block + 1),
                sum_of(x, block), sum_of(x, block + 1)};
    }
    __device__ __forceinline__ float dot(const Input &in) const {
        const float scaled = scale_low * in.d_low * static_cast<float>(dot16(low, in.low)) +
                             scale_high * in.d_high * static_cast<float>(dot16(high, in.high));
        return scaled - (min_low * in.s_low + min_high * in.s_high);
    }
};

// Q6_K: a quarter q of half h of a super-block (c = 8 super-block + 4 h + q): elements 128 h + 32 p + 8 q .. + 7 of
// each part p = 0..3, from 8 bytes of low nibbles at 64 h + 8 q (parts 0, 2) and 64 h + 32 + 8 q (parts 1, 3) and 8
// bytes of high bits at 128 + 32 h + 8 q (bits 2 p of each). Weights q - 32 with q in 0..63.
template <>
struct Chunk<Q6_K> {
    uint2 nibbles_02, nibbles_13, high_bits;
    const uint8_t *record;
    uint32_t q[4][2];
    float scale[4];  // d times the part's 16-element scale
    // An activation row's 8 codes of each part, their sum times 32 (the weights' offset: sum (q - 32) v = dot(q, v) -
    // 32 sum v, taken once here rather than once for each weight row multiplied by them) and their blocks' d.
    struct Input {
        int2 codes[4];
        int offset[4];
        float d[4];
    };
    __device__ __forceinline__ void load(const Row &r, int c, int) {
        const uint8_t *codes = r.data + 192 * (c >> 3) + 8 * (c & 3);
        const int h = (c >> 2) & 1;
        nibbles_02 = __ldg(reinterpret_cast<const uint2 *>(codes + 64 * h));
        nibbles_13 = __ldg(reinterpret_cast<const uint2 *>(codes + 64 * h + 32));
        high_bits = __ldg(reinterpret_cast<const uint2 *>(codes + 128 + 32 * h));
        record = r.scales + 18 * (c >> 3);
    }
    // The 6-bit codes of part p, 4 elements a word.
    __device__ __forceinline__ static uint32_t codes(uint32_t nibbles_02, uint32_t nibbles_13, uint32_t high, int p) {
        const uint32_t low = (p & 1 ? nibbles_13 : nibbles_02) >> (4 * (p >> 1));
        const uint32_t top = p == 0 ? high << 4 : p == 1 ? high << 2 : p == 2 ? high : high >> 2;
        return (low & 0x0F0F0F0Fu) | (top & 0x30303030u);
    }
    __device__ __forceinline__ void decode(int c) {
        const int h = (c >> 2) & 1, quarter = c & 3;
        const float d = f16_at(record);
#pragma unroll
        for (int p = 0; p < 4; p++) {
            q[p][0] = codes(nibbles_02.x, nibbles_13.x, high_bits.x, p);
            q[p][1] = codes(nibbles_02.y, nibbles_13.y, high_bits.y, p);
            scale[p] = d * static_cast<float>(static_cast<int8_t>(record[2 + 8 * h + 2 * p + (quarter >> 1)]));
        }
    }
    template <class Rows>
    __device__ __forceinline__ static Input input(const Rows &x, int64_t row, int c, int, int) {
        const int64_t first = row + (c >> 3) * 256 + 128 * ((c >> 2) & 1) + 8 * (c & 3);
        Input in;
#pragma unroll
        for (int p = 0; p < 4; p++) {
            const int2 v = codes8(x, first + kBlock * p);
            in.codes[p] = v;
            in.offset[p] = 32 * __dp4a(0x01010101, v.x, __dp4a(0x01010101, v.y, 0));
            in.d[p] = scale_of(x, (first + kBlock * p) / kBlock);
        }
        return in;
    }
    __device__ __forceinline__ float dot(const Input &in) const {
        float sum = 0.f;
#pragma unroll
        for (int p = 0; p < 4; p++) {
            const int2 v = in.codes[p];
            const int dot = __dp4a(static_cast<int>(q[p][0]), v.x, __dp4a(static_cast<int>(q[p][1]), v.y, 0));
            sum = fmaf(scale[p] * in.d[p], static_cast<float>(dot - in.offset[p]), sum);
        }
        return sum;
    }
};

// Chunks each lane loads before it multiplies any, at one weight row a warp: the bytes in flight that keep the
// memory busy. With more activation rows a chunk's work is longer and its activation loads take the registers.
template <int ROWS>
struct Steps {
    static constexpr int value = ROWS <= 2 ? 4 : ROWS <= 4 ? 2 : 1;
};

// Weight rows one warp multiplies: from 4 activation rows on, each activation load serves several weight rows, or
// the activations a lane loads (ROWS x 32 bytes a chunk) would outrun what L1 delivers.
template <int ROWS>
struct RowsPerWarp {
    static constexpr int value = ROWS <= 2 ? 1 : ROWS <= 4 ? 2 : 4;
};

// Blocks a multiprocessor should hold, which caps the registers: one-row Q6_K (the output layer of the Q4 files, the
// largest matrix) took 101 registers, two blocks (16 warps) a multiprocessor, each warp one row's latency chain; three
// fit in 80 (ptxas, sm_90; 78-80 without spills since the predicated steps). One Q4 row with the norm after it
// (CAPPED: AFTER kAddNorm or kRopeKv, below) took 64 registers, four blocks, where the product alone takes 48, five;
// capped at five it takes 48 without spills. The others are left to ptxas.
template <int TYPE, int ROWS, bool CAPPED = false>
struct MinBlocks {
    static constexpr int value = TYPE == Q6_K && ROWS == 1 ? 3 : CAPPED && TYPE == Q4 ? 5 : 1;
};

// Global row `row` of the launch: its weight's row, output and row count; false past the last weight's rows. Picked
// with constant indices so that the parameter arrays stay in registers.
template <int TYPE>
__device__ __forceinline__ bool locate(const Products &p, int row, int shift, Row &r, float *&out, int &rows,
                                       int &local) {
    const uint8_t *data = p.data[0];
    const __half *scales = p.scales[0];
    out = p.out[0];
    rows = p.rows[0];
#pragma unroll
    for (int j = 1; j < kMaxWeights; j++) {
        if (j < p.count && row >= rows) {
            row -= rows;
            data = p.data[j];
            scales = p.scales[j];
            out = p.out[j];
            rows = p.rows[j];
        }
    }
    local = row;
    r = row_of<TYPE>(data, reinterpret_cast<const uint8_t *>(scales), row < rows ? row : 0, p.cols, shift);
    return row < rows;
}

// Asks L2 for this warp's share (part of `parts`) of its weight rows' codes before the kernel waits for the one ahead
// of it: no kernel writes weights, so their trip from memory can overlap that kernel's last blocks (overlap.cuh).
template <int TYPE, int R>
__device__ __forceinline__ void prefetch_rows(const Row (&rs)[R], int cols, int part, int parts) {
    const int bytes = TYPE == Q8 ? cols : TYPE == Q6_K ? cols / 4 * 3 : cols / 2;
    const int lines = (bytes + 127) / 128, lane = threadIdx.x % kWarp;
#pragma unroll
    for (int r = 0; r < R; r++) {
        for (int line = lines * part / parts + lane; line < lines * (part + 1) / parts; line += kWarp) {
            prefetch_l2(rs[r].data + 128 * line);
        }
    }
}

// The same for whole rows, codes and scales: rows a warp multiplies later, asked for while it multiplies others
// (swiglu_matvec_kernel's `ahead`). Its scales' first line is asked for by their first byte, so that no address lies
// before them. (Not in the prefetch before the wait: the capped kernels, q, k, v and the norming projections, then
// spilled 24 to 48 bytes; ptxas, sm_90.)
template <int TYPE, int R>
__device__ __forceinline__ void prefetch_whole_rows(const Row (&rs)[R], int cols, int shift) {
    prefetch_rows<TYPE, R>(rs, cols, 0, 1);
    const int blocks = cols / kBlock, supers = cols / 256;
    const int bytes = TYPE == Q8 ? 2 * blocks : TYPE == Q4 ? 4 * (blocks >> shift) : TYPE == Q4_K ? 16 * supers
                                                                                                   : 18 * supers;
#pragma unroll
    for (int r = 0; r < R; r++) {
        const uintptr_t start = reinterpret_cast<uintptr_t>(rs[r].scales);
        const uintptr_t first = start & ~static_cast<uintptr_t>(127);
        const int lines = static_cast<int>((start + bytes - first + 127) / 128);
        for (int line = static_cast<int>(threadIdx.x) % kWarp; line < lines; line += kWarp) {
            prefetch_l2(line == 0 ? rs[r].scales : reinterpret_cast<const uint8_t *>(first + 128 * line));
        }
    }
}

// acc[t][r] += chunks c, c + 32, ... (STEPS of them, those below `end`) of weight rows rs[0..R) times activation row
// t's, t < ROWS. A step past `end` loads chunk end - 1 and adds nothing, so all of a lane's loads leave together.
template <int TYPE, int ROWS, int R, int STEPS, class Rows>
__device__ __forceinline__ void multiply(const Row (&rs)[R], int c, int end, const Rows &x, int n, int cols,
                                         int group, int shift, float (&acc)[ROWS][R]) {
    Chunk<TYPE> w[STEPS][R];
#pragma unroll
    for (int s = 0; s < STEPS; s++) {
#pragma unroll
        for (int r = 0; r < R; r++) w[s][r].load(rs[r], min(c + s * kWarp, end - 1), shift);
    }
#pragma unroll
    for (int s = 0; s < STEPS; s++) {
#pragma unroll
        for (int r = 0; r < R; r++) w[s][r].decode(min(c + s * kWarp, end - 1));
    }
#pragma unroll
    for (int s = 0; s < STEPS; s++) {
        const int chunk = c + s * kWarp;
        if (chunk >= end) break;
#pragma unroll
        for (int t = 0; t < ROWS; t++) {
            const int64_t row = (ROWS <= 2 ? t : min(t, n - 1)) * static_cast<int64_t>(cols);
            const typename Chunk<TYPE>::Input in = Chunk<TYPE>::input(x, row, chunk, group, shift);
#pragma unroll
            for (int r = 0; r < R; r++) acc[t][r] += w[s][r].dot(in);
        }
    }
}

// out_j[t, row] for t < n <= ROWS (n > ROWS / 2 unless ROWS <= 2; rows from n on repeat row n - 1, computed and never
// stored, so that no lane branches on n); TYPE Q8, Q4 (group 32, 64 or 128; shift = log2(group / 32)), Q4_K or
// Q6_K. Each weight row's chunks are split among SPLIT warps, consecutive in the block, each taking RowsPerWarp
// consecutive rows of the launch and a contiguous share of their chunks; the shares meet in shared memory, added in
// warp order (the same inputs give the same bits). Why split: a warp's trips to memory are serial, and a long row
// (Llama 3 8B's down projection: 448 chunks) took one warp four trips while half of the GPU's warp slots stayed empty
// (512 blocks). One loop of predicated steps (multiply's `end`) rather than a second loop for a row's last chunks also
// took the registers of one Q4 row from 94 to 48 (52 split), Q4_K's from 148 to 72. (ptxas for sm_90: about 250 at
// 16 rows, where a cap of 128 for two blocks per multiprocessor spilled 700 bytes a thread.)
// This warp's share `part` of SPLIT of weight rows rs (valid: all of them, else none) times activation rows t < ROWS:
// a contiguous share of each row's chunks, summed over the warp (every lane gets the sums).
template <int TYPE, int ROWS, int R, int SPLIT, class Rows>
__device__ __forceinline__ void warp_share(const Row (&rs)[R], bool valid, int part, const Products &p, const Rows &x,
                                           int n, int shift, float (&sums)[ROWS][R]) {
    const int blocks = p.cols / kBlock;  // chunks of the row, and activation blocks of an activation row
    const int share = (blocks + SPLIT - 1) / SPLIT;
    const int begin = part * share, end = valid ? min(blocks, begin + share) : begin;
#pragma unroll
    for (int t = 0; t < ROWS; t++) {
#pragma unroll
        for (int r = 0; r < R; r++) sums[t][r] = 0.f;
    }
    constexpr int kSteps = R == 1 ? Steps<ROWS>::value : 1;
    for (int c = begin + static_cast<int>(threadIdx.x) % kWarp; c < end; c += kSteps * kWarp) {
        multiply<TYPE, ROWS, R, kSteps>(rs, c, end, x, n, p.cols, p.group, shift, sums);
    }
#pragma unroll
    for (int t = 0; t < ROWS; t++) {
#pragma unroll
        for (int r = 0; r < R; r++) sums[t][r] = warp_sum(sums[t][r]);
    }
}

// What integer_matvec_kernel does with its outputs (AFTER), at one activation row for the last three:
//   kStore:   stores them.
//   kAddNorm: adds each to p.out[0], the residual stream (one weight), and the last block to finish norms the stream:
//             out = rms_norm(x) * weight and, where q.q is set, its int8 form; counters: one device int.
//   kRopeKv:  stores q, k and v (three weights of heads, kv_heads, kv_heads heads of head_dim rows) and the v outputs
//             in the values cache at slots[0] (qkv_rope_kernel, below, rotates q and k).
//   kAdd:     adds each to p.out[0], the residual stream, and leaves the norm to the products that read it
//             (NormedInput, below).
// The counter is zero before a launch and left at zero, so a graph may replay it.
constexpr int kStore = 0, kAddNorm = 1, kRopeKv = 2, kAdd = 3;

struct After {
    const float *weight;  // kAddNorm
    float eps;
    float *out;
    QuantizedOut q;
    int heads;  // kRopeKv
    int head_dim;
    const int32_t *positions;
    const float *inverse_frequencies;
    const int32_t *slots;
    void *keys;
    void *values;
    int kv_type;  // 0 F32, 1 F16
    int *counters;  // kAddNorm
};

template <class KV>
__device__ __forceinline__ void store_cached(void *cache, int64_t at, float v) {
    static_cast<KV *>(cache)[at] = mma_from_float<KV>(v);
}

// One output: stored, or added to the stream (kAddNorm), or stored and, for a v row, cached (kRopeKv).
template <int AFTER>
__device__ __forceinline__ void put(const Products &p, const After &after, float &o, float sum, int row, int local) {
    o = AFTER == kAddNorm || AFTER == kAdd ? o + sum : sum;
    if (AFTER == kRopeKv && row >= p.rows[0] + p.rows[1] && after.slots[0] >= 0) {
        const int64_t at = static_cast<int64_t>(after.slots[0]) * p.rows[2] + local;
        if (after.kv_type == 1) {
            store_cached<__half>(after.values, at, sum);
        } else {
            store_cached<float>(after.values, at, sum);
        }
    }
}

template <int TYPE, int ROWS, int SPLIT, int AFTER>
__global__ void __launch_bounds__(kWarps * kWarp, MinBlocks<TYPE, ROWS, AFTER != kStore>::value)
    integer_matvec_kernel(Products p, QuantizedRows x, int n, int shift, After after) {
    constexpr int R = RowsPerWarp<ROWS>::value;
    const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp, part = warp % SPLIT;
    const int first = (blockIdx.x * (kWarps / SPLIT) + warp / SPLIT) * R;
    Row rs[R];
    float *out[R];
    int rows[R], local[R];
    bool valid[R];
#pragma unroll
    for (int r = 0; r < R; r++) valid[r] = locate<TYPE>(p, first + r, shift, rs[r], out[r], rows[r], local[r]);
    prefetch_rows<TYPE, R>(rs, p.cols, part, SPLIT);
    let_next_grid_start();
    wait_for_previous_grid();
    if (SPLIT == 1 && (AFTER == kStore || AFTER == kAdd) && !valid[0]) {
        return;  // else the warp still meets the others at a barrier below
    }
    float sums[ROWS][R];
    warp_share<TYPE, ROWS, R, SPLIT>(rs, valid[0], part, p, x, n, shift, sums);
    __shared__ float partial[SPLIT > 1 ? kWarps : 1][ROWS][R];
#pragma unroll
    for (int t = 0; t < ROWS; t++) {
#pragma unroll
        for (int r = 0; r < R; r++) {
            if (SPLIT > 1) {
                if (lane == 0) partial[warp][t][r] = sums[t][r];
            } else if (lane == 0 && t < n && valid[r]) {
                put<AFTER>(p, after, out[r][static_cast<int64_t>(t) * rows[r] + local[r]], sums[t][r], first + r,
                            local[r]);
            }
        }
    }
    if (SPLIT > 1) {
        __syncthreads();
        // output (t, r) is lane (t R + r) mod 32's of the row's first warp (static indices: out[], rows[] stay in
        // registers)
#pragma unroll
        for (int t = 0; t < ROWS; t++) {
#pragma unroll
            for (int r = 0; r < R; r++) {
                if (part == 0 && lane == (t * R + r) % kWarp && t < n && valid[r]) {
                    float sum = 0.f;
#pragma unroll
                    for (int j = 0; j < SPLIT; j++) sum += partial[warp + j][t][r];
                    put<AFTER>(p, after, out[r][static_cast<int64_t>(t) * rows[r] + local[r]], sum, first + r,
                               local[r]);
                }
            }
        }
    }
    if (AFTER == kAddNorm && completes(after.counters, static_cast<int>(gridDim.x))) {
        // element by element: the 16-byte way (norm_row) took registers from the product's loop (Q4 spilled 8 bytes
        // at its cap of 48, Q8 went from 72 to 80; ptxas, sm_90) for the one block that norms
        norm_row_tiles<false, false>(p.out[0], nullptr, after.weight, p.rows[0], after.eps, after.out, 0, after.q);
    }
}

// Where a one-row product norms its own input, the residual stream that the product before it added to (kAdd) rather
// than taking that product's norm (kAddNorm): the stream, the norm's weight and eps, and where block 0 writes the
// normed row in F32 (the output the norm would have written). stream null: the input is quantized already.
struct NormedInput {
    const float *stream;
    const float *weight;
    float eps;
    float *out;
};

// The dynamic shared memory norm_input takes for a row of cols values: the codes, then the blocks' scales and sums.
inline size_t normed_input_bytes(int cols) {
    return static_cast<size_t>(cols) + 2 * sizeof(float) * static_cast<size_t>(cols / kBlock);
}

// The block norms the stream's row (all of its threads, as the last block of a kAddNorm product does: the same bits)
// into its dynamic shared memory as int8 blocks; block 0 also writes the F32 row. Why: the kAddNorm product's blocks
// each ended with a fence and an atomic count, and its last block normed the row alone while the GPU idled (sixth GPU
// run, ncu, Llama 3 8B at one row: the down projection 24.6 us a layer with its add and norm, 17.1 storing only).
__device__ __forceinline__ SharedRows norm_input(const NormedInput &normed, int cols) {
    ZSE_DYNAMIC_SHARED(int4, normed_row);  // int4: 16-byte aligned, for the 16-byte code loads
    int8_t *q = reinterpret_cast<int8_t *>(normed_row);
    float *d = reinterpret_cast<float *>(q + cols);
    float *s = d + cols / kBlock;
    norm_row_held(normed.stream, normed.weight, cols, normed.eps, blockIdx.x == 0 ? normed.out : nullptr,
                  QuantizedOut{q, d, s});
    __syncthreads();  // the row complete before any warp multiplies it
    return {q, d, s};
}

// A warp's sums of weight rows rs times activation rows t < ROWS over the whole row: its SPLIT shares one after
// another, added in order as integer_matvec_kernel adds the shares of SPLIT warps, so the bits are the same.
template <int TYPE, int ROWS, int R, int SPLIT, class Rows>
__device__ __forceinline__ void whole_rows(const Row (&rs)[R], const Products &p, const Rows &x, int n,
                                           int shift, float (&sums)[ROWS][R]) {
    if constexpr (SPLIT == 1) {
        warp_share<TYPE, ROWS, R, 1>(rs, true, 0, p, x, n, shift, sums);
    } else {
#pragma unroll
        for (int t = 0; t < ROWS; t++) {
#pragma unroll
            for (int r = 0; r < R; r++) sums[t][r] = 0.f;
        }
        for (int part = 0; part < SPLIT; part++) {
            float share[ROWS][R];
            warp_share<TYPE, ROWS, R, SPLIT>(rs, true, part, p, x, n, shift, share);
#pragma unroll
            for (int t = 0; t < ROWS; t++) {
#pragma unroll
                for (int r = 0; r < R; r++) sums[t][r] += share[t][r];
            }
        }
    }
}

// The feed-forward's gated products up to 8 activation rows: act[t, i] = swiglu(gate[t, i], up[t, i]) in F32 at
// p.out[0] ([n, ff], ff = p.rows[0] = p.rows[1], a multiple of 32) and as int8 blocks for the down projection. A
// block computes one quantization block, 32 outputs: each warp the gate rows of 4 of them, then their up rows, one
// after another (RowsPerWarp at a time), so the block quantizes what it computed itself. Why: blocks of 4 outputs,
// whose last to finish a quantization block was found by a fence and an atomic count at the end of every block, held
// their multiprocessor's slots through those round trips with no load in flight (fifth GPU run, ncu, Llama 3 8B at
// one row: 32.9 us a layer, 2232 GB/s; the plain gate and up products of the third run, whose blocks end with their
// stores, 23.9 us at 3049 GB/s). Each gate and up sum is the bits integer_matvec_kernel gives at SPLIT, and swiglu()
// the element-wise kernel's, so fusing changes no bit. NORMED (one row): the input is normed.stream, normed by each
// block first (norm_input), not x. ahead: each warp asks L2 for the rows it multiplies `ahead` row groups later (its
// groups: R rows of gate, 4 / R of them, then of up) while it multiplies these, so that its next rows are on their way
// from memory while it works (0: only the first gate and up rows, before the wait for the kernel ahead). Why: a warp
// takes its 8 rows (one activation row) one after another, with one trip to memory each, and the 448 blocks of Llama
// 3 8B's shape fill about half of an H200's warp slots: 27.7 us a layer at 2751 GB/s (sixth GPU run, ncu).
template <int TYPE, int ROWS, int SPLIT, bool NORMED>
__global__ void __launch_bounds__(kWarps * kWarp, MinBlocks<TYPE, ROWS>::value)
    swiglu_matvec_kernel(Products p, QuantizedRows x, int n, int shift, QuantizedOut act, NormedInput normed,
                         int ahead) {
    constexpr int R = RowsPerWarp<ROWS>::value, kOutputs = kQuantBlock / kWarps;  // outputs a warp
    constexpr int kGroups = kOutputs / R;  // row groups a warp takes of each of gate and up
    static_assert(kOutputs % R == 0 && ROWS <= kWarps, "whole row groups a warp, a warp a token to quantize");
    const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp, ff = p.rows[0];
    const int first = static_cast<int>(blockIdx.x) * kQuantBlock + warp * kOutputs;
    // Row group g of the warp's 2 kGroups (the constant indices keep the parameter arrays out of local memory).
    const auto group_rows = [&](int g, Row (&rs)[R]) {
        const bool gate = g < kGroups;
        const uint8_t *data = gate ? p.data[0] : p.data[1];
        const uint8_t *scales = reinterpret_cast<const uint8_t *>(gate ? p.scales[0] : p.scales[1]);
#pragma unroll
        for (int r = 0; r < R; r++) rs[r] = row_of<TYPE>(data, scales, first + (g % kGroups) * R + r, p.cols, shift);
    };
    // L2 may hold the first gate and up rows of every warp while the kernel ahead finishes (15 MB at Llama 3 8B's
    // shape, less than L2; all of them would be more and evict each other)
#pragma unroll
    for (int half = 0; half < 2; half++) {
        const Row first_row[1] = {
            row_of<TYPE>(p.data[half], reinterpret_cast<const uint8_t *>(p.scales[half]), first, p.cols, shift)};
        prefetch_rows<TYPE, 1>(first_row, p.cols, 0, 1);
    }
    let_next_grid_start();
    wait_for_previous_grid();
    __shared__ float sums_of[2][ROWS][kQuantBlock];  // [gate | up][token][output of the block]
    const auto gate_and_up = [&](const auto &in) {
#pragma unroll
        for (int half = 0; half < 2; half++) {
            for (int k = 0; k < kOutputs; k += R) {
                const int g = half * kGroups + k / R;
                if (ahead > 0 && g + ahead < 2 * kGroups) {
                    Row later[R];
                    group_rows(g + ahead, later);
                    prefetch_whole_rows<TYPE, R>(later, p.cols, shift);
                }
                Row rs[R];
                group_rows(g, rs);
                float sums[ROWS][R];
                whole_rows<TYPE, ROWS, R, SPLIT>(rs, p, in, n, shift, sums);
                if (lane == 0) {
#pragma unroll
                    for (int t = 0; t < ROWS; t++) {
#pragma unroll
                        for (int r = 0; r < R; r++) sums_of[half][t][warp * kOutputs + k + r] = sums[t][r];
                    }
                }
            }
        }
    };
    if constexpr (NORMED) {
        gate_and_up(norm_input(normed, p.cols));
    } else {
        gate_and_up(x);
    }
    __syncthreads();
    if (warp < n) {  // warp t quantizes token t's 32 outputs, a lane each
        const int64_t at = static_cast<int64_t>(warp) * ff + static_cast<int64_t>(blockIdx.x) * kQuantBlock + lane;
        const float v = swiglu(sums_of[0][warp][lane], sums_of[1][warp][lane]);
        p.out[0][at] = v;
        quantize_block(v, at / kQuantBlock, act);
    }
}

// The q, k and v products of one activation row with RoPE and the KV write (three weights of heads, kv_heads and
// kv_heads heads of head_dim rows, one launch): a block takes 8 rows of one head, 4 rows j and the 4 rows j + head_dim
// / 2 they rotate with, a warp a whole row (its SPLIT shares one after another, as whole_rows adds them), stores them
// and caches v's (put<kRopeKv>), then rotates its 4 pairs of a q or k head by positions[0]: q in place, k into the keys
// cache (k itself is left unrotated). Bit for bit the products then rope_store_kv. Why pairs: blocks of 8 consecutive
// rows, whose last to complete a head rotated it, found by a fence and an atomic count at the end of every block,
// took 12.6 us a layer of Llama 3 8B in the fifth GPU run (ncu); the plain products and rope_store_kv, 11.5 in the
// third. NORMED: the input is normed.stream, normed by each block first (norm_input), not x.
// Blocks of qkv_rope_kernel a multiprocessor should hold: Llama 3 8B's q, k and v rows make 768 blocks, which five
// a multiprocessor (48 registers) ran in two rounds on 132 multiprocessors, the second of 108 blocks; six (40
// registers, no spills: ptxas, sm_90) take them in one.
template <int TYPE>
struct QkvMinBlocks {
    static constexpr int value = TYPE == Q4 ? 6 : MinBlocks<TYPE, 1, true>::value;
};

template <int TYPE, int SPLIT, bool NORMED>
__global__ void __launch_bounds__(kWarps * kWarp, QkvMinBlocks<TYPE>::value)
    qkv_rope_kernel(Products p, QuantizedRows x, int shift, After after, NormedInput normed) {
    constexpr int kPairs = kWarps / 2;
    const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp, half = after.head_dim / 2;
    const int blocks_a_head = after.head_dim / kWarps;
    const int head = static_cast<int>(blockIdx.x) / blocks_a_head;
    const int first_pair = static_cast<int>(blockIdx.x) % blocks_a_head * kPairs;
    const int row = head * after.head_dim + (warp < kPairs ? 0 : half) + first_pair + warp % kPairs;
    Row rs[1];
    float *out;
    int rows, local;
    locate<TYPE>(p, row, shift, rs[0], out, rows, local);  // every row exists: the grid covers whole heads
    prefetch_rows<TYPE, 1>(rs, p.cols, 0, 1);
    let_next_grid_start();
    wait_for_previous_grid();
    float sums[1][1];
    if constexpr (NORMED) {
        whole_rows<TYPE, 1, 1, SPLIT>(rs, p, norm_input(normed, p.cols), 1, shift, sums);
    } else {
        whole_rows<TYPE, 1, 1, SPLIT>(rs, p, x, 1, shift, sums);
    }
    __shared__ float value[kWarps];
    if (lane == 0) {
        put<kRopeKv>(p, after, out[local], sums[0][0], row, local);
        value[warp] = sums[0][0];
    }
    __syncthreads();
    const bool query = head < after.heads;
    if (head >= after.heads + p.rows[1] / after.head_dim || threadIdx.x >= kPairs) return;  // v, or no pair
    const int j = first_pair + static_cast<int>(threadIdx.x);
    float a, b;
    rotate(after.positions[0], after.inverse_frequencies[j], value[threadIdx.x], value[kPairs + threadIdx.x], a, b);
    if (query) {
        float *base = p.out[0] + static_cast<int64_t>(head) * after.head_dim;
        base[j] = a;
        base[j + half] = b;
        return;
    }
    const int slot = after.slots[0];
    if (slot < 0) return;
    const int64_t cached = static_cast<int64_t>(slot) * p.rows[1] +
                           static_cast<int64_t>(head - after.heads) * after.head_dim;
    if (after.kv_type == 1) {
        store_cached<__half>(after.keys, cached + j, a);
        store_cached<__half>(after.keys, cached + j + half, b);
    } else {
        store_cached<float>(after.keys, cached + j, a);
        store_cached<float>(after.keys, cached + j + half, b);
    }
}

// From 9 activation rows on, the products run on int8 tensor cores (mma_s8_16x8x32): 32 weight codes of a row and 32
// activation codes of a token make one k-step, a block of 32 on both sides, so the weight's scales and the activation
// block's d and s apply to the step's integer sums exactly as in the DP4A kernel (Q6_K, staged only, in two halves of
// 16 with their own scales: q6_block_dot).
// TensorCodes<TYPE>::load gives a lane's A-fragment words of one weight row for block b (elements 4t .. 4t + 3 and
// 16 + 4t .. of the block, as 4-bit or 8-bit codes in bytes) with the block's scale d and min term m:
//   Q8: sum += d * d_x * dot;   Q4, Q4_K: sum += d * d_x * dot + m * s_x.
template <int TYPE>
struct TensorCodes;

// The scale d and min term m of block b of a weight row whose scales start at `scales` (Q8: F16 d per block; Q4: F16
// (d, m) per group of 2^shift blocks; Q4_K: 16-byte records per super-block of 8), in global or shared memory.
template <int TYPE>
__device__ __forceinline__ void block_scale(const uint8_t *scales, int b, int shift, float &d, float &m) {
    if constexpr (TYPE == Q8) {
        d = half_bits_to_float(reinterpret_cast<const uint16_t *>(scales)[b]);
        m = 0.f;
    } else if constexpr (TYPE == Q4) {
        const uint32_t dm = reinterpret_cast<const uint32_t *>(scales)[b >> shift];
        d = half_bits_to_float(dm & 0xffffu);
        m = half_bits_to_float(dm >> 16);
    } else if constexpr (TYPE == Q4_K) {
        const uint8_t *record = scales + 16 * (b >> 3);
        int scale, min;
        kquant_scale_min(record + 4, b & 7, scale, min);
        d = f16_at(record) * static_cast<float>(scale);
        m = -f16_at(record + 2) * static_cast<float>(min);
    } else {  // Q6_K, staged only: `scales` is the stage's record (staged_block reads its 16-element scales)
        d = f16_at(scales);
        m = 0.f;
    }
}

// Whether a block's sum takes a min term (m s_x).
template <int TYPE>
constexpr bool kHasMin = TYPE == Q4 || TYPE == Q4_K;

template <>
struct TensorCodes<Q8> {
    __device__ __forceinline__ static void load(const Row &r, int b, int t, int, uint32_t &low, uint32_t &high,
                                                float &d, float &m) {
        const uint32_t *words = reinterpret_cast<const uint32_t *>(r.data) + 8 * b;
        low = __ldg(words + t);
        high = __ldg(words + 4 + t);
        block_scale<Q8>(r.scales, b, 0, d, m);
    }
};

// Q4: element e of a group lies in byte e mod g/2, in the low nibble below g/2 and the high one from there; four
// consecutive elements are one word's nibbles.
template <>
struct TensorCodes<Q4> {
    __device__ __forceinline__ static uint32_t nibbles(const uint8_t *group, int e, int half) {
        const uint32_t word = __ldg(reinterpret_cast<const uint32_t *>(group + e % half));
        return (word >> (e < half ? 0 : 4)) & 0x0F0F0F0Fu;
    }
    __device__ __forceinline__ static void load(const Row &r, int b, int t, int shift, uint32_t &low, uint32_t &high,
                                                float &d, float &m) {
        const int half = 16 << shift, group = b >> shift;
        const int first = ((b & ((1 << shift) - 1)) << 5) + 4 * t;
        const uint8_t *codes = r.data + static_cast<int64_t>(group) * half;
        low = nibbles(codes, first, half);
        high = nibbles(codes, first + 16, half);
        block_scale<Q4>(r.scales, b, shift, d, m);
    }
};

// Q4_K: sub-block j of a super-block is the low (j even) or high nibbles of its 32 bytes from 32 (j / 2).
template <>
struct TensorCodes<Q4_K> {
    __device__ __forceinline__ static void load(const Row &r, int b, int t, int, uint32_t &low, uint32_t &high,
                                                float &d, float &m) {
        const int j = b & 7, shift = 4 * (j & 1);
        const uint32_t *words = reinterpret_cast<const uint32_t *>(r.data + 128 * (b >> 3) + 32 * (j >> 1));
        low = (__ldg(words + t) >> shift) & 0x0F0F0F0Fu;
        high = (__ldg(words + 4 + t) >> shift) & 0x0F0F0F0Fu;
        block_scale<Q4_K>(r.scales, b, 0, d, m);
    }
};

constexpr int kMmaWarps = 8;  // warps of a tensor-core block; each takes every 8th run of MmaUnroll blocks of 32 columns

// Blocks of 32 columns a warp loads before it multiplies: 2, and 4 for 16-row blocks at 16 tokens (mma_rows 16), so
// that a warp keeps as many bytes in flight as one of 32 rows (ptxas, sm_90, 80 registers: Q4 and Q8 no spills, Q4_K
// 68 bytes; at 32 and 64 tokens 4 spilled 136-360 bytes).
template <int TOKENS, int ROW_TILES>
struct MmaUnroll {
    static constexpr int value = ROW_TILES == 1 && TOKENS <= 16 ? 4 : 2;
};

// 16-row tiles of a block: 2 (32 weight rows) up to 32 tokens; 1 at 64, whose accumulators would spill with 2 (ptxas
// for sm_90, 128 registers for two blocks a multiprocessor); 1 at any count where asked (mma_rows 16: twice the
// blocks, three a multiprocessor up to 32 tokens, at 80 registers: at 16 tokens no spills with MmaUnroll 2, Q4_K 68
// bytes with 4; 44-60 bytes at 32; at four a multiprocessor, 64 registers, 16 tokens spilled 24-44 bytes).
template <int TOKENS>
struct MmaRowTiles {
    static constexpr int value = TOKENS <= 32 ? 2 : 1;
};

template <int TOKENS, int ROW_TILES>
struct MmaMinBlocks {
    static constexpr int value = ROW_TILES == 1 && TOKENS <= 32 ? 3 : 2;
};

// The epilogue of integer_mma_kernel: the eight warps' sums of each output meet in shared memory, one or two 8-token
// tiles at a time, and each thread adds one output's eight in warp order (no atomics: the same inputs give the same
// bits).
template <int TYPE, int TILES, int ROW_TILES>
__device__ __forceinline__ void add_partial_sums(const Products &p, int shift, int n, int row0,
                                                 const float (&acc)[ROW_TILES][TILES][4]) {
    constexpr int kRows = 16 * ROW_TILES;
    constexpr int kTilesPerRound = kMmaWarps * kWarp / (kRows * 8);  // tiles whose sums one pass adds
    static_assert(kTilesPerRound * kRows * 8 == kMmaWarps * kWarp && TILES % kTilesPerRound == 0,
                  "one output a thread in each pass");
    const int warp = threadIdx.x / kWarp, lane = threadIdx.x % kWarp, g = lane / 4, t = lane % 4;
    __shared__ float partial[kMmaWarps][kTilesPerRound][kRows][8];
    const int out_tile = threadIdx.x / (kRows * 8), out_row = threadIdx.x / 8 % kRows, out_token = threadIdx.x % 8;
    Row unused;
    float *out;
    int rows, local;
    const bool valid = locate<TYPE>(p, row0 + out_row, shift, unused, out, rows, local);
#pragma unroll
    for (int j0 = 0; j0 < TILES; j0 += kTilesPerRound) {
#pragma unroll
        for (int i = 0; i < kTilesPerRound; i++) {
#pragma unroll
            for (int r = 0; r < ROW_TILES; r++) {
#pragma unroll
                for (int e = 0; e < 4; e++) {
                    partial[warp][i][16 * r + g + 8 * (e / 2)][2 * t + e % 2] = acc[r][j0 + i][e];
                }
            }
        }
        __syncthreads();
        float sum = 0.f;
#pragma unroll
        for (int w = 0; w < kMmaWarps; w++) sum += partial[w][out_tile][out_row][out_token];
        const int token = 8 * (j0 + out_tile) + out_token;
        if (valid && token < n) out[static_cast<int64_t>(token) * rows + local] = sum;
        __syncthreads();
    }
}

// out_j[t, row] for the block's 16 or 32 weight rows and tokens 0 .. TOKENS - 1 (< n <= TOKENS; from n on a fragment
// repeats token n - 1, computed and never stored). The warps split the columns (a batch's weight rows alone
// would give too few warps); their partial sums meet in shared memory (add_partial_sums).
template <int TYPE, int TOKENS, int ROW_TILES>
__global__ void __launch_bounds__(kMmaWarps * kWarp, MmaMinBlocks<TOKENS, ROW_TILES>::value)
    integer_mma_kernel(Products p, QuantizedRows x, int n, int shift) {
    let_next_grid_start();
    wait_for_previous_grid();
    constexpr int kTiles = TOKENS / 8, kRowTiles = ROW_TILES;
    const int warp = threadIdx.x / kWarp, lane = threadIdx.x % kWarp, g = lane / 4, t = lane % 4;
    const int row0 = blockIdx.x * 16 * kRowTiles;
    const int blocks = p.cols / kBlock;
    Row rs[kRowTiles][2];  // rows g and g + 8 of each tile (past the last: row 0 of the last weight, not stored)
    {
        float *out;
        int rows, local;
#pragma unroll
        for (int m = 0; m < kRowTiles; m++) {
#pragma unroll
            for (int h = 0; h < 2; h++) locate<TYPE>(p, row0 + 16 * m + g + 8 * h, shift, rs[m][h], out, rows, local);
        }
    }
    // Per tile, where fragment b's token (g) starts and the block scales of the output columns' tokens (2t, 2t + 1):
    // 32-bit offsets, as n * cols < 2^31 (checked at the entry).
    int codes_at[kTiles], scales_at[kTiles][2];
#pragma unroll
    for (int j = 0; j < kTiles; j++) {
        codes_at[j] = min(8 * j + g, n - 1) * p.cols + 4 * t;
#pragma unroll
        for (int c = 0; c < 2; c++) scales_at[j][c] = min(8 * j + 2 * t + c, n - 1) * blocks;
    }
    float acc[kRowTiles][kTiles][4] = {};
    constexpr int kMmaUnroll = MmaUnroll<TOKENS, ROW_TILES>::value;
    for (int first = warp * kMmaUnroll; first < blocks; first += kMmaWarps * kMmaUnroll) {
        uint32_t a[kMmaUnroll][kRowTiles][4];
        float d[kMmaUnroll][kRowTiles][2], m[kMmaUnroll][kRowTiles][2];
#pragma unroll
        for (int u = 0; u < kMmaUnroll; u++) {
            const int b = min(first + u, blocks - 1);  // a block past the end is loaded and not multiplied
#pragma unroll
            for (int r = 0; r < kRowTiles; r++) {
#pragma unroll
                for (int h = 0; h < 2; h++) {
                    TensorCodes<TYPE>::load(rs[r][h], b, t, shift, a[u][r][h], a[u][r][2 + h], d[u][r][h], m[u][r][h]);
                }
            }
        }
#pragma unroll
        for (int u = 0; u < kMmaUnroll; u++) {
            const int b = first + u;
            if (b >= blocks) break;  // the same for the whole warp
#pragma unroll
            for (int j = 0; j < kTiles; j++) {
                const int8_t *q = x.q + codes_at[j] + kBlock * b;
                const uint32_t frag[2] = {__ldg(reinterpret_cast<const uint32_t *>(q)),
                                          __ldg(reinterpret_cast<const uint32_t *>(q + 16))};
                const float dx[2] = {__ldg(x.d + scales_at[j][0] + b), __ldg(x.d + scales_at[j][1] + b)};
                const float sx[2] = {__ldg(x.s + scales_at[j][0] + b), __ldg(x.s + scales_at[j][1] + b)};
#pragma unroll
                for (int r = 0; r < kRowTiles; r++) {
                    int dot[4] = {0, 0, 0, 0};
                    mma_s8_16x8x32(a[u][r], frag, dot);
#pragma unroll
                    for (int e = 0; e < 4; e++) {
                        const float scaled = d[u][r][e / 2] * dx[e % 2] * static_cast<float>(dot[e]);
                        acc[r][j][e] += TYPE == Q8 ? scaled : fmaf(m[u][r][e / 2], sx[e % 2], scaled);
                    }
                }
            }
        }
    }
    add_partial_sums<TYPE, kTiles, kRowTiles>(p, shift, n, row0, acc);
}

template <int TYPE, int TOKENS, int ROW_TILES>
void launch_mma_tiles(const Products &p, const QuantizedRows &x, int n, int shift, int64_t total_rows,
                      cudaStream_t stream) {
    constexpr int rows_per_block = 16 * ROW_TILES;
    const unsigned grid = static_cast<unsigned>((total_rows + rows_per_block - 1) / rows_per_block);
    const auto kernel = integer_mma_kernel<TYPE, TOKENS, ROW_TILES>;
    ZSE_LAUNCH_OVERLAPPING(kernel, grid, kMmaWarps * kWarp, 0, stream)(p, x, n, shift);
}

// ---- 9 tokens and more from shared memory: the staged tensor-core products ----
// integer_mma_kernel's lanes load their fragments straight from memory, 4 bytes from each of 8 weight rows at once, so
// that each load touches 8 cache lines: the fourth GPU run measured its 16-token products at under a third of one
// token's bandwidth. Here a block of 64 weight rows copies each stage of 256 columns (its rows' codes and scales, the
// tokens' codes, scales and sums) to shared memory with 16-byte asynchronous copies, kStages - 1 stages ahead of its
// warps, which take their fragments from there with ldmatrix. Where the rows alone give too few blocks, blocks split
// the columns too (blockIdx.y of gridDim.y): each writes its partial sums to a workspace, and the block that completes
// a row block's splits adds them in split order (the same inputs give the same bits).
constexpr int kStagedRows = ZSE_CUDA_STAGED_ROWS;  // weight rows a block: 4 tiles of 16, each taken by 2 warps
constexpr int kStageCols = 256;                     // columns a stage: a Q4_K super-block, 1 to 8 Q4 groups
constexpr int kStageBlocks = kStageCols / kBlock;
constexpr int kStages = 3;
constexpr int kMaxSplits = 8;
constexpr int kRowPad = 16;  // bytes after each staged row: ldmatrix's 8 rows then lie in 8 different bank groups
constexpr int kQ6StagedSupers = 8;  // Q6_K rows stage in multiples of this many super-blocks (StageLayout::skew)

// One stage of a block in shared memory, at byte offsets: the weight rows' codes (padded) and scales (each row's in
// the file's layout: Q8 8 F16 d, Q4 (d, m) per group, Q4_K and Q6_K the super-block's record), then the tokens' codes
// (padded), block scales d and sums s ([token][8] floats).
template <int TYPE, int TOKENS>
struct StageLayout {
    static constexpr int kCodes = TYPE == Q8 ? kStageCols : TYPE == Q6_K ? kStageCols / 4 * 3 : kStageCols / 2;
    static constexpr int kStride = kCodes + kRowPad;
    static constexpr int kTokenStride = kStageCols + kRowPad;
    int scale_bytes;  // a weight row's scale bytes: 16, or Q4's 32, 16 or 8 (4 a group), or Q6_K's 32 (below)
    int scales, x_codes, x_d, x_s, bytes;

    // Q6_K's 18-byte records lie at any even offset: a stage copies the 16-byte-aligned 32 bytes around its record,
    // which stay inside the row's scales where a row is a multiple of 8 super-blocks (kQ6StagedSupers: 8 records,
    // 144 bytes, end on a 16-byte boundary). scales_from: where stage s's copy starts in a row's scales; skew: where
    // its record starts in the copy.
    __host__ __device__ int scales_from(int s) const { return TYPE == Q6_K ? s * 18 / 16 * 16 : s * scale_bytes; }
    __host__ __device__ static int skew(int s) { return TYPE == Q6_K ? s * 18 % 16 : 0; }

    __host__ __device__ explicit StageLayout(int shift) {
        scale_bytes = TYPE == Q4 ? 32 >> shift : TYPE == Q6_K ? 32 : 16;
        scales = kStagedRows * kStride;
        x_codes = scales + kStagedRows * scale_bytes;
        x_d = x_codes + TOKENS * kTokenStride;
        x_s = x_d + TOKENS * kStageBlocks * 4;
        bytes = x_s + TOKENS * kStageBlocks * 4;
    }
};

// What a thread copies each stage: fixed rows, so their addresses are found once (a stage on from stage 0's).
template <int TYPE, int TOKENS>
struct StageCopies {
    using Layout = StageLayout<TYPE, TOKENS>;
    static constexpr int kCodeChunks = kStagedRows * Layout::kCodes / 16 / (kMmaWarps * kWarp);  // a thread's
    static constexpr int kTokenChunks = TOKENS * kStageCols / 16 / (kMmaWarps * kWarp);
    const uint8_t *codes[kCodeChunks];
    int code_to[kCodeChunks];
    const uint8_t *scales;  // null: this thread copies no scales
    int scale_to;
    const int8_t *x[kTokenChunks];
    int x_to[kTokenChunks];
    const float *xds;  // null: this thread copies no activation scales or sums
    int xds_to;

    __device__ __forceinline__ StageCopies(const Products &p, const QuantizedRows &in, int n, int shift, int row0,
                                           const Layout &l) {
        const int tid = threadIdx.x, chunks_a_row = Layout::kCodes / 16;
        float *out;
        int rows, local;
        Row r;
#pragma unroll
        for (int i = 0; i < kCodeChunks; i++) {
            const int c = tid + i * kMmaWarps * kWarp, row = c / chunks_a_row, part = c % chunks_a_row;
            locate<TYPE>(p, row0 + row, shift, r, out, rows, local);  // past the last row: row 0, never stored
            codes[i] = r.data + 16 * part;
            code_to[i] = row * Layout::kStride + 16 * part;
        }
        const int scale_chunk = l.scale_bytes < 16 ? l.scale_bytes : 16, scale_chunks = l.scale_bytes / scale_chunk;
        scales = nullptr;
        if (tid < kStagedRows * scale_chunks) {
            const int row = tid / scale_chunks, part = tid % scale_chunks;
            locate<TYPE>(p, row0 + row, shift, r, out, rows, local);
            scales = r.scales + scale_chunk * part;
            scale_to = l.scales + row * l.scale_bytes + scale_chunk * part;
        }
        const int blocks = p.cols / kBlock;
#pragma unroll
        for (int i = 0; i < kTokenChunks; i++) {
            const int c = tid + i * kMmaWarps * kWarp, token = c / (kStageCols / 16), part = c % (kStageCols / 16);
            x[i] = in.q + static_cast<int64_t>(min(token, n - 1)) * p.cols + 16 * part;  // past n: token n - 1 again
            x_to[i] = l.x_codes + token * Layout::kTokenStride + 16 * part;
        }
        xds = nullptr;
        if (tid < 4 * TOKENS) {  // [d | s][token][two halves of 4 floats]
            const int sums = tid / (2 * TOKENS), token = tid / 2 % TOKENS, part = tid % 2;
            xds = (sums ? in.s : in.d) + static_cast<int64_t>(min(token, n - 1)) * blocks + 4 * part;
            xds_to = (sums ? l.x_s : l.x_d) + (token * kStageBlocks + 4 * part) * 4;
        }
    }

    // Starts the copies of stage s into `stage`: its weights', then its tokens'.
    __device__ __forceinline__ void start(uint8_t *stage, int s, const Layout &l) const {
        start_weights(stage, s, l);
        start_tokens(stage, s);
    }

    // The weights are never written by a kernel: these copies may start before the kernel ahead has finished.
    __device__ __forceinline__ void start_weights(uint8_t *stage, int s, const Layout &l) const {
#pragma unroll
        for (int i = 0; i < kCodeChunks; i++) {
            copy_async<16>(stage + code_to[i], codes[i] + static_cast<int64_t>(s) * Layout::kCodes);
        }
        if (scales != nullptr) {
            const uint8_t *from = scales + l.scales_from(s);
            if (l.scale_bytes >= 16) {
                copy_async<16>(stage + scale_to, from);
            } else if (l.scale_bytes == 8) {
                copy_async<8>(stage + scale_to, from);
            } else {
                copy_async<4>(stage + scale_to, from);
            }
        }
    }

    __device__ __forceinline__ void start_tokens(uint8_t *stage, int s) const {
#pragma unroll
        for (int i = 0; i < kTokenChunks; i++) copy_async<16>(stage + x_to[i], x[i] + s * kStageCols);
        if (xds != nullptr) copy_async<16>(stage + xds_to, xds + s * kStageBlocks);
    }
};

// Q6_K's integer sum of a block: its two 16-element halves on the tensor cores apart (mma_s8_16x8x16), each times
// its row's scale for that half (halves[row g | g + 8][first | second]); |sum| < 2^24, so exact as a float too.
__device__ __forceinline__ void q6_block_dot(const uint32_t (&a)[4], const uint32_t (&frag)[2],
                                             const int (&halves)[2][2], int (&dot)[4]) {
    int first[4] = {0, 0, 0, 0}, second[4] = {0, 0, 0, 0};
    mma_s8_16x8x16({a[0], a[1]}, frag[0], first);
    mma_s8_16x8x16({a[2], a[3]}, frag[1], second);
#pragma unroll
    for (int e = 0; e < 4; e++) dot[e] = halves[e / 2][0] * first[e] + halves[e / 2][1] * second[e];
}

// acc += weight block b's 16 x 32 fragment a (rows g, g + 8 of the warp's tile) times every token tile's, from the
// stage in shared memory (its records `skew` bytes into their copies: StageLayout::skew); x_row: this lane's ldmatrix
// row of the tokens' codes.
template <int TYPE, int TOKENS>
__device__ __forceinline__ void staged_block(const uint8_t *stage, const StageLayout<TYPE, TOKENS> &l, int skew,
                                             int tile, int b, const uint32_t (&a)[4], int shift, const uint8_t *x_row,
                                             float (&acc)[TOKENS / 8][4]) {
    using Layout = StageLayout<TYPE, TOKENS>;
    const int lane = threadIdx.x % kWarp, g = lane / 4, t = lane % 4;
    float d[2], m[2];
    [[maybe_unused]] int halves[2][2];  // Q6_K: rows g and g + 8's scales of the block's two halves
#pragma unroll
    for (int h = 0; h < 2; h++) {
        const uint8_t *record = stage + l.scales + skew + (16 * tile + g + 8 * h) * l.scale_bytes;
        block_scale<TYPE>(record, b, shift, d[h], m[h]);
        if constexpr (TYPE == Q6_K) {
#pragma unroll
            for (int k = 0; k < 2; k++) halves[h][k] = static_cast<int8_t>(record[2 + 2 * b + k]);
        }
    }
    const float *xd = reinterpret_cast<const float *>(stage + l.x_d);
    const float *xs = reinterpret_cast<const float *>(stage + l.x_s);
#pragma unroll
    for (int j = 0; j < TOKENS / 8; j += 2) {
        uint32_t frags[4];  // tiles j and j + 1: codes 0-15 and 16-31 of each
        load_matrices(x_row + 8 * j * Layout::kTokenStride + kBlock * b, frags);
#pragma unroll
        for (int k = 0; k < 2; k++) {
            const uint32_t frag[2] = {frags[2 * k], frags[2 * k + 1]};
            int dot[4] = {0, 0, 0, 0};
            if constexpr (TYPE == Q6_K) {
                q6_block_dot(a, frag, halves, dot);
            } else {
                mma_s8_16x8x32(a, frag, dot);
            }
            const int token = 8 * (j + k) + 2 * t;
#pragma unroll
            for (int e = 0; e < 4; e++) {
                const int at = (token + e % 2) * kStageBlocks + b;
                const float scaled = d[e / 2] * xd[at] * static_cast<float>(dot[e]);
                acc[j + k][e] += kHasMin<TYPE> ? fmaf(m[e / 2], xs[at], scaled) : scaled;
            }
        }
    }
}

// Q6_K's codes q - 32 as int8 (q in 0..63: bit 5 clear gives the bytes 111 in bits 7-5), 4 a word.
__device__ __forceinline__ uint32_t q6_centered(uint32_t codes) {
    return (codes & 0x1F1F1F1Fu) | ((~codes & 0x20202020u) * 7u);
}

// The warp's share of a stage: Q8 4 blocks of 32 bytes; the 4-bit types 2 units of 32 bytes, 2 blocks each (Q4 with
// groups of 32: the unit's two 16-byte halves are two blocks, low nibbles the first 16 elements and high the next 16;
// Q4_K and Q4's larger groups: its low nibbles are one block, its high nibbles a later one); Q6_K half of the
// super-block, parts p = 0..3 of 32 elements (Chunk<Q6_K>): low nibbles of parts 0 and 2 at 64 half, of 1 and 3 at
// 64 half + 32, two high bits each at 128 + 32 half.
template <int TYPE, int TOKENS>
__device__ __forceinline__ void staged_share(const uint8_t *stage, const StageLayout<TYPE, TOKENS> &l, int skew,
                                             int tile, int half, int shift, const uint8_t *w_row,
                                             const uint8_t *x_row, float (&acc)[TOKENS / 8][4]) {
    if constexpr (TYPE == Q6_K) {
        uint32_t low02[4], low13[4], high[4];
        load_matrices(w_row + 64 * half, low02);
        load_matrices(w_row + 64 * half + 32, low13);
        load_matrices(w_row + 128 + 32 * half, high);
        [[maybe_unused]] constexpr int kUnroll = TOKENS < 64 ? 4 : 1;  // as below
#pragma unroll kUnroll
        for (int p = 0; p < 4; p++) {
            uint32_t a[4];
#pragma unroll
            for (int e = 0; e < 4; e++) a[e] = q6_centered(Chunk<Q6_K>::codes(low02[e], low13[e], high[e], p));
            staged_block<TYPE, TOKENS>(stage, l, skew, tile, 4 * half + p, a, shift, x_row, acc);
        }
        return;
    }
    constexpr int kUnits = TYPE == Q8 ? 4 : 2;
    // 64 tokens' accumulators leave no registers for two units at once
    [[maybe_unused]] constexpr int kUnroll = TOKENS < 64 ? kUnits : 1;
#pragma unroll kUnroll
    for (int i = 0; i < kUnits; i++) {
        const int unit = kUnits * half + i;
        uint32_t r[4];  // rows 0-7 and 8-15 of the unit's first 16 bytes, then of its last 16
        load_matrices(w_row + 32 * unit, r);
        if constexpr (TYPE == Q8) {
            staged_block<TYPE, TOKENS>(stage, l, skew, tile, unit, r, shift, x_row, acc);
        } else {
            uint32_t lo[4], hi[4];
#pragma unroll
            for (int e = 0; e < 4; e++) {
                lo[e] = r[e] & 0x0F0F0F0Fu;
                hi[e] = (r[e] >> 4) & 0x0F0F0F0Fu;
            }
            if (TYPE == Q4 && shift == 0) {
                const uint32_t first[4] = {lo[0], lo[1], hi[0], hi[1]}, second[4] = {lo[2], lo[3], hi[2], hi[3]};
                staged_block<TYPE, TOKENS>(stage, l, skew, tile, 2 * unit, first, shift, x_row, acc);
                staged_block<TYPE, TOKENS>(stage, l, skew, tile, 2 * unit + 1, second, shift, x_row, acc);
            } else {
                // Q4_K: sub-blocks 2 unit (low) and 2 unit + 1; Q4: a group of 2^shift blocks is 16 << shift bytes,
                // its units' low nibbles the first half of its blocks, their high nibbles the second half
                const int per_group = TYPE == Q4 ? (1 << shift) >> 1 : 1;
                const int low = TYPE == Q4 ? (unit / per_group << shift) + unit % per_group : 2 * unit;
                staged_block<TYPE, TOKENS>(stage, l, skew, tile, low, lo, shift, x_row, acc);
                staged_block<TYPE, TOKENS>(stage, l, skew, tile, low + per_group, hi, shift, x_row, acc);
            }
        }
    }
}

// out_j[t, row] for the block's 64 weight rows and its TOKENS tokens, over stages [first, end) of the columns, where
// end - first is this split's share of cols / 256. Grid: token tiles x row blocks x splits; a prompt's tokens (more
// than TOKENS) come in tiles of TOKENS, the fastest of the grid's indices, so that the blocks reading the same weight
// rows run side by side and their rows come from memory once, from L2 for the other tiles (splits 1 there). Block
// indices rather than values kept in registers: the 64-token kernels have none to spare. Dynamic shared memory:
// kStages stages.
template <int TYPE, int TOKENS>
__global__ void __launch_bounds__(kMmaWarps * kWarp, 2)
    staged_mma_kernel(Products p, QuantizedRows all, int all_n, int shift, int total_rows, float *workspace,
                      int *counters) {
    using Layout = StageLayout<TYPE, TOKENS>;
    constexpr int kTiles = TOKENS / 8;
    ZSE_DYNAMIC_SHARED(uint4, shared_words);  // uint4: 16-byte aligned, for the copies and ldmatrix
    uint8_t *shared = reinterpret_cast<uint8_t *>(shared_words);
    const Layout l(shift);
    const int warp = threadIdx.x / kWarp, lane = threadIdx.x % kWarp, g = lane / 4, t = lane % 4;
    const int token0 = blockIdx.x * TOKENS, n = min(TOKENS, all_n - token0);  // this tile's first token and count
    const int tile = warp % 4, half = warp / 4, row0 = blockIdx.y * kStagedRows;
    const int stages = p.cols / kStageCols, split = blockIdx.z, splits = gridDim.z;
    const int first = stages * split / splits, end = stages * (split + 1) / splits;
    const int64_t blocks = p.cols / kBlock;
    const QuantizedRows in{all.q + token0 * static_cast<int64_t>(p.cols), all.d + token0 * blocks,
                           all.s + token0 * blocks};
    const StageCopies<TYPE, TOKENS> copies(p, in, n, shift, row0, l);
    // The first stages' weights before the wait for the kernel ahead (overlap.cuh), their tokens after it; the first
    // group then holds stage 0 whole and stage 1's weights, each later one a stage (empty ones too, so that each
    // iteration below waits for the same count).
#pragma unroll
    for (int s = 0; s < kStages - 1; s++) {
        if (first + s < end) copies.start_weights(shared + s * l.bytes, first + s, l);
    }
    let_next_grid_start();
    wait_for_previous_grid();
#pragma unroll
    for (int s = 0; s < kStages - 1; s++) {
        if (first + s < end) copies.start_tokens(shared + s * l.bytes, first + s);
        copy_async_commit();
    }
    // ldmatrix rows: rows 0-7 | 8-15 of the tile's first 16 bytes, then of its last 16; tokens 0-7 | 8-15 of a
    // block's codes 0-15, 16-31
    const int w_offset = (16 * tile + lane % 8 + 8 * (lane / 8 % 2)) * Layout::kStride + 16 * (lane / 16);
    const int x_offset = l.x_codes + (lane % 8 + 8 * (lane / 16)) * Layout::kTokenStride + 16 * (lane / 8 % 2);
    float acc[kTiles][4] = {};
    for (int s = first; s < end; s++) {
        copy_async_wait<kStages - 2>();
        __syncthreads();  // stage s is in; every warp is done with the stage the next copies overwrite
        const int next = s + kStages - 1;
        if (next < end) copies.start(shared + (next - first) % kStages * l.bytes, next, l);
        copy_async_commit();
        const uint8_t *stage = shared + (s - first) % kStages * l.bytes;
        staged_share<TYPE, TOKENS>(stage, l, Layout::skew(s), tile, half, shift, stage + w_offset, stage + x_offset,
                                   acc);
    }
    copy_async_wait<0>();
    __syncthreads();  // the stages' memory now takes the second halves' sums
    float *partial = reinterpret_cast<float *>(shared) + (tile * kTiles * 4) * kWarp;
    if (half == 1) {
#pragma unroll
        for (int j = 0; j < kTiles; j++) {
#pragma unroll
            for (int e = 0; e < 4; e++) partial[(j * 4 + e) * kWarp + lane] = acc[j][e];
        }
    }
    __syncthreads();
    if (half == 0) {
#pragma unroll
        for (int e = 0; e < 4; e += 2) {
            const int row = row0 + 16 * tile + g + 4 * e;
            Row unused;
            float *out;
            int rows, local;
            const bool valid = locate<TYPE>(p, row, shift, unused, out, rows, local);
#pragma unroll
            for (int j = 0; j < kTiles; j++) {
#pragma unroll
                for (int c = 0; c < 2; c++) {
                    const int token = 8 * j + 2 * t + c;
                    const float sum = acc[j][e + c] + partial[(j * 4 + e + c) * kWarp + lane];
                    if (!valid || token >= n) continue;
                    if (splits == 1) {
                        out[static_cast<int64_t>(token0 + token) * rows + local] = sum;
                    } else {
                        workspace[(static_cast<int64_t>(split) * n + token) * total_rows + row] = sum;
                    }
                }
            }
        }
    }
    if (splits == 1 || !completes(counters + blockIdx.y, splits)) return;
    // the last split (of the one token tile there is then): every split's sums, in split order
    for (int i = threadIdx.x; i < kStagedRows * n; i += blockDim.x) {
        const int row = row0 + i % kStagedRows, token = i / kStagedRows;
        Row unused;
        float *out;
        int rows, local;
        if (!locate<TYPE>(p, row, shift, unused, out, rows, local)) continue;
        float sum = 0.f;
        for (int k = 0; k < splits; k++) {
            sum += __ldcg(workspace + (static_cast<int64_t>(k) * n + token) * total_rows + row);
        }
        out[static_cast<int64_t>(token) * rows + local] = sum;
    }
}

// Whether the staged kernel takes these weights and activations: whole stages of 256 columns (Q6_K: whole runs of
// kQ6StagedSupers), and every row's codes and scales aligned for its 16-byte copies (rows follow from the columns and
// aligned bases).
bool staged_fits(int type, const Products &p, const QuantizedRows &x) {
    if (p.cols % (type == Q6_K ? kQ6StagedSupers * kStageCols : kStageCols) != 0) return false;
    const auto aligned = [](const void *at) { return reinterpret_cast<uintptr_t>(at) % 16 == 0; };
    bool fits = aligned(x.q) && aligned(x.d) && aligned(x.s);
    for (int j = 0; j < p.count; j++) fits = fits && aligned(p.data[j]) && aligned(p.scales[j]);
    return fits;
}

// The dynamic shared memory a staged block of TOKENS tokens takes: kStages stages.
template <int TYPE, int TOKENS>
size_t staged_bytes(int shift) {
    return static_cast<size_t>(kStages) * StageLayout<TYPE, TOKENS>(shift).bytes;
}

// n above TOKENS (a prompt): tiles of TOKENS tokens, splits 1.
template <int TYPE, int TOKENS>
int launch_staged(const Products &p, const QuantizedRows &x, int n, int shift, int64_t total_rows, int splits,
                  float *workspace, int *counters, cudaStream_t stream) {
    const size_t bytes = staged_bytes<TYPE, TOKENS>(shift);
    const auto kernel = staged_mma_kernel<TYPE, TOKENS>;
    if (bytes > 48 * 1024) {
        ZSE_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes)),
                  "cudaFuncSetAttribute(staged_mma_kernel)");
    }
    const dim3 grid(static_cast<unsigned>((n + TOKENS - 1) / TOKENS),
                    static_cast<unsigned>((total_rows + kStagedRows - 1) / kStagedRows), static_cast<unsigned>(splits));
    ZSE_LAUNCH_OVERLAPPING(kernel, grid, kMmaWarps * kWarp, bytes, stream)(
        p, x, n, shift, static_cast<int>(total_rows), workspace, counters);
    return 0;
}

// mma_rows 16: blocks of 16 weight rows; else as MmaRowTiles gives.
template <int TYPE, int TOKENS>
void launch_mma(const Products &p, const QuantizedRows &x, int n, int shift, int64_t total_rows, int mma_rows,
                cudaStream_t stream) {
    if (mma_rows == 16) {
        launch_mma_tiles<TYPE, TOKENS, 1>(p, x, n, shift, total_rows, stream);
    } else {
        launch_mma_tiles<TYPE, TOKENS, MmaRowTiles<TOKENS>::value>(p, x, n, shift, total_rows, stream);
    }
}

// Warps a weight row's chunks are split among: row_warps where asked (1, 2, 4 or 8); else, where a warp takes one
// weight row, as many as the trips it would make alone (a trip: Steps chunks a lane), up to a power of two and at most
// kWarps; where a warp takes several, none. (Splitting those too, as once, ran 4- and 8-row steps at 0.75x and 0.68x
// unsplit ones on an H200: 802-820 against 1082-1107 and 957-978 against 1417-1435 tok/s in all.)
template <int ROWS>
int warps_per_row(int cols, int row_warps) {
    if (row_warps != 0) return row_warps;
    if (RowsPerWarp<ROWS>::value > 1) return 1;
    constexpr int chunks_a_trip = kWarp * Steps<ROWS>::value;
    const int trips = (cols / kBlock + chunks_a_trip - 1) / chunks_a_trip;
    int split = 1;
    while (split < kWarps && split < trips) split *= 2;
    return split;
}

// launch(std::integral_constant<int, SPLIT>) for the split warps_per_row gives a product of `cols` columns.
template <int ROWS, class Launch>
void by_split(int cols, int row_warps, const Launch &launch) {
    switch (warps_per_row<ROWS>(cols, row_warps)) {
        case 1: launch(std::integral_constant<int, 1>{}); break;
        case 2: launch(std::integral_constant<int, 2>{}); break;
        case 4: launch(std::integral_constant<int, 4>{}); break;
        default: launch(std::integral_constant<int, 8>{}); break;
    }
}

template <int TYPE, int ROWS, int AFTER = kStore>
void launch_rows(const Products &p, const QuantizedRows &x, int n, int shift, int64_t total_rows, int row_warps,
                 cudaStream_t stream, const After &after = After{}) {
    by_split<ROWS>(p.cols, row_warps, [&](auto split) {
        constexpr int rows_per_block = kWarps / decltype(split)::value * RowsPerWarp<ROWS>::value;
        const unsigned grid = static_cast<unsigned>((total_rows + rows_per_block - 1) / rows_per_block);
        const auto kernel = integer_matvec_kernel<TYPE, ROWS, decltype(split)::value, AFTER>;
        ZSE_LAUNCH_OVERLAPPING(kernel, grid, kWarps * kWarp, 0, stream)(p, x, n, shift, after);
    });
}

// A block a quantization block of outputs; the split as integer_matvec_kernel's, its shares taken one after another
// by one warp.
template <int TYPE, int ROWS, bool NORMED = false>
void launch_swiglu_rows(const Products &p, const QuantizedRows &x, int n, int shift, const QuantizedOut &act,
                        int row_warps, int ahead, cudaStream_t stream, const NormedInput &normed = NormedInput{}) {
    by_split<ROWS>(p.cols, row_warps, [&](auto split) {
        const auto kernel = swiglu_matvec_kernel<TYPE, ROWS, decltype(split)::value, NORMED>;
        ZSE_LAUNCH_OVERLAPPING(kernel, static_cast<unsigned>(p.rows[0] / kQuantBlock), kWarps * kWarp,
                               NORMED ? normed_input_bytes(p.cols) : 0, stream)(p, x, n, shift, act, normed, ahead);
    });
}

template <int TYPE>
void launch_swiglu_matvec(const Products &p, const QuantizedRows &x, int n, int shift, const QuantizedOut &act,
                          int row_warps, int ahead, const NormedInput &normed, cudaStream_t stream) {
    if (normed.stream != nullptr) {
        launch_swiglu_rows<TYPE, 1, true>(p, x, n, shift, act, row_warps, ahead, stream, normed);
    } else if (n == 1) {
        launch_swiglu_rows<TYPE, 1>(p, x, n, shift, act, row_warps, ahead, stream);
    } else if (n == 2) {
        launch_swiglu_rows<TYPE, 2>(p, x, n, shift, act, row_warps, ahead, stream);
    } else if (n <= 4) {
        launch_swiglu_rows<TYPE, 4>(p, x, n, shift, act, row_warps, ahead, stream);
    } else {
        launch_swiglu_rows<TYPE, 8>(p, x, n, shift, act, row_warps, ahead, stream);
    }
}

// A block 8 rows of a head; the split as integer_matvec_kernel's at one row, its shares taken one after another by
// one warp.
template <int TYPE, bool NORMED>
void launch_qkv_rope_rows(const Products &p, const QuantizedRows &x, int shift, int64_t total_rows, int row_warps,
                          const After &after, const NormedInput &normed, cudaStream_t stream) {
    by_split<1>(p.cols, row_warps, [&](auto split) {
        const auto kernel = qkv_rope_kernel<TYPE, decltype(split)::value, NORMED>;
        ZSE_LAUNCH_OVERLAPPING(kernel, static_cast<unsigned>(total_rows / kWarps), kWarps * kWarp,
                               NORMED ? normed_input_bytes(p.cols) : 0, stream)(p, x, shift, after, normed);
    });
}

template <int TYPE>
void launch_qkv_rope(const Products &p, const QuantizedRows &x, int shift, int64_t total_rows, int row_warps,
                     const After &after, const NormedInput &normed, cudaStream_t stream) {
    if (normed.stream != nullptr) {
        launch_qkv_rope_rows<TYPE, true>(p, x, shift, total_rows, row_warps, after, normed, stream);
    } else {
        launch_qkv_rope_rows<TYPE, false>(p, x, shift, total_rows, row_warps, after, normed, stream);
    }
}

// launch(std::integral_constant<int, TOKENS>) for the tensor cores' tile of n tokens: 16, 32 or 64 (a prompt's
// more: tiles of 64).
template <class Launch>
void by_token_tile(int n, const Launch &launch) {
    if (n <= 16) {
        launch(std::integral_constant<int, 16>{});
    } else if (n <= 32) {
        launch(std::integral_constant<int, 32>{});
    } else {
        launch(std::integral_constant<int, 64>{});
    }
}

// How the tensor-core products of 9-64 rows run (zse_cuda_integer_matvec's mma_rows, splits, workspace, counters).
struct TensorCoreLaunch {
    int mma_rows;
    int splits;
    float *workspace;
    int *counters;
};

// The products of the tokens from `from` on: p's outputs and x's rows moved on by `from` tokens.
void skip_tokens(Products &p, QuantizedRows &x, int from) {
    const int64_t blocks = p.cols / kBlock;
    for (int j = 0; j < p.count; j++) p.out[j] += static_cast<int64_t>(from) * p.rows[j];
    x = QuantizedRows{x.q + static_cast<int64_t>(from) * p.cols, x.d + from * blocks, x.s + from * blocks};
}

// The staged products of n > 8 tokens in tiles of 16, 32 or 64, 64 where n is above 32 and the device gives a block
// their shared memory. Q8's and Q6_K's 64-token stages take 117 and 108 KB, more than sm_86 and sm_89 give (99 KB):
// there tiles of 32, in one launch where the columns are not split, else a launch for each 32 tokens (the blocks
// that merge a row's splits take one tile of tokens). 0 or the failure's status.
template <int TYPE>
int launch_staged_tiles(const Products &p, const QuantizedRows &x, int n, int shift, int64_t total_rows,
                        const TensorCoreLaunch &tensor, cudaStream_t stream) {
    if (n <= 16) {
        return launch_staged<TYPE, 16>(p, x, n, shift, total_rows, tensor.splits, tensor.workspace, tensor.counters,
                                       stream);
    }
    if (n > 32 && staged_bytes<TYPE, 64>(shift) <= max_block_shared()) {
        return launch_staged<TYPE, 64>(p, x, n, shift, total_rows, tensor.splits, tensor.workspace, tensor.counters,
                                       stream);
    }
    const int step = tensor.splits == 1 ? n : 32;
    for (int from = 0; from < n; from += step) {
        Products tokens = p;
        QuantizedRows rows = x;
        skip_tokens(tokens, rows, from);
        if (int status = launch_staged<TYPE, 32>(tokens, rows, min(step, n - from), shift, total_rows, tensor.splits,
                                                 tensor.workspace, tensor.counters, stream)) {
            return status;
        }
    }
    return 0;
}

// Up to 8 activation rows: the DP4A kernel, instantiated for 1, 2, 4 and 8 rows (registers and unrolled loops for the
// batch-size buckets). More: on tensor cores in tiles of 16, 32 or 64 tokens, staged (mma_rows 0) or Q8, Q4 and Q4_K
// from memory; Q6_K where it does not stage, in the DP4A kernel 16 rows at a time. (The DP4A kernel took 1.27 ms of a
// 16-row decode step's 6.53 for Llama 3 8B's Q6_K output layer, 346 GB/s: fifth GPU run, ncu.) 0 or the status of a
// launch that could not be made.
template <int TYPE>
int launch_integer_matvec(const Products &p, const QuantizedRows &x, int n, int shift, int64_t total_rows,
                          const TensorCoreLaunch &tensor, int row_warps, cudaStream_t stream) {
    if (n == 1) {
        launch_rows<TYPE, 1>(p, x, n, shift, total_rows, row_warps, stream);
    } else if (n == 2) {
        launch_rows<TYPE, 2>(p, x, n, shift, total_rows, row_warps, stream);
    } else if (n <= 4) {
        launch_rows<TYPE, 4>(p, x, n, shift, total_rows, row_warps, stream);
    } else if (n <= 8) {
        launch_rows<TYPE, 8>(p, x, n, shift, total_rows, row_warps, stream);
    } else if (tensor.mma_rows == 0) {
        return launch_staged_tiles<TYPE>(p, x, n, shift, total_rows, tensor, stream);
    } else if constexpr (TYPE == Q6_K) {
        if (n <= 16) {
            launch_rows<TYPE, 16>(p, x, n, shift, total_rows, row_warps, stream);
            return 0;
        }
        for (int from = 0; from < n; from += 16) {
            Products tokens = p;
            QuantizedRows rows = x;
            skip_tokens(tokens, rows, from);
            if (int status = launch_integer_matvec<TYPE>(tokens, rows, min(16, n - from), shift, total_rows, tensor,
                                                         row_warps, stream)) {
                return status;
            }
        }
    } else {
        by_token_tile(n, [&](auto tokens) {
            launch_mma<TYPE, decltype(tokens)::value>(p, x, n, shift, total_rows, tensor.mma_rows, stream);
        });
    }
    return 0;
}

// The checks the entries make of their weights and activations (none where the launch norms its own input: normed),
// and the launch's Products; 0 or the refusal's status, its message prefixed with `entry`.
int describe(const char *entry, int type, int group_size, int cols, int count, const void *const *data,
             const void *const *scales, const int *rows, float *const *out, const int8_t *xq, const float *xd,
             const float *xs, int n, int row_warps, Products &p, int64_t &total_rows, bool normed = false) {
    if (row_warps != 0 && row_warps != 1 && row_warps != 2 && row_warps != 4 && row_warps != 8) {
        return refuse(entry, "row_warps must be 0, 1, 2, 4 or 8");
    }
    if (type != Q8 && type != Q4 && type != Q4_K && type != Q6_K) {
        return refuse(entry, "the integer products take Q8, Q4, Q4_K and Q6_K weights");
    }
    if (count < 1 || count > kMaxWeights) return refuse(entry, "1 to 3 weights");
    if (data == nullptr || scales == nullptr || rows == nullptr || out == nullptr) {
        return refuse(entry, "NULL weight list");
    }
    if (!normed && (xq == nullptr || xd == nullptr || xs == nullptr)) return refuse(entry, "NULL activations");
    if (static_cast<int64_t>(n) * cols > 0x7fffffff) return refuse(entry, "n * cols above 2^31 - 1");
    p.count = count;
    p.group = group_size;
    p.cols = cols;
    total_rows = 0;
    for (int j = 0; j < count; j++) {
        Weight m{static_cast<const uint8_t *>(data[j]), static_cast<const __half *>(scales[j]), type, group_size,
                 rows[j], cols};
        if (int status = check_weight(m, entry)) return status;
        if (out[j] == nullptr) return refuse(entry, "NULL output");
        p.data[j] = m.data;
        p.scales[j] = m.scales;
        p.rows[j] = m.rows;
        p.out[j] = out[j];
        total_rows += m.rows;
    }
    return total_rows <= 0x7fffffff ? 0 : refuse(entry, "more than 2^31 - 1 rows in all");
}

// The checks of a NormedInput (NULL stream: none to check); 0 or the refusal's status, prefixed with `entry`.
int check_normed(const char *entry, const NormedInput &normed, int n, int cols) {
    if (normed.stream == nullptr) return 0;
    if (normed.weight == nullptr || normed.out == nullptr) return refuse(entry, "NULL norm weight or normed output");
    if (n != 1) return refuse(entry, "a normed input takes one row");
    if (cols % kBlock != 0 || normed_input_bytes(cols) > 40 * 1024) {  // with the kernels' static shared memory
        return refuse(entry, "a normed input takes cols a multiple of 32, at most 32768");
    }
    return 0;
}

// log2(group / 32) for Q4's groups; 0 for the other types' (32 or 256).
int shift_of(int group_size) {
    return group_size == 128 ? 2 : group_size == 64 ? 1 : 0;
}

// launch(std::integral_constant<int, TYPE>) for the integer products' type code `type` (checked by describe).
template <class Launch>
void by_type(int type, const Launch &launch) {
    switch (type) {
        case Q8: launch(std::integral_constant<int, Q8>{}); break;
        case Q4: launch(std::integral_constant<int, Q4>{}); break;
        case Q4_K: launch(std::integral_constant<int, Q4_K>{}); break;
        default: launch(std::integral_constant<int, Q6_K>{}); break;
    }
}

}  // namespace
}  // namespace zse

extern "C" {

int zse_cuda_quantize_rows(const float *x, int n, int cols, int8_t *q, float *d, float *s, void *stream) {
    using namespace zse;
    ZSE_REQUIRE(x != nullptr && q != nullptr && d != nullptr && s != nullptr,
                "zse_cuda_quantize_rows: NULL activations or output");
    ZSE_REQUIRE(n > 0 && cols > 0 && cols % kBlock == 0, "zse_cuda_quantize_rows: n > 0 and cols a multiple of 32");
    const int64_t blocks = static_cast<int64_t>(n) * cols / kBlock;
    ZSE_REQUIRE((blocks + kWarps - 1) / kWarps <= 0x7fffffff, "zse_cuda_quantize_rows: too many rows");
    const unsigned grid = static_cast<unsigned>((blocks + kWarps - 1) / kWarps);
    ZSE_LAUNCH_OVERLAPPING(quantize_rows_kernel, grid, kWarps * kWarp, 0, static_cast<cudaStream_t>(stream))(
        x, blocks, QuantizedOut{q, d, s});
    return launched("quantize_rows_kernel");
}

int zse_cuda_integer_matvec(int type, int group_size, int cols, int count, const void *const *data,
                            const void *const *scales, const int *rows, float *const *out, const int8_t *xq,
                            const float *xd, const float *xs, int n, int mma_rows, int splits, float *workspace,
                            int *counters, int row_warps, void *stream) {
    using namespace zse;
    ZSE_REQUIRE(mma_rows == 0 || mma_rows == 16 || mma_rows == 32,
                "zse_cuda_integer_matvec: mma_rows must be 0, 16 or 32");
    ZSE_REQUIRE(splits >= 1 && splits <= kMaxSplits && splits <= max(1, cols / kStageCols),
                "zse_cuda_integer_matvec: splits must be 1 to 8, and at most cols / 256");
    ZSE_REQUIRE(splits == 1 || (workspace != nullptr && counters != nullptr),
                "zse_cuda_integer_matvec: NULL workspace or counters for splits above 1");
    ZSE_REQUIRE(n > 0 && (n <= ZSE_CUDA_INTEGER_ROWS || (mma_rows == 0 && splits == 1)),
                "zse_cuda_integer_matvec: n must be 1 to 64, or above for the staged products (mma_rows 0, splits 1)");
    Products p{};
    int64_t total_rows = 0;
    if (int status = describe("zse_cuda_integer_matvec", type, group_size, cols, count, data, scales, rows, out, xq,
                              xd, xs, n, row_warps, p, total_rows)) {
        return status;
    }
    const QuantizedRows x{xq, xd, xs};
    const bool staged = mma_rows == 0 && n > 8;
    ZSE_REQUIRE(!staged || staged_fits(type, p, x),
                "zse_cuda_integer_matvec: the staged products (mma_rows 0) take cols a multiple of 256 (Q6_K: 2048) "
                "and weights and activations 16-byte aligned");
    ZSE_REQUIRE(!staged || (total_rows + kStagedRows - 1) / kStagedRows <= 65535,
                "zse_cuda_integer_matvec: the staged products take at most 65535 blocks of 64 rows");
    int status = 0;
    by_type(type, [&](auto t) {
        status = launch_integer_matvec<decltype(t)::value>(p, x, n, shift_of(group_size), total_rows,
                                                           TensorCoreLaunch{mma_rows, splits, workspace, counters},
                                                           row_warps, static_cast<cudaStream_t>(stream));
    });
    return status != 0 ? status : launched("integer_matvec_kernel");
}

int zse_cuda_integer_matvec_add_rms_norm(int type, int group_size, int cols, int rows, const void *data,
                                         const void *scales, const int8_t *xq, const float *xd, const float *xs,
                                         float *x, const float *weight, float eps, float *out, int8_t *q, float *d,
                                         float *s, int *counter, int row_warps, void *stream) {
    using namespace zse;
    ZSE_REQUIRE(weight == nullptr || (out != nullptr && counter != nullptr),
                "zse_cuda_integer_matvec_add_rms_norm: NULL output or counter");
    ZSE_REQUIRE(q == nullptr || (d != nullptr && s != nullptr && rows % kQuantBlock == 0),
                "zse_cuda_integer_matvec_add_rms_norm: NULL scales or sums, or rows not a multiple of 32");
    float *residual[1] = {x};
    Products p{};
    int64_t total_rows = 0;
    if (int status = describe("zse_cuda_integer_matvec_add_rms_norm", type, group_size, cols, 1, &data, &scales,
                              &rows, residual, xq, xd, xs, 1, row_warps, p, total_rows)) {
        return status;
    }
    const QuantizedRows in{xq, xd, xs};
    After after{};
    after.weight = weight;
    after.eps = eps;
    after.out = out;
    after.q = QuantizedOut{q, d, s};
    after.counters = counter;
    by_type(type, [&](auto t) {
        if (weight == nullptr) {  // the add alone: the products that read the stream norm it (NormedInput)
            launch_rows<decltype(t)::value, 1, kAdd>(p, in, 1, shift_of(group_size), total_rows, row_warps,
                                                     static_cast<cudaStream_t>(stream));
        } else {
            launch_rows<decltype(t)::value, 1, kAddNorm>(p, in, 1, shift_of(group_size), total_rows, row_warps,
                                                         static_cast<cudaStream_t>(stream), after);
        }
    });
    return launched("integer_matvec_kernel");
}

int zse_cuda_qkv_rope_store_kv(int type, int group_size, int cols, const void *const *data, const void *const *scales,
                               int heads, int kv_heads, int head_dim, const int8_t *xq, const float *xd,
                               const float *xs, float *q, float *k, float *v, const int32_t *positions,
                               const float *inverse_frequencies, const int32_t *slots, void *keys, void *values,
                               int kv_type, const float *norm_stream, const float *norm_weight, float norm_eps,
                               float *normed, int row_warps, void *stream) {
    using namespace zse;
    ZSE_REQUIRE(heads > 0 && kv_heads > 0 && head_dim > 0 && head_dim % kWarps == 0,
                "zse_cuda_qkv_rope_store_kv: heads, kv_heads and head_dim (a multiple of 8) must be positive");
    ZSE_REQUIRE(positions != nullptr && inverse_frequencies != nullptr && slots != nullptr && keys != nullptr &&
                    values != nullptr,
                "zse_cuda_qkv_rope_store_kv: NULL pointer");
    ZSE_REQUIRE(kv_type == 0 || kv_type == 1, "zse_cuda_qkv_rope_store_kv: kv_type must be 0 (F32) or 1 (F16)");
    ZSE_REQUIRE(static_cast<int64_t>(heads) * head_dim <= 0x7fffffff,
                "zse_cuda_qkv_rope_store_kv: heads * head_dim above 2^31 - 1");
    const int rows[3] = {heads * head_dim, kv_heads * head_dim, kv_heads * head_dim};
    float *out[3] = {q, k, v};
    Products p{};
    int64_t total_rows = 0;
    const NormedInput norm{norm_stream, norm_weight, norm_eps, normed};
    if (int status = describe("zse_cuda_qkv_rope_store_kv", type, group_size, cols, 3, data, scales, rows, out, xq,
                              xd, xs, 1, row_warps, p, total_rows, norm_stream != nullptr)) {
        return status;
    }
    if (int status = check_normed("zse_cuda_qkv_rope_store_kv", norm, 1, cols)) return status;
    const QuantizedRows in{xq, xd, xs};
    After after{};
    after.heads = heads;
    after.head_dim = head_dim;
    after.positions = positions;
    after.inverse_frequencies = inverse_frequencies;
    after.slots = slots;
    after.keys = keys;
    after.values = values;
    after.kv_type = kv_type;
    by_type(type, [&](auto t) {
        launch_qkv_rope<decltype(t)::value>(p, in, shift_of(group_size), total_rows, row_warps, after, norm,
                                            static_cast<cudaStream_t>(stream));
    });
    return launched("qkv_rope_kernel");
}

int zse_cuda_swiglu_matvec(int type, int group_size, int cols, int ff, const void *gate_data,
                           const void *gate_scales, const void *up_data, const void *up_scales, const int8_t *xq,
                           const float *xd, const float *xs, int n, float *out, int8_t *q, float *d, float *s,
                           const float *norm_stream, const float *norm_weight, float norm_eps, float *normed,
                           int row_warps, int ahead, void *stream) {
    using namespace zse;
    ZSE_REQUIRE(n > 0 && n <= 8, "zse_cuda_swiglu_matvec: n must be 1 to 8");
    ZSE_REQUIRE(ahead >= 0 && ahead <= 8, "zse_cuda_swiglu_matvec: ahead must be 0 to 8");
    ZSE_REQUIRE(ff > 0 && ff % kQuantBlock == 0, "zse_cuda_swiglu_matvec: ff must be a positive multiple of 32");
    ZSE_REQUIRE(q != nullptr && d != nullptr && s != nullptr, "zse_cuda_swiglu_matvec: NULL int8 output");
    const void *data[2] = {gate_data, up_data};
    const void *scales[2] = {gate_scales, up_scales};
    const int rows[2] = {ff, ff};
    float *outs[2] = {out, out};
    Products p{};
    int64_t total_rows = 0;
    const NormedInput norm{norm_stream, norm_weight, norm_eps, normed};
    if (int status = describe("zse_cuda_swiglu_matvec", type, group_size, cols, 2, data, scales, rows, outs, xq, xd,
                              xs, n, row_warps, p, total_rows, norm_stream != nullptr)) {
        return status;
    }
    if (int status = check_normed("zse_cuda_swiglu_matvec", norm, n, cols)) return status;
    const QuantizedRows x{xq, xd, xs};
    const QuantizedOut act{q, d, s};
    by_type(type, [&](auto t) {
        launch_swiglu_matvec<decltype(t)::value>(p, x, n, shift_of(group_size), act, row_warps, ahead, norm,
                                                 static_cast<cudaStream_t>(stream));
    });
    return launched("swiglu_matvec_kernel");
}
}  // extern "C"
