/*
 * kernels_arm.c: the aarch64 kernel set (zse_cpu_neon_dotprod), for CPUs with Advanced SIMD and the Armv8.2 dot
 * product (SDOT: four int8 products summed into each int32 lane, the int8 path of Q8 and Q4 in both layouts).
 * Compiled with -march=armv8.2-a+dotprod; dispatch.c uses it only where the CPU reports the feature (HWCAP_ASIMDDP).
 *
 * The same structure as kernels_x86.c: outputs in tiles of TILE_M weight rows by TILE_N activation rows held in
 * registers (32 vector registers: 4 × 4 accumulators and the loads fit), four rows of weights in flight when decoding.
 * Vectors are 128 bits, so a block of 32 int8 codes is two registers and a float accumulator holds 4 lanes.
 */
#include <arm_neon.h>

#include "kernels.h"
#include "ops.h"

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

/*
 * ---- K-quants (Q4_K, Q5_K, Q6_K): super-blocks of 256, each sub-block of 32 one activation block ----
 * Q4_K, Q5_K: Σ_k d·scale_k·d_x,k·Σ(q·x_q) - dmin·min_k·s_k with unsigned codes; Q6_K: d·d_x,k times the two groups
 * of 16's int8 scales times their sums of (q - 32)·x_q. SDOT takes the codes as signed bytes (all of them fit).
 */

#define SUPER 8 /* sub-blocks of 32, and activation blocks, per super-block */

/* The 32 codes of sub-block k of a super-block's code bytes, in element order, as two registers (Q6_K: q - 32). */
ALWAYS_INLINE void kquant_codes(int bits, const uint8_t *codes, int k, int8x16_t *first, int8x16_t *second) {
    const uint8x16_t low4 = vdupq_n_u8(0x0F);
    int8x16_t *halves[2] = {first, second};
    for (int t = 0; t < 2; t++) {
        uint8x16_t q;
        if (bits == 6) {
            /* elements 32k..: half k / 4, part k % 4: low or high nibbles of ql[32 (part & 1) ..], bits 2 part of qh */
            int h = k / 4;
            int part = k % 4;
            uint8x16_t ql = vld1q_u8(codes + 64 * h + 32 * (part & 1) + 16 * t);
            uint8x16_t qh = vld1q_u8(codes + 128 + 32 * h + 16 * t);
            uint8x16_t low = part >> 1 ? vshrq_n_u8(ql, 4) : vandq_u8(ql, low4);
            uint8x16_t high = vandq_u8(vshlq_u8(qh, vdupq_n_s8((int8_t) (-2 * part))), vdupq_n_u8(3));
            *halves[t] = vsubq_s8(vreinterpretq_s8_u8(vorrq_u8(low, vshlq_n_u8(high, 4))), vdupq_n_s8(32));
            continue;
        }
        uint8x16_t nibbles = vld1q_u8(codes + 32 * (k / 2) + 16 * t);
        q = k % 2 ? vshrq_n_u8(nibbles, 4) : vandq_u8(nibbles, low4);
        if (bits == 5) {
            uint8x16_t qh = vld1q_u8(codes + 128 + 16 * t);
            uint8x16_t fifth = vandq_u8(vshlq_u8(qh, vdupq_n_s8((int8_t) -k)), vdupq_n_u8(1));
            q = vorrq_u8(q, vshlq_n_u8(fifth, 4));
        }
        *halves[t] = vreinterpretq_s8_u8(q);
    }
}

