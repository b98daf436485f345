/* kernels.h: what each kernel set (one translation unit per instruction set) provides to the dispatcher. */
#ifndef ZSE_CPU_KERNELS_H
#define ZSE_CPU_KERNELS_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "zse_cpu.h"

struct zse_cpu_kernels {
    const char *name;
    void (*quantize_rows)(const float *x, int32_t n, int32_t cols, int8_t *q, float *d, float *s);
    void (*matmul_q8)(const int8_t *w, const uint16_t *scales, int32_t cols, int32_t row_begin, int32_t row_end,
                      const int8_t *xq, const float *xd, int32_t n, float *out, int32_t out_stride);
    void (*matmul_q4)(const uint8_t *w, const uint16_t *scales, int32_t group, int32_t cols, int32_t row_begin,
                      int32_t row_end, const int8_t *xq, const float *xd, const float *xs, int32_t n, float *out,
                      int32_t out_stride);
    /* Q4_K, Q5_K, Q6_K: super-blocks of 256 (docs/zse-format.md), activations as for Q4. */
    void (*matmul_q4_k)(const uint8_t *w, const uint8_t *scales, int32_t cols, int32_t row_begin, int32_t row_end,
                        const int8_t *xq, const float *xd, const float *xs, int32_t n, float *out, int32_t out_stride);
    void (*matmul_q5_k)(const uint8_t *w, const uint8_t *scales, int32_t cols, int32_t row_begin, int32_t row_end,
                        const int8_t *xq, const float *xd, const float *xs, int32_t n, float *out, int32_t out_stride);
    void (*matmul_q6_k)(const uint8_t *w, const uint8_t *scales, int32_t cols, int32_t row_begin, int32_t row_end,
                        const int8_t *xq, const float *xd, const float *xs, int32_t n, float *out, int32_t out_stride);
    void (*matmul_q8_x16)(const int8_t *w, const uint16_t *scales, int32_t rows, int32_t cols, int32_t row_begin,
                          int32_t row_end, const int8_t *xq, const float *xd, const float *xs, int32_t n, float *out,
                          int32_t out_stride);
    void (*matmul_q4_x16)(const uint8_t *w, const uint16_t *scales, int32_t group, int32_t rows, int32_t cols,
                          int32_t row_begin, int32_t row_end, const int8_t *xq, const float *xd, const float *xs,
                          int32_t n, float *out, int32_t out_stride);
    void (*matmul_nf4)(const uint8_t *w, const uint16_t *scales, int32_t cols, int32_t row_begin, int32_t row_end,
                       const float *x, int32_t n, float *out, int32_t out_stride);
    void (*matmul_f32)(const float *w, int32_t cols, int32_t row_begin, int32_t row_end, const float *x, int32_t n,
                       float *out, int32_t out_stride);
    void (*matmul_f16)(const uint16_t *w, int32_t cols, int32_t row_begin, int32_t row_end, const float *x,
                       int32_t n, float *out, int32_t out_stride);
    void (*matmul_bf16)(const uint16_t *w, int32_t cols, int32_t row_begin, int32_t row_end, const float *x,
                        int32_t n, float *out, int32_t out_stride);
    void (*matmul_ternary)(const uint8_t *w, float scale, int32_t cols, int32_t row_begin, int32_t row_end,
                           const int8_t *xq, const float *xdiv, const int32_t *xsum, int32_t n, float *out,
                           int32_t out_stride);
    /* Q5 (ggml's Q5_0/Q5_1 codes), groups of 32: 20 bytes each (16 of nibbles, a u32 of fifth bits), scales F16
     * (d, m) per group; activations as for Q4. Not in ZSE_CPU_FULL_SET: a set without it runs the generic one. */
    void (*matmul_q5)(const uint8_t *w, const uint8_t *scales, int32_t cols, int32_t row_begin, int32_t row_end,
                      const int8_t *xq, const float *xd, const float *xs, int32_t n, float *out, int32_t out_stride);
    /* The element-wise ops and attention of ops.h, as zse_cpu.h declares them. */
    void (*rms_norm)(const float *x, int32_t n, int32_t dim, const float *weight, float eps, float *out);
    void (*add)(float *x, const float *y, int64_t length);
    void (*scale)(float *x, int64_t length, float factor);
    void (*swiglu)(float *gate, const float *up, int64_t length);
    void (*geglu)(float *gate, const float *up, int64_t length);
    void (*relu2_glu)(float *gate, const float *up, int64_t length);
    void (*rope)(float *x, int32_t from_row, int32_t to_row, const int32_t *positions, int32_t heads, int32_t head_dim,
                 const float *inverse_frequencies);
    double (*read_all)(const float *p, int64_t count);
    void (*attention_head)(const float *q, int32_t head_dim, int32_t kv_type, const void *keys, const void *values,
                           const float *key_scales, const float *value_scales, int32_t kv_dim, int32_t kv_head,
                           int32_t num_kv_heads, const int32_t *slots, int32_t first, int32_t last,
                           float logit_scale, float soft_cap, float *scores, float *out);
};

/* A set that defines every kernel under its field's name (static functions; the ops from ops.h) lists them all. */
#define ZSE_CPU_FULL_SET(set_name)                                                                                \
    .name = set_name, .quantize_rows = quantize_rows, .matmul_q8 = matmul_q8, .matmul_q4 = matmul_q4,              \
    .matmul_q4_k = matmul_q4_k, .matmul_q5_k = matmul_q5_k, .matmul_q6_k = matmul_q6_k,                           \
    .matmul_q8_x16 = matmul_q8_x16, .matmul_q4_x16 = matmul_q4_x16, .matmul_nf4 = matmul_nf4,                     \
    .matmul_f32 = matmul_f32, .matmul_f16 = matmul_f16, .matmul_bf16 = matmul_bf16, .matmul_ternary = matmul_ternary, \
    .rms_norm = rms_norm, .add = add, .scale = scale, .swiglu = swiglu, .geglu = geglu, .relu2_glu = relu2_glu,     \
    .rope = rope, .read_all = read_all, .attention_head = attention_head

