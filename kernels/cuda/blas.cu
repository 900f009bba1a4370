/* Matrix products through cuBLAS. cuBLAS is column-major: a row-major
 * C = A B is the column-major C^T = B^T A^T, so the operands swap and each
 * keeps its own transpose flag; batched products use the strided-batched
 * call (a batch stride of 0 reuses one matrix for every batch element). */
#include "twc_internal.h"

int twc_gemm(twc_device *dev, twk_dtype dtype, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k,
             const void *a, int64_t lda, int64_t stride_a, const void *b, int64_t ldb, int64_t stride_b, float beta,
             void *c, int64_t ldc, int64_t stride_c, int64_t batch)
{
    if (m == 0 || n == 0 || batch == 0)
        return 0;
    if (k == 0 && beta == 0) /* an empty sum: zeros (cuBLAS may leave C as is) */
        return twc_fill(dev, dtype, batch * m * n, c, 0.0);
    if (m > INT32_MAX || n > INT32_MAX || k > INT32_MAX || lda > INT32_MAX || ldb > INT32_MAX || ldc > INT32_MAX ||
        batch > INT32_MAX)
        return twc__fail("matmul: dimensions beyond cuBLAS's 32-bit sizes (m %lld, n %lld, k %lld)", (long long)m,
                         (long long)n, (long long)k);
    if (twc__use(dev) < 0)
        return -1;
    cublasOperation_t ta = trans_a ? CUBLAS_OP_T : CUBLAS_OP_N, tb = trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
    int im = (int)m, in = (int)n, ik = (int)k;
    if (dtype == TWK_FLOAT32) {
        float one = 1, fb = beta;
        if (batch == 1)
            return twc__blas(cublasSgemm(dev->blas, tb, ta, in, im, ik, &one, (const float *)b, (int)ldb,
                                         (const float *)a, (int)lda, &fb, (float *)c, (int)ldc),
                             "matmul (cublasSgemm)");
        return twc__blas(cublasSgemmStridedBatched(dev->blas, tb, ta, in, im, ik, &one, (const float *)b, (int)ldb,
                                                   stride_b, (const float *)a, (int)lda, stride_a, &fb, (float *)c,
                                                   (int)ldc, stride_c, (int)batch),
                         "matmul (cublasSgemmStridedBatched)");
    }
    if (dtype == TWK_FLOAT64) {
        double one = 1, db = beta;
        if (batch == 1)
            return twc__blas(cublasDgemm(dev->blas, tb, ta, in, im, ik, &one, (const double *)b, (int)ldb,
                                         (const double *)a, (int)lda, &db, (double *)c, (int)ldc),
                             "matmul (cublasDgemm)");
        return twc__blas(cublasDgemmStridedBatched(dev->blas, tb, ta, in, im, ik, &one, (const double *)b, (int)ldb,
                                                   stride_b, (const double *)a, (int)lda, stride_a, &db, (double *)c,
                                                   (int)ldc, stride_c, (int)batch),
                         "matmul (cublasDgemmStridedBatched)");
    }
    return twc__fail("matmul: dtype %d is not a float type", dtype);
}
