/* The CPU's fused softmax cross-entropies (dense and sparse labels): each row
 * in one pass, in double, with the max subtracted. */
#include <math.h>
#include <stdlib.h>

#include "backend_cpu/cpu_ops.h"
#include "cpu/cpu_kernels.h"

/* log(sum(exp(row))) computed stably. */
static double row_logsumexp(const double *row, int64_t n)
{
    double m = -INFINITY;
    for (int64_t j = 0; j < n; j++)
        m = row[j] > m ? row[j] : m;
    if (!isfinite(m))
        return m;
    double s = 0;
    for (int64_t j = 0; j < n; j++)
        s += exp(row[j] - m);
    return m + log(s);
}

/* Rows of a tensor as float64 (small temporary per row). */
static void load_row(const tw_tensor *t, int64_t r, int64_t n, double *row)
{
    const char *base = (const char *)tw__data(t) + r * n * (int64_t)tw_dtype_size(t->dtype);
    for (int64_t j = 0; j < n; j++)
        row[j] = twk_load(t->dtype, base + j * (int64_t)tw_dtype_size(t->dtype));
}

int tw__cpu_softmax_cross_entropy(const tw_op_call *call, tw_tensor *const *outs)
{
    tw_tensor *logits = tw__contiguous_raw(call->inputs[0]), *labels = tw__contiguous_raw(call->inputs[1]);
    int rc = 0;
    int64_t n = logits ? logits->shape[logits->ndim - 1] : 0, rows = outs[0]->numel;
    double *buf = logits && labels ? malloc(sizeof(double) * (size_t)n * 2) : NULL;
    if (!buf) {
        rc = tw_error_set("softmax_cross_entropy: out of memory");
    } else {
        for (int64_t r = 0; r < rows; r++) {
            load_row(logits, r, n, buf);
            load_row(labels, r, n, buf + n);
            double lse = row_logsumexp(buf, n), loss = 0;
            for (int64_t j = 0; j < n; j++)
                loss += buf[n + j] == 0 ? 0 : buf[n + j] * (lse - buf[j]);
            twk_store(outs[0]->dtype, (char *)tw__data(outs[0]) + r * (int64_t)tw_dtype_size(outs[0]->dtype), loss);
        }
    }
    free(buf);
    tw_tensor_unref(logits);
    tw_tensor_unref(labels);
    return rc;
}

int tw__cpu_sparse_softmax_cross_entropy(const tw_op_call *call, tw_tensor *const *outs)
{
    tw_tensor *logits = tw__contiguous_raw(call->inputs[0]), *labels = tw__contiguous_raw(call->inputs[1]);
    int rc = 0;
    int64_t n = logits ? logits->shape[logits->ndim - 1] : 0, rows = outs[0]->numel;
    double *row = logits && labels ? malloc(sizeof(double) * (size_t)n) : NULL;
    if (!row)
        rc = tw_error_set("sparse_softmax_cross_entropy: out of memory");
    for (int64_t r = 0; r < rows && rc == 0; r++) {
        int64_t label = (int64_t)twk_load(labels->dtype, (char *)tw__data(labels) + r * (int64_t)tw_dtype_size(labels->dtype));
        if (label < 0 || label >= n) {
            char shape[160];
            rc = tw_error_set("sparse_softmax_cross_entropy: label %lld at position %lld is outside [0, %lld) "
                              "for logits of shape %s",
                              (long long)label, (long long)r, (long long)n,
                              tw_shape_str(logits->ndim, logits->shape, shape, sizeof shape));
            break;
        }
        load_row(logits, r, n, row);
        twk_store(outs[0]->dtype, (char *)tw__data(outs[0]) + r * (int64_t)tw_dtype_size(outs[0]->dtype),
                  row_logsumexp(row, n) - row[label]);
    }
    free(row);
    tw_tensor_unref(logits);
    tw_tensor_unref(labels);
    return rc;
}
