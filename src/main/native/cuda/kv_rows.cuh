// The KV block pool's row types on the device (zse_cuda.h, "The KV block pool"): F32 and F16 rows hold the values;
// INT8 rows hold int8 codes with an F32 scale per (slot, kv head), the CPU's Int8KvRows: value = code * scale,
// scale = max |x| / 127 of the head's row. The kernels that read INT8 rows scale once per head row, as the CPU's
// attention does: q.k = scale * sum(q * code), out += (p * scale) * code.
#ifndef ZSE_KV_ROWS_CUH
#define ZSE_KV_ROWS_CUH

#include <stdint.h>

#include "mma.cuh"
#include "status.cuh"

namespace zse {

constexpr int kKvInt8 = ZSE_CUDA_KV_INT8;

template <class KV>
constexpr bool kScaledRows = sizeof(KV) == 1;

// Java's Math.round of a float: the nearest integer, ties towards positive infinity (not rintf's ties to even).
__device__ __forceinline__ float round_half_up(float x) {
    const float below = floorf(x);
    return x - below >= 0.5f ? below + 1.f : below;
}

// 0 where kv_type is a pool row type (F32, F16, or INT8 with both scale arrays given), else the refusal of entry (the
// C entry point that took them).
inline int check_kv_rows(const char *entry, int kv_type, const float *key_scales, const float *value_scales) {
    if (kv_type != 0 && kv_type != 1 && kv_type != kKvInt8) {
        return refuse(entry, "kv_type must be 0 (F32), 1 (F16) or 3 (INT8)");
    }
    if (kv_type == kKvInt8 && (key_scales == nullptr || value_scales == nullptr)) {
        return refuse(entry, "an INT8 cache needs its key and value scales (NULL)");
    }
    return 0;
}

// Writes rows [rows, kv_heads * head_dim] of k and v as INT8 rows into slots[i] of keys and values (codes [slots,
// kv_dim], scales [slots, kv_heads]), k rotated by RoPE first where inverse_frequencies is set (q too, in place, where
// set, as zse_cuda_rope_store_kv does). The scales are checked (check_kv_rows); refusals name entry, the C entry point
// that asked. Defined with the other KV writes (elementwise.cu).
int launch_int8_kv_store(const char *entry, float *q, int heads, const float *k, const float *v, int rows,
                         int kv_heads, int head_dim, const int32_t *positions, const float *inverse_frequencies,
                         const int32_t *slots, int8_t *keys, int8_t *values, float *key_scales, float *value_scales,
                         cudaStream_t stream);

}  // namespace zse

#endif
