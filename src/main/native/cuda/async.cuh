// Copies from global to shared memory that run while the block computes (cp.async, sm_80+), and ldmatrix, for the
// staged tensor-core products (integer_matvec.cu). Under the emulation a copy is made at once: a fiber runs until it
// reaches a barrier, so no other thread could see a copy still in flight anyway. ldmatrix there is a warp exchange of
// the lanes' row addresses.
#ifndef ZSE_ASYNC_CUH
#define ZSE_ASYNC_CUH

#ifdef ZSE_CUDA_EMULATION
#include "emu/cuda_emu.h"
#endif

#include <stdint.h>
#include <string.h>

namespace zse {

// Starts copying BYTES (4, 8 or 16) from global memory at `from` to shared memory at `to`, both aligned to BYTES.
template <int BYTES>
__device__ __forceinline__ void copy_async(void *to, const void *from) {
    static_assert(BYTES == 4 || BYTES == 8 || BYTES == 16, "cp.async copies 4, 8 or 16 bytes");
#ifndef ZSE_CUDA_EMULATION
    const unsigned shared = static_cast<unsigned>(__cvta_generic_to_shared(to));
    if constexpr (BYTES == 16) {
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(shared), "l"(from));
    } else {
        asm volatile("cp.async.ca.shared.global [%0], [%1], %2;\n" ::"r"(shared), "l"(from), "n"(BYTES));
    }
#else
    if (reinterpret_cast<uintptr_t>(to) % BYTES != 0 || reinterpret_cast<uintptr_t>(from) % BYTES != 0) {
        zse_emu::fault(cudaErrorMisalignedAddress, "cp.async from or to a misaligned address");
    }
    if (!zse_emu::device_visible(from)) zse_emu::fault(cudaErrorIllegalAddress, "cp.async from host memory");
    memcpy(to, from, BYTES);
#endif
}

// Closes the group of copies this thread started since the last call.
__device__ __forceinline__ void copy_async_commit() {
#ifndef ZSE_CUDA_EMULATION
    asm volatile("cp.async.commit_group;\n" ::);
#endif
}

// Waits until at most PENDING of this thread's groups are still in flight (a barrier then shows them to the block).
template <int PENDING>
__device__ __forceinline__ void copy_async_wait() {
#ifndef ZSE_CUDA_EMULATION
    asm volatile("cp.async.wait_group %0;\n" ::"n"(PENDING));
#endif
}

// ldmatrix .x4 of 8 x 16-byte rows in shared memory: lane l gives the address of row l % 8 of matrix l / 8 (16-byte
// aligned), and register i of lane l gets bytes 4 (l % 4) .. 4 (l % 4) + 3 of row l / 4 of matrix i: the layout of
// mma.sync's int8 fragments, row by row.
__device__ __forceinline__ void load_matrices(const uint8_t *row, uint32_t (&r)[4]) {
#ifndef ZSE_CUDA_EMULATION
    const unsigned shared = static_cast<unsigned>(__cvta_generic_to_shared(row));
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(shared));
#else
    if (reinterpret_cast<uintptr_t>(row) % 16 != 0) {
        zse_emu::fault(cudaErrorMisalignedAddress, "ldmatrix of a row not 16-byte aligned");
    }
    const unsigned lane = threadIdx.x % 32;
    for (unsigned i = 0; i < 4; i++) {
        const uint8_t *from = __shfl_sync(0xffffffffu, row, static_cast<int>(8 * i + lane / 4));
        memcpy(&r[i], from + 4 * (lane % 4), sizeof r[i]);
    }
#endif
}

}  // namespace zse

#endif
