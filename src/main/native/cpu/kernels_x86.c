/*
 * kernels_x86.c: the x86-64 kernel sets, compiled twice from this one source: with AVX2+FMA+F16C (zse_cpu_avx2), and
 * with AVX-512 BW/VL/VNNI (zse_cpu_avx512), where the int8 dot product of 4-byte groups is one instruction
 * (vpdpbusd) and 32 vector registers hold a larger tile of outputs. The row-groups products work in 256-bit vectors
 * in both (one 32-element block of int8 codes per register); the interleaved-16 ones in 512-bit vectors under AVX-512.
 *
 * TERNARY (BitNet) weights take the same byte dot product with their 2-bit codes as the unsigned side.
 *
 * Every product walks its outputs in tiles of TILE_M weight rows by TILE_N activation rows held in registers, so each
 * load of weights is used TILE_N times and each load of activations TILE_M times; decoding (n = 1) reads each weight
 * byte once with four rows in flight.
 */
#include <immintrin.h>

#include "kernels.h"
#include "ops.h"

#if defined(ZSE_AVX512)
#define KERNELS zse_cpu_avx512
#define KERNELS_NAME "avx512-vnni"
#define TILE_N 4
/* Σ over each 4 bytes of u (unsigned) · s (signed), as 8 int32 lanes. */
static inline __m256i dot_u8s8(__m256i u, __m256i s) {
    return _mm256_dpbusd_epi32(_mm256_setzero_si256(), u, s);
}
#else
#define KERNELS zse_cpu_avx2
#define KERNELS_NAME "avx2"
#define TILE_N 2
static inline __m256i dot_u8s8(__m256i u, __m256i s) {
    /* Pairs of products fit int16: the unsigned side is at most 127 (|Q8 code|) or 15 (Q4 code). */
    return _mm256_madd_epi16(_mm256_maddubs_epi16(u, s), _mm256_set1_epi16(1));
}
#endif
#define TILE_M 4
#define ALWAYS_INLINE static inline __attribute__((always_inline))
#define VEC __m256
#define VEC_LANES 8
#define VEC_ZERO() _mm256_setzero_ps()
#define VEC_FMA(acc, a, b) _mm256_fmadd_ps(a, b, acc)
#define VEC_LOAD(p) _mm256_loadu_ps(p)
#define VEC_HSUM(v) hsum(v)

#include "tiles.h"

/*
 * Asks for the bytes the next tile will read at this point: the same span, TILE_M rows further on. A tile reads its
 * rows side by side, so each row is a short stream (1 KiB for a Q4 row of 2048) that the hardware prefetchers barely
 * ramp up on before it ends; decoding streams weights from memory and would otherwise wait on every miss.
 */
static inline void prefetch_next_tile(const void *at, uint64_t row_bytes, int bytes) {
    const char *ahead = (const char *) at + TILE_M * row_bytes;
    for (int b = 0; b < bytes; b += 64) {
        _mm_prefetch(ahead + b, _MM_HINT_T0);
    }
}

static inline float hsum(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

static void quantize_rows(const float *x, int32_t n, int32_t cols, int8_t *q, float *d, float *s) {
    zse_quantize_rows(x, n, cols, q, d, s);
}

/*
 * The integer products walk each row in superblocks of 8 activation blocks (256 elements). A superblock's scales are
 * handled as vectors: the 8 products d_w * d_x of each (weight row, activation row) pair are computed in one multiply
 * and stored to the stack, where each block's FMA reads its factor with a broadcast load, and Q4's offset term
 * m * s is one FMA per superblock into the same accumulator. A row that ends in a partial superblock pads its scales
 * with zeros.
 */
#define SUPER 8

/* Up to 8 floats from p, zeros after count. */
ALWAYS_INLINE __m256 load_padded(const float *p, int count) {
    if (count == SUPER) {
        return _mm256_loadu_ps(p);
    }
    float padded[SUPER] = {0};
    memcpy(padded, p, sizeof(float) * count);
    return _mm256_loadu_ps(padded);
}

/* ---- Q8: w = code * d per block of 32; Σ d_w d_x Σ(codes_w · codes_x) ---- */

/* The F16 scales of count (<= 8) consecutive blocks, zeros after count. */
ALWAYS_INLINE __m256 q8_scales(const uint16_t *scales, int count) {
    if (count == SUPER) {
        return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *) scales));
    }
    uint16_t padded[SUPER] = {0};
    memcpy(padded, scales, sizeof(uint16_t) * count);
    return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *) padded));
}

ALWAYS_INLINE void q8_tile(const int8_t *w, const uint16_t *scales, int64_t cols, int64_t r, int rm,
                           const int8_t *xq, const float *xd, int64_t i, int rn, float *out, int64_t stride) {
    const uint64_t blocks = (uint64_t) cols / 32;
    const int8_t *weights[TILE_M];
    const uint16_t *row_scales[TILE_M];
    for (int a = 0; a < rm; a++) {
        weights[a] = w + (uint64_t) (r + a) * cols;
        row_scales[a] = scales + (uint64_t) (r + a) * blocks;
    }
    DECLARE_TILE_ACCUMULATORS(acc);
    for (uint64_t sb = 0; sb < blocks; sb += SUPER) {
        int count = blocks - sb < SUPER ? (int) (blocks - sb) : SUPER;
        float factors[TILE_M][TILE_N][SUPER] __attribute__((aligned(32)));
        for (int a = 0; a < rm; a++) {
            prefetch_next_tile(weights[a] + sb * 32, (uint64_t) cols, 256);
            prefetch_next_tile(row_scales[a] + sb, 2 * blocks, 16);
            __m256 dw = q8_scales(row_scales[a] + sb, count);
            for (int j = 0; j < rn; j++) {
                _mm256_store_ps(factors[a][j], _mm256_mul_ps(dw, load_padded(xd + (i + j) * blocks + sb, count)));
            }
        }
        for (int k = 0; k < count; k++) {
            uint64_t b = sb + k;
            __m256i codes[TILE_M];
            __m256i magnitudes[TILE_M];
            for (int a = 0; a < rm; a++) {
                codes[a] = _mm256_loadu_si256((const __m256i *) (weights[a] + b * 32));
                magnitudes[a] = _mm256_sign_epi8(codes[a], codes[a]);
            }
            for (int j = 0; j < rn; j++) {
                __m256i x = _mm256_loadu_si256((const __m256i *) (xq + ((i + j) * blocks + b) * 32));
                for (int a = 0; a < rm; a++) {
                    /* |w| · (x with w's sign): the unsigned-by-signed product the instructions take. */
                    __m256i dot = dot_u8s8(magnitudes[a], _mm256_sign_epi8(x, codes[a]));
                    acc[a][j] = _mm256_fmadd_ps(_mm256_broadcast_ss(&factors[a][j][k]), _mm256_cvtepi32_ps(dot),
                                                acc[a][j]);
                }
            }
        }
    }
    STORE_TILE_SUMS(acc);
}

