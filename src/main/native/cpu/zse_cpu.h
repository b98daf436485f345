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
 *  - The products (zse_cpu_matmul_*) return 0, or ZSE_CPU_FAULT when reading their operands raised SIGBUS: a mapped
 *    file truncated after it was mapped, or its storage failing (added in ABI version 5). Their outputs are then
 *    partly written; zse_cpu_fault_address() gives the address that faulted, for this thread's last such call.
 */
#ifndef ZSE_CPU_H
#define ZSE_CPU_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

#define ZSE_CPU_ABI_VERSION 5
/* Elements per block of quantized activations. */
#define ZSE_CPU_BLOCK 32
/* Layout `interleaved-16` (code 1, docs/zse-format.md): rows per tile, bytes per row and step. */
#define ZSE_CPU_INTERLEAVE_ROWS 16
#define ZSE_CPU_INTERLEAVE_BYTES 4
/* A product's status when one of its reads faulted. */
#define ZSE_CPU_FAULT (-3)

int zse_cpu_abi_version(void);
/* The kernel set in use: "avx512-vnni", "avx2", "neon-dotprod" or "generic". */
const char *zse_cpu_isa(void);
/* Every kernel set this CPU can run, best first, comma-separated. */
const char *zse_cpu_supported(void);
/* Switches to the named kernel set; 0 on success, -1 when this CPU or build cannot run it. */
int zse_cpu_use(const char *isa);

/* The address whose read made this thread's last product return ZSE_CPU_FAULT (0 if none has). */
int64_t zse_cpu_fault_address(void);

/* Quantizes n rows of cols floats (cols a multiple of 32) into codes q[n * cols], d[n * cols / 32], s[n * cols / 32]. */
void zse_cpu_quantize_rows(const float *x, int32_t n, int32_t cols, int8_t *q, float *d, float *s);

int32_t zse_cpu_matmul_q8(const int8_t *w, const uint16_t *scales, int32_t cols, int32_t row_begin, int32_t row_end,
                          const int8_t *xq, const float *xd, int32_t n, float *out, int32_t out_stride);
/* group: 32, 64 or 128. */
int32_t zse_cpu_matmul_q4(const uint8_t *w, const uint16_t *scales, int32_t group, int32_t cols, int32_t row_begin,
                          int32_t row_end, const int8_t *xq, const float *xd, const float *xs, int32_t n, float *out,
                          int32_t out_stride);
/*
 * The K-quant types, super-blocks of 256 (cols a multiple of 256): `w` the code bytes (Q4_K 128, Q5_K 160, Q6_K 192
 * per super-block), `scales` the scale bytes (Q4_K, Q5_K: d, dmin, 12 packed 6-bit pairs; Q6_K: d, 16 int8).
 */
int32_t zse_cpu_matmul_q4_k(const uint8_t *w, const uint8_t *scales, int32_t cols, int32_t row_begin, int32_t row_end,
                            const int8_t *xq, const float *xd, const float *xs, int32_t n, float *out,
                            int32_t out_stride);
int32_t zse_cpu_matmul_q5_k(const uint8_t *w, const uint8_t *scales, int32_t cols, int32_t row_begin, int32_t row_end,
                            const int8_t *xq, const float *xd, const float *xs, int32_t n, float *out,
                            int32_t out_stride);
int32_t zse_cpu_matmul_q6_k(const uint8_t *w, const uint8_t *scales, int32_t cols, int32_t row_begin, int32_t row_end,
                            const int8_t *xq, const float *xd, const float *xs, int32_t n, float *out,
                            int32_t out_stride);
/*
 * Q5 (ggml's Q5_0/Q5_1 codes), groups of 32 (cols a multiple of 32): `w` 20 bytes per group (16 bytes of nibbles,
 * byte j holding elements j and j + 16, then a little-endian u32 whose bit j is bit 4 of element j), `scales` F16
 * (d, m) per group; w = q d + m. Activations as for Q4 (added in ABI version 3).
 */
int32_t zse_cpu_matmul_q5(const uint8_t *w, const uint8_t *scales, int32_t cols, int32_t row_begin, int32_t row_end,
                          const int8_t *xq, const float *xd, const float *xs, int32_t n, float *out,
                          int32_t out_stride);
/*
 * The Q8 and Q4 products on weights in layout interleaved-16 (Q4: group 32, 64 or 128). `rows` is the whole matrix's
 * (its last rows % 16 are stored as row-groups); row_begin and row_end are multiples of 16 or equal to rows.
 */
int32_t zse_cpu_matmul_q8_x16(const int8_t *w, const uint16_t *scales, int32_t rows, int32_t cols, int32_t row_begin,
                              int32_t row_end, const int8_t *xq, const float *xd, const float *xs, int32_t n,
                              float *out, int32_t out_stride);
int32_t zse_cpu_matmul_q4_x16(const uint8_t *w, const uint16_t *scales, int32_t group, int32_t rows, int32_t cols,
                              int32_t row_begin, int32_t row_end, const int8_t *xq, const float *xd, const float *xs,
                              int32_t n, float *out, int32_t out_stride);
