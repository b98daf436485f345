/*
 * zse_cuda.h: the plain C ABI of libzse_cuda, bound from Java through FFM (io.zse.backend.cuda.CudaLibrary).
 *
 * Conventions
 *  - Every function returns an int status: 0 on success, a CUDA runtime error code (> 0) when CUDA failed, or
 *    ZSE_CUDA_INVALID_ARGUMENT when an argument was refused before CUDA saw it. zse_cuda_last_error() returns the
 *    message of the last failure on the calling thread (never NULL; "" after success).
 *  - Handles (streams, events, graphs) and device pointers cross the ABI as void*; a NULL stream is the legacy
 *    default stream.
 *  - Tensor storage types use the .zse codes (docs/zse-format.md, "Tensor types"): 0 F32, 1 F16, 2 BF16, 3 Q8,
 *    4 Q4, 5 NF4. Weights are read in their .zse layout (row-groups): `data` holds the element bytes of the whole
 *    matrix, `scales` the F16 scales (Q4: d then m per group), NULL for unquantized types.
 *  - Activations are F32, row-major, first dimension n (tokens processed together).
 *  - Kernel launches are asynchronous on `stream`; a launch error is reported at once, an execution error by the
 *    next synchronizing call.
 */
#ifndef ZSE_CUDA_H
#define ZSE_CUDA_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Only the functions below are exported (the library is built with -fvisibility=hidden). */
#pragma GCC visibility push(default)

#define ZSE_CUDA_ABI_VERSION 20
/* The most activation rows zse_cuda_integer_matvec takes, but for its staged products. */
#define ZSE_CUDA_INTEGER_ROWS 64
/* The weight rows of a staged tensor-core block of zse_cuda_integer_matvec (one split counter each). */
#define ZSE_CUDA_STAGED_ROWS 64
/* The counters at the start of zse_cuda_paged_attention's workspace, one per row and block of heads. */
#define ZSE_CUDA_SPLIT_COUNTERS 65536
/* The kv_type of INT8 rows of the KV block pool (the others are the storage codes 0 F32 and 1 F16). */
#define ZSE_CUDA_KV_INT8 3
#define ZSE_CUDA_INVALID_ARGUMENT (-1)

/* ---- library and errors ---- */
int zse_cuda_abi_version(void);
const char *zse_cuda_last_error(void);
/* CUDA driver version (e.g. 12080), 0 when no driver is installed. */
int zse_cuda_driver_version(int *version);
/* on 1 (the default): the decode path's kernels are launched to start while the kernel ahead of them drains its last
 * blocks (programmatic dependent launch, on GPUs of compute capability 9.0 and above; each waits for that kernel
 * before it touches memory other kernels use); 0: ordinary launches. For the whole process. */
int zse_cuda_set_overlap(int on);

/* ---- devices ---- */
int zse_cuda_device_count(int *count);
/* Writes the NUL-terminated device name into name[0..capacity). */
int zse_cuda_device_name(int device, char *name, int capacity);
int zse_cuda_device_capability(int device, int *major, int *minor);
/* Free and total memory of the device, in bytes. */
int zse_cuda_device_memory(int device, uint64_t *free_bytes, uint64_t *total_bytes);
int zse_cuda_device_multiprocessors(int device, int *count);
int zse_cuda_set_device(int device);
int zse_cuda_device_synchronize(void);

/* ---- memory ---- */
int zse_cuda_malloc(void **pointer, uint64_t bytes);
int zse_cuda_free(void *pointer);
/* Page-locked host memory for staging uploads. */
int zse_cuda_malloc_host(void **pointer, uint64_t bytes);
int zse_cuda_free_host(void *pointer);
/* Page-locks an existing host range (e.g. a mapped .zse file) so copies from it run at full PCIe speed. */
int zse_cuda_host_register(void *pointer, uint64_t bytes);
int zse_cuda_host_unregister(void *pointer);
int zse_cuda_copy_to_device(void *device_dst, const void *host_src, uint64_t bytes, void *stream);
int zse_cuda_copy_to_host(void *host_dst, const void *device_src, uint64_t bytes, void *stream);
int zse_cuda_copy_on_device(void *device_dst, const void *device_src, uint64_t bytes, void *stream);
int zse_cuda_memset(void *device_dst, int value, uint64_t bytes, void *stream);