/* matmul_q8: the walk over q8_tile, row by row when decoding (tiles.h). */
static void matmul_q8(const int8_t *w, const uint16_t *scales, int32_t cols, int32_t row_begin, int32_t row_end,
                      const int8_t *xq, const float *xd, int32_t n, float *out, int32_t out_stride) {
    FOR_EACH_TILE_ROW_BY_ROW_WHEN_DECODING(Q8_TILE)
}

/* ---- Q4: w = code * d + m per group of g; Σ_g d Σ_b d_x,b Σ(codes · codes_x) + m Σ_b s_b ---- */

/*
 * The 32 codes of activation block k of a group, in element order. Group byte j holds element j (low nibble) and
 * element j + g/2 (high nibble): for g = 32 one 16-byte load gives both halves; for larger groups the first g/64
 * blocks are low nibbles of consecutive 32-byte runs and the rest their high nibbles.
 */
ALWAYS_INLINE __m256i q4_codes(const uint8_t *group, int g, int k) {
    const __m256i low4 = _mm256_set1_epi8(0x0F);
    if (g == 32) {
        __m128i bytes = _mm_loadu_si128((const __m128i *) group);
        return _mm256_and_si256(_mm256_set_m128i(_mm_srli_epi16(bytes, 4), bytes), low4);
    }
    int half_blocks = g / 64;
    if (k < half_blocks) {
        return _mm256_and_si256(_mm256_loadu_si256((const __m256i *) (group + 32 * k)), low4);
    }
    __m256i bytes = _mm256_loadu_si256((const __m256i *) (group + 32 * (k - half_blocks)));
    return _mm256_and_si256(_mm256_srli_epi16(bytes, 4), low4);
}

/*
 * Per block of a superblock, the d and m of its group: a whole superblock holds 256 / g groups, whose (d, m) F16
 * pairs are consecutive; a partial one (count blocks, whole groups) is padded with zeros.
 */
ALWAYS_INLINE void q4_scales(const uint16_t *pairs, int g, int count, __m256 *d, __m256 *m) {
    int groups = count * 32 / g;
    uint16_t padded[2 * SUPER] = {0};
    if (groups < SUPER * 32 / g) {
        memcpy(padded, pairs, 4 * (size_t) groups);
        pairs = padded;
    }
    __m256i per_block;
    if (g == 32) {
        per_block = _mm256_loadu_si256((const __m256i *) pairs);
    } else if (g == 64) {
        per_block = _mm256_permutevar8x32_epi32(_mm256_castsi128_si256(_mm_loadu_si128((const __m128i *) pairs)),
                                                _mm256_setr_epi32(0, 0, 1, 1, 2, 2, 3, 3));
    } else {
        per_block = _mm256_permutevar8x32_epi32(_mm256_castsi128_si256(_mm_loadl_epi64((const __m128i *) pairs)),
                                                _mm256_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1));
    }
    /* Each 32-bit lane is d | m << 16: split, pack to 16 bits and widen each half to floats. */
    __m256i packed = _mm256_packus_epi32(_mm256_and_si256(per_block, _mm256_set1_epi32(0xFFFF)),
                                         _mm256_srli_epi32(per_block, 16));
    __m256i ordered = _mm256_permute4x64_epi64(packed, 0xD8);
    *d = _mm256_cvtph_ps(_mm256_castsi256_si128(ordered));
    *m = _mm256_cvtph_ps(_mm256_extracti128_si256(ordered, 1));
}

ALWAYS_INLINE void q4_tile(const uint8_t *w, const uint16_t *scales, int g, int64_t cols, int64_t r, int rm,
                           const int8_t *xq, const float *xd, const float *xs, int64_t i, int rn, float *out,
                           int64_t stride) {
    const uint64_t blocks = (uint64_t) cols / 32;
    const uint64_t groups = (uint64_t) cols / g;
    const uint64_t per_group = g / 32;
    const uint8_t *weights[TILE_M];
    const uint16_t *row_scales[TILE_M];
    for (int a = 0; a < rm; a++) {
        weights[a] = w + (uint64_t) (r + a) * cols / 2;
        row_scales[a] = scales + 2 * (uint64_t) (r + a) * groups;
    }
    DECLARE_TILE_ACCUMULATORS(acc);
    for (uint64_t sb = 0; sb < blocks; sb += SUPER) {
        int count = blocks - sb < SUPER ? (int) (blocks - sb) : SUPER;
        float factors[TILE_M][TILE_N][SUPER] __attribute__((aligned(32)));
        for (int a = 0; a < rm; a++) {
            prefetch_next_tile(weights[a] + sb * 16, (uint64_t) cols / 2, 128);
            prefetch_next_tile(row_scales[a] + 2 * (sb / per_group), 4 * groups, 32 / per_group);
            __m256 d;
            __m256 m;
            q4_scales(row_scales[a] + 2 * (sb / per_group), g, count, &d, &m);
            for (int j = 0; j < rn; j++) {
                _mm256_store_ps(factors[a][j], _mm256_mul_ps(d, load_padded(xd + (i + j) * blocks + sb, count)));
                /* m · s, per block; a group's m repeats over its blocks, so this is m Σ s over the group. */
                acc[a][j] = _mm256_fmadd_ps(m, load_padded(xs + (i + j) * blocks + sb, count), acc[a][j]);
            }
        }
        for (int k = 0; k < count; k++) {
            uint64_t b = sb + k;
            __m256i codes[TILE_M];
            for (int a = 0; a < rm; a++) {
                codes[a] = q4_codes(weights[a] + (b / per_group) * (g / 2), g, (int) (b % per_group));
            }
            for (int j = 0; j < rn; j++) {
                __m256i x = _mm256_loadu_si256((const __m256i *) (xq + ((i + j) * blocks + b) * 32));
                for (int a = 0; a < rm; a++) {
                    __m256 dot = _mm256_cvtepi32_ps(dot_u8s8(codes[a], x));
                    acc[a][j] = _mm256_fmadd_ps(_mm256_broadcast_ss(&factors[a][j][k]), dot, acc[a][j]);
                }
            }
        }
    }
    STORE_TILE_SUMS(acc);
}

/* matmul_q4: the walk over q4_tile for each group size (tiles.h). */
Q4_KERNEL

