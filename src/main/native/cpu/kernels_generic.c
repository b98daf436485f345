/*
 * kernels_generic.c: portable C, for CPUs with no kernel set of their own, and the reference the SIMD sets are tested
 * against. The same arithmetic as the SIMD sets (int8 activations for Q8 and Q4), one output at a time.
 */
#include "kernels.h"
#include "ops.h"

static void quantize_rows(const float *x, int32_t n, int32_t cols, int8_t *q, float *d, float *s) {
    zse_quantize_rows(x, n, cols, q, d, s);
}

static void matmul_q8(const int8_t *w, const uint16_t *scales, int32_t cols, int32_t row_begin, int32_t row_end,
                      const int8_t *xq, const float *xd, int32_t n, float *out, int32_t out_stride) {
    int64_t blocks = cols / 32;
    for (int64_t r = row_begin; r < row_end; r++) {
        for (int64_t i = 0; i < n; i++) {
            float sum = 0;
            for (int64_t b = 0; b < blocks; b++) {
                const int8_t *wb = w + r * cols + b * 32;
                const int8_t *xb = xq + i * cols + b * 32;
                int32_t dot = 0;
                for (int k = 0; k < 32; k++) {
                    dot += wb[k] * xb[k];
                }
                sum += zse_f16_to_f32(scales[r * blocks + b]) * xd[i * blocks + b] * (float) dot;
            }
            out[i * out_stride + r] = sum;
        }
    }
}

static void matmul_q4(const uint8_t *w, const uint16_t *scales, int32_t group, int32_t cols, int32_t row_begin,
                      int32_t row_end, const int8_t *xq, const float *xd, const float *xs, int32_t n, float *out,
                      int32_t out_stride) {
    int64_t groups = cols / group;
    int64_t half = group / 2;
    for (int64_t r = row_begin; r < row_end; r++) {
        for (int64_t i = 0; i < n; i++) {
            float sum = 0;
            for (int64_t g = 0; g < groups; g++) {
                const uint8_t *packed = w + (r * cols + g * group) / 2;
                const int8_t *x = xq + i * cols + g * group;
                float d = zse_f16_to_f32(scales[2 * (r * groups + g)]);
                float m = zse_f16_to_f32(scales[2 * (r * groups + g) + 1]);
                for (int64_t b = 0; b < group / 32; b++) {
                    int32_t dot = 0;
                    for (int64_t k = b * 32; k < b * 32 + 32; k++) {
                        int code = k < half ? packed[k] & 0x0F : packed[k - half] >> 4;
                        dot += code * x[k];
                    }
                    int64_t block = (i * cols + g * group) / 32 + b;
                    sum += d * xd[block] * (float) dot + m * xs[block];
                }
            }
            out[i * out_stride + r] = sum;
        }
    }
}

/*
 * K-quants: one super-block of 256 is 8 activation blocks of 32. Q4_K and Q5_K: Σ_j d·scale_j·d_x,j·Σ(q·x_q) -
 * dmin·min_j·s_j per sub-block j (s_j = d_x,j Σ x_q, the block sum); Q6_K: d·scale·d_x·Σ((q - 32)·x_q) per 16.
 */
static inline float kquant_dot(int bits, const uint8_t *codes, const uint8_t *scales, const int8_t *x, const float *xd,
                               const float *xs) {
    if (bits == 6) {
        float d = zse_f16_to_f32((uint16_t) (scales[0] | scales[1] << 8));
        const int8_t *sc = (const int8_t *) scales + 2;
        float sum = 0;
        for (int h = 0; h < 2; h++) {
            const uint8_t *ql = codes + 64 * h;
            const uint8_t *qh = codes + 128 + 32 * h;
            for (int part = 0; part < 4; part++) {
                /* elements 128h + 32·part + l: low or high nibbles of ql[l] or ql[32 + l], bits 2·part of qh[l] */
                for (int half16 = 0; half16 < 2; half16++) {
                    int32_t dot = 0;
                    for (int l = 16 * half16; l < 16 * half16 + 16; l++) {
                        int low4 = (ql[l + 32 * (part & 1)] >> (4 * (part >> 1))) & 0xF;
                        int q = (low4 | ((qh[l] >> (2 * part)) & 3) << 4) - 32;
                        dot += q * x[128 * h + 32 * part + l];
                    }
                    sum += d * sc[8 * h + 2 * part + half16] * xd[4 * h + part] * (float) dot;
                }
            }
        }
        return sum;
    }
    uint8_t scale_min[16];
    zse_kquant_scale_min(scales + 4, scale_min);
    const uint8_t *scale = scale_min;
    const uint8_t *min = scale_min + 8;
    float d = zse_f16_to_f32((uint16_t) (scales[0] | scales[1] << 8));
    float dmin = zse_f16_to_f32((uint16_t) (scales[2] | scales[3] << 8));
    float sum = 0;
    for (int j = 0; j < 8; j++) {
        int32_t dot = 0;
        for (int l = 0; l < 32; l++) {
            int q = (codes[32 * (j / 2) + l] >> (4 * (j % 2))) & 0xF;
            if (bits == 5) {
                q |= ((codes[128 + l] >> j) & 1) << 4;
            }
            dot += q * x[32 * j + l];
        }
        sum += d * scale[j] * xd[j] * (float) dot - dmin * min[j] * xs[j];
    }
    return sum;
}