extern const struct zse_cpu_kernels zse_cpu_generic;
#if defined(__x86_64__)
extern const struct zse_cpu_kernels zse_cpu_avx2;
extern const struct zse_cpu_kernels zse_cpu_avx512;
#elif defined(__aarch64__)
extern const struct zse_cpu_kernels zse_cpu_neon_dotprod;
#endif

/* The bitsandbytes NormalFloat-4 code book (the same values as io.zse.format.Nf4). */
static const float ZSE_NF4[16] = {
    -1.0f, -0.6961928009986877f, -0.5250730514526367f, -0.39491748809814453f, -0.28444138169288635f,
    -0.18477343022823334f, -0.09105003625154495f, 0.0f, 0.07958029955625534f, 0.16093020141124725f,
    0.24611230194568634f, 0.33791524171829224f, 0.44070982933044434f, 0.5626170039176941f,
    0.7229568362236023f, 1.0f};

static inline float zse_f16_to_f32(uint16_t h) {
    uint32_t sign = (uint32_t) (h & 0x8000) << 16;
    uint32_t exponent = (h >> 10) & 0x1F;
    uint32_t mantissa = h & 0x3FF;
    uint32_t bits;
    if (exponent == 0x1F) {
        bits = sign | 0x7F800000u | (mantissa << 13);
    } else if (exponent != 0) {
        bits = sign | ((exponent + 112) << 23) | (mantissa << 13);
    } else if (mantissa == 0) {
        bits = sign;
    } else {
        /* subnormal: value = mantissa * 2^-24 */
        float value = (float) mantissa * 5.9604644775390625e-8f;
        memcpy(&bits, &value, 4);
        bits |= sign;
    }
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

/*
 * Layout interleaved-16: each tile of 16 whole rows holds the rows' bytes in steps of 4 (step k of rows 0..15, then
 * step k + 1 ...), its scales as per-row slot j of rows 0..15, then slot j + 1 (Q8: d per group; Q4: d then m per
 * group). Rows after the last whole tile stay in row-groups. Tiles and rows sit at their row-groups offsets.
 * Where byte k of row r lies, of a matrix with row_bytes per row and full_rows (a multiple of 16) in tiles:
 */
static inline int64_t zse_x16_byte(int64_t r, int64_t row_bytes, int64_t k, int64_t full_rows) {
    if (r >= full_rows) {
        return r * row_bytes + k;
    }
    return (r & ~15) * row_bytes + (k >> 2) * 64 + (r & 15) * 4 + (k & 3);
}

/* Where scale slot j of row r lies, of slots_per_row per row. */
static inline int64_t zse_x16_scale(int64_t r, int64_t slots_per_row, int64_t j, int64_t full_rows) {
    if (r >= full_rows) {
        return r * slots_per_row + j;
    }
    return (r & ~15) * slots_per_row + j * 16 + (r & 15);
}

static inline float zse_bf16_to_f32(uint16_t h) {
    uint32_t bits = (uint32_t) h << 16;
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

/*
 * The eight 6-bit scales and mins of a Q4_K / Q5_K super-block from its 12 packed bytes (ggml's get_scale_min_k4):
 * sub-block j covers elements 32j .. 32j + 31. Bytes 0-3 hold scales 0-3 (low 6 bits) and the top 2 bits of scales
 * 4-7; bytes 4-7 mins 0-3 and the top bits of mins 4-7; bytes 8-11 the low 4 bits of scales 4-7 (low nibble) and
 * mins 4-7 (high nibble). Unpacked four bytes at a time in 32-bit words: out[0..7] scales, out[8..15] mins.
 */
static inline void zse_kquant_scale_min(const uint8_t *packed, uint8_t out[16]) {
    uint32_t w[3];
    memcpy(w, packed, 12);
    const uint32_t low6 = 0x3F3F3F3Fu;
    const uint32_t low4 = 0x0F0F0F0Fu;
    const uint32_t top2 = 0x03030303u;
    uint32_t unpacked[4] = {
        w[0] & low6,
        (w[2] & low4) | ((w[0] >> 6) & top2) << 4,
        w[1] & low6,
        ((w[2] >> 4) & low4) | ((w[1] >> 6) & top2) << 4,
    };
    memcpy(out, unpacked, 16);
}

/*
 * Per block of 32: d = max|x| / 127, codes = round-to-nearest-even(x / d), s = d * sum(codes). Plain C written so
 * the compiler vectorizes it for each instruction set it is included under.
 */
static inline void zse_quantize_rows(const float *x, int32_t n, int32_t cols, int8_t *q, float *d, float *s) {
    int64_t blocks = (int64_t) n * cols / 32;
    for (int64_t b = 0; b < blocks; b++) {
        const float *v = x + b * 32;
        float amax = 0;
        for (int k = 0; k < 32; k++) {
            amax = fmaxf(amax, fabsf(v[k]));
        }
        float scale = amax / 127.0f;
        float inverse = amax == 0 ? 0.0f : 127.0f / amax;
        int sum = 0;
        for (int k = 0; k < 32; k++) {
            int code = (int) nearbyintf(v[k] * inverse);
            q[b * 32 + k] = (int8_t) code;
            sum += code;
        }
        d[b] = scale;
        s[b] = scale * (float) sum;
    }
}

#endif