/*
 * ---- K-quants: super-blocks of 256, one per SUPER activation blocks ----
 * Q4_K, Q5_K: w = d·scale_k·q - dmin·min_k per sub-block k of 32; Σ_k d·scale_k·d_x,k Σ(q·x_q) - dmin·min_k·s_k.
 * Q6_K: w = d·scale·(q - 32) per 16; the int8 scales multiply the 16-bit pair sums (as llama.cpp does), then
 * d·d_x,k per block.
 */

/* The 32 codes of sub-block k of a super-block's code bytes, in element order (Q6_K: q - 32, signed). */
ALWAYS_INLINE __m256i kquant_codes(int bits, const uint8_t *codes, int k) {
    const __m256i low4 = _mm256_set1_epi8(0x0F);
    if (bits == 6) {
        /* elements 32k..: half k / 4, part k % 4 = low or high nibbles of ql[32 (part & 1) ..], bits 2 part of qh */
        int h = k / 4;
        int part = k % 4;
        __m256i ql = _mm256_loadu_si256((const __m256i *) (codes + 64 * h + 32 * (part & 1)));
        __m256i qh = _mm256_loadu_si256((const __m256i *) (codes + 128 + 32 * h));
        __m256i low = _mm256_and_si256(_mm256_srli_epi16(ql, 4 * (part >> 1)), low4);
        __m256i high = _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 2 * part), _mm256_set1_epi8(3)), 4);
        return _mm256_sub_epi8(_mm256_or_si256(low, high), _mm256_set1_epi8(32));
    }
    __m256i nibbles = _mm256_loadu_si256((const __m256i *) (codes + 32 * (k / 2)));
    __m256i q = _mm256_and_si256(_mm256_srli_epi16(nibbles, 4 * (k % 2)), low4);
    if (bits == 5) {
        __m256i qh = _mm256_loadu_si256((const __m256i *) (codes + 128));
        __m256i fifth = _mm256_and_si256(_mm256_srli_epi16(qh, k), _mm256_set1_epi8(1));
        q = _mm256_or_si256(q, _mm256_slli_epi16(fifth, 4));
    }
    return q;
}

/* Q4_K, Q5_K: d·scale_k and dmin·min_k for the 8 sub-blocks of a super-block, from its 16 scale bytes. */
ALWAYS_INLINE void kquant_scales(const uint8_t *scales, __m256 *d_scale, __m256 *dmin_min) {
    uint8_t scale_min[16] __attribute__((aligned(16)));
    zse_kquant_scale_min(scales + 4, scale_min);
    uint16_t d;
    uint16_t dmin;
    memcpy(&d, scales, 2);
    memcpy(&dmin, scales + 2, 2);
    __m128i both = _mm_load_si128((const __m128i *) scale_min);
    __m256 scale_f = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(both));
    __m256 min_f = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_unpackhi_epi64(both, both)));
    *d_scale = _mm256_mul_ps(_mm256_set1_ps(_cvtsh_ss(d)), scale_f);
    *dmin_min = _mm256_mul_ps(_mm256_set1_ps(_cvtsh_ss(dmin)), min_f);
}

ALWAYS_INLINE void kquant_tile(int bits, const uint8_t *w, const uint8_t *scales, int64_t cols, int64_t r, int rm,
                               const int8_t *xq, const float *xd, const float *xs, int64_t i, int rn, float *out,
                               int64_t stride) {
    KQUANT_TILE_ROWS(bits);
    DECLARE_TILE_ACCUMULATORS(acc);
    for (uint64_t sb = 0; sb < supers; sb++) {
        float factors[TILE_M][TILE_N][SUPER] __attribute__((aligned(32)));
        const uint8_t *codes[TILE_M];
        for (int a = 0; a < rm; a++) {
            codes[a] = weights[a] + sb * code_bytes;
            const uint8_t *sc = row_scales[a] + sb * scale_bytes;
            prefetch_next_tile(codes[a], supers * code_bytes, (int) code_bytes);
            prefetch_next_tile(sc, supers * scale_bytes, (int) scale_bytes);
            __m256 d_scale;
            __m256 dmin_min = _mm256_setzero_ps();
            if (bits == 6) {
                uint16_t d;
                memcpy(&d, sc, 2);
                d_scale = _mm256_set1_ps(_cvtsh_ss(d));
            } else {
                kquant_scales(sc, &d_scale, &dmin_min);
            }
            for (int j = 0; j < rn; j++) {
                const uint64_t at = (i + j) * blocks + sb * SUPER;
                _mm256_store_ps(factors[a][j], _mm256_mul_ps(d_scale, _mm256_loadu_ps(xd + at)));
                if (bits != 6) {
                    acc[a][j] = _mm256_fnmadd_ps(dmin_min, _mm256_loadu_ps(xs + at), acc[a][j]);
                }
            }
        }
        for (int k = 0; k < SUPER; k++) {
            __m256i q[TILE_M];
            __m256i magnitudes[TILE_M];
            __m256i scale16[TILE_M];
            for (int a = 0; a < rm; a++) {
                q[a] = kquant_codes(bits, codes[a], k);
                if (bits == 6) {
                    const int8_t *sc = (const int8_t *) (row_scales[a] + sb * scale_bytes + 2);
                    magnitudes[a] = _mm256_sign_epi8(q[a], q[a]);
                    scale16[a] = _mm256_set_m128i(_mm_set1_epi16(sc[2 * k + 1]), _mm_set1_epi16(sc[2 * k]));
                }
            }
            for (int j = 0; j < rn; j++) {
                __m256i x = _mm256_loadu_si256((const __m256i *) (xq + ((i + j) * blocks + sb * SUPER + k) * 32));
                for (int a = 0; a < rm; a++) {
                    __m256i dot;
                    if (bits == 6) {
                        /* |w| · (x with w's sign) in 16-bit pairs (at most 2·32·127), times the scale of each 16 */
                        __m256i pairs = _mm256_maddubs_epi16(magnitudes[a], _mm256_sign_epi8(x, q[a]));
                        dot = _mm256_madd_epi16(pairs, scale16[a]);
                    } else {
                        dot = dot_u8s8(q[a], x);
                    }
                    acc[a][j] = _mm256_fmadd_ps(_mm256_broadcast_ss(&factors[a][j][k]), _mm256_cvtepi32_ps(dot),
                                                acc[a][j]);
                }
            }
        }
    }
    STORE_TILE_SUMS(acc);
}

