/* CPU kernels: numeric loops over raw pointers with shapes and strides (in
 * elements). No allocation policy, no autodiff, no error messages beyond a
 * return code: the engine validates before calling. */
#ifndef TWK_CPU_KERNELS_H
#define TWK_CPU_KERNELS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../include/elementwise.h"
#include "../twk_dtype.h"

/* Merge adjacent dimensions that every operand walks contiguously.
 * strides[k] is operand k's stride array (nops operands). Returns new ndim
 * (at least 1); shape and strides are rewritten in place. */
int twk_coalesce(int ndim, int64_t *shape, int nops, int64_t **strides);

/* out = a op b elementwise (kernels/include/elementwise.h), in_dtype for a and b
 * (out is bool for comparisons and logical ops, else in_dtype). Integer
 * division floors and gives 0 when dividing by 0 (the engine refuses it). */
void twk_binary(twk_binary_op op, twk_dtype in_dtype, int ndim, const int64_t *shape, void *out,
                const int64_t *out_strides, const void *a, const int64_t *a_strides, const void *b,
                const int64_t *b_strides);

/* Whether the integer tensor x (any strides) holds a 0. */
bool twk_any_zero(twk_dtype dtype, int ndim, const int64_t *shape, const int64_t *strides, const void *x);

/* out = cond ? a : b; cond is bool. */
void twk_where(twk_dtype dtype, int ndim, const int64_t *shape, void *out, const int64_t *out_strides,
               const void *cond, const int64_t *cond_strides, const void *a, const int64_t *a_strides,
               const void *b, const int64_t *b_strides);

/* out = f(x) (kernels/include/elementwise.h); p0/p1 are the op's attributes
 * (alpha, the clip bounds). Float-only ops must get a float dtype (the engine
 * checks). */
void twk_unary(twk_unary_op op, twk_dtype dtype, int ndim, const int64_t *shape, void *out,
               const int64_t *out_strides, const void *x, const int64_t *x_strides, double p0, double p1);

typedef enum { TWK_SUM, TWK_PROD, TWK_RMAX, TWK_RMIN, TWK_ARGMAX, TWK_ARGMIN } twk_reduce_op;

/* Reduce x (ndim, shape, strides) over the axes with reduce[axis] true, into
 * contiguous out laid out as the kept axes in order. Sums of floats
 * accumulate in double. Arg reductions take exactly one axis and write int64. */
void twk_reduce(twk_reduce_op op, twk_dtype dtype, int ndim, const int64_t *shape, const int64_t *strides,
                const void *x, const bool *reduce, void *out);

/* Strided copy between same-dtype buffers of one shape. */
void twk_copy(size_t itemsize, int ndim, const int64_t *shape, void *dst, const int64_t *dst_strides,
              const void *src, const int64_t *src_strides);
/* Strided conversion between dtypes (bool: nonzero -> 1). */
void twk_cast(twk_dtype dst_dtype, twk_dtype src_dtype, int ndim, const int64_t *shape, void *dst,
              const int64_t *dst_strides, const void *src, const int64_t *src_strides);
/* Fill n contiguous elements with value. */
void twk_fill(twk_dtype dtype, int64_t n, void *dst, double value);
/* Read/write one element as double. */
double twk_load(twk_dtype dtype, const void *p);
void twk_store(twk_dtype dtype, void *p, double v);

/* ---- BLAS (OpenBLAS opened at run time, see blas.c) ---------------------- */
/* Load OpenBLAS once (thread-safe); 0 on success, else -1 and *message. */
int twk_blas_init(const char **message);
const char *twk_blas_info(void);
/* C[m,n] = A[m,k] * B[k,n] (row-major) with leading dimensions, optional
 * transposes (A given as [k,m] when trans_a), accumulate when beta = 1. */
void twk_gemm(twk_dtype dtype, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const void *a,
              int64_t lda, const void *b, int64_t ldb, float beta, void *c, int64_t ldc);

/* An N-d walk over up to 4 operands of one shape, coalesced, as rows of
 * `inner` elements: the setup every elementwise kernel shares. strides[k][]
 * is operand k's strides after coalescing. */
typedef struct {
    int ndim;
    int64_t shape[TWK_MAX_DIMS + 1];
    int64_t strides[4][TWK_MAX_DIMS + 1];
    int64_t inner, rows;
} twk_plan;

static inline void twk_plan_init(twk_plan *p, int ndim, const int64_t *shape, int nops,
                                 const int64_t *const *strides)
{
    int64_t *st[4];
    for (int d = 0; d < ndim; d++)
        p->shape[d] = shape[d];
    for (int k = 0; k < nops; k++) {
        st[k] = p->strides[k];
        for (int d = 0; d < ndim; d++)
            p->strides[k][d] = strides[k][d];
    }
    p->ndim = twk_coalesce(ndim, p->shape, nops, st);
    p->inner = p->shape[p->ndim - 1];
    p->rows = 1;
    for (int d = 0; d < p->ndim - 1; d++)
        p->rows *= p->shape[d];
}

/* Element offsets of row r's first element for each of nops operands. */
static inline void twk_plan_row(const twk_plan *p, int nops, int64_t r, int64_t *offsets)
{
    for (int k = 0; k < nops; k++)
        offsets[k] = 0;
    for (int d = p->ndim - 2; d >= 0; d--) {
        int64_t i = r % p->shape[d];
        r /= p->shape[d];
        for (int k = 0; k < nops; k++)
            offsets[k] += i * p->strides[k][d];
    }
}

/* Stride of operand k along the rows (the innermost axis). */
#define TWK_INNER_STRIDE(p, k) ((p)->strides[k][(p)->ndim - 1])

#endif