ALWAYS_INLINE void kquant_tile(int bits, const uint8_t *w, const uint8_t *scales, int64_t cols, int64_t r, int rm,
                               const int8_t *xq, const float *xd, const float *xs, int64_t i, int rn, float *out,
                               int64_t stride) {
    KQUANT_TILE_ROWS(bits);
    DECLARE_TILE_ACCUMULATORS(acc);
    /* dmin·min·s: the offset term of Q4_K/Q5_K, one scalar per (row, activation row), taken from lane 0 at the end */
    float offset[TILE_M][TILE_N] = {{0}};
    for (uint64_t sb = 0; sb < supers; sb++) {
        const uint8_t *codes[TILE_M];
        float d[TILE_M];
        float d_scale[TILE_M][SUPER];
        float dmin_min[TILE_M][SUPER];
        const int8_t *scale16[TILE_M];
        for (int a = 0; a < rm; a++) {
            codes[a] = weights[a] + sb * code_bytes;
            const uint8_t *sc = row_scales[a] + sb * scale_bytes;
            __builtin_prefetch(codes[a] + TILE_M * supers * code_bytes);
            d[a] = zse_f16_to_f32((uint16_t) (sc[0] | sc[1] << 8));
            scale16[a] = (const int8_t *) sc + 2;
            if (bits != 6) {
                uint8_t scale_min[16];
                zse_kquant_scale_min(sc + 4, scale_min);
                float dmin = zse_f16_to_f32((uint16_t) (sc[2] | sc[3] << 8));
                for (int k = 0; k < SUPER; k++) {
                    d_scale[a][k] = d[a] * scale_min[k];
                    dmin_min[a][k] = dmin * scale_min[8 + k];
                }
            }
        }
        for (int k = 0; k < SUPER; k++) {
            int8x16_t c0[TILE_M];
            int8x16_t c1[TILE_M];
            for (int a = 0; a < rm; a++) {
                kquant_codes(bits, codes[a], k, &c0[a], &c1[a]);
            }
            for (int j = 0; j < rn; j++) {
                const uint64_t block = (i + j) * blocks + sb * SUPER + k;
                const int8_t *x = xq + block * 32;
                for (int a = 0; a < rm; a++) {
                    if (bits == 6) {
                        int32x4_t first = vdotq_s32(vdupq_n_s32(0), c0[a], vld1q_s8(x));
                        int32x4_t second = vdotq_s32(vdupq_n_s32(0), c1[a], vld1q_s8(x + 16));
                        int32x4_t dot = vmlaq_n_s32(vmulq_n_s32(first, scale16[a][2 * k]), second,
                                                    scale16[a][2 * k + 1]);
                        acc[a][j] = vfmaq_n_f32(acc[a][j], vcvtq_f32_s32(dot), d[a] * xd[block]);
                    } else {
                        acc[a][j] = vfmaq_n_f32(acc[a][j], vcvtq_f32_s32(dot32(c0[a], c1[a], x)),
                                                d_scale[a][k] * xd[block]);
                        offset[a][j] += dmin_min[a][k] * xs[block];
                    }
                }
            }
        }
    }
    for (int a = 0; a < rm; a++) {
        for (int j = 0; j < rn; j++) {
            acc[a][j] = vsetq_lane_f32(vgetq_lane_f32(acc[a][j], 0) - offset[a][j], acc[a][j], 0);
        }
    }
    STORE_TILE_SUMS(acc);
}

#define KQUANT_TILE kquant_tile
KQUANT_MATMUL(matmul_q4_k, 4)
KQUANT_MATMUL(matmul_q5_k, 5)
KQUANT_MATMUL(matmul_q6_k, 6)

/*
 * ---- Q5 (ggml's Q5_0/Q5_1 codes), groups of 32: 16 nibble bytes then a u32 of fifth bits ----
 * Q4's codes of a group of 32 with bit k of the u32 set as 0x10 in byte k (each qh byte looked up into its 8 lanes,
 * each lane testing its own bit). Then as Q4: d·d_x·Σ(q·x_q) + m·s.
 */
ALWAYS_INLINE void q5_codes(const uint8_t *group, int8x16_t *first, int8x16_t *second) {
    static const uint8_t spread[2][16] = {{0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1},
                                          {2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3}};
    static const uint8_t bits[16] = {1, 2, 4, 8, 16, 32, 64, 128, 1, 2, 4, 8, 16, 32, 64, 128};
    uint32_t qh;
    memcpy(&qh, group + 16, 4);
    uint8x16_t qh_bytes = vreinterpretq_u8_u32(vdupq_n_u32(qh));
    uint8x16_t fifth = vdupq_n_u8(0x10);
    q4_codes(group, 32, 0, first, second);
    uint8x16_t set0 = vtstq_u8(vqtbl1q_u8(qh_bytes, vld1q_u8(spread[0])), vld1q_u8(bits));
    uint8x16_t set1 = vtstq_u8(vqtbl1q_u8(qh_bytes, vld1q_u8(spread[1])), vld1q_u8(bits));
    *first = vreinterpretq_s8_u8(vorrq_u8(vreinterpretq_u8_s8(*first), vandq_u8(set0, fifth)));
    *second = vreinterpretq_s8_u8(vorrq_u8(vreinterpretq_u8_s8(*second), vandq_u8(set1, fifth)));
}

