/*
 * kernel_check.c: every kernel set the CPU runs against the portable C set, through the exported ABI, on random
 * weights and activations of every storage type and at every tile edge (rows not a multiple of 4, activation rows
 * 1..5, tails), and the products on layout interleaved-16 against the row-groups ones on the bytes they were made
 * from; and the element-wise ops and attention of ops.h the same way. The Java tests (NativeKernelsTest,
 * ElementwiseOpsTest) do this on the build machine; this program does it where no JVM runs, such as an aarch64 library
 * under qemu-user (check.sh). Exit status 1 on any difference beyond rounding.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "zse_cpu.h"

static uint64_t state = 0x9E3779B97F4A7C15ull;

static uint32_t next(void) {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return (uint32_t) (state >> 32);
}

static float uniform(void) {
    return (float) (next() >> 8) * (1.0f / 16777216.0f) * 2.0f - 1.0f;
}

/* A positive F16 between 2^-6 and 2^1, written as bits (no conversion needed). */
static uint16_t f16_scale(void) {
    return (uint16_t) (((9 + next() % 7) << 10) | (next() & 0x3FF));
}

static int failures;

static void compare(const char *what, const char *isa, const float *expected, const float *actual, int count,
                    int cols) {
    for (int k = 0; k < count; k++) {
        float tolerance = 1e-4f * (fabsf(expected[k]) + sqrtf((float) cols));
        if (!(fabsf(expected[k] - actual[k]) <= tolerance)) {
            printf("FAIL %s on %s: output %d is %.7g, the generic set gives %.7g\n", what, isa, k, actual[k],
                   expected[k]);
            failures++;
            return;
        }
    }
}

struct inputs {
    int rows, cols, n;
    uint8_t *w;
    uint16_t *scales;
    uint8_t *w_x16; /* w and scales in layout interleaved-16 (Q8, Q4) */
    uint16_t *scales_x16;
    float *x;
    int8_t *xq;
    float *xd, *xs;
};

/* The x16 products over the tiles in two calls ([0, 16) and the rest), as the Java side splits rows between threads. */
static void run_x16(const char *type, int group, const struct inputs *in, float *out) {
    int split = in->rows > 16 ? 16 : in->rows;
    int ranges[2][2] = {{0, split}, {split, in->rows}};
    for (int k = 0; k < 2; k++) {
        if (ranges[k][0] == ranges[k][1]) {
            continue;
        }
        if (strcmp(type, "q8x16") == 0) {
            zse_cpu_matmul_q8_x16((const int8_t *) in->w_x16, in->scales_x16, in->rows, in->cols, ranges[k][0],
                                  ranges[k][1], in->xq, in->xd, in->xs, in->n, out, in->rows);
        } else {
            zse_cpu_matmul_q4_x16(in->w_x16, in->scales_x16, group, in->rows, in->cols, ranges[k][0], ranges[k][1],
                                  in->xq, in->xd, in->xs, in->n, out, in->rows);
        }
    }
}

static void run(const char *type, int group, const struct inputs *in, float *out) {
    if (strstr(type, "x16") != NULL) {
        run_x16(type, group, in, out);
    } else if (strcmp(type, "q8") == 0) {
        zse_cpu_matmul_q8((const int8_t *) in->w, in->scales, in->cols, 0, in->rows, in->xq, in->xd, in->n, out,
                          in->rows);
    } else if (strcmp(type, "q4") == 0) {
        zse_cpu_matmul_q4(in->w, in->scales, group, in->cols, 0, in->rows, in->xq, in->xd, in->xs, in->n, out,
                          in->rows);
    } else if (strcmp(type, "q5") == 0) {
        zse_cpu_matmul_q5(in->w, (const uint8_t *) in->scales, in->cols, 0, in->rows, in->xq, in->xd, in->xs, in->n,
                          out, in->rows);
    } else if (strcmp(type, "q4_k") == 0) {
        zse_cpu_matmul_q4_k(in->w, (const uint8_t *) in->scales, in->cols, 0, in->rows, in->xq, in->xd, in->xs,
                            in->n, out, in->rows);
    } else if (strcmp(type, "q5_k") == 0) {
        zse_cpu_matmul_q5_k(in->w, (const uint8_t *) in->scales, in->cols, 0, in->rows, in->xq, in->xd, in->xs,
                            in->n, out, in->rows);
    } else if (strcmp(type, "q6_k") == 0) {
        zse_cpu_matmul_q6_k(in->w, (const uint8_t *) in->scales, in->cols, 0, in->rows, in->xq, in->xd, in->xs,
                            in->n, out, in->rows);
    } else if (strcmp(type, "ternary") == 0) {
        /* per activation row: its code sum, and a divisor standing for 127 / absmax */
        int32_t xsum[8];
        float xdiv[8];
        for (int i = 0; i < in->n; i++) {
            xsum[i] = 0;
            for (int k = 0; k < in->cols; k++) {
                xsum[i] += in->xq[i * in->cols + k];
            }
            xdiv[i] = 1.0f + 0.5f * (float) i;
        }
        zse_cpu_matmul_ternary(in->w, 0.75f, in->cols, 0, in->rows, in->xq, xdiv, xsum, in->n, out, in->rows);
    } else if (strcmp(type, "nf4") == 0) {
        zse_cpu_matmul_nf4(in->w, in->scales, in->cols, 0, in->rows, in->x, in->n, out, in->rows);
    } else if (strcmp(type, "f32") == 0) {
        zse_cpu_matmul_f32((const float *) in->w, in->cols, 0, in->rows, in->x, in->n, out, in->rows);
    } else if (strcmp(type, "f16") == 0) {
        zse_cpu_matmul_f16((const uint16_t *) in->w, in->cols, 0, in->rows, in->x, in->n, out, in->rows);
    } else {
        zse_cpu_matmul_bf16((const uint16_t *) in->w, in->cols, 0, in->rows, in->x, in->n, out, in->rows);
    }
}

