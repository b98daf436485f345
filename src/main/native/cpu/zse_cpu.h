/*
 * zse_cpu.h: the plain C ABI of libzse_cpu, the native CPU kernels bound from Java through FFM
 * (io.zse.backend.cpu.NativeCpuLibrary).
 *
 * Conventions
 *  - Weights are read in place in their .zse layout (row-groups, docs/zse-format.md): `w` is the element bytes of
 *    the whole [rows, cols] matrix, `scales` its F16 scales (Q4: d then m per group). A call computes the output
 *    columns [row_begin, row_end) for every activation row: out[i * out_stride + r].
 *  - Float activations are F32, row-major [n, cols]. The Q8 and Q4 products take activations quantized by
 *    zse_cpu_quantize_rows: int8 codes per block of 32 with an F32 scale d and the block's sum s = d * sum(codes),
 *    as integer dot products are where the speed is.
 *  - The library picks the best kernels for this CPU when it loads (zse_cpu_isa() names them); zse_cpu_use()
 *    switches to another supported set (tests compare them all on one machine).
 *  - Nothing is checked here: the Java side validates every size and offset before calling.
 */
#ifndef ZSE_CPU_H
#define ZSE_CPU_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

#define ZSE_CPU_ABI_VERSION 2
/* Elements per block of quantized activations. */
#define ZSE_CPU_BLOCK 32
/* Layout `interleaved-16` (code 1, docs/zse-format.md): rows per tile, bytes per row and step. */
#define ZSE_CPU_INTERLEAVE_ROWS 16
#define ZSE_CPU_INTERLEAVE_BYTES 4

int zse_cpu_abi_version(void);
/* The kernel set in use: "avx512-vnni", "avx2" or "generic". */
const char *zse_cpu_isa(void);
/* Every kernel set this CPU can run, best first, comma-separated. */
const char *zse_cpu_supported(void);
/* Switches to the named kernel set; 0 on success, -1 when this CPU or build cannot run it. */
int zse_cpu_use(const char *isa);

/* Quantizes n rows of cols floats (cols a multiple of 32) into codes q[n * cols], d[n * cols / 32], s[n * cols / 32]. */
void zse_cpu_quantize_rows(const float *x, int32_t n, int32_t cols, int8_t *q, float *d, float *s);

void zse_cpu_matmul_q8(const int8_t *w, const uint16_t *scales, int32_t cols, int32_t row_begin, int32_t row_end,
                       const int8_t *xq, const float *xd, int32_t n, float *out, int32_t out_stride);
/* group: 32, 64 or 128. */
void zse_cpu_matmul_q4(const uint8_t *w, const uint16_t *scales, int32_t group, int32_t cols, int32_t row_begin,
                       int32_t row_end, const int8_t *xq, const float *xd, const float *xs, int32_t n, float *out,
                       int32_t out_stride);
/*
 * The same products on weights in layout interleaved-16 (Q4: groups of 32 only). `rows` is the whole matrix's (its
 * last rows % 16 are stored as row-groups); row_begin and row_end are multiples of 16 or equal to rows.
 */
void zse_cpu_matmul_q8_x16(const int8_t *w, const uint16_t *scales, int32_t rows, int32_t cols, int32_t row_begin,
                           int32_t row_end, const int8_t *xq, const float *xd, const float *xs, int32_t n, float *out,
                           int32_t out_stride);
void zse_cpu_matmul_q4_x16(const uint8_t *w, const uint16_t *scales, int32_t rows, int32_t cols, int32_t row_begin,
                           int32_t row_end, const int8_t *xq, const float *xd, const float *xs, int32_t n, float *out,
                           int32_t out_stride);
void zse_cpu_matmul_nf4(const uint8_t *w, const uint16_t *scales, int32_t cols, int32_t row_begin, int32_t row_end,
                        const float *x, int32_t n, float *out, int32_t out_stride);
void zse_cpu_matmul_f32(const float *w, int32_t cols, int32_t row_begin, int32_t row_end, const float *x, int32_t n,
                        float *out, int32_t out_stride);
void zse_cpu_matmul_f16(const uint16_t *w, int32_t cols, int32_t row_begin, int32_t row_end, const float *x,
                        int32_t n, float *out, int32_t out_stride);
void zse_cpu_matmul_bf16(const uint16_t *w, int32_t cols, int32_t row_begin, int32_t row_end, const float *x,
                         int32_t n, float *out, int32_t out_stride);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