ALWAYS_INLINE void q5_tile(const uint8_t *w, const uint8_t *scales, int64_t cols, int64_t r, int rm, const int8_t *xq,
                           const float *xd, const float *xs, int64_t i, int rn, float *out, int64_t stride) {
    const uint64_t groups = (uint64_t) cols / 32;
    DECLARE_TILE_ACCUMULATORS(acc);
    float offset[TILE_M][TILE_N] = {{0}};
    for (uint64_t g = 0; g < groups; g++) {
        int8x16_t c0[TILE_M];
        int8x16_t c1[TILE_M];
        float d[TILE_M];
        float m[TILE_M];
        for (int a = 0; a < rm; a++) {
            uint64_t at = (uint64_t) (r + a) * groups + g;
            q5_codes(w + at * 20, &c0[a], &c1[a]);
            d[a] = zse_f16_to_f32((uint16_t) (scales[4 * at] | scales[4 * at + 1] << 8));
            m[a] = zse_f16_to_f32((uint16_t) (scales[4 * at + 2] | scales[4 * at + 3] << 8));
        }
        for (int j = 0; j < rn; j++) {
            uint64_t block = (uint64_t) (i + j) * groups + g;
            for (int a = 0; a < rm; a++) {
                acc[a][j] = vfmaq_n_f32(acc[a][j], vcvtq_f32_s32(dot32(c0[a], c1[a], xq + block * 32)),
                                        d[a] * xd[block]);
                offset[a][j] += m[a] * xs[block];
            }
        }
    }
    for (int a = 0; a < rm; a++) {
        for (int j = 0; j < rn; j++) {
            out[(i + j) * stride + r + a] = vaddvq_f32(acc[a][j]) + offset[a][j];
        }
    }
}

/* matmul_q5: the walk over q5_tile (tiles.h). */
Q5_KERNEL

/*
 * ---- TERNARY: Σ t·q with t = c - 1, c in 0..2 ----
 * A block of 128 elements is 32 bytes of codes; shifting right by 2·part and masking to 2 bits gives elements
 * 32·part .. 32·part + 31 in order. SDOT on c (as signed bytes) and the activation codes, minus the row's code sum.
 */
ALWAYS_INLINE void ternary_tile(const uint8_t *w, float scale, int64_t cols, int64_t r, int rm, const int8_t *xq,
                                const float *xdiv, const int32_t *xsum, int64_t i, int rn, float *out,
                                int64_t stride) {
    const uint64_t row_bytes = (uint64_t) cols / 4;
    const uint8x16_t mask = vdupq_n_u8(3);
    int32x4_t acc[TILE_M][TILE_N];
    for (int a = 0; a < rm; a++) {
        for (int j = 0; j < rn; j++) {
            acc[a][j] = vdupq_n_s32(0);
        }
    }
    for (uint64_t b = 0; b < row_bytes; b += 32) {
        for (int a = 0; a < rm; a++) {
            const uint8_t *packed = w + (uint64_t) (r + a) * row_bytes + b;
            uint8x16_t p0 = vld1q_u8(packed);
            uint8x16_t p1 = vld1q_u8(packed + 16);
            for (int part = 0; part < 4; part++) {
                int8x16_t shift = vdupq_n_s8((int8_t) (-2 * part));
                int8x16_t c0 = vreinterpretq_s8_u8(vandq_u8(vshlq_u8(p0, shift), mask));
                int8x16_t c1 = vreinterpretq_s8_u8(vandq_u8(vshlq_u8(p1, shift), mask));
                for (int j = 0; j < rn; j++) {
                    const int8_t *x = xq + (i + j) * cols + 4 * b + 32 * part;
                    acc[a][j] = vdotq_s32(vdotq_s32(acc[a][j], c0, vld1q_s8(x)), c1, vld1q_s8(x + 16));
                }
            }
        }
    }
    for (int a = 0; a < rm; a++) {
        for (int j = 0; j < rn; j++) {
            int32_t dot = vaddvq_s32(acc[a][j]) - xsum[i + j];
            out[(i + j) * stride + r + a] = (float) dot * scale / xdiv[i + j];
        }
    }
}

/* matmul_ternary: the walk over ternary_tile (tiles.h). */
TERNARY_KERNEL

