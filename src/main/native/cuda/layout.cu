// Layout interleaved-16 (docs/zse-format.md) back to row-groups, on the device: a .zse file written for the CPU's
// integer kernels uploads as it is stored, and the matmul kernels read rows. Done on the host, the rearrangement held a
// 7B Q4 model's upload to 0.5 GB/s on an H200.
#include <cstdint>

#include "status.cuh"

namespace zse {
namespace {

constexpr int kThreads = 256;
constexpr int kTileRows = 16;

// One thread per unit of the source, in source order (coalesced reads). In a tile of 16 rows of `units` units, unit k
// of row a sits at k * 16 + a interleaved and at a * units + k in row-groups; units after the last whole tile (rows
// that fill no tile) are in row-groups already and are copied as they are.
template <class Unit>
__global__ void __launch_bounds__(kThreads) deinterleave_kernel(const Unit *__restrict__ src, Unit *__restrict__ dst,
                                                                int64_t tiled, int64_t total, int64_t units) {
    const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i >= total) {
        return;
    }
    if (i >= tiled) {
        dst[i] = src[i];
        return;
    }
    const int64_t per_tile = kTileRows * units;
    const int64_t in_tile = i % per_tile;
    dst[i - in_tile + (in_tile % kTileRows) * units + in_tile / kTileRows] = src[i];
}

}  // namespace
}  // namespace zse

extern "C" {

int zse_cuda_deinterleave_rows(const void *src, void *dst, int64_t rows, int64_t row_units, int unit_bytes,
                               void *stream) {
    ZSE_REQUIRE(src != nullptr && dst != nullptr, "zse_cuda_deinterleave_rows: NULL pointer");
    ZSE_REQUIRE(src != dst, "zse_cuda_deinterleave_rows: src and dst must not overlap (it is not done in place)");
    ZSE_REQUIRE(unit_bytes == 2 || unit_bytes == 4, "zse_cuda_deinterleave_rows: unit_bytes must be 2 or 4");
    ZSE_REQUIRE(rows >= 0 && row_units > 0 && rows <= INT64_MAX / row_units,
                "zse_cuda_deinterleave_rows: negative or overflowing shape");
    const int64_t total = rows * row_units;
    const int64_t blocks = (total + zse::kThreads - 1) / zse::kThreads;
    ZSE_REQUIRE(blocks <= INT32_MAX, "zse_cuda_deinterleave_rows: tensor too large for one launch");
    if (total == 0) {
        return zse::ok();
    }
    const int64_t tiled = rows / zse::kTileRows * zse::kTileRows * row_units;
    const auto s = static_cast<cudaStream_t>(stream);
    if (unit_bytes == 4) {
        ZSE_LAUNCH(zse::deinterleave_kernel<uint32_t>, static_cast<int>(blocks), zse::kThreads, 0, s)(
            static_cast<const uint32_t *>(src), static_cast<uint32_t *>(dst), tiled, total, row_units);
    } else {
        ZSE_LAUNCH(zse::deinterleave_kernel<uint16_t>, static_cast<int>(blocks), zse::kThreads, 0, s)(
            static_cast<const uint16_t *>(src), static_cast<uint16_t *>(dst), tiled, total, row_units);
    }
    return zse::launched("deinterleave_kernel");
}

}  // extern "C"
