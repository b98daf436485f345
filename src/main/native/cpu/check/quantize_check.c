/*
 * quantize_check.c: the converter's native quantizers (quantize.c: AVX-512 on x86, NEON on aarch64) against a plain
 * scalar transcription of the Java ones (Q8Quantizer and Nf4Quantizer through SymmetricScaleSearch, Q4Quantizer),
 * byte for byte, on groups drawn from many value distributions: spread, narrow, outliers, constant, mostly zero,
 * tiny (subnormal F16 scales), large, exact half steps (rounding ties), offset, and already quantized ones. The Java
 * tests (NativeQuantizeTest) compare with the Java quantizers themselves on the build machine; this program does it
 * where no JVM runs, such as the aarch64 library under qemu-user (check.sh). Exit status 1 on any difference.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "zse_cpu.h"

/* The Java quantizers' tables: Q8Quantizer, Nf4Quantizer and Q4Quantizer's candidates, Nf4's code book. */
static const float Q8_FACTORS[] = {1.0f / 127, 1 / 126.5f, 1 / 126.6f, 1 / 126.7f, 1 / 126.8f, 1 / 126.9f,
                                   1 / 127.1f, 1 / 127.2f, 1 / 127.3f, 1 / 127.4f, 1 / 127.5f};
static const float NF4_FACTORS[] = {1.0f, 0.9875f, 0.975f, 0.9625f, 0.95f, 0.9375f, 0.925f, 0.9125f, 0.9f,
                                    0.8875f, 0.875f, 0.8625f, 0.85f};
static const float Q4_OFFSETS[] = {-1, -0.8f, -0.6f, -0.4f, -0.2f, 0, 0.2f, 0.4f, 0.6f, 0.8f, 1};
static const float NF4_VALUES[16] = {
    -1.0f, -0.6961928009986877f, -0.5250730514526367f, -0.39491748809814453f,
    -0.28444138169288635f, -0.18477343022823334f, -0.09105003625154495f, 0.0f,
    0.07958029955625534f, 0.16093020141124725f, 0.24611230194568634f, 0.33791524171829224f,
    0.44070982933044434f, 0.5626170039176941f, 0.7229568362236023f, 1.0f};
static float nf4_midpoints[15];
static float nf4_max_half_gap;

#define NF(a) ((int) (sizeof(a) / sizeof((a)[0])))

static const double SCALE_ROUNDING = 0x1p-10;
static const double SUBNORMAL_FLOOR = 128 * 0x1p-24;

/* ---- the reference: the Java code, one element and one candidate at a time ---- */

static float to_f16(float x) {
    return (float) (_Float16) x;
}

static uint16_t f16_bits(float x) {
    _Float16 h = (_Float16) x;
    uint16_t bits;
    memcpy(&bits, &h, sizeof bits);
    return bits;
}

/* Math.round(float): floor(x + 1/2) computed exactly. */
static int java_round(float x) {
    float f = floorf(x);
    return (int) (x - f >= 0.5f ? f + 1 : f);
}

static int clamp(int x, int low, int high) {
    return x < low ? low : x > high ? high : x;
}

static int nf4_nearest(float x) {
    int code = x >= nf4_midpoints[7] ? 8 : 0;
    if (x >= nf4_midpoints[code + 3]) {
        code += 4;
    }
    if (x >= nf4_midpoints[code + 1]) {
        code += 2;
    }
    if (x >= nf4_midpoints[code]) {
        code += 1;
    }
    return code;
}

/* Q8 (nf4 == 0) or NF4 */
static int nearest(int nf4, float x) {
    return nf4 ? nf4_nearest(x) : clamp(java_round(x), -127, 127);
}

static float value(int nf4, int code) {
    return nf4 ? NF4_VALUES[code] : (float) code;
}

static double symmetric_error(int nf4, const float *w, int n, float scale, double bound, double stop_above) {
    float inverse = 1 / scale;
    double sum = 0;
    for (int i = 0; i < n; i++) {
        float decoded = value(nf4, nearest(nf4, w[i] * inverse)) * scale;
        double error = w[i] - (double) decoded;
        if (fabs(error) > bound) {
            return INFINITY;
        }
        sum += error * error;
        if (sum >= stop_above) {
            return sum;
        }
    }
    return sum;
}

