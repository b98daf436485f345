/*
 * ops.h: the element-wise ops and the attention of one query head, in plain C written so the compiler vectorizes it
 * for each instruction set it is included under (every kernel set includes it and lists these in ZSE_CPU_FULL_SET).
 * They are cheap next to the weight products once Java's JIT has compiled its own loops, but a process that answers
 * one prompt and exits never gets there: run natively, the first token needs no warm-up.
 *
 * Each op repeats the Java backend's float operations in the same order (io.zse.backend.cpu.JavaElementwise), except
 * the exponential: zse_expf below is within 2 ulp of exp, as the Vector API's is.
 */
#ifndef ZSE_CPU_OPS_H
#define ZSE_CPU_OPS_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "kernels.h"

/*
 * e^x = 2^n · e^r with n = round(x / ln 2) and |r| <= ln 2 / 2; e^r by Cephes' expf polynomial. Branch-free (the
 * rounding by the 1.5 · 2^23 trick, the power of two built in the exponent bits), so loops over it vectorize. Inputs
 * are clamped to [-87.3, 88]: below, the result is the smallest normal float instead of a subnormal or 0.
 */
static inline float zse_expf(float x) {
    const float round_magic = 12582912.0f; /* 1.5 * 2^23: adding it rounds a float below 2^22 to an integer */
    x = x > -87.33654f ? x : -87.33654f; /* comparisons, not fminf/fmaxf: those are calls where NaN rules apply */
    x = x < 88.0f ? x : 88.0f;
    float n = (x * 1.44269504088896341f + round_magic) - round_magic;
    float r = x - n * 0.693359375f;
    r = r - n * -2.12194440e-4f;
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    p = p * (r * r) + r + 1.0f;
    uint32_t bits = (uint32_t) ((int32_t) n + 127) << 23;
    float power;
    memcpy(&power, &bits, sizeof power);
    return p * power;
}

/* tanh(y) = sign(y) · (1 - e) / (1 + e) with e = e^(-2|y|), which cannot overflow. */
static inline float zse_tanhf(float y) {
    float e = zse_expf(-2.0f * fabsf(y));
    return copysignf((1.0f - e) / (1.0f + e), y);
}

/* out[i] = weight[k] * (x[i] * inverse_rms) per row; the sum of squares in double, as the Java loop takes it. */
static inline void rms_norm(const float *x, int32_t n, int32_t dim, const float *weight, float eps, float *out) {
    for (int32_t i = 0; i < n; i++) {
        const float *row = x + (int64_t) i * dim;
        float *target = out + (int64_t) i * dim;
        double lanes[8] = {0};
        int32_t k = 0;
        for (; k + 8 <= dim; k += 8) {
            for (int j = 0; j < 8; j++) {
                lanes[j] += (double) row[k + j] * row[k + j];
            }
        }
        double sum_of_squares = 0;
        for (int j = 0; j < 8; j++) {
            sum_of_squares += lanes[j];
        }
        for (; k < dim; k++) {
            sum_of_squares += (double) row[k] * row[k];
        }
        float inverse_rms = (float) (1.0 / sqrt(sum_of_squares / dim + eps));
        for (k = 0; k < dim; k++) {
            target[k] = weight[k] * (row[k] * inverse_rms);
        }
    }
}

static inline void add(float *x, const float *y, int64_t length) {
    for (int64_t k = 0; k < length; k++) {
        x[k] += y[k];
    }
}

static inline void scale(float *x, int64_t length, float factor) {
    for (int64_t k = 0; k < length; k++) {
        x[k] *= factor;
    }
}

/* gate = silu(gate) * up */
static inline void swiglu(float *gate, const float *up, int64_t length) {
    for (int64_t k = 0; k < length; k++) {
        float g = gate[k];
        gate[k] = g / (zse_expf(-g) + 1.0f) * up[k];
    }
}

/* gate = gelu_tanh(gate) * up (the constants of io.zse.backend.cpu.ScalarKernels) */
static inline void geglu(float *gate, const float *up, int64_t length) {
    for (int64_t k = 0; k < length; k++) {
        float g = gate[k];
        float inner = (g * g * g * 0.044715f + g) * 0.7978845608028654f;
        gate[k] = g * 0.5f * (zse_tanhf(inner) + 1.0f) * up[k];
    }
}

/* gate = relu(gate)^2 * up (BitNet) */
static inline void relu2_glu(float *gate, const float *up, int64_t length) {
    for (int64_t k = 0; k < length; k++) {
        float g = gate[k] > 0.0f ? gate[k] : 0.0f;
        gate[k] = g * g * up[k];
    }
}

/*
 * Rotates rows [from_row, to_row) of x ([rows, heads, head_dim]) in place: the pair (j, j + head_dim / 2) of each head
 * by positions[row] * inverse_frequencies[j], the angle in F32 and its cosine and sine rounded once from double.
 */
static inline void rope(float *x, int32_t from_row, int32_t to_row, const int32_t *positions, int32_t heads,
                        int32_t head_dim, const float *inverse_frequencies) {
    int32_t half = head_dim / 2;
    for (int32_t i = from_row; i < to_row; i++) {
        float position = (float) positions[i];
        for (int32_t j = 0; j < half; j++) {
            float angle = position * inverse_frequencies[j];
            float c = (float) cos(angle);
            float s = (float) sin(angle);
            for (int32_t h = 0; h < heads; h++) {
                float *head = x + ((int64_t) i * heads + h) * head_dim;
                float a = head[j];
                float b = head[j + half];
                head[j] = a * c - b * s;
                head[j + half] = b * c + a * s;
            }
        }
    }
}