#if defined(ZSE_AVX512)
/*
 * AVX-512: one 512-bit step is two sub-blocks of 32 against the 64 activation codes of their two blocks (one load),
 * one vpdpbusd on the unsigned codes. Each int32 lane sums 4 elements of one group of 16, so a vector of per-lane
 * float factors applies each sub-block's d·scale·d_x (and Q6_K's scale per 16) with one convert and one FMA per 64
 * weights; the factors are a permute of the super-block's 8 (Q6_K: 16) products, computed once per super-block.
 * Q6_K's codes go in unsigned (0..63): the accumulator starts at -32·Σx of each lane, shared by every row of a tile.
 */

/*
 * The high bits of a step's codes come from `high`: the qh bytes (Q5_K: all 32; Q6_K: those of the step's half) in
 * both 256-bit halves, the upper one shifted right by 1 (Q5_K) or 2 (Q6_K) bits, so that one constant shift per step
 * lines up the bits of both of its sub-blocks (kquant512_high).
 */
ALWAYS_INLINE __m512i kquant512_high(int bits, const uint8_t *codes, int c) {
    if (bits == 4) {
        return _mm512_setzero_si512();
    }
    const uint8_t *qh = bits == 5 ? codes + 128 : codes + 128 + 32 * (c / 2);
    __m512i both = _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *) qh));
    return _mm512_mask_srli_epi16(both, 0xFFFF0000u, both, bits == 5 ? 1 : 2);
}

/* Two consecutive sub-blocks' codes as unsigned bytes: step c of a super-block (elements 64c .. 64c + 63). */
ALWAYS_INLINE __m512i kquant512_codes(int bits, const uint8_t *codes, int c, __m512i high) {
    const __m512i low4 = _mm512_set1_epi8(0x0F);
    if (bits == 6) {
        /* sub-blocks 4h + 2p and 4h + 2p + 1: nibbles p of ql[64h .. 64h + 63], bits 4p and 4p + 2 of qh[32h ..] */
        int p = c % 2;
        __m512i ql = _mm512_loadu_si512((const void *) (codes + 64 * (c / 2)));
        __m512i low = _mm512_and_si512(p ? _mm512_srli_epi16(ql, 4) : ql, low4);
        return _mm512_or_si512(low, _mm512_and_si512(p ? high : _mm512_slli_epi16(high, 4), _mm512_set1_epi8(0x30)));
    }
    /* sub-blocks 2c and 2c + 1: the low and high nibbles of codes[32c .. 32c + 31] */
    __m512i nibbles = _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *) (codes + 32 * c)));
    __m512i q = _mm512_and_si512(_mm512_mask_srli_epi16(nibbles, 0xFFFF0000u, nibbles, 4), low4);
    if (bits == 5) {
        /* the fifth bit: bit 2c (low half) or 2c + 1 (high half) of qh[l], moved to bit 4 */
        __m512i at4 = c == 0   ? _mm512_slli_epi16(high, 4)
                      : c == 1 ? _mm512_slli_epi16(high, 2)
                      : c == 2 ? high
                               : _mm512_srli_epi16(high, 2);
        q = _mm512_or_si512(q, _mm512_and_si512(at4, _mm512_set1_epi8(0x10)));
    }
    return q;
}

/* Lane l of the factor vector of step c: product (lanes_per_product == 8: sub-block 2c + l / 8; 4: group 4c + l / 4). */
ALWAYS_INLINE __m512 kquant512_spread(__m512 products, int c, int per_product) {
    __m512i lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    __m512i index = per_product == 8 ? _mm512_add_epi32(_mm512_set1_epi32(2 * c), _mm512_srli_epi32(lane, 3))
                                     : _mm512_add_epi32(_mm512_set1_epi32(4 * c), _mm512_srli_epi32(lane, 2));
    return _mm512_permutexvar_ps(index, products);
}

ALWAYS_INLINE void kquant512_tile(int bits, const uint8_t *w, const uint8_t *scales, int64_t cols, int64_t r, int rm,
                                  const int8_t *xq, const float *xd, const float *xs, int64_t i, int rn, float *out,
                                  int64_t stride) {
    KQUANT_TILE_ROWS(bits);
    __m512 acc[TILE_M][TILE_N];
    for (int a = 0; a < rm; a++) {
        for (int j = 0; j < rn; j++) {
            acc[a][j] = _mm512_setzero_ps();
        }
    }
    for (uint64_t sb = 0; sb < supers; sb++) {
        /* products[a][j]: per sub-block (Q6_K: per group of 16) d·scale·d_x of weight row a, activation row j */
        __m512 products[TILE_M][TILE_N];
        const uint8_t *codes[TILE_M];
        for (int a = 0; a < rm; a++) {
            codes[a] = weights[a] + sb * code_bytes;
            const uint8_t *sc = row_scales[a] + sb * scale_bytes;
            prefetch_next_tile(codes[a], supers * code_bytes, (int) code_bytes);
            prefetch_next_tile(sc, supers * scale_bytes, (int) scale_bytes);
            if (bits == 6) {
                uint16_t d;
                memcpy(&d, sc, 2);
                __m512 d_scale = _mm512_mul_ps(_mm512_set1_ps(_cvtsh_ss(d)), _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(
                                                   _mm_loadu_si128((const __m128i *) (sc + 2)))));
                for (int j = 0; j < rn; j++) {
                    /* group g of 16 belongs to activation block g / 2 */
                    __m512 dx = _mm512_permutexvar_ps(
                        _mm512_setr_epi32(0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7),
                        _mm512_castps256_ps512(_mm256_loadu_ps(xd + (i + j) * blocks + sb * SUPER)));
                    products[a][j] = _mm512_mul_ps(d_scale, dx);
                }
            } else {
                __m256 d_scale;
                __m256 dmin_min;
                kquant_scales(sc, &d_scale, &dmin_min);
                for (int j = 0; j < rn; j++) {
                    const uint64_t at = (i + j) * blocks + sb * SUPER;
                    products[a][j] = _mm512_zextps256_ps512(_mm256_mul_ps(d_scale, _mm256_loadu_ps(xd + at)));
                    acc[a][j] = _mm512_fnmadd_ps(_mm512_zextps256_ps512(dmin_min),
                                                 _mm512_zextps256_ps512(_mm256_loadu_ps(xs + at)), acc[a][j]);
                }
            }
        }
        for (int c = 0; c < 4; c++) {
            __m512i q[TILE_M];
            for (int a = 0; a < rm; a++) {
                q[a] = kquant512_codes(bits, codes[a], c, kquant512_high(bits, codes[a], c));
            }
            for (int j = 0; j < rn; j++) {
                __m512i x = _mm512_loadu_si512((const void *) (xq + ((i + j) * blocks + sb * SUPER) * 32 + 64 * c));
                __m512i start = _mm512_setzero_si512();
                if (bits == 6) {
                    start = _mm512_sub_epi32(start, _mm512_dpbusd_epi32(start, _mm512_set1_epi8(32), x));
                }
                for (int a = 0; a < rm; a++) {
                    __m512 dot = _mm512_cvtepi32_ps(_mm512_dpbusd_epi32(start, q[a], x));
                    acc[a][j] = _mm512_fmadd_ps(kquant512_spread(products[a][j], c, bits == 6 ? 4 : 8), dot,
                                                acc[a][j]);
                }
            }
        }
    }
    for (int a = 0; a < rm; a++) {
        for (int j = 0; j < rn; j++) {
            out[(i + j) * stride + r + a] = _mm512_reduce_add_ps(acc[a][j]);
        }
    }
}
#define KQUANT_TILE kquant512_tile
#else
#define KQUANT_TILE kquant_tile
#endif