int32_t zse_cpu_matmul_nf4(const uint8_t *w, const uint16_t *scales, int32_t cols, int32_t row_begin, int32_t row_end,
                           const float *x, int32_t n, float *out, int32_t out_stride);
int32_t zse_cpu_matmul_f32(const float *w, int32_t cols, int32_t row_begin, int32_t row_end, const float *x, int32_t n,
                           float *out, int32_t out_stride);
int32_t zse_cpu_matmul_f16(const uint16_t *w, int32_t cols, int32_t row_begin, int32_t row_end, const float *x,
                           int32_t n, float *out, int32_t out_stride);
int32_t zse_cpu_matmul_bf16(const uint16_t *w, int32_t cols, int32_t row_begin, int32_t row_end, const float *x,
                            int32_t n, float *out, int32_t out_stride);

/*
 * The converter's quantizers (quantize.c), byte for byte those of io.zse.convert: count floats (whole groups, all
 * finite) become codes and F16 scales in the .zse layout; the candidate tables come from the Java quantizer. 0 on
 * success, -1 when a group's scale overflows F16 (the Java quantizer then names the group), -2 when this CPU has
 * neither AVX-512 nor NEON (the Java quantizer runs instead).
 */
int32_t zse_cpu_convert_q8(const float *src, int64_t count, int8_t *data, uint16_t *scales, const float *factors,
                           int32_t factor_count);
int32_t zse_cpu_convert_nf4(const float *src, int64_t count, uint8_t *data, uint16_t *scales, const float *factors,
                            int32_t factor_count, const float *values, const float *midpoints, float max_half_gap);
int32_t zse_cpu_convert_q4(const float *src, int64_t count, int32_t group, uint8_t *data, uint16_t *scales,
                           const float *level_offsets, int32_t offset_count);

/*
 * TERNARY weights (BitNet b1.58): 2-bit codes c = t + 1 in blocks of 128 (32 bytes; byte j holds elements j, j+32,
 * j+64, j+96 at bits 0-1, 2-3, 4-5, 6-7), one scale s per tensor. Activations are int8 codes per row with the row's
 * divisor xdiv (127 / absmax) and code sum xsum: out = (float) Σ t·q * s / xdiv. cols a multiple of 128.
 */
int32_t zse_cpu_matmul_ternary(const uint8_t *w, float scale, int32_t cols, int32_t row_begin, int32_t row_end,
                               const int8_t *xq, const float *xdiv, const int32_t *xsum, int32_t n, float *out,
                               int32_t out_stride);

/*
 * The element-wise ops and attention (ops.h; added in ABI version 4), over F32 activations in native order. Lengths
 * count floats; x and out of rms_norm may be the same rows.
 */
void zse_cpu_rms_norm(const float *x, int32_t n, int32_t dim, const float *weight, float eps, float *out);
void zse_cpu_add(float *x, const float *y, int64_t length);
void zse_cpu_scale(float *x, int64_t length, float factor);
/* gate = silu(gate) * up, gelu_tanh(gate) * up, relu(gate)^2 * up */
void zse_cpu_swiglu(float *gate, const float *up, int64_t length);
void zse_cpu_geglu(float *gate, const float *up, int64_t length);
void zse_cpu_relu2_glu(float *gate, const float *up, int64_t length);
/*
 * Rotary embedding of rows [from_row, to_row) of x [rows, heads, head_dim], row i at positions[i]: each head's pair
 * (j, j + head_dim / 2) turned by positions[i] * inverse_frequencies[j].
 */
void zse_cpu_rope(float *x, int32_t from_row, int32_t to_row, const int32_t *positions, int32_t heads, int32_t head_dim,
                  const float *inverse_frequencies);

/* The sum of count floats (any bit patterns): reads every byte once, for the memory-bandwidth probe. */
double zse_cpu_read_all(const float *p, int64_t count);

/* Storage of the cached keys and values (io.zse.backend.KvCacheType). */
#define ZSE_CPU_KV_F32 0
#define ZSE_CPU_KV_F16 1
#define ZSE_CPU_KV_INT8 2
/*
 * Attention of one query head q[head_dim] over the cached positions first..last of a sequence whose position t is at
 * slots[t]: keys and values are [slots, kv_dim] of kv_type, the head's row at kv_head * head_dim of its slot (INT8:
 * times key_scales / value_scales[slot * num_kv_heads + kv_head]; NULL for the float types). Logits are q·k times
 * logit_scale, then soft_cap * tanh(logit / soft_cap) when soft_cap > 0; out[head_dim] = softmax-weighted sum of the
 * values. scores[first..last] is scratch.
 */
void zse_cpu_attention_head(const float *q, int32_t head_dim, int32_t kv_type, const void *keys, const void *values,
                            const float *key_scales, const float *value_scales, int32_t kv_dim, int32_t kv_head,
                            int32_t num_kv_heads, const int32_t *slots, int32_t first, int32_t last, float logit_scale,
                            float soft_cap, float *scores, float *out);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
