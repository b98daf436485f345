/*
 * dispatch.c: the exported ABI. Picks the best kernel set this CPU runs when the library loads and forwards every
 * call to it. The products, which read the weights where a file is mapped, run under a guard against SIGBUS.
 */
#define _GNU_SOURCE /* sigsetjmp, sigaction, siginfo_t under -std=c11 */
#include <setjmp.h>
#include <signal.h>
#include <stddef.h>
#include <string.h>
#if defined(__aarch64__)
#include <sys/auxv.h>
#ifndef HWCAP_ASIMDDP
#define HWCAP_ASIMDDP (1 << 20)
#endif
#endif

#include "kernels.h"
#include "zse_cpu.h"


/* Best first. */
static const struct zse_cpu_kernels *const candidates[] = {
#if defined(__x86_64__)
    &zse_cpu_avx512,
    &zse_cpu_avx2,
#elif defined(__aarch64__)
    &zse_cpu_neon_dotprod,
#endif
    &zse_cpu_generic,
};
#define CANDIDATES ((int) (sizeof candidates / sizeof candidates[0]))

static int runs_here(const struct zse_cpu_kernels *k) {
#if defined(__x86_64__)
    __builtin_cpu_init();
    if (k == &zse_cpu_avx512) {
        return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw")
               && __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512vnni")
               && __builtin_cpu_supports("fma") && __builtin_cpu_supports("f16c");
    }
    if (k == &zse_cpu_avx2) {
        return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("f16c");
    }
#elif defined(__aarch64__)
    if (k == &zse_cpu_neon_dotprod) {
        return (getauxval(AT_HWCAP) & HWCAP_ASIMDDP) != 0;
    }
#endif
    return k == &zse_cpu_generic;
}

static const struct zse_cpu_kernels *best(void) {
    for (int c = 0; c < CANDIDATES; c++) {
        if (runs_here(candidates[c])) {
            return candidates[c];
        }
    }
    return &zse_cpu_generic;
}

/*
 * A mapped page past the end of a file that shrank after it was mapped (or one whose storage fails to read) faults
 * with SIGBUS. The JVM survives that in Java code (an InternalError) but not in native code: so each product sets a
 * jump point for its thread, and the handler below returns there, the call then returning ZSE_CPU_FAULT. A SIGBUS
 * anywhere else goes on to the handler that was installed before this library (the JVM's). The handler runs with
 * SA_NODEFER, so jumping out of it leaves SIGBUS unblocked without saving the signal mask at every call.
 * initial-exec TLS: the handler reads these without a call into the dynamic linker.
 */
static struct sigaction before;
static __thread sigjmp_buf *volatile guard __attribute__((tls_model("initial-exec")));
static __thread volatile uintptr_t fault_address __attribute__((tls_model("initial-exec")));

static void on_sigbus(int signal, siginfo_t *info, void *context) {
    sigjmp_buf *jump = guard;
    if (jump != NULL) {
        guard = NULL;
        fault_address = (uintptr_t) info->si_addr;
        siglongjmp(*jump, 1);
    }
    if (before.sa_flags & SA_SIGINFO) {
        before.sa_sigaction(signal, info, context);
    } else if (before.sa_handler != SIG_DFL && before.sa_handler != SIG_IGN) {
        before.sa_handler(signal);
    } else {
        /* nothing handled it before: the default action, once the faulting instruction runs again */
        struct sigaction fallback = {.sa_handler = SIG_DFL};
        sigaction(SIGBUS, &fallback, NULL);
    }
}

static void guard_mapped_reads(void) {
    struct sigaction action = {.sa_sigaction = on_sigbus, .sa_flags = SA_SIGINFO | SA_NODEFER | SA_ONSTACK};
    sigemptyset(&action.sa_mask);
    sigaction(SIGBUS, &action, &before);
}

/* Runs `call` with this thread's jump point set; 0, or ZSE_CPU_FAULT when it faulted (zse_cpu_fault_address). */
#define GUARDED(call)                                                                                                  \
    do {                                                                                                               \
        sigjmp_buf jump;                                                                                               \
        if (sigsetjmp(jump, 0) != 0) {                                                                                 \
            return ZSE_CPU_FAULT;                                                                                      \
        }                                                                                                              \
        guard = &jump;                                                                                                 \
        call;                                                                                                          \
        guard = NULL;                                                                                                  \
        return 0;                                                                                                      \
    } while (0)

