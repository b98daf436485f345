/*
 * quantize.c: the converter's quantizers (io.zse.convert.Q8Quantizer, Nf4Quantizer, Q4Quantizer) in AVX-512 and NEON,
 * byte for byte the same as the Java ones, which stay the reference and the fallback.
 *
 * Same bytes means the same float and double operations in the same order for every value that decides a code or a
 * scale. So: this file is compiled with -ffp-contract=off (no fused multiply-adds), every sum runs element by element
 * in the Java order, and Java's rounding (Math.round: ties toward +infinity; Math.min/max: -0 below +0) is spelled out.
 * The SIMD lanes are the candidate scales of one group, not elements: each lane does what the Java loop does for one
 * candidate. Java's early exits only skip candidates that cannot win, so evaluating them fully picks the same one.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "zse_cpu.h"

/*
 * Each instruction set supplies the same small set of pieces: F16 rounding, the codes of a run of elements, and the
 * three loops that evaluate LANES candidates at once (symmetric_errors, q4_level_sums, q4_errors). The choice among
 * the candidates, in the Java order, is shared below them.
 */
#if defined(__x86_64__)
#include <immintrin.h>

#define SIMD __attribute__((target("avx512f,f16c")))
#elif defined(__aarch64__)
#include <arm_neon.h>

#define SIMD
#endif

#if defined(__x86_64__) || defined(__aarch64__)
#define LANES 16

/* QuantErrorBound's slack: relative 2^-10, absolute 128 * 2^-24. */
static const double SCALE_ROUNDING = 0x1p-10;
static const double SUBNORMAL_FLOOR = 128 * 0x1p-24;