KQUANT_MATMUL(matmul_q4_k, 4)
KQUANT_MATMUL(matmul_q5_k, 5)
KQUANT_MATMUL(matmul_q6_k, 6)
/*
 * ---- Layout interleaved-16: Q8 and Q4 ----
 *
 * A tile of 16 rows stores 4 bytes of each row side by side, so one vector load holds the same 4-byte step of LANES
 * rows (16 in a 512-bit register, 8 in a 256-bit one: AVX2 takes a tile as two halves). The int8 dot product of each
 * 32-bit lane with the 4 matching activation codes, broadcast to every lane, leaves each lane the partial sum of its
 * own row: no horizontal sums, and the scales of LANES rows are one vector, so a block's float work (convert, scale,
 * accumulate) is done once for LANES rows instead of once per row. A tile is also one contiguous run of memory, which
 * the hardware prefetchers follow on their own.
 */
#if defined(ZSE_AVX512)
#define LANES 16
typedef __m512i vint;
typedef __m512 vfloat;
#define vint_zero _mm512_setzero_si512
#define vfloat_zero _mm512_setzero_ps
#define vint_load(p) _mm512_loadu_si512((const void *) (p))
#define vint_add _mm512_add_epi32
#define vfloat_add _mm512_add_ps
#define vfloat_set1 _mm512_set1_ps
#define vfloat_mul _mm512_mul_ps
#define vfloat_fma _mm512_fmadd_ps
#define vfloat_from_int _mm512_cvtepi32_ps
#define vfloat_store(p, v) _mm512_storeu_ps(p, v)
ALWAYS_INLINE vint vint_bcast4(const int8_t *p) {
    int32_t v;
    memcpy(&v, p, 4);
    return _mm512_set1_epi32(v);
}
ALWAYS_INLINE vfloat vfloat_from_f16(const uint16_t *p) {
    return _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *) p));
}
/* Q8 codes made unsigned by +128 (vpdpbusd's first operand is unsigned); the tile subtracts 128 Σx afterwards. */
#define Q8_BIAS 128
ALWAYS_INLINE vint q8_unsigned(vint w) {
    return _mm512_xor_si512(w, _mm512_set1_epi8((char) 0x80));
}
ALWAYS_INLINE vint q8_dot(vint acc, vint unsigned_w, vint w, vint x) {
    (void) w;
    return _mm512_dpbusd_epi32(acc, unsigned_w, x);
}
/* Q4: the low nibbles as they are, the high ones in place (16 × code): two sums, the second shifted down at the end. */
ALWAYS_INLINE void q4_dot(vint *low, vint *high, vint w, vint x_low, vint x_high) {
    *low = _mm512_dpbusd_epi32(*low, _mm512_and_si512(w, _mm512_set1_epi8(0x0F)), x_low);
    *high = _mm512_dpbusd_epi32(*high, _mm512_and_si512(w, _mm512_set1_epi8((char) 0xF0)), x_high);
}
ALWAYS_INLINE vint q4_sum(vint low, vint high) {
    return _mm512_add_epi32(low, _mm512_srai_epi32(high, 4));
}
#else
#define LANES 8
typedef __m256i vint;
typedef __m256 vfloat;
#define vint_zero _mm256_setzero_si256
#define vfloat_zero _mm256_setzero_ps
#define vint_load(p) _mm256_loadu_si256((const __m256i *) (p))
#define vint_add _mm256_add_epi32
#define vfloat_add _mm256_add_ps
#define vfloat_set1 _mm256_set1_ps
#define vfloat_mul _mm256_mul_ps
#define vfloat_fma _mm256_fmadd_ps
#define vfloat_from_int _mm256_cvtepi32_ps
#define vfloat_store(p, v) _mm256_storeu_ps(p, v)
ALWAYS_INLINE vint vint_bcast4(const int8_t *p) {
    int32_t v;
    memcpy(&v, p, 4);
    return _mm256_set1_epi32(v);
}
ALWAYS_INLINE vfloat vfloat_from_f16(const uint16_t *p) {
    return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *) p));
}
/* |w| · (x with w's sign): pairs of products stay within int16, so vpmaddubsw cannot saturate. */
#define Q8_BIAS 0
ALWAYS_INLINE vint q8_unsigned(vint w) {
    return _mm256_sign_epi8(w, w);
}
ALWAYS_INLINE vint q8_dot(vint acc, vint magnitude, vint w, vint x) {
    return _mm256_add_epi32(acc, dot_u8s8(magnitude, _mm256_sign_epi8(x, w)));
}
ALWAYS_INLINE void q4_dot(vint *low, vint *high, vint w, vint x_low, vint x_high) {
    const __m256i low4 = _mm256_set1_epi8(0x0F);
    *low = _mm256_add_epi32(*low, dot_u8s8(_mm256_and_si256(w, low4), x_low));
    *high = _mm256_add_epi32(*high, dot_u8s8(_mm256_and_si256(_mm256_srli_epi16(w, 4), low4), x_high));
}
ALWAYS_INLINE vint q4_sum(vint low, vint high) {
    return _mm256_add_epi32(low, high);
}
#endif

/* The first byte and scale of the LANES rows from r (a multiple of LANES inside the tiles). */
#define X16_ROWS(w, row_bytes, scales, slots, r)                                                                  \
    const int8_t *tile = (const int8_t *) (w) + ((r) & ~15) * (row_bytes) + ((r) & 15) * 4;                       \
    const uint16_t *tile_scales = (scales) + ((r) & ~15) * (slots) + ((r) & 15);