/* SymmetricScaleSearch.chooseScale and the quantizer's packing; -1 on an F16 overflow. */
static int ref_symmetric(int nf4, const float *src, int64_t count, int group, uint8_t *data, uint16_t *scales) {
    const float *factors = nf4 ? NF4_FACTORS : Q8_FACTORS;
    int nf = nf4 ? NF(NF4_FACTORS) : NF(Q8_FACTORS);
    for (int64_t g = 0; g < count / group; g++) {
        const float *w = src + g * group;
        float absmax = 0;
        float min = INFINITY, max = -INFINITY;
        for (int i = 0; i < group; i++) {
            absmax = fmaxf(absmax, fabsf(w[i]));
            min = fminf(min, w[i]);
            max = fmaxf(max, w[i]);
        }
        float plain = to_f16(absmax * factors[0]);
        if (isinf(plain)) {
            return -1;
        }
        float best = plain;
        if (plain != 0) {
            double wide = fmax(fabs((double) min), fabs((double) max));
            double bound = nf4 ? nf4_max_half_gap * wide * (1 + SCALE_ROUNDING) + SUBNORMAL_FLOOR
                               : wide / 254 * (1 + SCALE_ROUNDING) + SUBNORMAL_FLOOR;
            double best_error = symmetric_error(nf4, w, group, plain, INFINITY, 1.7976931348623157e308);
            float previous = plain;
            for (int k = 1; k < nf; k++) {
                float candidate = to_f16(absmax * factors[k]);
                if (candidate == previous) {
                    continue;
                }
                previous = candidate;
                double error = symmetric_error(nf4, w, group, candidate, bound, best_error);
                if (error < best_error) {
                    best_error = error;
                    best = candidate;
                }
            }
            float inverse = 1 / best;
            double sum_wv = 0, sum_vv = 0;
            for (int i = 0; i < group; i++) {
                float v = value(nf4, nearest(nf4, w[i] * inverse));
                sum_wv += (double) w[i] * v;
                sum_vv += (double) v * v;
            }
            float refit = sum_vv == 0 ? 0 : to_f16((float) (sum_wv / sum_vv));
            if (refit > 0 && refit != best && symmetric_error(nf4, w, group, refit, bound, best_error) < best_error) {
                best = refit;
            }
        }
        scales[g] = f16_bits(best);
        float inverse = best == 0 ? 0 : 1 / best;
        for (int i = 0; i < group; i++) {
            int code = nearest(nf4, w[i] * inverse);
            if (!nf4) {
                data[g * group + i] = (uint8_t) (int8_t) code;
            } else if (i < group / 2) {
                data[g * group / 2 + i] = (uint8_t) code;
            } else {
                data[g * group / 2 + i - group / 2] |= (uint8_t) (code << 4);
            }
        }
    }
    return 0;
}

static double q4_error(const float *w, int n, float d, float m, double bound, double stop_above) {
    float inverse = 1 / d;
    double sum = 0;
    for (int i = 0; i < n; i++) {
        float decoded = clamp(java_round((w[i] - m) * inverse), 0, 15) * d + m;
        double error = w[i] - (double) decoded;
        if (fabs(error) > bound) {
            return INFINITY;
        }
        sum += error * error;
        if (sum >= stop_above) {
            return sum;
        }
    }
    return sum;
}

