/* OpenBLAS, opened at run time.
 *
 * OpenBLAS picks its kernels when it initialises, from the CPU it detects or
 * from $OPENBLAS_CORETYPE. On these AMD EPYC machines it detects "Haswell"
 * and leaves AVX-512 unused, although the CPU has it and the SkylakeX
 * kernels nearly double sgemm. Opening the library ourselves lets us set
 * OPENBLAS_CORETYPE=SkylakeX first when the CPU supports AVX-512 and the user
 * has not chosen a core type, so every program linking the engine gets the
 * faster kernels without wrapper scripts. TW_BLAS_CORETYPE overrides.
 *
 * We also prefer OpenBLAS's OpenMP build (Debian's libopenblas0-openmp) to the
 * default pthreads one: the engine's own loops use OpenMP, and after each
 * parallel loop libgomp's idle workers spin for a while; with a second,
 * pthreads pool in OpenBLAS both fight for the cores and a 1000x1000 sgemm
 * that follows an elementwise op ran 50% slower. With the OpenMP build there
 * is one pool. TW_BLAS_LIBRARY names a library to open instead. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "cpu_kernels.h"

#if defined(__x86_64__)
#define MULTIARCH "x86_64-linux-gnu"
#elif defined(__aarch64__)
#define MULTIARCH "aarch64-linux-gnu"
#else
#define MULTIARCH "unknown"
#endif

enum { ROW_MAJOR = 101, NO_TRANS = 111, TRANS = 112 };

typedef void (*sgemm_fn)(int, int, int, int, int, int, float, const float *, int, const float *, int, float, float *,
                         int);
typedef void (*dgemm_fn)(int, int, int, int, int, int, double, const double *, int, const double *, int, double,
                         double *, int);
typedef char *(*string_fn)(void);

static struct {
    pthread_once_t once;
    void *handle;
    sgemm_fn sgemm;
    dgemm_fn dgemm;
    const char *error;
    const char *path;
    char info[320];
} blas = {PTHREAD_ONCE_INIT};

static void choose_core_type(void)
{
    const char *forced = getenv("TW_BLAS_CORETYPE");
    if (forced && *forced) {
        setenv("OPENBLAS_CORETYPE", forced, 1);
        return;
    }
    if (getenv("OPENBLAS_CORETYPE"))
        return;
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq"))
        setenv("OPENBLAS_CORETYPE", "SkylakeX", 0);
}

static void load_blas(void)
{
    choose_core_type();
    const char *names[] = {getenv("TW_BLAS_LIBRARY"), "/usr/lib/" MULTIARCH "/openblas-openmp/libopenblas.so.0",
                           "libopenblas.so.0", "libopenblas.so"};
    for (size_t i = 0; i < sizeof names / sizeof names[0] && !blas.handle; i++) {
        if (names[i] && *names[i]) {
            blas.handle = dlopen(names[i], RTLD_NOW | RTLD_GLOBAL);
            blas.path = names[i];
        }
    }
    if (!blas.handle) {
        blas.error = "OpenBLAS (libopenblas.so.0) could not be loaded; install libopenblas0";
        return;
    }
    blas.sgemm = (sgemm_fn)dlsym(blas.handle, "cblas_sgemm");
    blas.dgemm = (dgemm_fn)dlsym(blas.handle, "cblas_dgemm");
    if (!blas.sgemm || !blas.dgemm) {
        blas.error = "the loaded OpenBLAS lacks cblas_sgemm/cblas_dgemm";
        return;
    }
    string_fn config = (string_fn)dlsym(blas.handle, "openblas_get_config");
    string_fn core = (string_fn)dlsym(blas.handle, "openblas_get_corename");
    snprintf(blas.info, sizeof blas.info, "%s (core %s) from %s", config ? config() : "OpenBLAS",
             core ? core() : "unknown", blas.path);
}

int twk_blas_init(const char **message)
{
    pthread_once(&blas.once, load_blas);
    if (blas.error && message)
        *message = blas.error;
    return blas.error ? -1 : 0;
}

const char *twk_blas_info(void)
{
    return twk_blas_init(NULL) == 0 ? blas.info : blas.error;
}

void twk_gemm(twk_dtype dtype, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const void *a,
              int64_t lda, const void *b, int64_t ldb, float beta, void *c, int64_t ldc)
{
    int ta = trans_a ? TRANS : NO_TRANS, tb = trans_b ? TRANS : NO_TRANS;
    if (dtype == TWK_FLOAT32)
        blas.sgemm(ROW_MAJOR, ta, tb, (int)m, (int)n, (int)k, 1.0f, a, (int)lda, b, (int)ldb, beta, c, (int)ldc);
    else
        blas.dgemm(ROW_MAJOR, ta, tb, (int)m, (int)n, (int)k, 1.0, a, (int)lda, b, (int)ldb, beta, c, (int)ldc);
}