/* LANES rows from r by rn activation rows from i. */
ALWAYS_INLINE void q8x16_tile(const int8_t *w, const uint16_t *scales, int64_t cols, int64_t r, const int8_t *xq,
                              const float *xd, const float *xs, int64_t i, int rn, float *out, int64_t stride) {
    const int64_t blocks = cols / 32;
    X16_ROWS(w, cols, scales, blocks, r);
    vfloat acc[TILE_N];
    vfloat offset[TILE_N];
    for (int j = 0; j < rn; j++) {
        acc[j] = vfloat_zero();
        offset[j] = vfloat_zero();
    }
    (void) xs;
    (void) offset;
    for (int64_t b = 0; b < blocks; b++) {
        const int8_t *steps = tile + b * 8 * 64;
        vint even[TILE_N];
        vint odd[TILE_N];
        for (int j = 0; j < rn; j++) {
            even[j] = vint_zero();
            odd[j] = vint_zero();
        }
        /* Two sums per activation row, so the dependent int8 dot products form two chains instead of one. */
        for (int c = 0; c < 8; c += 2) {
            vint w0 = vint_load(steps + c * 64);
            vint w1 = vint_load(steps + (c + 1) * 64);
            vint u0 = q8_unsigned(w0);
            vint u1 = q8_unsigned(w1);
            for (int j = 0; j < rn; j++) {
                const int8_t *x = xq + ((i + j) * blocks + b) * 32 + 4 * c;
                even[j] = q8_dot(even[j], u0, w0, vint_bcast4(x));
                odd[j] = q8_dot(odd[j], u1, w1, vint_bcast4(x + 4));
            }
        }
        vfloat d = vfloat_from_f16(tile_scales + b * 16);
        for (int j = 0; j < rn; j++) {
            vfloat dot = vfloat_from_int(vint_add(even[j], odd[j]));
            acc[j] = vfloat_fma(vfloat_mul(d, vfloat_set1(xd[(i + j) * blocks + b])), dot, acc[j]);
#if Q8_BIAS
            offset[j] = vfloat_fma(d, vfloat_set1(xs[(i + j) * blocks + b]), offset[j]);
#endif
        }
    }
    for (int j = 0; j < rn; j++) {
#if Q8_BIAS
        acc[j] = vfloat_fma(vfloat_set1(-(float) Q8_BIAS), offset[j], acc[j]);
#endif
        vfloat_store(out + (i + j) * stride + r, acc[j]);
    }
}

/*
 * Q4, group g: a group is g / 8 steps; step s holds elements 4s.. of the group in its low nibbles and g/2 + 4s.. in its
 * high ones. For g = 32 both halves lie in one activation block, so a group is one run of 4 steps with one sum; for
 * 64 and 128 a run of 8 steps covers 32 low elements (one block) and 32 high ones (the block g/64 further on), whose
 * sums take the two blocks' scales.
 */
ALWAYS_INLINE void q4x16_tile(int g, const uint8_t *w, const uint16_t *scales, int64_t cols, int64_t r,
                              const int8_t *xq, const float *xd, const float *xs, int64_t i, int rn, float *out,
                              int64_t stride) {
    const int64_t blocks = cols / 32;
    const int64_t groups = cols / g;
    const int run = g == 32 ? 4 : 8;
    X16_ROWS(w, cols / 2, scales, 2 * groups, r);
    vfloat acc[TILE_N];
    vfloat offset[TILE_N];
    for (int j = 0; j < rn; j++) {
        acc[j] = vfloat_zero();
        offset[j] = vfloat_zero();
    }
    for (int64_t gi = 0; gi < groups; gi++) {
        const int8_t *steps = tile + gi * (g / 8) * 64;
        const int64_t first_block = gi * (g / 32);
        vfloat d = vfloat_from_f16(tile_scales + gi * 32);
        vfloat m = vfloat_from_f16(tile_scales + gi * 32 + 16);
        for (int s0 = 0; s0 < g / 8; s0 += run) {
            vint low[TILE_N];
            vint high[TILE_N];
            for (int j = 0; j < rn; j++) {
                low[j] = vint_zero();
                high[j] = vint_zero();
            }
            for (int c = s0; c < s0 + run; c++) {
                vint codes = vint_load(steps + c * 64);
                for (int j = 0; j < rn; j++) {
                    const int8_t *x = xq + ((i + j) * blocks + first_block) * 32 + 4 * c;
                    q4_dot(&low[j], &high[j], codes, vint_bcast4(x), vint_bcast4(x + g / 2));
                }
            }
            const int64_t low_block = first_block + 4 * s0 / 32;
            const int64_t high_block = first_block + (g / 2 + 4 * s0) / 32;
            for (int j = 0; j < rn; j++) {
                const float *dx = xd + (i + j) * blocks;
                if (g == 32) {
                    vfloat dot = vfloat_from_int(q4_sum(low[j], high[j]));
                    acc[j] = vfloat_fma(vfloat_mul(d, vfloat_set1(dx[low_block])), dot, acc[j]);
                } else {
                    vfloat dot_low = vfloat_from_int(low[j]);
                    vfloat dot_high = vfloat_from_int(q4_sum(vint_zero(), high[j]));
                    acc[j] = vfloat_fma(vfloat_mul(d, vfloat_set1(dx[low_block])), dot_low, acc[j]);
                    acc[j] = vfloat_fma(vfloat_mul(d, vfloat_set1(dx[high_block])), dot_high, acc[j]);
                }
            }
        }
        for (int j = 0; j < rn; j++) {
            const float *sx = xs + (i + j) * blocks + first_block;
            float group_sum = 0;
            for (int b = 0; b < g / 32; b++) {
                group_sum += sx[b];
            }
            offset[j] = vfloat_fma(m, vfloat_set1(group_sum), offset[j]);
        }
    }
    for (int j = 0; j < rn; j++) {
        vfloat_store(out + (i + j) * stride + r, vfloat_add(acc[j], offset[j]));
    }
}

/* matmul_q8_x16 and matmul_q4_x16: the walk over q8x16_tile and q4x16_tile, LANES rows at a time (tiles.h). */
#define X16_ROW_STEP LANES
#define X16_TILE_N TILE_N
X16_KERNELS

/* ---- NF4: w = NF4[code] * absmax per group of 64, float activations ---- */

/* The code book's value for each of 8 codes: two 8-entry permutes, picked by bit 3 of the code. */
ALWAYS_INLINE __m256 nf4_values(__m256i codes) {
    const __m256 low_half = _mm256_loadu_ps(ZSE_NF4);
    const __m256 high_half = _mm256_loadu_ps(ZSE_NF4 + 8);
    __m256 low = _mm256_permutevar8x32_ps(low_half, codes);
    __m256 high = _mm256_permutevar8x32_ps(high_half, codes);
    return _mm256_blendv_ps(low, high, _mm256_castsi256_ps(_mm256_slli_epi32(codes, 28)));
}