/* ---- streams, events, graphs ---- */
int zse_cuda_stream_create(void **stream);
int zse_cuda_stream_destroy(void *stream);
int zse_cuda_stream_synchronize(void *stream);
/* Makes `stream` wait for `event` (recorded on another stream) without blocking the host. */
int zse_cuda_stream_wait_event(void *stream, void *event);
int zse_cuda_event_create(void **event);
int zse_cuda_event_destroy(void *event);
int zse_cuda_event_record(void *event, void *stream);
int zse_cuda_event_synchronize(void *event);
int zse_cuda_event_elapsed_ms(float *milliseconds, void *start, void *end);
/* Captures the work queued on `stream` between begin and end into an instantiated graph. */
int zse_cuda_graph_begin_capture(void *stream);
int zse_cuda_graph_end_capture(void *stream, void **graph);
int zse_cuda_graph_launch(void *graph, void *stream);
int zse_cuda_graph_destroy(void *graph);

/* ---- kernels ---- */
/*
 * out[n, rows] = x[n, cols] . w^T for a weight w [rows, cols] in its .zse layout: n <= 8 the matrix-vector kernel in
 * F32; larger n (prefill) a tiled kernel, in F32 for F32 weights, else on tensor cores with the weight and activation
 * tiles rounded to F16 (BF16 for BF16 weights) and F32 accumulation, in blocks of `tile` (64 or 128) tokens and as
 * many weight rows (F32 weights: 64). n <= 65535 * 64. TERNARY weights
 * (BitNet b1.58) quantize each activation row to int8 as BitLinear does and multiply exactly in integers, for every n.
 */
int zse_cuda_matmul(const void *data, const void *scales, int type, int group_size, int rows, int cols,
                    const float *x, int n, int tile, float *out, void *stream);
/*
 * The integer products of decode (as libzse_cpu computes them): quantize_rows turns x [n, cols] (cols a multiple
 * of 32) into int8 codes per block of 32, q = round(x * 127 / max|x|), with the block's scale d = max|x| / 127 and
 * s = d * sum(q): q [n * cols], d and s [n * cols / 32]. integer_matvec then computes out_j[n, rows_j] = x . w_j^T for
 * `count` (1 to 3) weights of one type (Q8, Q4, Q4_K or Q6_K), group size and column count that share that input, in
 * one launch: data, scales, rows and out are host arrays of `count` entries (device pointers, as for
 * zse_cuda_matmul), read during the call only. n <= ZSE_CUDA_INTEGER_ROWS, but for the staged products (mma_rows 0,
 * splits 1), which take any n (a prompt) in tiles of 64 tokens; from 9 rows on, the products run on int8 tensor
 * cores (tiles of 16, 32 or 64 tokens). mma_rows: how the tensor-core products take their weight rows: 0, blocks of
 * ZSE_CUDA_STAGED_ROWS staged through shared memory (cols a multiple of 256, Q6_K's of 2048, every weight's data and
 * scales and xq, xd and xs 16-byte aligned); 32 or 16, Q8, Q4 and Q4_K in blocks of that many rows reading their
 * fragments from memory, Q6_K in the DP4A kernel 16 rows a launch. splits (staged blocks only): the parts the
 * columns are split into, 1 to 8 (at most cols / 256); above 1, workspace holds splits * n * (the rows of all
 * weights) floats and counters one zeroed int per ZSE_CUDA_STAGED_ROWS rows, left at zero. row_warps: the warps that
 * split a weight row's columns in the DP4A kernel (up to 8 tokens, and Q6_K's), 1, 2, 4 or 8; 0: as many as the
 * row's length calls for.
 */
int zse_cuda_quantize_rows(const float *x, int n, int cols, int8_t *q, float *d, float *s, void *stream);
int zse_cuda_integer_matvec(int type, int group_size, int cols, int count, const void *const *data,
                            const void *const *scales, const int *rows, float *const *out, const int8_t *xq,
                            const float *xd, const float *xs, int n, int mma_rows, int splits, float *workspace,
                            int *counters, int row_warps, void *stream);