/* Random weights of the type: codes or values, and the scales the type has. */
static void fill_weights(const char *type, int group, struct inputs *in) {
    size_t elements = (size_t) in->rows * in->cols;
    in->w = malloc(elements * 4);
    in->scales = malloc(elements / 16 * sizeof(uint16_t) + 16);
    for (size_t k = 0; k < elements; k++) {
        if (strcmp(type, "q8") == 0) {
            ((int8_t *) in->w)[k] = (int8_t) ((int) (next() % 255) - 127);
        } else if (strcmp(type, "f32") == 0) {
            ((float *) in->w)[k] = uniform();
        } else if (strcmp(type, "f16") == 0) {
            ((uint16_t *) in->w)[k] = (uint16_t) ((next() & 0x8000) | f16_scale());
        } else if (strcmp(type, "bf16") == 0) {
            float v = uniform();
            uint32_t bits;
            memcpy(&bits, &v, 4);
            ((uint16_t *) in->w)[k] = (uint16_t) (bits >> 16);
        } else if (strcmp(type, "ternary") == 0) {
            if (k < elements / 4) { /* four 2-bit codes c = t + 1 in 0..2 per byte */
                in->w[k] = (uint8_t) (next() % 3 | next() % 3 << 2 | next() % 3 << 4 | next() % 3 << 6);
            }
        } else if (strcmp(type, "q5") == 0) {
            if (k < elements / 32 * 20) {
                in->w[k] = (uint8_t) next(); /* 20 bytes per group: nibbles and fifth bits */
            }
        } else if (k < elements / 2) {
            in->w[k] = (uint8_t) next(); /* q4, nf4: two codes per byte */
        }
    }
    if (strncmp(type, "q", 1) == 0 && strchr(type, '_') != NULL) {
        /* K-quants: every code byte random; per super-block of 256 the scale bytes (Q4_K, Q5_K: F16 d and dmin, 12
           packed 6-bit scales and mins; Q6_K: F16 d, 16 int8 scales) */
        int q6 = strcmp(type, "q6_k") == 0;
        size_t supers = elements / 256;
        size_t code_bytes = q6 ? 192 : strcmp(type, "q5_k") == 0 ? 160 : 128;
        size_t scale_bytes = q6 ? 18 : 16;
        uint8_t *sc = (uint8_t *) in->scales;
        for (size_t k = 0; k < supers * code_bytes; k++) {
            in->w[k] = (uint8_t) next();
        }
        for (size_t s = 0; s < supers; s++) {
            uint16_t d = f16_scale();
            uint16_t dmin = f16_scale();
            memcpy(sc + s * scale_bytes, &d, 2);
            for (size_t k = 2; k < scale_bytes; k++) {
                sc[s * scale_bytes + k] = (uint8_t) next();
            }
            if (!q6) {
                memcpy(sc + s * scale_bytes + 2, &dmin, 2);
            }
        }
        return;
    }
    size_t scale_count = strcmp(type, "q8") == 0 ? elements / 32
                         : strcmp(type, "q4") == 0 || strcmp(type, "q5") == 0 ? 2 * elements / group
                         : strcmp(type, "nf4") == 0 ? elements / 64 : 0;
    for (size_t k = 0; k < scale_count; k++) {
        /* Q4's and Q5's m (odd entries) is negative, as for weights centred on 0. */
        int offset = strcmp(type, "q4") == 0 || strcmp(type, "q5") == 0;
        in->scales[k] = (uint16_t) (f16_scale() | (offset && k % 2 == 1 ? 0x8000 : 0));
    }
}