ALWAYS_INLINE void nf4_tile(const uint8_t *w, const uint16_t *scales, int64_t cols, int64_t r, int rm, const float *x,
                            int64_t i, int rn, float *out, int64_t stride) {
    int64_t groups = cols / 64;
    DECLARE_TILE_ACCUMULATORS(acc);
    for (int64_t gi = 0; gi < groups; gi++) {
        __m256 absmax[TILE_M];
        const uint8_t *packed[TILE_M];
        for (int a = 0; a < rm; a++) {
            absmax[a] = _mm256_set1_ps(_cvtsh_ss(scales[(r + a) * groups + gi]));
            packed[a] = w + ((r + a) * cols + gi * 64) / 2;
        }
        /* Eight bytes at a time: elements 8c.. from the low nibbles, 32 + 8c.. from the high ones. */
        for (int c = 0; c < 4; c++) {
            __m256 low[TILE_M];
            __m256 high[TILE_M];
            for (int a = 0; a < rm; a++) {
                __m256i bytes = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *) (packed[a] + 8 * c)));
                low[a] = _mm256_mul_ps(nf4_values(_mm256_and_si256(bytes, _mm256_set1_epi32(0x0F))), absmax[a]);
                high[a] = _mm256_mul_ps(nf4_values(_mm256_srli_epi32(bytes, 4)), absmax[a]);
            }
            for (int j = 0; j < rn; j++) {
                const float *xg = x + (i + j) * cols + gi * 64 + 8 * c;
                __m256 x_low = _mm256_loadu_ps(xg);
                __m256 x_high = _mm256_loadu_ps(xg + 32);
                for (int a = 0; a < rm; a++) {
                    acc[a][j] = _mm256_fmadd_ps(low[a], x_low, _mm256_fmadd_ps(high[a], x_high, acc[a][j]));
                }
            }
        }
    }
    STORE_TILE_SUMS(acc);
}

/* matmul_nf4: the walk over nf4_tile (tiles.h). */
NF4_KERNEL

/* ---- TERNARY: Σ t·q = Σ c·q - Σ q, with c = t + 1 in 0..2 as the unsigned side of the byte dot product ---- */

static inline int32_t hsum_epi32(__m256i v) {
    __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, _MM_SHUFFLE(1, 0, 3, 2)));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, _MM_SHUFFLE(2, 3, 0, 1)));
    return _mm_cvtsi128_si32(s);
}

/*
 * One block (128 elements) is one 32-byte load of codes; shifting its 16-bit lanes right by 2·part and masking each
 * byte to 2 bits gives elements 32·part .. 32·part + 31 in order (bits pulled in from the neighbouring byte land above
 * bit 1 and are masked off).
 */
ALWAYS_INLINE void ternary_tile(const uint8_t *w, float scale, int64_t cols, int64_t r, int rm, const int8_t *xq,
                                const float *xdiv, const int32_t *xsum, int64_t i, int rn, float *out,
                                int64_t stride) {
    const uint64_t row_bytes = (uint64_t) cols / 4;
    const __m256i mask = _mm256_set1_epi8(3);
    __m256i acc[TILE_M][TILE_N];
    for (int a = 0; a < rm; a++) {
        for (int j = 0; j < rn; j++) {
            acc[a][j] = _mm256_setzero_si256();
        }
    }
    for (uint64_t b = 0; b < row_bytes; b += 32) {
        __m256i x[TILE_N][4];
        for (int j = 0; j < rn; j++) {
            for (int part = 0; part < 4; part++) {
                x[j][part] = _mm256_loadu_si256((const __m256i *) (xq + (i + j) * cols + 4 * b + 32 * part));
            }
        }
        for (int a = 0; a < rm; a++) {
            __m256i packed = _mm256_loadu_si256((const __m256i *) (w + (uint64_t) (r + a) * row_bytes + b));
            for (int part = 0; part < 4; part++) {
                __m256i codes = _mm256_and_si256(_mm256_srli_epi16(packed, 2 * part), mask);
                for (int j = 0; j < rn; j++) {
                    acc[a][j] = _mm256_add_epi32(acc[a][j], dot_u8s8(codes, x[j][part]));
                }
            }
        }
    }
    for (int a = 0; a < rm; a++) {
        for (int j = 0; j < rn; j++) {
            int32_t dot = hsum_epi32(acc[a][j]) - xsum[i + j];
            out[(i + j) * stride + r + a] = (float) dot * scale / xdiv[i + j];
        }
    }
}

/*
 * ---- Q5 (ggml's Q5_0/Q5_1 codes), groups of 32 ----
 * The 32 codes of a group: Q4's nibbles (elements 0..15 low, 16..31 high) with bit k of the u32 qh set as 0x10 in
 * byte k (qh's bytes broadcast to their 8 lanes, each lane testing its own bit). Then as Q4: d·d_x·Σ(q·x_q) + m·s.
 */
ALWAYS_INLINE __m256i q5_codes(const uint8_t *group) {
    uint32_t qh;
    memcpy(&qh, group + 16, 4);
    const __m256i spread = _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1,
                                            2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3);
    const __m256i bit = _mm256_set1_epi64x((long long) 0x8040201008040201ULL);
    __m256i bytes = _mm256_shuffle_epi8(_mm256_set1_epi32((int) qh), spread);
    __m256i set = _mm256_cmpeq_epi8(_mm256_and_si256(bytes, bit), bit);
    return _mm256_or_si256(q4_codes(group, 32, 0), _mm256_and_si256(set, _mm256_set1_epi8(0x10)));
}

ALWAYS_INLINE void q5_tile(const uint8_t *w, const uint8_t *scales, int64_t cols, int64_t r, int rm, const int8_t *xq,
                           const float *xd, const float *xs, int64_t i, int rn, float *out, int64_t stride) {
    const uint64_t groups = (uint64_t) cols / 32;
    DECLARE_TILE_ACCUMULATORS(acc);
    float offset[TILE_M][TILE_N] = {{0}};
    for (uint64_t g = 0; g < groups; g++) {
        __m256i codes[TILE_M];
        float d[TILE_M];
        float m[TILE_M];
        for (int a = 0; a < rm; a++) {
            uint64_t at = (uint64_t) (r + a) * groups + g;
            codes[a] = q5_codes(w + at * 20);
            d[a] = zse_f16_to_f32((uint16_t) (scales[4 * at] | scales[4 * at + 1] << 8));
            m[a] = zse_f16_to_f32((uint16_t) (scales[4 * at + 2] | scales[4 * at + 3] << 8));
        }
        for (int j = 0; j < rn; j++) {
            uint64_t block = (uint64_t) (i + j) * groups + g;
            __m256i x = _mm256_loadu_si256((const __m256i *) (xq + block * 32));
            for (int a = 0; a < rm; a++) {
                __m256 dot = _mm256_cvtepi32_ps(dot_u8s8(codes[a], x));
                acc[a][j] = _mm256_fmadd_ps(_mm256_set1_ps(d[a] * xd[block]), dot, acc[a][j]);
                offset[a][j] += m[a] * xs[block];
            }
        }
    }
    for (int a = 0; a < rm; a++) {
        for (int j = 0; j < rn; j++) {
            out[(i + j) * stride + r + a] = hsum(acc[a][j]) + offset[a][j];
        }
    }
}