/* Math.round for |x| < 2^31, as a float: nearest integer, ties toward +infinity. */
static inline float java_round(float x) {
    float r = __builtin_roundevenf(x);
    return r - x == -0.5f ? r + 1 : r;
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

/* The code book of a symmetric type: Q8's integers -127..127 (values == 0) or NF4's 16 values and 15 midpoints. */
struct codes {
    const float *values;
    const float *midpoints;
};

static inline float value(const struct codes *c, int code) {
    return c->values == 0 ? (float) code : c->values[code];
}
#endif

#if defined(__x86_64__)
static int has_simd(void) {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("f16c");
}

SIMD static inline float round_f16(float x) {
    return _cvtsh_ss(_cvtss_sh(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}

SIMD static inline uint16_t f16_bits(float x) {
    return (uint16_t) _cvtss_sh(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}

SIMD static inline __m512 java_round16(__m512 x) {
    __m512 r = _mm512_roundscale_ps(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __mmask16 tie_down = _mm512_cmp_ps_mask(_mm512_sub_ps(r, x), _mm512_set1_ps(-0.5f), _CMP_EQ_OQ);
    return _mm512_mask_add_ps(r, tie_down, r, _mm512_set1_ps(1));
}

SIMD static inline __m256 high_half(__m512 v) {
    return _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1));
}

SIMD static inline __m512 values16(const struct codes *c, __m512 scaled) {
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
SIMD static void codes_of(const struct codes *c, const float *w, int n, float inverse, int32_t *out) {
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

/* Accumulates (w - decoded)^2 per lane in double, element by element, and flags lanes where |w - decoded| > bound. */
SIMD static inline void add_errors(float w, __m512 decoded, __m512d bound, __m512d sum[2], __mmask8 over[2]) {
    __m512d wd = _mm512_set1_pd(w);
    __m512d e_lo = _mm512_sub_pd(wd, _mm512_cvtps_pd(_mm512_castps512_ps256(decoded)));
    __m512d e_hi = _mm512_sub_pd(wd, _mm512_cvtps_pd(high_half(decoded)));
    over[0] |= _mm512_cmp_pd_mask(_mm512_abs_pd(e_lo), bound, _CMP_GT_OQ);
    over[1] |= _mm512_cmp_pd_mask(_mm512_abs_pd(e_hi), bound, _CMP_GT_OQ);
    sum[0] = _mm512_add_pd(sum[0], _mm512_mul_pd(e_lo, e_lo));
    sum[1] = _mm512_add_pd(sum[1], _mm512_mul_pd(e_hi, e_hi));
}

SIMD static inline unsigned store_errors(const __m512d sum[2], const __mmask8 over[2], double error[LANES]) {
    _mm512_storeu_pd(error, sum[0]);
    _mm512_storeu_pd(error + 8, sum[1]);
    return over[0] | (unsigned) over[1] << 8;
}

/* The squared error of w[0, n) under each of the LANES scales; returns the lanes with an element over `bound`. */
SIMD static unsigned symmetric_errors(const struct codes *c, const float *w, int n, const float scale[LANES],
                                      double bound, double error[LANES]) {
    __m512 s = _mm512_loadu_ps(scale);
    __m512 inverse = _mm512_div_ps(_mm512_set1_ps(1), s);
    __m512d sum[2] = {_mm512_setzero_pd(), _mm512_setzero_pd()};
    __mmask8 over[2] = {0, 0};
    for (int i = 0; i < n; i++) {
        __m512 decoded = _mm512_mul_ps(values16(c, _mm512_mul_ps(_mm512_set1_ps(w[i]), inverse)), s);
        add_errors(w[i], decoded, _mm512_set1_pd(bound), sum, over);
    }
    return store_errors(sum, over, error);
}

/* Per lane, the sums over w[0, n) of level, level^2 and level * w, level = Q4's clamped round((w - min) * lpu). */
SIMD static void q4_level_sums(const float *w, int n, float min, const float levels_per_unit[LANES], int32_t l[LANES],
                               int32_t ll[LANES], double lw[LANES]) {
    __m512 lpu = _mm512_loadu_ps(levels_per_unit);
    __m512i sum_l = _mm512_setzero_si512(), sum_ll = _mm512_setzero_si512();
    __m512d sum_lw_lo = _mm512_setzero_pd(), sum_lw_hi = _mm512_setzero_pd();
    for (int i = 0; i < n; i++) {
        __m512 level = java_round16(_mm512_mul_ps(_mm512_set1_ps(w[i] - min), lpu));
        level = _mm512_min_ps(_mm512_max_ps(level, _mm512_setzero_ps()), _mm512_set1_ps(15));
        __m512i li = _mm512_cvtps_epi32(level);
        sum_l = _mm512_add_epi32(sum_l, li);
        sum_ll = _mm512_add_epi32(sum_ll, _mm512_mullo_epi32(li, li));
        __m512d wd = _mm512_set1_pd(w[i]);
        sum_lw_lo = _mm512_add_pd(sum_lw_lo, _mm512_mul_pd(_mm512_cvtps_pd(_mm512_castps512_ps256(level)), wd));
        sum_lw_hi = _mm512_add_pd(sum_lw_hi, _mm512_mul_pd(_mm512_cvtps_pd(high_half(level)), wd));
    }
    _mm512_storeu_si512(l, sum_l);
    _mm512_storeu_si512(ll, sum_ll);
    _mm512_storeu_pd(lw, sum_lw_lo);
    _mm512_storeu_pd(lw + 8, sum_lw_hi);
}

/* The squared error of w[0, n) under each lane's (d, m); returns the lanes with an element over `bound`. */
SIMD static unsigned q4_errors(const float *w, int n, const float d[LANES], const float m[LANES], double bound,
                               double error[LANES]) {
    __m512 dv = _mm512_loadu_ps(d), mv = _mm512_loadu_ps(m);
    __m512 inverse = _mm512_div_ps(_mm512_set1_ps(1), dv);
    __m512d sum[2] = {_mm512_setzero_pd(), _mm512_setzero_pd()};
    __mmask8 over[2] = {0, 0};
    for (int i = 0; i < n; i++) {
        __m512 r = java_round16(_mm512_mul_ps(_mm512_sub_ps(_mm512_set1_ps(w[i]), mv), inverse));
        __m512 code = _mm512_min_ps(_mm512_max_ps(r, _mm512_setzero_ps()), _mm512_set1_ps(15));
        add_errors(w[i], _mm512_add_ps(_mm512_mul_ps(code, dv), mv), _mm512_set1_pd(bound), sum, over);
    }
    return store_errors(sum, over, error);
}

#elif defined(__aarch64__)
/* NEON: the LANES candidates as four float32x4_t (and eight float64x2_t for the double sums). */
#define QUADS (LANES / 4)

static int has_simd(void) {
    return 1; /* NEON and its F16 conversions are part of every aarch64 */
}

static inline float round_f16(float x) {
    return (float) (__fp16) x; /* FCVT, round to nearest even */
}

static inline uint16_t f16_bits(float x) {
    __fp16 h = (__fp16) x;
    uint16_t bits;
    memcpy(&bits, &h, sizeof bits);
    return bits;
}

static inline float32x4_t java_round4(float32x4_t x) {
    float32x4_t r = vrndnq_f32(x);
    uint32x4_t tie_down = vceqq_f32(vsubq_f32(r, x), vdupq_n_f32(-0.5f));
    return vbslq_f32(tie_down, vaddq_f32(r, vdupq_n_f32(1)), r);
}

static inline float32x4_t clamp4(float32x4_t x, float low, float high) {
    return vminq_f32(vmaxq_f32(x, vdupq_n_f32(low)), vdupq_n_f32(high));
}

/* Q8's clamped Math.round, or NF4's Nf4.nearestCode as the number of midpoints at or below x (see the x86 twin). */
static inline int32x4_t codes4(const struct codes *c, float32x4_t x) {
    if (c->values == 0) {
        return vcvtq_s32_f32(clamp4(java_round4(x), -127, 127));
    }
    int32x4_t code = vdupq_n_s32(0);
    for (int j = 0; j < 15; j++) {
        code = vsubq_s32(code, vreinterpretq_s32_u32(vcgeq_f32(x, vdupq_n_f32(c->midpoints[j])))); /* -1 adds 1 */
    }
    return code;
}

static inline float32x4_t values4(const struct codes *c, float32x4_t scaled) {
    if (c->values == 0) {
        return clamp4(java_round4(scaled), -127, 127);
    }
    int32_t code[4];
    vst1q_s32(code, codes4(c, scaled));
    float v[4] = {c->values[code[0]], c->values[code[1]], c->values[code[2]], c->values[code[3]]};
    return vld1q_f32(v);
}

static void codes_of(const struct codes *c, const float *w, int n, float inverse, int32_t *out) {
    float32x4_t inv = vdupq_n_f32(inverse);
    for (int i = 0; i < n; i += 4) {
        vst1q_s32(out + i, codes4(c, vmulq_f32(vld1q_f32(w + i), inv)));
    }
}

/* Accumulates (w - decoded)^2 for four lanes in double and flags those where |w - decoded| > bound. */
static inline void add_errors(float w, float32x4_t decoded, float64x2_t bound, float64x2_t sum[2],
                              uint64x2_t over[2]) {
    float64x2_t wd = vdupq_n_f64(w);
    float64x2_t e_lo = vsubq_f64(wd, vcvt_f64_f32(vget_low_f32(decoded)));
    float64x2_t e_hi = vsubq_f64(wd, vcvt_high_f64_f32(decoded));
    over[0] = vorrq_u64(over[0], vcagtq_f64(e_lo, bound));
    over[1] = vorrq_u64(over[1], vcagtq_f64(e_hi, bound));
    sum[0] = vaddq_f64(sum[0], vmulq_f64(e_lo, e_lo));
    sum[1] = vaddq_f64(sum[1], vmulq_f64(e_hi, e_hi));
}

static inline unsigned store_errors(const float64x2_t sum[2 * QUADS], const uint64x2_t over[2 * QUADS],
                                    double error[LANES]) {
    unsigned mask = 0;
    for (int h = 0; h < 2 * QUADS; h++) {
        vst1q_f64(error + 2 * h, sum[h]);
        mask |= (vgetq_lane_u64(over[h], 0) != 0) << 2 * h | (vgetq_lane_u64(over[h], 1) != 0) << (2 * h + 1);
    }
    return mask;
}

static unsigned symmetric_errors(const struct codes *c, const float *w, int n, const float scale[LANES],
                                 double bound, double error[LANES]) {
    float32x4_t s[QUADS], inverse[QUADS];
    float64x2_t sum[2 * QUADS];
    uint64x2_t over[2 * QUADS];
    for (int q = 0; q < QUADS; q++) {
        s[q] = vld1q_f32(scale + 4 * q);
        inverse[q] = vdivq_f32(vdupq_n_f32(1), s[q]);
        sum[2 * q] = sum[2 * q + 1] = vdupq_n_f64(0);
        over[2 * q] = over[2 * q + 1] = vdupq_n_u64(0);
    }
    for (int i = 0; i < n; i++) {
        float32x4_t x = vdupq_n_f32(w[i]);
        for (int q = 0; q < QUADS; q++) {
            float32x4_t decoded = vmulq_f32(values4(c, vmulq_f32(x, inverse[q])), s[q]);
            add_errors(w[i], decoded, vdupq_n_f64(bound), sum + 2 * q, over + 2 * q);
        }
    }
    return store_errors(sum, over, error);
}

static void q4_level_sums(const float *w, int n, float min, const float levels_per_unit[LANES], int32_t l[LANES],
                          int32_t ll[LANES], double lw[LANES]) {
    for (int q = 0; q < QUADS; q++) {
        float32x4_t lpu = vld1q_f32(levels_per_unit + 4 * q);
        int32x4_t sum_l = vdupq_n_s32(0), sum_ll = vdupq_n_s32(0);
        float64x2_t sum_lw_lo = vdupq_n_f64(0), sum_lw_hi = vdupq_n_f64(0);
        for (int i = 0; i < n; i++) {
            float32x4_t level = clamp4(java_round4(vmulq_f32(vdupq_n_f32(w[i] - min), lpu)), 0, 15);
            int32x4_t li = vcvtq_s32_f32(level);
            sum_l = vaddq_s32(sum_l, li);
            sum_ll = vaddq_s32(sum_ll, vmulq_s32(li, li));
            float64x2_t wd = vdupq_n_f64(w[i]);
            sum_lw_lo = vaddq_f64(sum_lw_lo, vmulq_f64(vcvt_f64_f32(vget_low_f32(level)), wd));
            sum_lw_hi = vaddq_f64(sum_lw_hi, vmulq_f64(vcvt_high_f64_f32(level), wd));
        }
        vst1q_s32(l + 4 * q, sum_l);
        vst1q_s32(ll + 4 * q, sum_ll);
        vst1q_f64(lw + 4 * q, sum_lw_lo);
        vst1q_f64(lw + 4 * q + 2, sum_lw_hi);
    }
}

static unsigned q4_errors(const float *w, int n, const float d[LANES], const float m[LANES], double bound,
                          double error[LANES]) {
    float32x4_t dv[QUADS], mv[QUADS], inverse[QUADS];
    float64x2_t sum[2 * QUADS];
    uint64x2_t over[2 * QUADS];
    for (int q = 0; q < QUADS; q++) {
        dv[q] = vld1q_f32(d + 4 * q);
        mv[q] = vld1q_f32(m + 4 * q);
        inverse[q] = vdivq_f32(vdupq_n_f32(1), dv[q]);
        sum[2 * q] = sum[2 * q + 1] = vdupq_n_f64(0);
        over[2 * q] = over[2 * q + 1] = vdupq_n_u64(0);
    }
    for (int i = 0; i < n; i++) {
        float32x4_t x = vdupq_n_f32(w[i]);
        for (int q = 0; q < QUADS; q++) {
            float32x4_t code = clamp4(java_round4(vmulq_f32(vsubq_f32(x, mv[q]), inverse[q])), 0, 15);
            add_errors(w[i], vaddq_f32(vmulq_f32(code, dv[q]), mv[q]), vdupq_n_f64(bound), sum + 2 * q, over + 2 * q);
        }
    }
    return store_errors(sum, over, error);
}
#endif

#if defined(__x86_64__) || defined(__aarch64__)
/* ---- Q8 and NF4: codes times one scale ---- */

/* Squared error of one group coded with `scale`, or infinity when an element's error exceeds `bound`. */
SIMD static double symmetric_error(const struct codes *c, const float *w, int n, float scale, double bound) {
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
SIMD static float symmetric_scale(const struct codes *c, const float *w, int n, const float *factors, int nf,
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
        double error[LANES];
        unsigned over = symmetric_errors(c, w, n, scale, bound, error);
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

SIMD static int32_t symmetric(const struct codes *c, const float *src, int64_t count, int group, uint8_t *data,
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
    if (!has_simd() || factor_count > LANES) {
        return -2;
    }
    struct codes c = {0, 0};
    return symmetric(&c, src, count, 32, (uint8_t *) data, scales, factors, factor_count, 0);
}

int32_t zse_cpu_convert_nf4(const float *src, int64_t count, uint8_t *data, uint16_t *scales, const float *factors,
                            int32_t factor_count, const float *values, const float *midpoints, float max_half_gap) {
    if (!has_simd() || factor_count > LANES) {
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

/* Q4Quantizer.chooseScales; writes (d, m), returns -1 when either overflows F16. */
SIMD static int q4_scales(const float *w, int n, const float *offsets, int no, float out[2]) {
    float min = INFINITY, max = -INFINITY;
    double sum_w = 0;
    for (int i = 0; i < n; i++) {
        min = java_min(min, w[i]);
        max = java_max(max, w[i]);
        sum_w += w[i];
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
        int32_t l[LANES], ll[LANES];
        double lw[LANES];
        q4_level_sums(w, n, min, levels_per_unit, l, ll, lw);
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
        double error[LANES];
        unsigned over = q4_errors(w, n, d, m, bound, error);
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

SIMD static int32_t q4(const float *src, int64_t count, int group, uint8_t *data, uint16_t *scales,
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
    if (!has_simd() || offset_count >= LANES) {
        return -2;
    }
    return q4(src, count, group, data, scales, level_offsets, offset_count);
}

#else
/* Other instruction sets: -2 sends the converter to the Java quantizers, as on x86 without AVX-512. */
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