/*
 * Layout interleaved-16 (docs/zse-format.md), written here from its definition: in each whole tile of 16 rows, unit k
 * (of `unit` bytes) of tile row a moves from a * units + k to k * 16 + a.
 */
static uint8_t *interleaved(const uint8_t *bytes, int rows, size_t row_bytes, size_t unit) {
    uint8_t *out = malloc(rows * row_bytes + 1);
    memcpy(out, bytes, rows * row_bytes);
    size_t units = row_bytes / unit;
    for (int tile = 0; tile + 16 <= rows; tile += 16) {
        for (int a = 0; a < 16; a++) {
            for (size_t k = 0; k < units; k++) {
                memcpy(out + tile * row_bytes + (k * 16 + a) * unit, bytes + (tile + a) * row_bytes + k * unit, unit);
            }
        }
    }
    return out;
}

static void check(const char *type, int group, int rows, int cols, int n, const char *sets) {
    struct inputs in = {rows, cols, n, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL};
    /* An x16 product is checked against the generic row-groups product of the same weights. */
    int x16 = strstr(type, "x16") != NULL;
    const char *reference = !x16 ? type : strcmp(type, "q8x16") == 0 ? "q8" : "q4";
    fill_weights(reference, group, &in);
    if (x16) {
        size_t row_bytes = strcmp(reference, "q8") == 0 ? (size_t) cols : (size_t) cols / 2;
        size_t slots = strcmp(reference, "q8") == 0 ? (size_t) cols / 32 : 2 * (size_t) cols / group;
        in.w_x16 = interleaved(in.w, rows, row_bytes, 4);
        in.scales_x16 = (uint16_t *) interleaved((const uint8_t *) in.scales, rows, 2 * slots, 2);
    }
    in.x = malloc(sizeof(float) * n * cols);
    for (int k = 0; k < n * cols; k++) {
        in.x[k] = uniform() * 3.0f;
    }
    int blocks = n * cols / 32;
    in.xq = malloc((size_t) n * cols);
    in.xd = malloc(sizeof(float) * (blocks + 1));
    in.xs = malloc(sizeof(float) * (blocks + 1));
    if (cols % 32 == 0) {
        zse_cpu_use("generic");
        zse_cpu_quantize_rows(in.x, n, cols, in.xq, in.xd, in.xs);
    }
    float *expected = malloc(sizeof(float) * n * rows);
    float *actual = malloc(sizeof(float) * n * rows);
    zse_cpu_use("generic");
    run(reference, group, &in, expected);

    char what[96];
    snprintf(what, sizeof what, "%s (group %d) %d x %d, %d activation rows", type, group, rows, cols, n);
    char list[128];
    snprintf(list, sizeof list, "%s", sets);
    for (char *isa = strtok(list, ","); isa != NULL; isa = strtok(NULL, ",")) {
        if (zse_cpu_use(isa) != 0) {
            printf("FAIL %s: listed as supported but refused\n", isa);
            failures++;
            continue;
        }
        if (cols % 32 == 0) {
            int8_t *q = malloc((size_t) n * cols);
            float *d = malloc(sizeof(float) * (blocks + 1));
            float *s = malloc(sizeof(float) * (blocks + 1));
            zse_cpu_quantize_rows(in.x, n, cols, q, d, s);
            if (memcmp(q, in.xq, (size_t) n * cols) != 0 || memcmp(d, in.xd, sizeof(float) * blocks) != 0) {
                printf("FAIL quantize_rows on %s: codes or scales differ from the generic set's\n", isa);
                failures++;
            }
            free(q);
            free(d);
            free(s);
        }
        memset(actual, 0, sizeof(float) * n * rows);
        run(type, group, &in, actual);
        compare(what, isa, expected, actual, n * rows, cols);
    }
    free(in.w);
    free(in.scales);
    free(in.w_x16);
    free(in.scales_x16);
    free(in.x);
    free(in.xq);
    free(in.xd);
    free(in.xs);
    free(expected);
    free(actual);
}

static float *random_floats(size_t count, float range) {
    float *x = malloc(sizeof(float) * count);
    for (size_t k = 0; k < count; k++) {
        x[k] = uniform() * range;
    }
    return x;
}