/* matmul_q5: the walk over q5_tile (tiles.h). */
Q5_KERNEL

/* matmul_ternary: the walk over ternary_tile (tiles.h). */
TERNARY_KERNEL

/* ---- F32, F16, BF16: float products (FLOAT_KERNEL, tiles.h), each with its load of a vector of weights ---- */

ALWAYS_INLINE __m256 load_f32(const float *p) {
    return _mm256_loadu_ps(p);
}

ALWAYS_INLINE __m256 load_f16(const uint16_t *p) {
    return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *) p));
}

ALWAYS_INLINE __m256 load_bf16(const uint16_t *p) {
    __m256i widened = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *) p));
    return _mm256_castsi256_ps(_mm256_slli_epi32(widened, 16));
}

#if defined(ZSE_AVX512)
/*
 * Under AVX-512 the float tiles take 512-bit vectors: cores with two 512-bit FMA pipes (Zen 5, Intel's server cores)
 * then do twice the work per instruction, and the others no less. And six weight rows a tile instead of four: 24
 * accumulators, six weight vectors and one of activations fill the 32 registers, and each load feeds more FMAs (F16
 * prefill at 1 thread on this Zen 5: 80 tok/s with 4 rows, 92 with 6). Only the vector, the loads (16 weights at a
 * time) and TILE_M change, for the rest of the file: the float products come last for that reason.
 */
#undef VEC
#undef VEC_LANES
#undef VEC_ZERO
#undef VEC_FMA
#undef VEC_LOAD
#undef VEC_HSUM
#define VEC __m512
#define VEC_LANES 16
#define VEC_ZERO() _mm512_setzero_ps()
#define VEC_FMA(acc, a, b) _mm512_fmadd_ps(a, b, acc)
#define VEC_LOAD(p) _mm512_loadu_ps(p)
#define VEC_HSUM(v) _mm512_reduce_add_ps(v)

ALWAYS_INLINE __m512 load16_f32(const float *p) {
    return _mm512_loadu_ps(p);
}

ALWAYS_INLINE __m512 load16_f16(const uint16_t *p) {
    return _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *) p));
}

ALWAYS_INLINE __m512 load16_bf16(const uint16_t *p) {
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *) p)), 16));
}

#undef TILE_M
#define TILE_M 6
#define matmul_f16_tiles_TILE(M, N) matmul_f16_tiles_tile(w, cols, r, M, x, i, N, out, out_stride)
#define matmul_bf16_tiles_TILE(M, N) matmul_bf16_tiles_tile(w, cols, r, M, x, i, N, out, out_stride)
FLOAT_KERNEL(matmul_f32, float, load16_f32, read_f32)
FLOAT_KERNEL(matmul_f16_tiles, uint16_t, load16_f16, zse_f16_to_f32)
FLOAT_KERNEL(matmul_bf16_tiles, uint16_t, load16_bf16, zse_bf16_to_f32)

/* 16 F16 (bf16 = 0) or BF16 (bf16 = 1) weights as floats. */
ALWAYS_INLINE __m512 load16_as_floats(const uint16_t *p, int bf16) {
    const __m256i h = _mm256_loadu_si256((const __m256i *) p);
    return bf16 ? _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16)) : _mm512_cvtph_ps(h);
}

/*
 * Decoding (n = 1) of 16-bit float weights: one row at a time, 64 weights a step over four 512-bit accumulators (four
 * FMA chains in flight, one stream of weights). Measured against llama-bench F16 on the synthetic 1B (2 vCPU EPYC):
 * the tile walk (four rows, one 256-bit chain each) decoded at 0.59x at 1 thread, four rows with two 512-bit chains
 * each at 0.71x, this at 0.92x.
 */
ALWAYS_INLINE void decode_16bit(const uint16_t *w, int32_t cols, int32_t row_begin, int32_t row_end, const float *x,
                                float *out, int bf16) {
    const int64_t body = cols - cols % 64;
    for (int32_t r = row_begin; r < row_end; r++) {
        const uint16_t *row = w + (int64_t) r * cols;
        __m512 acc[4] = {_mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps()};
        for (int64_t k = 0; k < body; k += 64) {
            for (int c = 0; c < 4; c++) {
                acc[c] = _mm512_fmadd_ps(load16_as_floats(row + k + 16 * c, bf16), _mm512_loadu_ps(x + k + 16 * c),
                                         acc[c]);
            }
        }
        float sum = _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(acc[0], acc[1]), _mm512_add_ps(acc[2], acc[3])));
        for (int64_t k = body; k < cols; k++) {
            sum += (bf16 ? zse_bf16_to_f32(row[k]) : zse_f16_to_f32(row[k])) * x[k];
        }
        out[r] = sum;
    }
}

/* A 16-bit float product: one activation row through decode_16bit, more through the tile walk. */
#define SIXTEEN_BIT_KERNEL(name, tiles, bf16)                                                                     \
    static void name(const uint16_t *w, int32_t cols, int32_t row_begin, int32_t row_end, const float *x,       \
                     int32_t n, float *out, int32_t out_stride) {                                               \
        if (n == 1) {                                                                                           \
            decode_16bit(w, cols, row_begin, row_end, x, out, bf16);                                            \
        } else {                                                                                                \
            tiles(w, cols, row_begin, row_end, x, n, out, out_stride);                                          \
        }                                                                                                       \
    }
SIXTEEN_BIT_KERNEL(matmul_f16, matmul_f16_tiles, 0)
SIXTEEN_BIT_KERNEL(matmul_bf16, matmul_bf16_tiles, 1)
#else
FLOAT_KERNEL(matmul_f32, float, load_f32, read_f32)
FLOAT_KERNEL(matmul_f16, uint16_t, load_f16, zse_f16_to_f32)
FLOAT_KERNEL(matmul_bf16, uint16_t, load_bf16, zse_bf16_to_f32)
#endif

const struct zse_cpu_kernels KERNELS = {
    ZSE_CPU_FULL_SET(KERNELS_NAME),
    .matmul_q5 = matmul_q5,
};