/*
 * ---- Layout interleaved-16: Q8 and Q4 ----
 *
 * A tile stores 4 bytes of each of its 16 rows side by side, so one 16-byte load holds one step of 4 rows and four
 * loads the step of the whole tile. SDOT by lane multiplies each row's 4 bytes with the 4 activation codes of that step,
 * taken from a 16-byte load of activations (4 steps): every lane keeps its own row's sum, with no horizontal sums,
 * and a block's scales are 4 vectors for the tile's 16 rows.
 */
#define X16_ROW_STEP 16
#define X16_TILE_N 2

/* acc + the dot products of w's 4-byte groups with 4-byte group `lane` of x (lane a constant after inlining). */
ALWAYS_INLINE int32x4_t dot_lane(int32x4_t acc, int8x16_t w, int8x16_t x, int lane) {
    switch (lane) {
        case 0:
            return vdotq_laneq_s32(acc, w, x, 0);
        case 1:
            return vdotq_laneq_s32(acc, w, x, 1);
        case 2:
            return vdotq_laneq_s32(acc, w, x, 2);
        default:
            return vdotq_laneq_s32(acc, w, x, 3);
    }
}

/* 16 F16 scales (one per row of a tile) as 4 float vectors. */
ALWAYS_INLINE void x16_scales(const uint16_t *p, float32x4_t out[4]) {
    for (int q = 0; q < 4; q++) {
        out[q] = vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(p + 4 * q)));
    }
}

/* The 16 rows of the tile at r by rn activation rows from i. */
ALWAYS_INLINE void q8x16_tile(const int8_t *w, const uint16_t *scales, int64_t cols, int64_t r, const int8_t *xq,
                              const float *xd, const float *xs, int64_t i, int rn, float *out, int64_t stride) {
    (void) xs;
    const int64_t blocks = cols / 32;
    const int8_t *tile = w + r * cols;
    const uint16_t *tile_scales = scales + r * blocks;
    float32x4_t acc[X16_TILE_N][4];
    for (int j = 0; j < rn; j++) {
        for (int q = 0; q < 4; q++) {
            acc[j][q] = vdupq_n_f32(0);
        }
    }
    for (int64_t b = 0; b < blocks; b++) {
        const int8_t *steps = tile + b * 8 * 64;
        __builtin_prefetch(steps + 8 * 64 * 2);
        int32x4_t dot[X16_TILE_N][4];
        for (int j = 0; j < rn; j++) {
            for (int q = 0; q < 4; q++) {
                dot[j][q] = vdupq_n_s32(0);
            }
        }
        /* Steps 4h .. 4h + 3 take activation codes 16h .. 16h + 15. */
        for (int h = 0; h < 2; h++) {
            int8x16_t x[X16_TILE_N];
            for (int j = 0; j < rn; j++) {
                x[j] = vld1q_s8(xq + ((i + j) * blocks + b) * 32 + 16 * h);
            }
            for (int c = 0; c < 4; c++) {
                for (int q = 0; q < 4; q++) {
                    int8x16_t codes = vld1q_s8(steps + (4 * h + c) * 64 + 16 * q);
                    for (int j = 0; j < rn; j++) {
                        dot[j][q] = dot_lane(dot[j][q], codes, x[j], c);
                    }
                }
            }
        }
        float32x4_t d[4];
        x16_scales(tile_scales + b * 16, d);
        for (int j = 0; j < rn; j++) {
            float dx = xd[(i + j) * blocks + b];
            for (int q = 0; q < 4; q++) {
                acc[j][q] = vfmaq_f32(acc[j][q], vcvtq_f32_s32(dot[j][q]), vmulq_n_f32(d[q], dx));
            }
        }
    }
    for (int j = 0; j < rn; j++) {
        for (int q = 0; q < 4; q++) {
            vst1q_f32(out + (i + j) * stride + r + 4 * q, acc[j][q]);
        }
    }
}

/*
 * Q4, group g: step s of a group holds elements 4s.. in its low nibbles and g/2 + 4s.. in its high ones. For g = 32
 * both halves lie in one activation block (one sum); for 64 and 128 a run of 8 steps covers 32 low elements (one
 * block) and 32 high ones (the block g/64 further on), whose sums take the two blocks' scales.
 */