int64_t zse_cpu_fault_address(void) {
    return (int64_t) fault_address;
}

static const struct zse_cpu_kernels *active;
static char supported[128];

/* Runs when the library loads, before any call can race on these. */
__attribute__((constructor)) static void choose(void) {
    guard_mapped_reads();
    active = best();
    for (int c = 0; c < CANDIDATES; c++) {
        if (runs_here(candidates[c])) {
            if (supported[0] != 0) {
                strcat(supported, ",");
            }
            strcat(supported, candidates[c]->name);
        }
    }
}

static inline const struct zse_cpu_kernels *kernels(void) {
    return active;
}

/* The active set's kernel f; a set may leave a product out (NULL), and the portable C one runs for it. */
#define KERNEL(f) (kernels()->f != NULL ? kernels()->f : zse_cpu_generic.f)

int zse_cpu_abi_version(void) {
    return ZSE_CPU_ABI_VERSION;
}

const char *zse_cpu_isa(void) {
    return kernels()->name;
}

const char *zse_cpu_supported(void) {
    return supported;
}

int zse_cpu_use(const char *isa) {
    for (int c = 0; c < CANDIDATES; c++) {
        if (strcmp(candidates[c]->name, isa) == 0 && runs_here(candidates[c])) {
            active = candidates[c];
            return 0;
        }
    }
    return -1;
}

void zse_cpu_quantize_rows(const float *x, int32_t n, int32_t cols, int8_t *q, float *d, float *s) {
    KERNEL(quantize_rows)(x, n, cols, q, d, s);
}

int32_t zse_cpu_matmul_q8(const int8_t *w, const uint16_t *scales, int32_t cols, int32_t row_begin, int32_t row_end,
                          const int8_t *xq, const float *xd, int32_t n, float *out, int32_t out_stride) {
    GUARDED(KERNEL(matmul_q8)(w, scales, cols, row_begin, row_end, xq, xd, n, out, out_stride));
}

int32_t zse_cpu_matmul_q4(const uint8_t *w, const uint16_t *scales, int32_t group, int32_t cols, int32_t row_begin,
                          int32_t row_end, const int8_t *xq, const float *xd, const float *xs, int32_t n, float *out,
                          int32_t out_stride) {
    GUARDED(KERNEL(matmul_q4)(w, scales, group, cols, row_begin, row_end, xq, xd, xs, n, out, out_stride));
}

int32_t zse_cpu_matmul_q4_k(const uint8_t *w, const uint8_t *scales, int32_t cols, int32_t row_begin, int32_t row_end,
                            const int8_t *xq, const float *xd, const float *xs, int32_t n, float *out,
                            int32_t out_stride) {
    GUARDED(KERNEL(matmul_q4_k)(w, scales, cols, row_begin, row_end, xq, xd, xs, n, out, out_stride));
}

int32_t zse_cpu_matmul_q5_k(const uint8_t *w, const uint8_t *scales, int32_t cols, int32_t row_begin, int32_t row_end,
                            const int8_t *xq, const float *xd, const float *xs, int32_t n, float *out,
                            int32_t out_stride) {
    GUARDED(KERNEL(matmul_q5_k)(w, scales, cols, row_begin, row_end, xq, xd, xs, n, out, out_stride));
}

int32_t zse_cpu_matmul_q5(const uint8_t *w, const uint8_t *scales, int32_t cols, int32_t row_begin, int32_t row_end,
                          const int8_t *xq, const float *xd, const float *xs, int32_t n, float *out,
                          int32_t out_stride) {
    GUARDED(KERNEL(matmul_q5)(w, scales, cols, row_begin, row_end, xq, xd, xs, n, out, out_stride));
}

int32_t zse_cpu_matmul_q6_k(const uint8_t *w, const uint8_t *scales, int32_t cols, int32_t row_begin, int32_t row_end,
                            const int8_t *xq, const float *xd, const float *xs, int32_t n, float *out,
                            int32_t out_stride) {
    GUARDED(KERNEL(matmul_q6_k)(w, scales, cols, row_begin, row_end, xq, xd, xs, n, out, out_stride));
}