/* The sum of count floats, in 64 independent lanes (four AVX-512 chains): the bandwidth probe's read, which must
 * depend on every byte and keep up with memory. */
static inline double read_all(const float *p, int64_t count) {
    float lanes[64] = {0};
    int64_t k = 0;
    for (; k + 64 <= count; k += 64) {
        for (int j = 0; j < 64; j++) {
            lanes[j] += p[k + j];
        }
    }
    double sum = 0;
    for (int j = 0; j < 64; j++) {
        sum += lanes[j];
    }
    for (; k < count; k++) {
        sum += p[k];
    }
    return sum;
}

/* Σ k[i] q[i] in 16 independent lanes (one AVX-512 register), then the lanes and the tail. */
#define ZSE_OPS_DOT(widen)                                                                                            \
    float lanes[16] = {0};                                                                                            \
    int32_t i = 0;                                                                                                    \
    for (; i + 16 <= d; i += 16) {                                                                                    \
        for (int j = 0; j < 16; j++) {                                                                                \
            lanes[j] += widen(k[i + j]) * q[i + j];                                                                   \
        }                                                                                                             \
    }                                                                                                                 \
    float sum = 0;                                                                                                    \
    for (int j = 0; j < 16; j++) {                                                                                    \
        sum += lanes[j];                                                                                              \
    }                                                                                                                 \
    for (; i < d; i++) {                                                                                              \
        sum += widen(k[i]) * q[i];                                                                                    \
    }                                                                                                                 \
    return sum;

#define ZSE_OPS_SAME(v) (v)
#define ZSE_OPS_CODE(v) ((float) (v))

static inline float dot_f32(const float *k, const float *q, int32_t d) {
    ZSE_OPS_DOT(ZSE_OPS_SAME)
}

static inline float dot_f16(const uint16_t *k, const float *q, int32_t d) {
    ZSE_OPS_DOT(zse_f16_to_f32)
}

static inline float dot_i8(const int8_t *k, const float *q, int32_t d) {
    ZSE_OPS_DOT(ZSE_OPS_CODE)
}

/* out[i] += a · v[i] */
#define ZSE_OPS_ACCUMULATE(widen)                                                                                     \
    for (int32_t i = 0; i < d; i++) {                                                                                 \
        out[i] += a * widen(v[i]);                                                                                    \
    }

static inline void accumulate_f32(const float *v, float a, float *out, int32_t d) {
    ZSE_OPS_ACCUMULATE(ZSE_OPS_SAME)
}

static inline void accumulate_f16(const uint16_t *v, float a, float *out, int32_t d) {
    ZSE_OPS_ACCUMULATE(zse_f16_to_f32)
}

static inline void accumulate_i8(const int8_t *v, float a, float *out, int32_t d) {
    ZSE_OPS_ACCUMULATE(ZSE_OPS_CODE)
}

/* The stored row of kv_head at slot: its dot product with q, or out += a times it; INT8 rows times their scale. */
static inline float kv_dot(int32_t kv_type, const void *rows, const float *scales, int64_t element, int64_t scale_index,
                           const float *q, int32_t d) {
    switch (kv_type) {
        case ZSE_CPU_KV_F16:
            return dot_f16((const uint16_t *) rows + element, q, d);
        case ZSE_CPU_KV_INT8:
            return dot_i8((const int8_t *) rows + element, q, d) * scales[scale_index];
        default:
            return dot_f32((const float *) rows + element, q, d);
    }
}

static inline void kv_accumulate(int32_t kv_type, const void *rows, const float *scales, int64_t element,
                                 int64_t scale_index, float p, float *out, int32_t d) {
    switch (kv_type) {
        case ZSE_CPU_KV_F16:
            accumulate_f16((const uint16_t *) rows + element, p, out, d);
            break;
        case ZSE_CPU_KV_INT8:
            accumulate_i8((const int8_t *) rows + element, p * scales[scale_index], out, d);
            break;
        default:
            accumulate_f32((const float *) rows + element, p, out, d);
    }
}

/* See zse_cpu_attention_head (zse_cpu.h). */
static inline void attention_head(const float *q, int32_t head_dim, int32_t kv_type, const void *keys,
                                  const void *values, const float *key_scales, const float *value_scales,
                                  int32_t kv_dim, int32_t kv_head, int32_t num_kv_heads, const int32_t *slots,
                                  int32_t first, int32_t last, float logit_scale, float soft_cap, float *scores,
                                  float *out) {
    int64_t head_offset = (int64_t) kv_head * head_dim;
    float max = -INFINITY;
    for (int32_t t = first; t <= last; t++) {
        int64_t slot = slots[t];
        float s = kv_dot(kv_type, keys, key_scales, slot * kv_dim + head_offset, slot * num_kv_heads + kv_head, q,
                         head_dim) * logit_scale;
        if (soft_cap > 0) {
            s = soft_cap * (float) tanh((double) (s / soft_cap));
        }
        scores[t] = s;
        max = s > max ? s : max;
    }
    for (int32_t t = first; t <= last; t++) {
        scores[t] = zse_expf(scores[t] - max);
    }
    float sum = 0;
    for (int32_t t = first; t <= last; t++) {
        sum += scores[t];
    }
    memset(out, 0, (size_t) head_dim * sizeof(float));
    for (int32_t t = first; t <= last; t++) {
        int64_t slot = slots[t];
        kv_accumulate(kv_type, values, value_scales, slot * kv_dim + head_offset, slot * num_kv_heads + kv_head,
                      scores[t] / sum, out, head_dim);
    }
}

#endif
