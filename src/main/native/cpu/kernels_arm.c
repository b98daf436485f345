/*
 * kernels_arm.c: the aarch64 kernel set (zse_cpu_neon_dotprod), for CPUs with Advanced SIMD and the Armv8.2 dot
 * product (SDOT: four int8 products summed into each int32 lane, the int8 path of Q8 and Q4). Compiled with
 * -march=armv8.2-a+dotprod; dispatch.c uses it only where the CPU reports the feature (HWCAP_ASIMDDP).
 *
 * The same structure as kernels_x86.c: outputs in tiles of TILE_M weight rows by TILE_N activation rows held in
 * registers (32 vector registers: 4 × 4 accumulators and the loads fit), four rows of weights in flight when decoding.
 * Vectors are 128 bits, so a block of 32 int8 codes is two registers and a float accumulator holds 4 lanes.
 */
#include <arm_neon.h>

#include "kernels.h"

#define TILE_M 4
#define TILE_N 4
#define ALWAYS_INLINE static inline __attribute__((always_inline))
#define VEC float32x4_t
#define VEC_LANES 4
#define VEC_ZERO() vdupq_n_f32(0)
#define VEC_FMA(acc, a, b) vfmaq_f32(acc, a, b)
#define VEC_LOAD(p) vld1q_f32(p)
#define VEC_HSUM(v) vaddvq_f32(v)
#include "tiles.h"

static void quantize_rows(const float *x, int32_t n, int32_t cols, int8_t *q, float *d, float *s) {
    zse_quantize_rows(x, n, cols, q, d, s);
}

/* Σ over the 32 products of two blocks of int8 codes, as 4 int32 lanes. */
ALWAYS_INLINE int32x4_t dot32(int8x16_t w0, int8x16_t w1, const int8_t *x) {
    int32x4_t sum = vdotq_s32(vdupq_n_s32(0), w0, vld1q_s8(x));
    return vdotq_s32(sum, w1, vld1q_s8(x + 16));
}

/* ---- Q8: w = code * d per block of 32; Σ d_w d_x Σ(codes_w · codes_x) ---- */

ALWAYS_INLINE void q8_tile(const int8_t *w, const uint16_t *scales, int64_t cols, int64_t r, int rm,
                           const int8_t *xq, const float *xd, int64_t i, int rn, float *out, int64_t stride) {
    const uint64_t blocks = (uint64_t) cols / 32;
    DECLARE_TILE_ACCUMULATORS(acc);
    for (uint64_t b = 0; b < blocks; b++) {
        int8x16_t w0[TILE_M];
        int8x16_t w1[TILE_M];
        float dw[TILE_M];
        for (int a = 0; a < rm; a++) {
            const int8_t *block = w + (uint64_t) (r + a) * cols + b * 32;
            __builtin_prefetch(block + TILE_M * cols);
            w0[a] = vld1q_s8(block);
            w1[a] = vld1q_s8(block + 16);
            dw[a] = zse_f16_to_f32(scales[(uint64_t) (r + a) * blocks + b]);
        }
        for (int j = 0; j < rn; j++) {
            const int8_t *x = xq + ((i + j) * blocks + b) * 32;
            float dx = xd[(i + j) * blocks + b];
            for (int a = 0; a < rm; a++) {
                acc[a][j] = vfmaq_n_f32(acc[a][j], vcvtq_f32_s32(dot32(w0[a], w1[a], x)), dw[a] * dx);
            }
        }
    }
    STORE_TILE_SUMS(acc);
}

/* matmul_q8: the walk over q8_tile (tiles.h). */
Q8_KERNEL

/* ---- Q4: w = code * d + m per group of g; Σ_g d Σ_b d_x,b Σ(codes · codes_x) + m Σ_b s_b ---- */

/*
 * The 32 codes of block k of a group, in element order, as two registers. Group byte j holds element j (low nibble)
 * and element j + g/2 (high nibble): for g = 32 one 16-byte load gives both halves; for larger groups the first
 * g/64 blocks are the low nibbles of consecutive 32-byte runs and the rest their high nibbles.
 */
