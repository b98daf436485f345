/*
 * tiles.h: the tile walk the SIMD kernel sets share. The including file defines its vector type and operations:
 *   TILE_M, TILE_N       weight rows and activation rows per tile
 *   VEC                  a vector of float lanes, VEC_LANES of them
 *   VEC_ZERO()           all lanes 0;  VEC_FMA(acc, a, b): acc + a * b;  VEC_HSUM(v): the sum of the lanes
 *   VEC_LOAD(p)          VEC_LANES floats from p
 */
#ifndef ZSE_CPU_TILES_H
#define ZSE_CPU_TILES_H

/*
 * Runs TILE(M, N) over [row_begin, row_end) x [0, n) with r and i set. Full tiles and decoding's one-row tiles get
 * constant sizes, so the compiler unrolls their loops and keeps the accumulators in registers; edges get the rest.
 */
#define FOR_EACH_TILE(TILE)                                                                                       \
    for (int64_t r = row_begin; r < row_end; r += TILE_M) {                                                       \
        int rm = row_end - r < TILE_M ? (int) (row_end - r) : TILE_M;                                             \
        for (int64_t i = 0; i < n; i += TILE_N) {                                                                 \
            int rn = n - i < TILE_N ? (int) (n - i) : TILE_N;                                                     \
            if (rm == TILE_M && rn == TILE_N) {                                                                   \
                TILE(TILE_M, TILE_N);                                                                             \
            } else if (rm == TILE_M && rn == 1) {                                                                 \
                TILE(TILE_M, 1);                                                                                  \
            } else {                                                                                              \
                TILE(rm, rn);                                                                                     \
            }                                                                                                     \
        }                                                                                                         \
    }


/*
 * As FOR_EACH_TILE, but decoding (one activation row) walks the weight rows one at a time: consecutive rows are
 * consecutive bytes, so the weights stream in order, which the hardware prefetchers keep up with. A tile of TILE_M rows
 * side by side reads TILE_M interleaved streams and shares nothing when there is one activation row; for the integer
 * products on x86 it measured 2-5 times slower on weights streamed from memory.
 */
#define FOR_EACH_TILE_ROW_BY_ROW_WHEN_DECODING(TILE)                                                              \
    if (n == 1) {                                                                                                 \
        for (int64_t r = row_begin; r < row_end; r++) {                                                           \
            const int64_t i = 0;                                                                                  \
            TILE(1, 1);                                                                                           \
        }                                                                                                         \
    } else {                                                                                                      \
        FOR_EACH_TILE(TILE)                                                                                       \
    }

/*
 * A tile's accumulators, one vector of partial sums per output, and their sums stored to out. Macros rather than
 * functions: an accumulator array passed by pointer stays in memory instead of registers.
 */
#define DECLARE_TILE_ACCUMULATORS(acc)                                                                            \
    VEC acc[TILE_M][TILE_N];                                                                                      \
    for (int a = 0; a < rm; a++) {                                                                                \
        for (int j = 0; j < rn; j++) {                                                                            \
            acc[a][j] = VEC_ZERO();                                                                               \
        }                                                                                                         \
    }

#define STORE_TILE_SUMS(acc)                                                                                      \
    for (int a = 0; a < rm; a++) {                                                                                \
        for (int j = 0; j < rn; j++) {                                                                            \
            out[(i + j) * stride + r + a] = VEC_HSUM(acc[a][j]);                                                  \
        }                                                                                                         \
    }

/* A K-quant tile's sizes and the first code and scale byte of each of its rm weight rows from r. */
#define KQUANT_TILE_ROWS(bits)                                                                                    \
    const uint64_t blocks = (uint64_t) cols / 32;                                                                 \
    const uint64_t supers = (uint64_t) cols / 256;                                                                \
    const uint64_t code_bytes = (bits) == 4 ? 128 : (bits) == 5 ? 160 : 192;                                      \
    const uint64_t scale_bytes = (bits) == 6 ? 18 : 16;                                                           \
    const uint8_t *weights[TILE_M];                                                                               \
    const uint8_t *row_scales[TILE_M];                                                                            \
    for (int a = 0; a < rm; a++) {                                                                                \
        weights[a] = w + (uint64_t) (r + a) * supers * code_bytes;                                                \
        row_scales[a] = scales + (uint64_t) (r + a) * supers * scale_bytes;                                       \
    }

