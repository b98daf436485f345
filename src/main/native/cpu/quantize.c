/*
 * quantize.c: the converter's quantizers (io.zse.convert.Q8Quantizer, Nf4Quantizer, Q4Quantizer) in AVX-512, byte for
 * byte the same as the Java ones, which stay the reference and the fallback.
 *
 * Same bytes means the same float and double operations in the same order for every value that decides a code or a
 * scale. So: this file is compiled with -ffp-contract=off (no fused multiply-adds), every sum runs element by element
 * in the Java order, and Java's rounding (Math.round: ties toward +infinity; Math.min/max: -0 below +0) is spelled out.
 * The SIMD lanes are the candidate scales of one group, not elements: each lane does what the Java loop does for one
 * candidate. Java's early exits only skip candidates that cannot win, so evaluating them fully picks the same one.
 */
#include <math.h>
#include <stdint.h>

#include "zse_cpu.h"

#if defined(__x86_64__)
#include <immintrin.h>

#define AVX512 __attribute__((target("avx512f,f16c")))
#define LANES 16

/* QuantErrorBound's slack: relative 2^-10, absolute 128 * 2^-24. */
static const double SCALE_ROUNDING = 0x1p-10;
static const double SUBNORMAL_FLOOR = 128 * 0x1p-24;

static int has_avx512(void) {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("f16c");
}