ALWAYS_INLINE void q4_codes(const uint8_t *group, int g, int k, int8x16_t *first, int8x16_t *second) {
    const uint8x16_t low4 = vdupq_n_u8(0x0F);
    if (g == 32) {
        uint8x16_t bytes = vld1q_u8(group);
        *first = vreinterpretq_s8_u8(vandq_u8(bytes, low4));
        *second = vreinterpretq_s8_u8(vshrq_n_u8(bytes, 4));
        return;
    }
    int half_blocks = g / 64;
    const uint8_t *run = group + 32 * (k < half_blocks ? k : k - half_blocks);
    uint8x16_t b0 = vld1q_u8(run);
    uint8x16_t b1 = vld1q_u8(run + 16);
    if (k < half_blocks) {
        *first = vreinterpretq_s8_u8(vandq_u8(b0, low4));
        *second = vreinterpretq_s8_u8(vandq_u8(b1, low4));
    } else {
        *first = vreinterpretq_s8_u8(vshrq_n_u8(b0, 4));
        *second = vreinterpretq_s8_u8(vshrq_n_u8(b1, 4));
    }
}

ALWAYS_INLINE void q4_tile(const uint8_t *w, const uint16_t *scales, int g, int64_t cols, int64_t r, int rm,
                           const int8_t *xq, const float *xd, const float *xs, int64_t i, int rn, float *out,
                           int64_t stride) {
    const uint64_t blocks = (uint64_t) cols / 32;
    const uint64_t groups = (uint64_t) cols / g;
    const int per_group = g / 32;
    DECLARE_TILE_ACCUMULATORS(acc);
    /* m Σ s: the offset term, one scalar per (row, activation row), added to lane 0 at the end. */
    float offset[TILE_M][TILE_N] = {{0}};
    for (uint64_t gi = 0; gi < groups; gi++) {
        const uint8_t *group[TILE_M];
        float d[TILE_M];
        float m[TILE_M];
        for (int a = 0; a < rm; a++) {
            group[a] = w + ((uint64_t) (r + a) * cols + gi * g) / 2;
            __builtin_prefetch(group[a] + TILE_M * cols / 2);
            d[a] = zse_f16_to_f32(scales[2 * ((uint64_t) (r + a) * groups + gi)]);
            m[a] = zse_f16_to_f32(scales[2 * ((uint64_t) (r + a) * groups + gi) + 1]);
        }
        for (int k = 0; k < per_group; k++) {
            uint64_t b = gi * per_group + k;
            int8x16_t c0[TILE_M];
            int8x16_t c1[TILE_M];
            for (int a = 0; a < rm; a++) {
                q4_codes(group[a], g, k, &c0[a], &c1[a]);
            }
            for (int j = 0; j < rn; j++) {
                uint64_t block = (i + j) * blocks + b;
                const int8_t *x = xq + block * 32;
                for (int a = 0; a < rm; a++) {
                    acc[a][j] = vfmaq_n_f32(acc[a][j], vcvtq_f32_s32(dot32(c0[a], c1[a], x)), d[a] * xd[block]);
                    offset[a][j] += m[a] * xs[block];
                }
            }
        }
    }
    for (int a = 0; a < rm; a++) {
        for (int j = 0; j < rn; j++) {
            acc[a][j] = vsetq_lane_f32(vgetq_lane_f32(acc[a][j], 0) + offset[a][j], acc[a][j], 0);
        }
    }
    STORE_TILE_SUMS(acc);
}

/* matmul_q4: the walk over q4_tile for each group size (tiles.h). */
Q4_KERNEL

/* ---- NF4: w = NF4[code] * absmax per group of 64, float activations ---- */

/*
 * The code book's value for 16 codes as 4 float vectors: each byte of the 16 floats is one 16-entry table lookup
 * (TBL), and the four byte planes are interleaved back into floats.
 */
ALWAYS_INLINE void nf4_values(uint8x16_t codes, const uint8x16_t planes[4], float32x4_t values[4]) {
    uint8x16_t b0 = vqtbl1q_u8(planes[0], codes);
    uint8x16_t b1 = vqtbl1q_u8(planes[1], codes);
    uint8x16_t b2 = vqtbl1q_u8(planes[2], codes);
    uint8x16_t b3 = vqtbl1q_u8(planes[3], codes);
    uint8x16x2_t low = vzipq_u8(b0, b1);   /* byte pairs 0|1 of each value */
    uint8x16x2_t high = vzipq_u8(b2, b3);  /* byte pairs 2|3 */
    uint16x8x2_t first = vzipq_u16(vreinterpretq_u16_u8(low.val[0]), vreinterpretq_u16_u8(high.val[0]));
    uint16x8x2_t second = vzipq_u16(vreinterpretq_u16_u8(low.val[1]), vreinterpretq_u16_u8(high.val[1]));
    values[0] = vreinterpretq_f32_u16(first.val[0]);
    values[1] = vreinterpretq_f32_u16(first.val[1]);
    values[2] = vreinterpretq_f32_u16(second.val[0]);
    values[3] = vreinterpretq_f32_u16(second.val[1]);
}