ALWAYS_INLINE void q4x16_tile(int g, const uint8_t *w, const uint16_t *scales, int64_t cols, int64_t r,
                              const int8_t *xq, const float *xd, const float *xs, int64_t i, int rn, float *out,
                              int64_t stride) {
    const int64_t blocks = cols / 32;
    const int64_t groups = cols / g;
    const int run = g == 32 ? 4 : 8;
    const uint8_t *tile = w + r * cols / 2;
    const uint16_t *tile_scales = scales + r * 2 * groups;
    const uint8x16_t low4 = vdupq_n_u8(0x0F);
    float32x4_t acc[X16_TILE_N][4];
    for (int j = 0; j < rn; j++) {
        for (int q = 0; q < 4; q++) {
            acc[j][q] = vdupq_n_f32(0);
        }
    }
    for (int64_t gi = 0; gi < groups; gi++) {
        const uint8_t *steps = tile + gi * (g / 8) * 64;
        const int64_t first_block = gi * (g / 32);
        float32x4_t d[4];
        float32x4_t m[4];
        x16_scales(tile_scales + gi * 32, d);
        x16_scales(tile_scales + gi * 32 + 16, m);
        for (int s0 = 0; s0 < g / 8; s0 += run) {
            int32x4_t low[X16_TILE_N][4];
            int32x4_t high[X16_TILE_N][4];
            for (int j = 0; j < rn; j++) {
                for (int q = 0; q < 4; q++) {
                    low[j][q] = vdupq_n_s32(0);
                    high[j][q] = vdupq_n_s32(0);
                }
            }
            /* Four steps at a time share one 16-byte load of activation codes per half. */
            for (int c = s0; c < s0 + run; c += 4) {
                int8x16_t x_low[X16_TILE_N];
                int8x16_t x_high[X16_TILE_N];
                for (int j = 0; j < rn; j++) {
                    const int8_t *x = xq + ((i + j) * blocks + first_block) * 32 + 4 * c;
                    x_low[j] = vld1q_s8(x);
                    x_high[j] = vld1q_s8(x + g / 2);
                }
                for (int k = 0; k < 4; k++) {
                    for (int q = 0; q < 4; q++) {
                        uint8x16_t bytes = vld1q_u8(steps + (c + k) * 64 + 16 * q);
                        int8x16_t lo = vreinterpretq_s8_u8(vandq_u8(bytes, low4));
                        int8x16_t hi = vreinterpretq_s8_u8(vshrq_n_u8(bytes, 4));
                        for (int j = 0; j < rn; j++) {
                            low[j][q] = dot_lane(low[j][q], lo, x_low[j], k);
                            high[j][q] = dot_lane(high[j][q], hi, x_high[j], k);
                        }
                    }
                }
            }
            const int64_t low_block = first_block + 4 * s0 / 32;
            const int64_t high_block = first_block + (g / 2 + 4 * s0) / 32;
            for (int j = 0; j < rn; j++) {
                const float *dx = xd + (i + j) * blocks;
                for (int q = 0; q < 4; q++) {
                    if (g == 32) {
                        float32x4_t dot = vcvtq_f32_s32(vaddq_s32(low[j][q], high[j][q]));
                        acc[j][q] = vfmaq_f32(acc[j][q], dot, vmulq_n_f32(d[q], dx[low_block]));
                    } else {
                        acc[j][q] = vfmaq_f32(acc[j][q], vcvtq_f32_s32(low[j][q]), vmulq_n_f32(d[q], dx[low_block]));
                        acc[j][q] = vfmaq_f32(acc[j][q], vcvtq_f32_s32(high[j][q]), vmulq_n_f32(d[q], dx[high_block]));
                    }
                }
            }
        }
        /* m Σ s over the group's blocks. */
        for (int j = 0; j < rn; j++) {
            const float *sx = xs + (i + j) * blocks + first_block;
            float group_sum = 0;
            for (int b = 0; b < g / 32; b++) {
                group_sum += sx[b];
            }
            for (int q = 0; q < 4; q++) {
                acc[j][q] = vfmaq_n_f32(acc[j][q], m[q], group_sum);
            }
        }
    }
    for (int j = 0; j < rn; j++) {
        for (int q = 0; q < 4; q++) {
            vst1q_f32(out + (i + j) * stride + r + 4 * q, acc[j][q]);
        }
    }
}

/* matmul_q8_x16 and matmul_q4_x16: the walk over q8x16_tile and q4x16_tile, a whole tile at a time (tiles.h). */
X16_KERNELS

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

const struct zse_cpu_kernels zse_cpu_neon_dotprod = {
    ZSE_CPU_FULL_SET("neon-dotprod"),
    .matmul_q5 = matmul_q5,
};