/* Runs one op on a fresh copy of the inputs with the generic set and with each set, and compares the outputs. */
#define CHECK_OP(what, outputs, count, call)                                                                          \
    do {                                                                                                              \
        float *expected = malloc(sizeof(float) * (count));                                                           \
        for (int pass = -1; pass < set_count; pass++) {                                                               \
            zse_cpu_use(pass < 0 ? "generic" : set_names[pass]);                                                      \
            memcpy(outputs, pristine, sizeof(float) * (count));                                                       \
            call;                                                                                                     \
            if (pass < 0) {                                                                                           \
                memcpy(expected, outputs, sizeof(float) * (count));                                                   \
            } else {                                                                                                  \
                compare(what, set_names[pass], expected, outputs, (count), 1);                                        \
            }                                                                                                         \
        }                                                                                                             \
        free(expected);                                                                                               \
    } while (0)

/* The element-wise ops and attention: lengths with vector tails, heads narrower than a vector, every KV type. */
static int check_ops(const char *sets) {
    char list[128];
    snprintf(list, sizeof list, "%s", sets);
    const char *set_names[8];
    int set_count = 0;
    for (char *isa = strtok(list, ","); isa != NULL && set_count < 8; isa = strtok(NULL, ",")) {
        set_names[set_count++] = isa;
    }
    int checks = 0;
    for (int length = 1; length <= 2051; length += 410) {
        float *pristine = random_floats((size_t) length * 3, 12.0f);
        float *x = malloc(sizeof(float) * length * 3);
        float *other = random_floats((size_t) length * 3, 2.0f);
        float *weight = random_floats((size_t) length, 1.5f);
        CHECK_OP("add", x, length, zse_cpu_add(x, other, length));
        CHECK_OP("scale", x, length, zse_cpu_scale(x, length, 0.37f));
        CHECK_OP("swiglu", x, length, zse_cpu_swiglu(x, other, length));
        CHECK_OP("geglu", x, length, zse_cpu_geglu(x, other, length));
        CHECK_OP("relu2_glu", x, length, zse_cpu_relu2_glu(x, other, length));
        float *normed = malloc(sizeof(float) * length * 3);
        CHECK_OP("rms_norm", normed, length * 3, zse_cpu_rms_norm(pristine, 3, length, weight, 1e-5f, normed));
        free(normed);
        free(pristine);
        free(x);
        free(other);
        free(weight);
        checks += 6;
    }
    for (int count = 1; count <= 5001; count += 1000) {
        float *floats = random_floats((size_t) count, 4.0f);
        zse_cpu_use("generic");
        double expected = zse_cpu_read_all(floats, count);
        for (int pass = 0; pass < set_count; pass++) {
            zse_cpu_use(set_names[pass]);
            double actual = zse_cpu_read_all(floats, count);
            if (!(fabs(actual - expected) <= 1e-4 * (1 + fabs(expected)))) {
                printf("FAIL read_all of %d floats on %s: %.9g, the generic set gives %.9g\n", count,
                       set_names[pass], actual, expected);
                failures++;
            }
        }
        free(floats);
        checks++;
    }
    int positions[5] = {0, 7, 8, 1023, 40000};
    for (int head_dim = 6; head_dim <= 134; head_dim += 64) {
        float *pristine = random_floats((size_t) 5 * 3 * head_dim, 3.0f);
        float *x = malloc(sizeof(float) * 5 * 3 * head_dim);
        float *frequencies = malloc(sizeof(float) * head_dim / 2);
        for (int j = 0; j < head_dim / 2; j++) {
            frequencies[j] = powf(10000.0f, -2.0f * j / head_dim);
        }
        CHECK_OP("rope", x, 5 * 3 * head_dim, zse_cpu_rope(x, 1, 5, positions, 3, head_dim, frequencies));
        free(pristine);
        free(x);
        free(frequencies);
        checks++;
    }
    /* attention: 37 cached positions in shuffled slots of a pool of 50, 2 kv heads; a window, a soft cap */
    enum { SLOTS = 50, POSITIONS = 37, KV_HEADS = 2 };
    for (int head_dim = 7; head_dim <= 135; head_dim += 64) {
        int kv_dim = KV_HEADS * head_dim;
        int slots[POSITIONS];
        for (int t = 0; t < POSITIONS; t++) {
            slots[t] = (t * 17 + 3) % SLOTS;
        }
        float *keys = random_floats((size_t) SLOTS * kv_dim, 2.0f);
        float *values = random_floats((size_t) SLOTS * kv_dim, 1.0f);
        uint16_t *keys16 = malloc(sizeof(uint16_t) * SLOTS * kv_dim);
        uint16_t *values16 = malloc(sizeof(uint16_t) * SLOTS * kv_dim);
        int8_t *keys8 = malloc((size_t) SLOTS * kv_dim);
        int8_t *values8 = malloc((size_t) SLOTS * kv_dim);
        for (int k = 0; k < SLOTS * kv_dim; k++) {
            keys16[k] = f16_scale() ^ (uint16_t) ((next() & 1) << 15);
            values16[k] = f16_scale();
            keys8[k] = (int8_t) (next() % 255 - 127);
            values8[k] = (int8_t) (next() % 255 - 127);
        }
        float *key_scales = random_floats(SLOTS * KV_HEADS, 0.02f);
        float *value_scales = random_floats(SLOTS * KV_HEADS, 0.02f);
        float *q = random_floats((size_t) head_dim, 1.0f);
        float pristine[136] = {0};
        float out[136];
        float scores[POSITIONS];
        const void *key_rows[3] = {keys, keys16, keys8};
        const void *value_rows[3] = {values, values16, values8};
        for (int type = ZSE_CPU_KV_F32; type <= ZSE_CPU_KV_INT8; type++) {
            const float *ks = type == ZSE_CPU_KV_INT8 ? key_scales : NULL;
            const float *vs = type == ZSE_CPU_KV_INT8 ? value_scales : NULL;
            char what[64];
            snprintf(what, sizeof what, "attention, kv type %d, head dim %d", type, head_dim);
            CHECK_OP(what, out, head_dim, zse_cpu_attention_head(q, head_dim, type, key_rows[type], value_rows[type],
                     ks, vs, kv_dim, 1, KV_HEADS, slots, 0, POSITIONS - 1, 0.125f, 0.0f, scores, out));
            CHECK_OP(what, out, head_dim, zse_cpu_attention_head(q, head_dim, type, key_rows[type], value_rows[type],
                     ks, vs, kv_dim, 0, KV_HEADS, slots, 30, POSITIONS - 1, 0.5f, 2.0f, scores, out));
            checks += 2;
        }
        free(keys);
        free(values);
        free(keys16);
        free(values16);
        free(keys8);
        free(values8);
        free(key_scales);
        free(value_scales);
        free(q);
    }
    return checks;
}