/* The K-quant products: the walk over the including file's KQUANT_TILE, row by row when decoding. */
#define KQUANT_MATMUL(name, bits)                                                                                 \
    static void name(const uint8_t *w, const uint8_t *scales, int32_t cols, int32_t row_begin, int32_t row_end,   \
                     const int8_t *xq, const float *xd, const float *xs, int32_t n, float *out, int32_t out_stride) { \
        FOR_EACH_TILE_ROW_BY_ROW_WHEN_DECODING(KQUANT_TILE_##bits)                                                \
    }
#define KQUANT_TILE_4(M, N) KQUANT_TILE(4, w, scales, cols, r, M, xq, xd, xs, i, N, out, out_stride)
#define KQUANT_TILE_5(M, N) KQUANT_TILE(5, w, scales, cols, r, M, xq, xd, xs, i, N, out, out_stride)
#define KQUANT_TILE_6(M, N) KQUANT_TILE(6, w, scales, cols, r, M, xq, xd, xs, i, N, out, out_stride)

/* The Q5 and TERNARY products: the walks over the including file's q5_tile and ternary_tile. */
#define Q5_KERNEL                                                                                                 \
    static void matmul_q5(const uint8_t *w, const uint8_t *scales, int32_t cols, int32_t row_begin,             \
                          int32_t row_end, const int8_t *xq, const float *xd, const float *xs, int32_t n,        \
                          float *out, int32_t out_stride) {                                                     \
        FOR_EACH_TILE(Q5_TILE)                                                                                    \
    }
#define Q5_TILE(M, N) q5_tile(w, scales, cols, r, M, xq, xd, xs, i, N, out, out_stride)
#define TERNARY_KERNEL                                                                                            \
    static void matmul_ternary(const uint8_t *w, float scale, int32_t cols, int32_t row_begin, int32_t row_end, \
                               const int8_t *xq, const float *xdiv, const int32_t *xsum, int32_t n, float *out, \
                               int32_t out_stride) {                                                            \
        FOR_EACH_TILE(TERNARY_TILE)                                                                               \
    }
#define TERNARY_TILE(M, N) ternary_tile(w, scale, cols, r, M, xq, xdiv, xsum, i, N, out, out_stride)

static inline float read_f32(float v) {
    return v;
}

/*
 * A float product (F32, F16, BF16): the types differ only in how VEC_LANES weights (load) or one weight (read1) are
 * read. Defines name(), the exported signature, over a tile function name##_tile.
 */
#define FLOAT_KERNEL(name, type, load, read1)                                                                     \
    static inline __attribute__((always_inline)) void name##_tile(const type *w, int64_t cols, int64_t r, int rm, \
                                                                  const float *x, int64_t i, int rn, float *out,  \
                                                                  int64_t stride) {                               \
        DECLARE_TILE_ACCUMULATORS(acc);                                                                       \
        int64_t body = cols - cols % VEC_LANES;                                                                   \
        for (int64_t k = 0; k < body; k += VEC_LANES) {                                                           \
            VEC wv[TILE_M];                                                                                       \
            for (int a = 0; a < rm; a++) {                                                                        \
                wv[a] = load(w + (r + a) * cols + k);                                                             \
            }                                                                                                     \
            for (int j = 0; j < rn; j++) {                                                                        \
                VEC xv = VEC_LOAD(x + (i + j) * cols + k);                                                        \
                for (int a = 0; a < rm; a++) {                                                                    \
                    acc[a][j] = VEC_FMA(acc[a][j], wv[a], xv);                                                    \
                }                                                                                                 \
            }                                                                                                     \
        }                                                                                                         \
        for (int a = 0; a < rm; a++) {                                                                            \
            for (int j = 0; j < rn; j++) {                                                                        \
                float sum = VEC_HSUM(acc[a][j]);                                                                  \
                for (int64_t k = body; k < cols; k++) {                                                           \
                    sum += read1(w[(r + a) * cols + k]) * x[(i + j) * cols + k];                                  \
                }                                                                                                 \
                out[(i + j) * stride + r + a] = sum;                                                              \
            }                                                                                                     \
        }                                                                                                         \
    }                                                                                                             \
    static void name(const type *w, int32_t cols, int32_t row_begin, int32_t row_end, const float *x, int32_t n,  \
                     float *out, int32_t out_stride) {                                                           \
        FOR_EACH_TILE(name##_TILE)                                                                                \
    }

/* The Q8 product over the including file's q8_tile(w, scales, cols, r, rm, xq, xd, i, rn, out, stride). */
#define Q8_KERNEL                                                                                                 \
    static void matmul_q8(const int8_t *w, const uint16_t *scales, int32_t cols, int32_t row_begin,               \
                          int32_t row_end, const int8_t *xq, const float *xd, int32_t n, float *out,              \
                          int32_t out_stride) {                                                                   \
        FOR_EACH_TILE(Q8_TILE)                                                                                    \
    }
#define Q8_TILE(M, N) q8_tile(w, scales, cols, r, M, xq, xd, i, N, out, out_stride)

/* The NF4 product over the including file's nf4_tile(w, scales, cols, r, rm, x, i, rn, out, stride). */
#define NF4_KERNEL                                                                                                \
    static void matmul_nf4(const uint8_t *w, const uint16_t *scales, int32_t cols, int32_t row_begin,             \
                           int32_t row_end, const float *x, int32_t n, float *out, int32_t out_stride) {          \
        FOR_EACH_TILE(NF4_TILE)                                                                                   \
    }
#define NF4_TILE(M, N) nf4_tile(w, scales, cols, r, M, x, i, N, out, out_stride)

/*
 * The Q4 product over the including file's q4_tile(w, scales, g, cols, r, rm, xq, xd, xs, i, rn, out, stride): one copy of
 * the walk per group size (32, 64, 128), each with g a constant.
 */
#define Q4_KERNEL                                                                                                 \
    static inline __attribute__((always_inline)) void matmul_q4_group(                                            \
        int g, const uint8_t *w, const uint16_t *scales, int32_t cols, int32_t row_begin, int32_t row_end,        \
        const int8_t *xq, const float *xd, const float *xs, int32_t n, float *out, int32_t out_stride) {          \
        FOR_EACH_TILE(Q4_TILE)                                                                                    \
    }                                                                                                             \
    static void matmul_q4(const uint8_t *w, const uint16_t *scales, int32_t group, int32_t cols,                  \
                          int32_t row_begin, int32_t row_end, const int8_t *xq, const float *xd, const float *xs, \
                          int32_t n, float *out, int32_t out_stride) {                                            \
        switch (group) {                                                                                          \
            case 32:                                                                                              \
                matmul_q4_group(32, w, scales, cols, row_begin, row_end, xq, xd, xs, n, out, out_stride);         \
                break;                                                                                            \
            case 64:                                                                                              \
                matmul_q4_group(64, w, scales, cols, row_begin, row_end, xq, xd, xs, n, out, out_stride);         \
                break;                                                                                            \
            default:                                                                                              \
                matmul_q4_group(128, w, scales, cols, row_begin, row_end, xq, xd, xs, n, out, out_stride);        \
                break;                                                                                            \
        }                                                                                                         \
    }
#define Q4_TILE(M, N) q4_tile(w, scales, g, cols, r, M, xq, xd, xs, i, N, out, out_stride)

/*
 * Layout interleaved-16: runs TILE(N) over the tiled rows of [row_begin, row_end) in steps of X16_ROW_STEP (16, or 8
 * where a vector holds half a tile), N activation rows at a time (at most X16_TILE_N), then the rows after the last
 * whole tile (stored as row-groups) with ROW_GROUPS(first row).
 */
#define FOR_EACH_X16_TILE(TILE, ROW_GROUPS)                                                                       \
    int64_t full = rows & ~15;                                                                                    \
    int64_t tiled_end = row_end < full ? row_end : full;                                                          \
    for (int64_t r = row_begin; r < tiled_end; r += X16_ROW_STEP) {                                               \
        for (int64_t i = 0; i < n; i += X16_TILE_N) {                                                             \
            int rn = n - i < X16_TILE_N ? (int) (n - i) : X16_TILE_N;                                             \
            if (rn == X16_TILE_N) {                                                                               \
                TILE(X16_TILE_N);                                                                                 \
            } else if (rn == 1) {                                                                                 \
                TILE(1);                                                                                          \
            } else {                                                                                              \
                TILE(rn);                                                                                         \
            }                                                                                                     \
        }                                                                                                         \
    }                                                                                                             \
    if (row_end > full) {                                                                                         \
        ROW_GROUPS(row_begin > full ? row_begin : full);                                                          \
    }

/*
 * The interleaved-16 products over the including file's q8x16_tile(w, scales, cols, r, xq, xd, xs, i, rn, out,
 * stride) and q4x16_tile(g, w, scales, cols, r, xq, xd, xs, i, rn, out, stride), each computing X16_ROW_STEP rows
 * from r; the rows after the last tile go to its matmul_q8 and matmul_q4. Q4 gets one copy of the walk per group size.
 */
#define X16_KERNELS                                                                                               \
    static void matmul_q8_x16(const int8_t *w, const uint16_t *scales, int32_t rows, int32_t cols,                \
                              int32_t row_begin, int32_t row_end, const int8_t *xq, const float *xd,              \
                              const float *xs, int32_t n, float *out, int32_t out_stride) {                       \
        FOR_EACH_X16_TILE(Q8X_TILE, Q8X_REST)                                                                     \
    }                                                                                                             \
    static inline __attribute__((always_inline)) void matmul_q4_x16_group(                                        \
        int g, const uint8_t *w, const uint16_t *scales, int32_t rows, int32_t cols, int32_t row_begin,           \
        int32_t row_end, const int8_t *xq, const float *xd, const float *xs, int32_t n, float *out,               \
        int32_t out_stride) {                                                                                     \
        FOR_EACH_X16_TILE(Q4X_TILE, Q4X_REST)                                                                     \
    }                                                                                                             \
    static void matmul_q4_x16(const uint8_t *w, const uint16_t *scales, int32_t group, int32_t rows,              \
                              int32_t cols, int32_t row_begin, int32_t row_end, const int8_t *xq,                 \
                              const float *xd, const float *xs, int32_t n, float *out, int32_t out_stride) {      \
        switch (group) {                                                                                          \
            case 32:                                                                                              \
                matmul_q4_x16_group(32, w, scales, rows, cols, row_begin, row_end, xq, xd, xs, n, out,            \
                                    out_stride);                                                                  \
                break;                                                                                            \
            case 64:                                                                                              \
                matmul_q4_x16_group(64, w, scales, rows, cols, row_begin, row_end, xq, xd, xs, n, out,            \
                                    out_stride);                                                                  \
                break;                                                                                            \
            default:                                                                                              \
                matmul_q4_x16_group(128, w, scales, rows, cols, row_begin, row_end, xq, xd, xs, n, out,           \
                                    out_stride);                                                                  \
                break;                                                                                            \
        }                                                                                                         \
    }
#define Q8X_TILE(N) q8x16_tile(w, scales, cols, r, xq, xd, xs, i, N, out, out_stride)
#define Q8X_REST(first) matmul_q8(w, scales, cols, (int32_t) (first), row_end, xq, xd, n, out, out_stride)
#define Q4X_TILE(N) q4x16_tile(g, w, scales, cols, r, xq, xd, xs, i, N, out, out_stride)
#define Q4X_REST(first) matmul_q4(w, scales, g, cols, (int32_t) (first), row_end, xq, xd, xs, n, out, out_stride)

#define matmul_f32_TILE(M, N) matmul_f32_tile(w, cols, r, M, x, i, N, out, out_stride)
#define matmul_f16_TILE(M, N) matmul_f16_tile(w, cols, r, M, x, i, N, out, out_stride)
#define matmul_bf16_TILE(M, N) matmul_bf16_tile(w, cols, r, M, x, i, N, out, out_stride)

#endif