static inline void matmul_kquant(int bits, const uint8_t *w, const uint8_t *scales, int32_t cols, int32_t row_begin,
                                 int32_t row_end, const int8_t *xq, const float *xd, const float *xs, int32_t n,
                                 float *out, int32_t out_stride) {
    int64_t supers = cols / 256;
    int64_t code_bytes = bits == 4 ? 128 : bits == 5 ? 160 : 192;
    int64_t scale_bytes = bits == 6 ? 18 : 16;
    for (int64_t r = row_begin; r < row_end; r++) {
        for (int64_t i = 0; i < n; i++) {
            float sum = 0;
            for (int64_t sb = 0; sb < supers; sb++) {
                int64_t s = r * supers + sb;
                int64_t block = (i * cols) / 32 + 8 * sb;
                sum += kquant_dot(bits, w + s * code_bytes, scales + s * scale_bytes, xq + i * cols + 256 * sb,
                                  xd + block, xs + block);
            }
            out[i * out_stride + r] = sum;
        }
    }
}

#define KQUANT_MATMUL(name, bits)                                                                                 \
    static void name(const uint8_t *w, const uint8_t *scales, int32_t cols, int32_t row_begin, int32_t row_end,   \
                     const int8_t *xq, const float *xd, const float *xs, int32_t n, float *out, int32_t out_stride) { \
        matmul_kquant(bits, w, scales, cols, row_begin, row_end, xq, xd, xs, n, out, out_stride);                 \
    }
KQUANT_MATMUL(matmul_q4_k, 4)
KQUANT_MATMUL(matmul_q5_k, 5)
KQUANT_MATMUL(matmul_q6_k, 6)

/* Q5: per group of 32, d·d_x·Σ(q·x_q) + m·s (s = d_x Σ x_q, the block sum), q = nibble | fifth bit << 4. */
static void matmul_q5(const uint8_t *w, const uint8_t *scales, int32_t cols, int32_t row_begin, int32_t row_end,
                      const int8_t *xq, const float *xd, const float *xs, int32_t n, float *out, int32_t out_stride) {
    int64_t groups = cols / 32;
    for (int64_t r = row_begin; r < row_end; r++) {
        for (int64_t i = 0; i < n; i++) {
            float sum = 0;
            for (int64_t g = 0; g < groups; g++) {
                const uint8_t *group = w + (r * groups + g) * 20;
                const uint8_t *pair = scales + (r * groups + g) * 4;
                uint32_t qh;
                memcpy(&qh, group + 16, 4);
                const int8_t *x = xq + i * cols + g * 32;
                int32_t dot = 0;
                for (int k = 0; k < 32; k++) {
                    int q = (k < 16 ? group[k] & 0x0F : group[k - 16] >> 4) | ((qh >> k) & 1) << 4;
                    dot += q * x[k];
                }
                int64_t block = i * groups + g;
                float d = zse_f16_to_f32((uint16_t) (pair[0] | pair[1] << 8));
                float m = zse_f16_to_f32((uint16_t) (pair[2] | pair[3] << 8));
                sum += d * xd[block] * (float) dot + m * xs[block];
            }
            out[i * out_stride + r] = sum;
        }
    }
}

/* Layout interleaved-16: the same sums as matmul_q8 and matmul_q4, each byte found by zse_x16_byte. */
static void matmul_q8_x16(const int8_t *w, const uint16_t *scales, int32_t rows, int32_t cols, int32_t row_begin,
                          int32_t row_end, const int8_t *xq, const float *xd, const float *xs, int32_t n, float *out,
                          int32_t out_stride) {
    (void) xs;
    int64_t blocks = cols / 32;
    int64_t full = rows & ~15;
    for (int64_t r = row_begin; r < row_end; r++) {
        for (int64_t i = 0; i < n; i++) {
            float sum = 0;
            for (int64_t b = 0; b < blocks; b++) {
                const int8_t *xb = xq + i * cols + b * 32;
                int32_t dot = 0;
                for (int k = 0; k < 32; k++) {
                    dot += w[zse_x16_byte(r, cols, b * 32 + k, full)] * xb[k];
                }
                sum += zse_f16_to_f32(scales[zse_x16_scale(r, blocks, b, full)]) * xd[i * blocks + b] * (float) dot;
            }
            out[i * out_stride + r] = sum;
        }
    }
}