/* Q4Quantizer: chooseScales (with fitToLevels) and the packing; -1 on an F16 overflow. */
static int ref_q4(const float *src, int64_t count, int group, uint8_t *data, uint16_t *scales) {
    for (int64_t g = 0; g < count / group; g++) {
        const float *w = src + g * group;
        float min = INFINITY, max = -INFINITY;
        for (int i = 0; i < group; i++) {
            min = fminf(min, w[i]);
            max = fmaxf(max, w[i]);
        }
        float range = max - min;
        float best_d = to_f16(range / 15);
        float best_m = to_f16(min);
        if (isinf(best_d) || isinf(best_m)) {
            return -1;
        }
        if (best_d != 0) {
            double wide = (double) max - min;
            double bound = wide / 30 + SCALE_ROUNDING * (fabs((double) min) + wide) + SUBNORMAL_FLOOR;
            double best_error = q4_error(w, group, best_d, best_m, INFINITY, 1.7976931348623157e308);
            for (int k = 0; k < NF(Q4_OFFSETS); k++) {
                float lpu = (15 + Q4_OFFSETS[k]) / range;
                double sl = 0, sll = 0, sw = 0, slw = 0;
                for (int i = 0; i < group; i++) {
                    int level = clamp(java_round((w[i] - min) * lpu), 0, 15);
                    sl += level;
                    sll += level * level;
                    sw += w[i];
                    slw += level * (double) w[i];
                }
                double determinant = group * sll - sl * sl;
                if (determinant <= 0) {
                    continue;
                }
                float d = to_f16((float) ((group * slw - sl * sw) / determinant));
                float m = to_f16((float) ((sll * sw - sl * slw) / determinant));
                if (d <= 0 || isinf(m) || (d == best_d && m == best_m)) {
                    continue;
                }
                double error = q4_error(w, group, d, m, bound, best_error);
                if (error < best_error) {
                    best_error = error;
                    best_d = d;
                    best_m = m;
                }
            }
        }
        float inverse = best_d == 0 ? 0 : 1 / best_d;
        for (int j = 0; j < group / 2; j++) {
            int low = clamp(java_round((w[j] - best_m) * inverse), 0, 15);
            int high = clamp(java_round((w[j + group / 2] - best_m) * inverse), 0, 15);
            data[g * group / 2 + j] = (uint8_t) (low | high << 4);
        }
        scales[2 * g] = f16_bits(best_d);
        scales[2 * g + 1] = f16_bits(best_m);
    }
    return 0;
}

/* ---- inputs ---- */

static uint64_t state = 0x2545F4914F6CDD1Dull;

static uint32_t next(void) {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return (uint32_t) (state >> 32);
}

static float uniform(void) { /* [-1, 1) */
    return (float) next() / 2147483648.0f - 1;
}

#define DISTRIBUTIONS 11

static const char *const DISTRIBUTION_NAMES[DISTRIBUTIONS] = {
    "uniform", "normal", "outlier", "constant", "mostly-zero", "tiny", "large", "half-steps", "offset",
    "quantized", "one-sided"};

/* One group of `group` values of distribution `kind`. */
static void fill(int kind, float *w, int group) {
    float scale = ldexpf(1, (int) (next() % 9) - 6);
    float base = uniform();
    for (int i = 0; i < group; i++) {
        float u = uniform();
        switch (kind) {
            case 0: w[i] = u * scale; break;
            case 1: w[i] = (u + uniform() + uniform() + uniform()) * 0.02f * scale; break;
            case 2: w[i] = i == (int) (next() % (unsigned) group) ? 40 * u * scale : 0.01f * u * scale; break;
            case 3: w[i] = base * scale; break;
            case 4: w[i] = next() % 8 == 0 ? u * scale : 0; break;
            case 5: w[i] = u * 3e-6f; break;
            case 6: w[i] = u * 4000; break;
            case 7: w[i] = (float) ((int) (next() % 64) - 32) * 0.5f * scale / 16; break; /* many exact ties */
            case 8: w[i] = 5 * base + 0.05f * u; break;
            case 9: w[i] = (float) ((int) (next() % 255) - 127) * to_f16(scale / 127); break;
            default: w[i] = fabsf(u) * scale + (kind == 10 && i == 0 ? -0.0f : 0); break;
        }
    }
}

/* ---- the comparison ---- */

static int failures;