/* One activation row's product with one weight [rows, cols] added to the residual stream x [rows] (x += x_in . w^T),
 * then out = rms_norm(x) * weight and, where q is set, its int8 form (as zse_cuda_quantize_rows writes it): the output
 * or down projection and the add + RMSNorm after it in one launch, whose last block norms the row. x_in as for
 * integer_matvec (one row); counter: one device int, zero before the first launch, left at zero by each. With weight
 * NULL, only x += x_in . w^T (out, q and counter unused): the products that read x norm it themselves (below). */
int zse_cuda_integer_matvec_add_rms_norm(int type, int group_size, int cols, int rows, const void *data,
                                         const void *scales, const int8_t *xq, const float *xd, const float *xs,
                                         float *x, const float *weight, float eps, float *out, int8_t *q, float *d,
                                         float *s, int *counter, int row_warps, void *stream);
/* One activation row's q, k and v products (data, scales: 3 entries; heads, kv_heads and kv_heads heads of head_dim
 * rows, head_dim a multiple of 8) and RoPE with the KV write in one launch, as integer_matvec then rope_store_kv of
 * that row: q, k, v get the products, then q is rotated in place by positions[0], and the rotated k (k itself stays
 * unrotated) and v go to the caches at slots[0] (-1: not cached).
 * Where norm_stream is not NULL the input is rms_norm(norm_stream) * norm_weight (cols values, a multiple of 32, at
 * most 32768), which each block computes for itself, bit for bit as integer_matvec_add_rms_norm's norm, and writes to
 * normed (F32) once; xq, xd and xs are then unused. */
int zse_cuda_qkv_rope_store_kv(int type, int group_size, int cols, const void *const *data, const void *const *scales,
                               int heads, int kv_heads, int head_dim, const int8_t *xq, const float *xd,
                               const float *xs, float *q, float *k, float *v, const int32_t *positions,
                               const float *inverse_frequencies, const int32_t *slots, void *keys, void *values,
                               int kv_type, const float *norm_stream, const float *norm_weight, float norm_eps,
                               float *normed, int row_warps, void *stream);
/* The feed-forward's gated products at n <= 8 activation rows in one launch: out[n, ff] = silu(x . gate^T) * (x . up^T)
 * in F32, and its int8 form (q, d, s as zse_cuda_quantize_rows writes them) for the down projection; gate and up
 * [ff, cols] of one type and group, ff a multiple of 32, x as for integer_matvec. The same bits as integer_matvec of
 * both weights (at the same row_warps) then zse_cuda_swiglu. norm_stream, norm_weight, norm_eps and normed as for
 * qkv_rope_store_kv (n == 1 where norm_stream is set). ahead (0 to 8): how many of its row groups ahead of the one it
 * multiplies each warp asks L2 for (0: none but its first); no effect on the results. */
int zse_cuda_swiglu_matvec(int type, int group_size, int cols, int ff, const void *gate_data,
                           const void *gate_scales, const void *up_data, const void *up_scales, const int8_t *xq,
                           const float *xd, const float *xs, int n, float *out, int8_t *q, float *d, float *s,
                           const float *norm_stream, const float *norm_weight, float norm_eps, float *normed,
                           int row_warps, int ahead, void *stream);
/* out[i, :] = row tokens[i] of the table [rows, cols] decoded to F32; tokens is a device array of n ids. */
int zse_cuda_embed(const void *data, const void *scales, int type, int group_size, int rows, int cols,
                   const int32_t *tokens, int n, float *out, void *stream);
/*
 * A weight stored in layout interleaved-16 (docs/zse-format.md) rewritten in row-groups, from src into dst (device
 * memory, not overlapping): rows of row_units units of unit_bytes each (4: the data, in steps of 4 bytes; 2: the F16
 * scale slots). Rows after the last whole tile of 16 are copied as they are.
 */
int zse_cuda_deinterleave_rows(const void *src, void *dst, int64_t rows, int64_t row_units, int unit_bytes,
                               void *stream);
/* x[i, :] += bias for the n rows of x [n, dim]. */
int zse_cuda_add_bias(float *x, int n, const float *bias, int dim, void *stream);
/*
 * out[i, :] = x[i, :] / sqrt(mean(x[i, :]^2) + eps) * weight for n rows of width dim. Where q is not NULL, out is also
 * written quantized for the integer products (dim a multiple of 32), as zse_cuda_quantize_rows would: q [n * dim],
 * d and s [n * dim / 32]; the F32 out is the same either way, bit for bit.
 */