int32_t zse_cpu_matmul_q8_x16(const int8_t *w, const uint16_t *scales, int32_t rows, int32_t cols, int32_t row_begin,
                              int32_t row_end, const int8_t *xq, const float *xd, const float *xs, int32_t n,
                              float *out, int32_t out_stride) {
    GUARDED(KERNEL(matmul_q8_x16)(w, scales, rows, cols, row_begin, row_end, xq, xd, xs, n, out, out_stride));
}

int32_t zse_cpu_matmul_q4_x16(const uint8_t *w, const uint16_t *scales, int32_t group, int32_t rows, int32_t cols,
                              int32_t row_begin, int32_t row_end, const int8_t *xq, const float *xd, const float *xs,
                              int32_t n, float *out, int32_t out_stride) {
    GUARDED(KERNEL(matmul_q4_x16)(w, scales, group, rows, cols, row_begin, row_end, xq, xd, xs, n, out, out_stride));
}

int32_t zse_cpu_matmul_nf4(const uint8_t *w, const uint16_t *scales, int32_t cols, int32_t row_begin, int32_t row_end,
                           const float *x, int32_t n, float *out, int32_t out_stride) {
    GUARDED(KERNEL(matmul_nf4)(w, scales, cols, row_begin, row_end, x, n, out, out_stride));
}

int32_t zse_cpu_matmul_f32(const float *w, int32_t cols, int32_t row_begin, int32_t row_end, const float *x, int32_t n,
                           float *out, int32_t out_stride) {
    GUARDED(KERNEL(matmul_f32)(w, cols, row_begin, row_end, x, n, out, out_stride));
}

int32_t zse_cpu_matmul_f16(const uint16_t *w, int32_t cols, int32_t row_begin, int32_t row_end, const float *x,
                           int32_t n, float *out, int32_t out_stride) {
    GUARDED(KERNEL(matmul_f16)(w, cols, row_begin, row_end, x, n, out, out_stride));
}

int32_t zse_cpu_matmul_bf16(const uint16_t *w, int32_t cols, int32_t row_begin, int32_t row_end, const float *x,
                            int32_t n, float *out, int32_t out_stride) {
    GUARDED(KERNEL(matmul_bf16)(w, cols, row_begin, row_end, x, n, out, out_stride));
}

int32_t zse_cpu_matmul_ternary(const uint8_t *w, float scale, int32_t cols, int32_t row_begin, int32_t row_end,
                               const int8_t *xq, const float *xdiv, const int32_t *xsum, int32_t n, float *out,
                               int32_t out_stride) {
    GUARDED(KERNEL(matmul_ternary)(w, scale, cols, row_begin, row_end, xq, xdiv, xsum, n, out, out_stride));
}

void zse_cpu_rms_norm(const float *x, int32_t n, int32_t dim, const float *weight, float eps, float *out) {
    KERNEL(rms_norm)(x, n, dim, weight, eps, out);
}

void zse_cpu_add(float *x, const float *y, int64_t length) {
    KERNEL(add)(x, y, length);
}

void zse_cpu_scale(float *x, int64_t length, float factor) {
    KERNEL(scale)(x, length, factor);
}

void zse_cpu_swiglu(float *gate, const float *up, int64_t length) {
    KERNEL(swiglu)(gate, up, length);
}

void zse_cpu_geglu(float *gate, const float *up, int64_t length) {
    KERNEL(geglu)(gate, up, length);
}

void zse_cpu_relu2_glu(float *gate, const float *up, int64_t length) {
    KERNEL(relu2_glu)(gate, up, length);
}

void zse_cpu_rope(float *x, int32_t from_row, int32_t to_row, const int32_t *positions, int32_t heads, int32_t head_dim,
                  const float *inverse_frequencies) {
    KERNEL(rope)(x, from_row, to_row, positions, heads, head_dim, inverse_frequencies);
}

double zse_cpu_read_all(const float *p, int64_t count) {
    return KERNEL(read_all)(p, count);
}

void zse_cpu_attention_head(const float *q, int32_t head_dim, int32_t kv_type, const void *keys, const void *values,
                            const float *key_scales, const float *value_scales, int32_t kv_dim, int32_t kv_head,
                            int32_t num_kv_heads, const int32_t *slots, int32_t first, int32_t last, float logit_scale,
                            float soft_cap, float *scores, float *out) {
    KERNEL(attention_head)(q, head_dim, kv_type, keys, values, key_scales, value_scales, kv_dim, kv_head, num_kv_heads,
                           slots, first, last, logit_scale, soft_cap, scores, out);
}
