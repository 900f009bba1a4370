/* tw_summary_tensor: the calling thread checks the tensor and copies its
 * values into one record; the writer thread stores them (tensors table). */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tw/error.h"
#include "summary_internal.h"

/* A summary is a record of training, not a checkpoint: one call must not
 * queue gigabytes. */
#define MAX_TENSOR_BYTES ((size_t)64 << 20)

static double wall_clock(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int tw_summary_tensor(tw_summary_writer *w, const char *tag, tw_tensor *values, int64_t step)
{
    if (!w || !tag || !values)
        return tw_error_set("tw_summary_tensor: %s is NULL", !w ? "the writer" : !tag ? "the tag" : "the tensor");
    tw_dtype dtype = tw_tensor_dtype(values);
    int ndim = tw_tensor_ndim(values);
    if (dtype != TW_FLOAT32 && dtype != TW_FLOAT64 && dtype != TW_INT32 && dtype != TW_INT64)
        return tw_error_set("tw_summary_tensor: tag '%s': expected float32, float64, int32 or int64, got %s", tag,
                            tw_dtype_name(dtype));
    if (ndim > TW_STORED_TENSOR_MAX_DIMS)
        return tw_error_set("tw_summary_tensor: tag '%s': rank %d, more than %d", tag, ndim,
                            TW_STORED_TENSOR_MAX_DIMS);
    size_t size = (size_t)tw_tensor_numel(values) * tw_dtype_size(dtype);
    if (size > MAX_TENSOR_BYTES)
        return tw_error_set("tw_summary_tensor: tag '%s': %zu bytes, more than the %zu MiB a call may log", tag, size,
                            MAX_TENSOR_BYTES >> 20);
    tw_tensor_payload *p = calloc(1, sizeof *p + size);
    if (!p)
        return tw_error_set("tw_summary_tensor: out of memory");
    strncpy(p->dtype, tw_dtype_name(dtype), sizeof p->dtype - 1);
    p->ndim = ndim;
    for (int i = 0; i < ndim; i++)
        p->dims[i] = tw_tensor_dim(values, i);
    p->size = size;
    tw_scope_begin(); /* owns the packed or host copy, if one is made */
    tw_tensor *c = tw__host_contiguous(values);
    if (c && size)
        memcpy(p->data, tw_tensor_data(c), size);
    tw_scope_end();
    if (!c) {
        free(p);
        return -1;
    }
    return tw__queue_push(&w->queue, TW_RECORD_TENSOR, tag, step, wall_clock(), p);
}