int zse_cuda_rms_norm(const float *x, int n, const float *weight, int dim, float eps, float *out, int8_t *q, float *d,
                      float *s, void *stream);
/* The residual add and the next RMSNorm in one kernel: x += y, then out = rms_norm(x) as above (bit for bit). */
int zse_cuda_add_rms_norm(float *x, const float *y, int n, const float *weight, int dim, float eps, float *out,
                          int8_t *q, float *d, float *s, void *stream);
/*
 * Rotate-half RoPE of x [n, heads * head_dim] in place; row i is at position positions[i] (a device array, so a captured
 * step replays at new positions); inverse_frequencies [head_dim/2].
 */
int zse_cuda_rope(float *x, int n, int heads, int head_dim, const int32_t *positions,
                  const float *inverse_frequencies, void *stream);
/*
 * Causal scaled dot-product attention of q [n, heads * head_dim] at positions start_pos..start_pos+n-1 over keys and
 * values [capacity, kv_heads * head_dim] holding positions 0..start_pos+n-1; GQA (heads % kv_heads == 0); a
 * sliding window > 0 lets a query at p see keys > p - window. n == 1 runs the decode kernel, n > 1 the tiled prefill
 * kernel. head_dim <= 256.
 */
int zse_cuda_attention(const float *q, int n, int start_pos, const float *keys, const float *values, int heads,
                       int kv_heads, int head_dim, int sliding_window, float *out, void *stream);
/*
 * The KV block pool: per layer, keys and values [slots, kv_dim] of kv_type (0 F32, 1 F16: written rounded to nearest
 * even, read as F32; ZSE_CUDA_KV_INT8: int8 codes, with key_scales and value_scales [slots, kv_heads] F32, each head's
 * row written as code = round(x * 127 / max|x|), ties up, scale = max|x| / 127, and read as q·k = scale · Σ q·code,
 * out += (p · scale) · code; the scales are NULL for the other types), slot = block * block_size + offset in block.
 * store_kv writes row i of k and v [rows, kv_dim] to slot slots[i] (a negative slot: a padding row, not stored);
 * kv_dim = kv_heads * head_dim, head_dim at most 256 for INT8 rows.
 * paged_attention is the attention above, its logits q·k times scale and, where soft_cap > 0, then
 * soft_cap·tanh(logit / soft_cap) (Gemma 2; zse_cuda_attention takes 1/sqrt(head_dim) and no cap), for a batch of
 * rows from several sequences: row i (q and out [rows, heads * head_dim]) is at position positions[i] and sees the
 * positions 0..positions[i] of its sequence, whose block table starts at tables[table_offsets[i]]; a negative
 * position is a padding row (out zero). rows <= 65535.
 * splits > 1 (at most 64) cuts each row's visible keys into that many runs attended by separate blocks, the last of
 * them to finish merging them (flash-decoding, for long contexts at small batch); it needs a device workspace of
 * ZSE_CUDA_SPLIT_COUNTERS ints, zero before the first call (each call leaves them zero), then rows * heads * splits *
 * (head_dim + 2) floats (NULL when splits == 1), and rows * heads / heads_per_block at most ZSE_CUDA_SPLIT_COUNTERS.
 * heads_per_block (1, 2 or 4, dividing heads / kv_heads) query heads of one KV head share a block, which reads each
 * key and value row once for all of them. keys_at_once: the keys each warp loads together, 0 (4, or 2 where head_dim
 * > 128) or 1; no effect on the results.
 * Positions, tables and slots are device arrays, so a captured step replays with new ones written in place.
 */
int zse_cuda_store_kv(const float *k, const float *v, int rows, int kv_heads, int head_dim, const int32_t *slots,
                      void *keys, void *values, float *key_scales, float *value_scales, int kv_type, void *stream);
/*
 * RoPE in the KV write: store_kv of k rotated as zse_cuda_rope rotates it (kv_dim = kv_heads * head_dim, row i at
 * positions[i]); k itself is not modified. Where q is not NULL, its rows [rows, heads * head_dim] are rotated in
 * place by the same launch. Bit for bit rope then store_kv.
 */
