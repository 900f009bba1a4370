/* Depthwise 2-D convolution (see depthwise_kernels.h): the passes of
 * depthwise_rows.h compiled per dtype and instruction set, and the
 * parallel loops around them. The forward pass splits over output rows and
 * the input gradient over input rows (each gathers, so no two threads write
 * one element); the filter gradient sums per-thread partial filters. */
#include <omp.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>

#include "cpu_kernels.h"
#include "depthwise_kernels.h"
#include "parallel.h"

#define CBLOCK 64 /* output channels accumulated together */
#define CAT_(a, b) a##_##b
#define CAT(a, b) CAT_(a, b)

#define T float
#define ISA __attribute__((target("avx512f,avx512vl,fma")))
#define VBYTES 64
#define NAME(x) CAT(x, f32_avx512)
#include "depthwise_rows.h"
#undef ISA
#undef VBYTES
#undef NAME
#define ISA __attribute__((target("avx2,fma")))
#define VBYTES 32
#define NAME(x) CAT(x, f32_avx2)
#include "depthwise_rows.h"
#undef ISA
#undef VBYTES
#undef NAME
#define ISA
#define VBYTES 16
#define NAME(x) CAT(x, f32_base)
#include "depthwise_rows.h"
#undef ISA
#undef VBYTES
#undef NAME
#undef T

#define T double
#define ISA __attribute__((target("avx512f,avx512vl,fma")))
#define VBYTES 64
#define NAME(x) CAT(x, f64_avx512)
#include "depthwise_rows.h"
#undef ISA
#undef VBYTES
#undef NAME
#define ISA __attribute__((target("avx2,fma")))
#define VBYTES 32
#define NAME(x) CAT(x, f64_avx2)
#include "depthwise_rows.h"
#undef ISA
#undef VBYTES
#undef NAME
#define ISA
#define VBYTES 16
#define NAME(x) CAT(x, f64_base)
#include "depthwise_rows.h"
#undef ISA
#undef VBYTES
#undef NAME
#undef T

/* Each pass over a range of rows, untyped. */
typedef void (*rows_fn)(const twk_depthwise_shape *s, const void *a, const void *b, void *out, int64_t r0,
                        int64_t r1);
typedef struct {
    rows_fn fwd, bwi, bwf;
} passes;

#define PASSES(sfx) {(rows_fn)fwd_##sfx, (rows_fn)bwi_##sfx, (rows_fn)bwf_##sfx}
static const passes table[2][TWK_DEPTHWISE_ISA_COUNT] = {
    {PASSES(f32_avx512), PASSES(f32_avx2), PASSES(f32_base)},
    {PASSES(f64_avx512), PASSES(f64_avx2), PASSES(f64_base)},
};

const char *const twk_depthwise_isa_names[TWK_DEPTHWISE_ISA_COUNT] = {"AVX-512", "AVX2+FMA", "baseline"};

bool twk_depthwise_isa_available(twk_depthwise_isa isa)
{
    __builtin_cpu_init();
    switch (isa) {
    case TWK_DEPTHWISE_AVX512: return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl");
    case TWK_DEPTHWISE_AVX2: return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    default: return true;
    }
}

static atomic_int chosen = -1; /* every thread computes the same value */

static twk_depthwise_isa current_isa(void)
{
    int isa = atomic_load_explicit(&chosen, memory_order_relaxed);
    if (isa < 0) {
        for (isa = 0; !twk_depthwise_isa_available((twk_depthwise_isa)isa); isa++)
            ;
        atomic_store_explicit(&chosen, isa, memory_order_relaxed);
    }
    return (twk_depthwise_isa)isa;
}

twk_depthwise_isa twk_depthwise_set_isa(twk_depthwise_isa isa)
{
    twk_depthwise_isa was = current_isa();
    if (twk_depthwise_isa_available(isa))
        atomic_store_explicit(&chosen, (int)isa, memory_order_relaxed);
    return was;
}

static const passes *pick(twk_dtype dtype)
{
    return &table[dtype == TWK_FLOAT64][current_isa()];
}

/* fn over rows [0, rows), split evenly over the threads when the work is
 * worth it. */
static void run_rows(rows_fn fn, const twk_depthwise_shape *s, const void *a, const void *b, void *out,
                     int64_t rows, int64_t work)
{
    TWK_PARALLEL(twk_parallel(work) && rows > 1, ,
    {
        int t = omp_get_thread_num(), nt = omp_get_num_threads();
        fn(s, a, b, out, rows * t / nt, rows * (t + 1) / nt);
    });
}

static int64_t taps(const twk_depthwise_shape *s) { return s->k_h * s->k_w; }
static int64_t filter_size(const twk_depthwise_shape *s) { return taps(s) * s->channels * s->multiplier; }

void twk_depthwise_forward(twk_dtype dtype, const twk_depthwise_shape *s, const void *input, const void *filter,
                           void *output)
{
    int64_t rows = s->batch * s->out_h, work = rows * s->out_w * filter_size(s);
    run_rows(pick(dtype)->fwd, s, input, filter, output, rows, work);
}

void twk_depthwise_backprop_input(twk_dtype dtype, const twk_depthwise_shape *s, const void *filter,
                                  const void *grad_output, void *grad_input)
{
    int64_t rows = s->batch * s->in_h, work = rows * s->in_w * filter_size(s);
    run_rows(pick(dtype)->bwi, s, filter, grad_output, grad_input, rows, work);
}

size_t twk_depthwise_filter_workspace(twk_dtype dtype, const twk_depthwise_shape *s)
{
    size_t item = dtype == TWK_FLOAT64 ? sizeof(double) : sizeof(float);
    return (size_t)omp_get_max_threads() * (size_t)filter_size(s) * item;
}

void twk_depthwise_backprop_filter(twk_dtype dtype, const twk_depthwise_shape *s, const void *input,
                                   const void *grad_output, void *grad_filter, void *workspace)
{
    int64_t rows = s->batch * s->out_h, size = filter_size(s), work = rows * s->out_w * size;
    size_t item = dtype == TWK_FLOAT64 ? sizeof(double) : sizeof(float);
    if (size == 0)
        return;
    rows_fn fn = pick(dtype)->bwf;
    int used = 1;
    TWK_PARALLEL(twk_parallel(work) && rows > 1, ,
    {
        int t = omp_get_thread_num(), nt = omp_get_num_threads();
        char *part = (char *)workspace + (size_t)t * (size_t)size * item;
        memset(part, 0, (size_t)size * item);
        fn(s, input, grad_output, part, rows * t / nt, rows * (t + 1) / nt);
        if (t == 0)
            used = nt;
    });
    memcpy(grad_filter, workspace, (size_t)size * item);
    for (int t = 1; t < used; t++) {
        if (dtype == TWK_FLOAT64) {
            double *df = grad_filter;
            const double *p = (const double *)workspace + (size_t)t * (size_t)size;
            for (int64_t i = 0; i < size; i++)
                df[i] += p[i];
        } else {
            float *df = grad_filter;
            const float *p = (const float *)workspace + (size_t)t * (size_t)size;
            for (int64_t i = 0; i < size; i++)
                df[i] += p[i];
        }
    }
}