ALWAYS_INLINE void nf4_tile(const uint8_t *w, const uint16_t *scales, int64_t cols, int64_t r, int rm, const float *x,
                            int64_t i, int rn, float *out, int64_t stride) {
    int64_t groups = cols / 64;
    uint8x16_t planes[4];
    for (int p = 0; p < 4; p++) {
        uint8_t plane[16];
        for (int c = 0; c < 16; c++) {
            uint32_t bits;
            memcpy(&bits, &ZSE_NF4[c], 4);
            plane[c] = (uint8_t) (bits >> (8 * p));
        }
        planes[p] = vld1q_u8(plane);
    }
    DECLARE_TILE_ACCUMULATORS(acc);
    for (int64_t gi = 0; gi < groups; gi++) {
        for (int half = 0; half < 2; half++) {
            /* 16 bytes: elements 16·half.. from the low nibbles, 32 + 16·half.. from the high ones. */
            float32x4_t low[TILE_M][4];
            float32x4_t high[TILE_M][4];
            for (int a = 0; a < rm; a++) {
                uint8x16_t bytes = vld1q_u8(w + ((r + a) * cols + gi * 64) / 2 + 16 * half);
                float absmax = zse_f16_to_f32(scales[(r + a) * groups + gi]);
                nf4_values(vandq_u8(bytes, vdupq_n_u8(0x0F)), planes, low[a]);
                nf4_values(vshrq_n_u8(bytes, 4), planes, high[a]);
                for (int v = 0; v < 4; v++) {
                    low[a][v] = vmulq_n_f32(low[a][v], absmax);
                    high[a][v] = vmulq_n_f32(high[a][v], absmax);
                }
            }
            for (int j = 0; j < rn; j++) {
                const float *xg = x + (i + j) * cols + gi * 64 + 16 * half;
                for (int v = 0; v < 4; v++) {
                    float32x4_t x_low = vld1q_f32(xg + 4 * v);
                    float32x4_t x_high = vld1q_f32(xg + 32 + 4 * v);
                    for (int a = 0; a < rm; a++) {
                        acc[a][j] = vfmaq_f32(vfmaq_f32(acc[a][j], low[a][v], x_low), high[a][v], x_high);
                    }
                }
            }
        }
    }
    STORE_TILE_SUMS(acc);
}

/* matmul_nf4: the walk over nf4_tile (tiles.h). */
NF4_KERNEL

/* ---- F32, F16, BF16: float products (FLOAT_KERNEL, tiles.h), each with its load of 4 weights ---- */

ALWAYS_INLINE float32x4_t load_f32(const float *p) {
    return vld1q_f32(p);
}

ALWAYS_INLINE float32x4_t load_f16(const uint16_t *p) {
    return vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(p)));
}

ALWAYS_INLINE float32x4_t load_bf16(const uint16_t *p) {
    return vreinterpretq_f32_u32(vshll_n_u16(vld1_u16(p), 16));
}

FLOAT_KERNEL(matmul_f32, float, load_f32, read_f32)
FLOAT_KERNEL(matmul_f16, uint16_t, load_f16, zse_f16_to_f32)
FLOAT_KERNEL(matmul_bf16, uint16_t, load_bf16, zse_bf16_to_f32)

/* The K-quant and ternary products are left out: dispatch.c runs the portable C ones for them. */
const struct zse_cpu_kernels zse_cpu_neon_dotprod = {
    .name = "neon-dotprod",
    .quantize_rows = quantize_rows,
    .matmul_q8 = matmul_q8,
    .matmul_q4 = matmul_q4,
    .matmul_nf4 = matmul_nf4,
    .matmul_f32 = matmul_f32,
    .matmul_f16 = matmul_f16,
    .matmul_bf16 = matmul_bf16,
};
