/* The CPU's matrix products over the last two axes with broadcast batch axes
 * and optional transposes (attrs.i[0], i[1]), through OpenBLAS sgemm/dgemm.
 * Strided operands whose last two axes are row- or column-major go to BLAS
 * as they are (a transposed view costs nothing); anything else is packed
 * first. */
#include "backend_cpu/cpu_ops.h"
#include "cpu/cpu_kernels.h"
#include "ops/geometry.h"

int tw__cpu_matmul(const tw_op_call *call, tw_tensor *const *outs)
{
    const char *message;
    if (twk_blas_init(&message) < 0)
        return tw_error_set("matmul: %s", message);
    tw_tensor *a = call->inputs[0], *b = call->inputs[1], *c = outs[0];
    bool ta = call->attrs->i[0], tb = call->attrs->i[1];
    bool flip_a, flip_b;
    int64_t lda, ldb;
    tw_tensor *pa = tw__blas_layout(a, &flip_a, &lda) ? tw_tensor_ref(a) : tw__contiguous_raw(a);
    tw_tensor *pb = tw__blas_layout(b, &flip_b, &ldb) ? tw_tensor_ref(b) : tw__contiguous_raw(b);
    if (!pa || !pb) {
        tw_tensor_unref(pa);
        tw_tensor_unref(pb);
        return -1;
    }
    tw__blas_layout(pa, &flip_a, &lda);
    tw__blas_layout(pb, &flip_b, &ldb);
    int64_t m = c->shape[c->ndim - 2], n = c->shape[c->ndim - 1], k = a->shape[a->ndim - (ta ? 2 : 1)];
    int nb = c->ndim - 2;
    int64_t batch = tw__numel(nb, c->shape);
    int64_t sa[TW_MAX_DIMS], sb[TW_MAX_DIMS];
    /* Batch strides of each operand, broadcast to the output's batch shape. */
    for (int d = 0; d < nb; d++) {
        int ia = d - (nb - (pa->ndim - 2)), ib = d - (nb - (pb->ndim - 2));
        sa[d] = ia < 0 || pa->shape[ia] == 1 ? 0 : pa->strides[ia];
        sb[d] = ib < 0 || pb->shape[ib] == 1 ? 0 : pb->strides[ib];
    }
    size_t isz = tw_dtype_size(c->dtype);
    if (k == 0)
        twk_fill(c->dtype, c->numel, tw__data(c), 0);
    for (int64_t i = 0; i < batch && k > 0 && m > 0 && n > 0; i++) {
        int64_t oa = 0, ob = 0, rest = i;
        for (int d = nb - 1; d >= 0; d--) {
            int64_t idx = rest % c->shape[d];
            rest /= c->shape[d];
            oa += idx * sa[d];
            ob += idx * sb[d];
        }
        twk_gemm(c->dtype, ta != flip_a, tb != flip_b, m, n, k, (char *)tw__data(pa) + oa * (int64_t)isz, lda,
                 (char *)tw__data(pb) + ob * (int64_t)isz, ldb, 0.0f, (char *)tw__data(c) + i * m * n * (int64_t)isz, n);
    }
    tw_tensor_unref(pa);
    tw_tensor_unref(pb);
    return 0;
}