static void matmul_q4_x16(const uint8_t *w, const uint16_t *scales, int32_t group, int32_t rows, int32_t cols,
                          int32_t row_begin, int32_t row_end, const int8_t *xq, const float *xd, const float *xs,
                          int32_t n, float *out, int32_t out_stride) {
    int64_t blocks = cols / 32;
    int64_t groups = cols / group;
    int64_t half = group / 2;
    int64_t full = rows & ~15;
    for (int64_t r = row_begin; r < row_end; r++) {
        for (int64_t i = 0; i < n; i++) {
            float sum = 0;
            for (int64_t g = 0; g < groups; g++) {
                float d = zse_f16_to_f32(scales[zse_x16_scale(r, 2 * groups, 2 * g, full)]);
                float m = zse_f16_to_f32(scales[zse_x16_scale(r, 2 * groups, 2 * g + 1, full)]);
                for (int64_t b = 0; b < group / 32; b++) {
                    /* Group byte j holds elements j (low nibble) and j + group/2 (high nibble). */
                    int32_t dot = 0;
                    for (int64_t k = b * 32; k < b * 32 + 32; k++) {
                        int64_t j = k < half ? k : k - half;
                        uint8_t packed = w[zse_x16_byte(r, cols / 2, g * half + j, full)];
                        dot += (k < half ? packed & 0x0F : packed >> 4) * xq[i * cols + g * group + k];
                    }
                    int64_t block = i * blocks + g * (group / 32) + b;
                    sum += d * xd[block] * (float) dot + m * xs[block];
                }
            }
            out[i * out_stride + r] = sum;
        }
    }
}

static void matmul_nf4(const uint8_t *w, const uint16_t *scales, int32_t cols, int32_t row_begin, int32_t row_end,
                       const float *x, int32_t n, float *out, int32_t out_stride) {
    int64_t groups = cols / 64;
    for (int64_t r = row_begin; r < row_end; r++) {
        for (int64_t i = 0; i < n; i++) {
            float sum = 0;
            for (int64_t g = 0; g < groups; g++) {
                const uint8_t *packed = w + (r * cols + g * 64) / 2;
                const float *xg = x + i * cols + g * 64;
                float part = 0;
                for (int k = 0; k < 32; k++) {
                    part += ZSE_NF4[packed[k] & 0x0F] * xg[k] + ZSE_NF4[packed[k] >> 4] * xg[k + 32];
                }
                sum += zse_f16_to_f32(scales[r * groups + g]) * part;
            }
            out[i * out_stride + r] = sum;
        }
    }
}

/* The float types differ only in how one weight element is read. */
#define FLOAT_MATMUL(name, type, read)                                                                            \
    static void name(const type *w, int32_t cols, int32_t row_begin, int32_t row_end, const float *x, int32_t n,  \
                     float *out, int32_t out_stride) {                                                           \
        for (int64_t r = row_begin; r < row_end; r++) {                                                           \
            for (int64_t i = 0; i < n; i++) {                                                                     \
                float sum = 0;                                                                                    \
                for (int64_t k = 0; k < cols; k++) {                                                              \
                    sum += read(w[r * cols + k]) * x[i * cols + k];                                               \
                }                                                                                                 \
                out[i * out_stride + r] = sum;                                                                    \
            }                                                                                                     \
        }                                                                                                         \
    }

static inline float read_f32(float v) {
    return v;
}

FLOAT_MATMUL(matmul_f32, float, read_f32)
FLOAT_MATMUL(matmul_f16, uint16_t, zse_f16_to_f32)
FLOAT_MATMUL(matmul_bf16, uint16_t, zse_bf16_to_f32)

/* Σ t·q with t = c - 1 read straight from the block layout; xsum is not needed here. */
static void matmul_ternary(const uint8_t *w, float scale, int32_t cols, int32_t row_begin, int32_t row_end,
                           const int8_t *xq, const float *xdiv, const int32_t *xsum, int32_t n, float *out,
                           int32_t out_stride) {
    (void) xsum;
    for (int64_t r = row_begin; r < row_end; r++) {
        const uint8_t *row = w + r * cols / 4;
        for (int64_t i = 0; i < n; i++) {
            const int8_t *x = xq + i * cols;
            int32_t dot = 0;
            for (int64_t k = 0; k < cols; k++) {
                int code = (row[k / 128 * 32 + (k & 31)] >> (2 * ((k & 127) >> 5))) & 3;
                dot += (code - 1) * x[k];
            }
            out[i * out_stride + r] = (float) dot * scale / xdiv[i];
        }
    }
}

const struct zse_cpu_kernels zse_cpu_generic = {
    ZSE_CPU_FULL_SET("generic"),
    .matmul_q5 = matmul_q5,
};