int main(void) {
    if (zse_cpu_abi_version() != ZSE_CPU_ABI_VERSION) {
        printf("FAIL ABI version %d, header %d\n", zse_cpu_abi_version(), ZSE_CPU_ABI_VERSION);
        return 1;
    }
    const char *sets = zse_cpu_supported();
    printf("kernel sets: %s (best: %s)\n", sets, zse_cpu_isa());
    int checks = 0;
    for (int n = 1; n <= 5; n++) {
        for (int rows = 1; rows <= 9; rows += 4) {
            check("q8", 32, rows + 28, 96, n, sets);
            check("q8", 32, rows, 288, n, sets);
            check("q4", 32, rows + 28, 96, n, sets);
            check("q4", 64, rows, 320, n, sets);
            check("q4", 128, rows + 12, 256, n, sets);
            check("q5", 32, rows + 28, 96, n, sets);
            check("nf4", 64, rows + 28, 192, n, sets);
            check("f32", 0, rows + 28, 45, n, sets);
            check("f16", 0, rows + 28, 45, n, sets);
            check("f16", 0, rows + 4, 200, n, sets); /* several 32-wide steps of the AVX-512 decode path */
            check("bf16", 0, rows, 67, n, sets);
            check("bf16", 0, rows + 4, 200, n, sets);
            check("q4_k", 256, rows + 28, 512, n, sets);
            check("q5_k", 256, rows, 768, n, sets);
            check("q6_k", 256, rows + 12, 256, n, sets);
            check("ternary", 128, rows + 28, 384, n, sets);
            /* interleaved-16: whole tiles and a tail of rows (rows + 28: 29, 33, 37), a tail only (rows) */
            check("q8x16", 32, rows + 28, 96, n, sets);
            check("q8x16", 32, rows, 64, n, sets);
            check("q4x16", 32, rows + 28, 96, n, sets);
            check("q4x16", 64, rows + 28, 320, n, sets);
            check("q4x16", 128, rows + 12, 256, n, sets);
            check("q4x16", 128, rows + 44, 384, n, sets);
            checks += 22;
        }
    }
    int ops = check_ops(sets);
    printf("%d shapes and %d op cases checked on every set: %s\n", checks, ops,
           failures == 0 ? "all match the generic set" : "FAILED");
    return failures == 0 ? 0 : 1;
}