AVX512 static inline float round_f16(float x) {
    return _cvtsh_ss(_cvtss_sh(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}

AVX512 static inline uint16_t f16_bits(float x) {
    return (uint16_t) _cvtss_sh(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}

/* Math.round for |x| < 2^31, as a float: nearest integer, ties toward +infinity. */
static inline float java_round(float x) {
    float r = __builtin_roundevenf(x);
    return r - x == -0.5f ? r + 1 : r;
}

AVX512 static inline __m512 java_round16(__m512 x) {
    __m512 r = _mm512_roundscale_ps(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __mmask16 tie_down = _mm512_cmp_ps_mask(_mm512_sub_ps(r, x), _mm512_set1_ps(-0.5f), _CMP_EQ_OQ);
    return _mm512_mask_add_ps(r, tie_down, r, _mm512_set1_ps(1));
}

AVX512 static inline __m256 high_half(__m512 v) {
    return _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1));
}

/* Math.min and Math.max for finite floats: -0 counts as below +0. */
static inline float java_min(float a, float b) {
    if (a == 0 && b == 0) {
        return signbit(b) ? b : a;
    }
    return a <= b ? a : b;
}

static inline float java_max(float a, float b) {
    if (a == 0 && b == 0) {
        return signbit(a) ? b : a;
    }
    return a >= b ? a : b;
}

/* ---- Q8 and NF4: codes times one scale ---- */

/* The code book of a symmetric type: Q8's integers -127..127 (values == 0) or NF4's 16 values and 15 midpoints. */
struct codes {
    const float *values;
    const float *midpoints;
};

static inline float value(const struct codes *c, int code) {
    return c->values == 0 ? (float) code : c->values[code];
}

AVX512 static inline __m512 values16(const struct codes *c, __m512 scaled) {
    if (c->values == 0) {
        return _mm512_min_ps(_mm512_max_ps(java_round16(scaled), _mm512_set1_ps(-127)), _mm512_set1_ps(127));
    }
    __m512i code = _mm512_setzero_si512();
    for (int j = 0; j < 15; j++) {
        __mmask16 above = _mm512_cmp_ps_mask(scaled, _mm512_set1_ps(c->midpoints[j]), _CMP_GE_OQ);
        code = _mm512_mask_add_epi32(code, above, code, _mm512_set1_epi32(1));
    }
    return _mm512_permutexvar_ps(code, _mm512_loadu_ps(c->values));
}

/*
 * The codes of w[0, n) (n a multiple of 16) scaled by `inverse`, 16 elements at a time: Q8's clamped Math.round, or
 * NF4's Nf4.nearestCode as a count of midpoints instead of its binary search (whose branches would mispredict).
 */
AVX512 static void codes_of(const struct codes *c, const float *w, int n, float inverse, int32_t *out) {
    __m512 inv = _mm512_set1_ps(inverse);
    for (int i = 0; i < n; i += 16) {
        __m512 x = _mm512_mul_ps(_mm512_loadu_ps(w + i), inv);
        __m512i code;
        if (c->values == 0) {
            __m512 r = java_round16(x);
            code = _mm512_cvtps_epi32(_mm512_min_ps(_mm512_max_ps(r, _mm512_set1_ps(-127)), _mm512_set1_ps(127)));
        } else {
            code = _mm512_setzero_si512(); /* the number of midpoints at or below x: the binary search's answer */
            for (int j = 0; j < 15; j++) {
                __mmask16 above = _mm512_cmp_ps_mask(x, _mm512_set1_ps(c->midpoints[j]), _CMP_GE_OQ);
                code = _mm512_mask_add_epi32(code, above, code, _mm512_set1_epi32(1));
            }
        }
        _mm512_storeu_si512(out + i, code);
    }
}

/* Squared error of one group coded with `scale`, or infinity when an element's error exceeds `bound`. */
AVX512 static double symmetric_error(const struct codes *c, const float *w, int n, float scale, double bound) {
    int32_t code[128];
    codes_of(c, w, n, 1 / scale, code);
    double sum = 0;
    for (int i = 0; i < n; i++) {
        float decoded = value(c, code[i]) * scale;
        double error = w[i] - (double) decoded;
        if (fabs(error) > bound) {
            return INFINITY;
        }
        sum += error * error;
    }
    return sum;
}

/* SymmetricScaleSearch.chooseScale; writes the codes, returns the scale or -1 when it overflows F16. */
AVX512 static float symmetric_scale(const struct codes *c, const float *w, int n, const float *factors, int nf,
                                    double bound_factor, int32_t codes_out[]) {
    float absmax = 0;
    for (int i = 0; i < n; i++) {
        absmax = fmaxf(absmax, fabsf(w[i]));
    }
    float plain = round_f16(absmax * factors[0]);
    if (isinf(plain)) {
        return -1;
    }
    float best = plain;
    if (plain != 0) {
        double bound = c->values == 0 ? absmax / 254.0 * (1 + SCALE_ROUNDING) + SUBNORMAL_FLOOR
                                      : bound_factor * absmax * (1 + SCALE_ROUNDING) + SUBNORMAL_FLOOR;
        float scale[LANES];
        for (int k = 0; k < LANES; k++) {
            scale[k] = round_f16(absmax * factors[k < nf ? k : 0]);
        }
        __m512 s = _mm512_loadu_ps(scale);
        __m512 inverse = _mm512_div_ps(_mm512_set1_ps(1), s);
        __m512d sum_lo = _mm512_setzero_pd(), sum_hi = _mm512_setzero_pd();
        __m512d bound_v = _mm512_set1_pd(bound);
        __mmask8 over_lo = 0, over_hi = 0;
        for (int i = 0; i < n; i++) {
            __m512 x = _mm512_set1_ps(w[i]);
            __m512 decoded = _mm512_mul_ps(values16(c, _mm512_mul_ps(x, inverse)), s);
            __m512d wd = _mm512_set1_pd(w[i]);
            __m512d e_lo = _mm512_sub_pd(wd, _mm512_cvtps_pd(_mm512_castps512_ps256(decoded)));
            __m512d e_hi = _mm512_sub_pd(wd, _mm512_cvtps_pd(high_half(decoded)));
            over_lo |= _mm512_cmp_pd_mask(_mm512_abs_pd(e_lo), bound_v, _CMP_GT_OQ);
            over_hi |= _mm512_cmp_pd_mask(_mm512_abs_pd(e_hi), bound_v, _CMP_GT_OQ);
            sum_lo = _mm512_add_pd(sum_lo, _mm512_mul_pd(e_lo, e_lo));
            sum_hi = _mm512_add_pd(sum_hi, _mm512_mul_pd(e_hi, e_hi));
        }
        double error[LANES];
        _mm512_storeu_pd(error, sum_lo);
        _mm512_storeu_pd(error + 8, sum_hi);
        unsigned over = over_lo | (unsigned) over_hi << 8;
        double best_error = error[0]; /* plain rounding meets the bound by construction: not checked */
        for (int k = 1; k < nf; k++) {
            if (scale[k] != scale[k - 1] && !(over >> k & 1) && error[k] < best_error) {
                best_error = error[k];
                best = scale[k];
            }
        }
        int32_t code[128];
        codes_of(c, w, n, 1 / best, code);
        double sum_wv = 0, sum_vv = 0;
        for (int i = 0; i < n; i++) {
            float v = value(c, code[i]);
            sum_wv += (double) w[i] * v;
            sum_vv += (double) v * v;
        }
        float refit = sum_vv == 0 ? 0 : round_f16((float) (sum_wv / sum_vv));
        if (refit > 0 && refit != best && symmetric_error(c, w, n, refit, bound) < best_error) {
            best = refit;
        }
    }
    codes_of(c, w, n, best == 0 ? 0 : 1 / best, codes_out);
    return best;
}

AVX512 static int32_t symmetric(const struct codes *c, const float *src, int64_t count, int group, uint8_t *data,
                                uint16_t *scales, const float *factors, int32_t nf, double bound_factor) {
    int32_t codes[128];
    for (int64_t g = 0; g < count / group; g++) {
        const float *w = src + g * group;
        float scale = symmetric_scale(c, w, group, factors, nf, bound_factor, codes);
        if (scale < 0) {
            return -1;
        }
        scales[g] = f16_bits(scale);
        if (c->values == 0) {
            for (int i = 0; i < group; i++) {
                data[g * group + i] = (uint8_t) (int8_t) codes[i];
            }
        } else {
            int half = group / 2;
            for (int j = 0; j < half; j++) {
                data[g * half + j] = (uint8_t) (codes[j] | codes[j + half] << 4);
            }
        }
    }
    return 0;
}

int32_t zse_cpu_convert_q8(const float *src, int64_t count, int8_t *data, uint16_t *scales, const float *factors,
                           int32_t factor_count) {
    if (!has_avx512() || factor_count > LANES) {
        return -2;
    }
    struct codes c = {0, 0};
    return symmetric(&c, src, count, 32, (uint8_t *) data, scales, factors, factor_count, 0);
}

int32_t zse_cpu_convert_nf4(const float *src, int64_t count, uint8_t *data, uint16_t *scales, const float *factors,
                            int32_t factor_count, const float *values, const float *midpoints, float max_half_gap) {
    if (!has_avx512() || factor_count > LANES) {
        return -2;
    }
    struct codes c = {values, midpoints};
    return symmetric(&c, src, count, 64, data, scales, factors, factor_count, max_half_gap);
}

/* ---- Q4: codes times d plus m ---- */

static inline float q4_code(float w, float m, float inverse) {
    float r = java_round((w - m) * inverse);
    return r < 0 ? 0 : r > 15 ? 15 : r;
}

AVX512 static inline __m512 q4_code16(__m512 w, __m512 m, __m512 inverse) {
    __m512 r = java_round16(_mm512_mul_ps(_mm512_sub_ps(w, m), inverse));
    return _mm512_min_ps(_mm512_max_ps(r, _mm512_setzero_ps()), _mm512_set1_ps(15));
}

/* Q4Quantizer.chooseScales; writes (d, m), returns -1 when either overflows F16. */
AVX512 static int q4_scales(const float *w, int n, const float *offsets, int no, float out[2]) {
    float min = INFINITY, max = -INFINITY;
    for (int i = 0; i < n; i++) {
        min = java_min(min, w[i]);
        max = java_max(max, w[i]);
    }
    float range = max - min;
    float best_d = round_f16(range / 15);
    float best_m = round_f16(min);
    if (isinf(best_d) || isinf(best_m)) {
        return -1;
    }
    if (best_d != 0) {
        double wide_range = (double) max - min;
        double bound = wide_range / 30 + SCALE_ROUNDING * (fabs((double) min) + wide_range) + SUBNORMAL_FLOOR;
        /* Lane 0: plain (d, m); lanes 1..no: the least-squares fits for each level spacing. */
        float levels_per_unit[LANES];
        for (int k = 0; k < LANES; k++) {
            levels_per_unit[k] = (15 + offsets[k >= 1 && k <= no ? k - 1 : 0]) / range;
        }
        __m512 lpu = _mm512_loadu_ps(levels_per_unit);
        __m512i sum_l = _mm512_setzero_si512(), sum_ll = _mm512_setzero_si512();
        __m512d sum_lw_lo = _mm512_setzero_pd(), sum_lw_hi = _mm512_setzero_pd();
        double sum_w = 0;
        for (int i = 0; i < n; i++) {
            __m512 level = java_round16(_mm512_mul_ps(_mm512_set1_ps(w[i] - min), lpu));
            level = _mm512_min_ps(_mm512_max_ps(level, _mm512_setzero_ps()), _mm512_set1_ps(15));
            __m512i li = _mm512_cvtps_epi32(level);
            sum_l = _mm512_add_epi32(sum_l, li);
            sum_ll = _mm512_add_epi32(sum_ll, _mm512_mullo_epi32(li, li));
            __m512d wd = _mm512_set1_pd(w[i]);
            sum_lw_lo = _mm512_add_pd(sum_lw_lo, _mm512_mul_pd(_mm512_cvtps_pd(_mm512_castps512_ps256(level)), wd));
            sum_lw_hi = _mm512_add_pd(sum_lw_hi, _mm512_mul_pd(_mm512_cvtps_pd(high_half(level)), wd));
            sum_w += w[i];
        }
        int32_t l[LANES], ll[LANES];
        double lw[LANES];
        _mm512_storeu_si512(l, sum_l);
        _mm512_storeu_si512(ll, sum_ll);
        _mm512_storeu_pd(lw, sum_lw_lo);
        _mm512_storeu_pd(lw + 8, sum_lw_hi);
        float d[LANES], m[LANES];
        int usable = 0; /* lanes whose (d, m) the Java loop would evaluate */
        d[0] = best_d;
        m[0] = best_m;
        for (int k = 1; k < LANES; k++) {
            d[k] = best_d;
            m[k] = best_m;
            if (k > no) {
                continue;
            }
            double sl = l[k], sll = ll[k];
            double determinant = n * sll - sl * sl;
            if (determinant <= 0) {
                continue;
            }
            float fd = round_f16((float) ((n * lw[k] - sl * sum_w) / determinant));
            float fm = round_f16((float) ((sll * sum_w - sl * lw[k]) / determinant));
            if (fd <= 0 || isinf(fm)) {
                continue;
            }
            d[k] = fd;
            m[k] = fm;
            usable |= 1 << k;
        }
        __m512 dv = _mm512_loadu_ps(d), mv = _mm512_loadu_ps(m);
        __m512 inverse = _mm512_div_ps(_mm512_set1_ps(1), dv);
        __m512d sum_lo = _mm512_setzero_pd(), sum_hi = _mm512_setzero_pd();
        __m512d bound_v = _mm512_set1_pd(bound);
        __mmask8 over_lo = 0, over_hi = 0;
        for (int i = 0; i < n; i++) {
            __m512 x = _mm512_set1_ps(w[i]);
            __m512 decoded = _mm512_add_ps(_mm512_mul_ps(q4_code16(x, mv, inverse), dv), mv);
            __m512d wd = _mm512_set1_pd(w[i]);
            __m512d e_lo = _mm512_sub_pd(wd, _mm512_cvtps_pd(_mm512_castps512_ps256(decoded)));
            __m512d e_hi = _mm512_sub_pd(wd, _mm512_cvtps_pd(high_half(decoded)));
            over_lo |= _mm512_cmp_pd_mask(_mm512_abs_pd(e_lo), bound_v, _CMP_GT_OQ);
            over_hi |= _mm512_cmp_pd_mask(_mm512_abs_pd(e_hi), bound_v, _CMP_GT_OQ);
            sum_lo = _mm512_add_pd(sum_lo, _mm512_mul_pd(e_lo, e_lo));
            sum_hi = _mm512_add_pd(sum_hi, _mm512_mul_pd(e_hi, e_hi));
        }
        double error[LANES];
        _mm512_storeu_pd(error, sum_lo);
        _mm512_storeu_pd(error + 8, sum_hi);
        unsigned over = over_lo | (unsigned) over_hi << 8;
        double best_error = error[0]; /* plain rounding meets the bound: not checked */
        for (int k = 1; k <= no; k++) {
            if ((usable >> k & 1) && !(over >> k & 1) && error[k] < best_error) {
                best_error = error[k];
                best_d = d[k];
                best_m = m[k];
            }
        }
    }
    out[0] = best_d;
    out[1] = best_m;
    return 0;
}

AVX512 static int32_t q4(const float *src, int64_t count, int group, uint8_t *data, uint16_t *scales,
                         const float *offsets, int32_t no) {
    int half = group / 2;
    for (int64_t g = 0; g < count / group; g++) {
        const float *w = src + g * group;
        float dm[2];
        if (q4_scales(w, group, offsets, no, dm) != 0) {
            return -1;
        }
        float inverse = dm[0] == 0 ? 0 : 1 / dm[0];
        for (int j = 0; j < half; j++) {
            int low = (int) q4_code(w[j], dm[1], inverse);
            int high = (int) q4_code(w[j + half], dm[1], inverse);
            data[g * half + j] = (uint8_t) (low | high << 4);
        }
        scales[2 * g] = f16_bits(dm[0]);
        scales[2 * g + 1] = f16_bits(dm[1]);
    }
    return 0;
}

int32_t zse_cpu_convert_q4(const float *src, int64_t count, int32_t group, uint8_t *data, uint16_t *scales,
                           const float *level_offsets, int32_t offset_count) {
    if (!has_avx512() || offset_count >= LANES) {
        return -2;
    }
    return q4(src, count, group, data, scales, level_offsets, offset_count);
}

#else
/* No port for other instruction sets yet: -2 sends the converter to the Java quantizers, as on x86 without AVX-512. */
int32_t zse_cpu_convert_q8(const float *src, int64_t count, int8_t *data, uint16_t *scales, const float *factors,
                           int32_t factor_count) {
    (void) src, (void) count, (void) data, (void) scales, (void) factors, (void) factor_count;
    return -2;
}

int32_t zse_cpu_convert_nf4(const float *src, int64_t count, uint8_t *data, uint16_t *scales, const float *factors,
                            int32_t factor_count, const float *values, const float *midpoints, float max_half_gap) {
    (void) src, (void) count, (void) data, (void) scales, (void) factors, (void) factor_count, (void) values;
    (void) midpoints, (void) max_half_gap;
    return -2;
}

int32_t zse_cpu_convert_q4(const float *src, int64_t count, int32_t group, uint8_t *data, uint16_t *scales,
                           const float *level_offsets, int32_t offset_count) {
    (void) src, (void) count, (void) group, (void) data, (void) scales, (void) level_offsets, (void) offset_count;
    return -2;
}
#endif