int zse_cuda_rope_store_kv(float *q, int heads, const float *k, const float *v, int rows, int kv_heads, int head_dim,
                           const int32_t *positions, const float *inverse_frequencies, const int32_t *slots,
                           void *keys, void *values, float *key_scales, float *value_scales, int kv_type,
                           void *stream);
/* Where out_q is not NULL, out is also written quantized as rms_norm does (head_dim a multiple of 32). */
int zse_cuda_paged_attention(const float *q, int rows, const int32_t *positions, const int32_t *table_offsets,
                             const int32_t *tables, int block_size, const void *keys, const void *values,
                             const float *key_scales, const float *value_scales, int kv_type, int heads,
                             int kv_heads, int head_dim, int sliding_window, float scale, float soft_cap, int splits,
                             int heads_per_block, int keys_at_once, float *workspace, float *out,
                             int8_t *out_q, float *out_d, float *out_s, void *stream);
/*
 * paged_attention for prompt chunks, tiled: tile i is the rows tiles[2i] .. tiles[2i] + tiles[2i + 1] - 1 (at most
 * 16) of q and out, consecutive positions of one sequence (positions and table_offsets as above, indexed by row; a
 * tile whose first position is negative is padding: out zero). Each tile's queries are staged once and attend to the
 * sequence's cached prefix and to the chunk itself in tiles of keys, with an online softmax; Q.K^T and P.V are
 * 16x16x16 products accumulated in F32, whose inputs are F16 on tensor cores for an F16 pool (kv_type 1) and an INT8
 * one (its codes, exact in F16, the products scaled by the rows' scales), F32 for an F32 pool. tile_count * heads
 * blocks.
 */
int zse_cuda_paged_prefill_attention(const float *q, const int32_t *positions, const int32_t *table_offsets,
                                     const int32_t *tables, const int32_t *tiles, int tile_count, int block_size,
                                     const void *keys, const void *values, const float *key_scales,
                                     const float *value_scales, int heads, int kv_heads, int head_dim,
                                     int sliding_window, float scale, float soft_cap, int kv_type, float *out,
                                     void *stream);
/* gate[k] = silu(gate[k]) * up[k] for k < length; where q is not NULL, quantized too as rms_norm does. */
int zse_cuda_swiglu(float *gate, const float *up, int64_t length, int8_t *q, float *d, float *s, void *stream);
/* gate[k] = gelu_tanh(gate[k]) * up[k] for k < length (GeGLU, Gemma; PyTorch's approximate="tanh"). */
int zse_cuda_geglu(float *gate, const float *up, int64_t length, void *stream);
/* gate[k] = relu(gate[k])² * up[k] for k < length (BitNet b1.58). */
int zse_cuda_relu_squared_glu(float *gate, const float *up, int64_t length, void *stream);
/* x[k] += y[k] for k < length. */
int zse_cuda_add(float *x, const float *y, int64_t length, void *stream);
/* x[k] *= factor for k < length (LongRoPE's attention factor on the queries). */
int zse_cuda_scale(float *x, int64_t length, float factor, void *stream);
/* ids[i] = index of the largest of logits[i, 0..vocab) (lowest index on ties, NaN never wins), i < n. */
int zse_cuda_argmax(const float *logits, int n, int vocab, int32_t *ids, void *stream);
/* The k largest logits of one row, descending (ties: lower index first), k <= 1024; for top-k/top-p sampling. */
int zse_cuda_top_k(const float *logits, int vocab, int k, float *values, int32_t *ids, void *stream);
/*
 * One token for each of the n rows of logits [n, vocab], drawn as io.zse.generate.Sampler draws it (the contract is in
 * logits.cu, sample_kernel): parameters [n, 5] F64 in device memory, per row temperature (0: argmax), top_k (0: off),
 * top_p, min_p and the uniform u in [0, 1) the row's seeded generator gave. ids[i] = -1 when row i's kept candidates
 * exceed 1024 (the host samples that row). scratch: device memory of n * vocab floats.
 */
int zse_cuda_sample(const float *logits, int n, int vocab, const double *parameters, float *scratch, int32_t *ids,
                    void *stream);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