/* NAME: "q8", "nf4" or "q4"; returns 0 when the native quantizer is not available here. */
static int compare(const char *name, int group, const float *src, int64_t count, int kind) {
    size_t data_bytes = strcmp(name, "q8") == 0 ? (size_t) count : (size_t) count / 2;
    size_t scale_count = (size_t) (count / group) * (strcmp(name, "q4") == 0 ? 2 : 1);
    uint8_t *expected = calloc(data_bytes, 1), *actual = calloc(data_bytes, 1);
    uint16_t *expected_scales = calloc(scale_count, 2), *actual_scales = calloc(scale_count, 2);
    int rc_expected, rc_actual;
    if (strcmp(name, "q8") == 0) {
        rc_expected = ref_symmetric(0, src, count, 32, expected, expected_scales);
        rc_actual = zse_cpu_convert_q8(src, count, (int8_t *) actual, actual_scales, Q8_FACTORS, NF(Q8_FACTORS));
    } else if (strcmp(name, "nf4") == 0) {
        rc_expected = ref_symmetric(1, src, count, 64, expected, expected_scales);
        rc_actual = zse_cpu_convert_nf4(src, count, actual, actual_scales, NF4_FACTORS, NF(NF4_FACTORS), NF4_VALUES,
                                        nf4_midpoints, nf4_max_half_gap);
    } else {
        rc_expected = ref_q4(src, count, group, expected, expected_scales);
        rc_actual = zse_cpu_convert_q4(src, count, group, actual, actual_scales, Q4_OFFSETS, NF(Q4_OFFSETS));
    }
    int available = rc_actual != -2;
    if (available && rc_actual != rc_expected) {
        printf("FAIL %s g%d %s: status %d, reference %d\n", name, group, DISTRIBUTION_NAMES[kind], rc_actual,
               rc_expected);
        failures++;
    } else if (available && rc_actual == 0) {
        for (size_t g = 0; g < scale_count; g++) {
            if (actual_scales[g] != expected_scales[g]) {
                printf("FAIL %s g%d %s: scale %zu is %04x, reference %04x\n", name, group, DISTRIBUTION_NAMES[kind], g,
                       actual_scales[g], expected_scales[g]);
                failures++;
                break;
            }
        }
        for (size_t i = 0; i < data_bytes; i++) {
            if (actual[i] != expected[i]) {
                printf("FAIL %s g%d %s: byte %zu is %02x, reference %02x\n", name, group, DISTRIBUTION_NAMES[kind], i,
                       actual[i], expected[i]);
                failures++;
                break;
            }
        }
    }
    free(expected);
    free(actual);
    free(expected_scales);
    free(actual_scales);
    return available;
}

int main(void) {
    float widest = 0;
    for (int i = 0; i < 15; i++) {
        nf4_midpoints[i] = (NF4_VALUES[i] + NF4_VALUES[i + 1]) / 2;
        widest = fmaxf(widest, NF4_VALUES[i + 1] - NF4_VALUES[i]);
    }
    nf4_max_half_gap = widest / 2;

    enum { GROUPS = 96 };
    static float src[GROUPS * 128];
    static const struct { const char *name; int group; } TYPES[] = {{"q8", 32}, {"nf4", 64}, {"q4", 32},
                                                                    {"q4", 64}, {"q4", 128}};
    int groups_checked = 0, available = 0;
    for (int round = 0; round < 4; round++) {
        for (int t = 0; t < NF(TYPES); t++) {
            for (int kind = 0; kind < DISTRIBUTIONS; kind++) {
                int group = TYPES[t].group;
                for (int g = 0; g < GROUPS; g++) {
                    fill(kind, src + g * group, group);
                }
                available = compare(TYPES[t].name, group, src, (int64_t) GROUPS * group, kind);
                groups_checked += GROUPS;
            }
        }
    }
    /* an F16 overflow is reported, as the Java quantizers throw */
    float huge[128];
    for (int i = 0; i < 128; i++) {
        huge[i] = i == 5 ? 1e30f : 0.5f;
    }
    compare("q8", 32, huge, 128, 6);
    compare("nf4", 64, huge, 128, 6);
    compare("q4", 32, huge, 128, 6);
    if (!available) {
        printf("no native quantizers on this machine (the Java ones run): nothing to compare\n");
        return 0;
    }
    printf("%d groups quantized (Q8, NF4, Q4 g32/g64/g128): %s\n", groups_checked,
           failures == 0 ? "all byte for byte the reference's" : "FAILED");
    return failures == 0 ? 0 : 1;
}
