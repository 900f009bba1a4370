/* tw_summary_image: the calling thread checks the tensor and copies its
 * pixels as uint8 into one record; the writer thread encodes them (PNG). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tw/error.h"
#include "summary_internal.h"

/* Images larger than this are refused: a summary is a thumbnail of
 * training, and one call must not queue gigabytes. */
#define MAX_IMAGE_BYTES ((size_t)256 << 20)

static double wall_clock(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Floats in [0, 1] to 0..255 (rounded, clamped; NaN as 0), as
 * tf.summary.image converts them. */
static uint8_t to_byte(double v)
{
    if (!(v > 0))
        return 0;
    return v >= 1 ? 255 : (uint8_t)lround(v * 255.0);
}

static int check(const char *tag, tw_tensor *images, int64_t dims[4])
{
    int ndim = tw_tensor_ndim(images);
    tw_dtype dtype = tw_tensor_dtype(images);
    if (ndim != 3 && ndim != 4)
        return tw_error_set("tw_summary_image: tag '%s': expected a tensor [height, width, channels] or "
                            "[n, height, width, channels], got rank %d",
                            tag, ndim);
    if (dtype != TW_UINT8 && dtype != TW_FLOAT32 && dtype != TW_FLOAT64)
        return tw_error_set("tw_summary_image: tag '%s': expected uint8, or float32/float64 values in [0, 1], got %s",
                            tag, tw_dtype_name(dtype));
    dims[0] = ndim == 4 ? tw_tensor_dim(images, 0) : 1;
    for (int i = 0; i < 3; i++)
        dims[i + 1] = tw_tensor_dim(images, ndim - 3 + i);
    if (dims[3] < 1 || dims[3] > 4)
        return tw_error_set("tw_summary_image: tag '%s': %lld channels (1 gray, 2 gray+alpha, 3 RGB, 4 RGBA)", tag,
                            (long long)dims[3]);
    if (dims[0] < 1 || dims[1] < 1 || dims[2] < 1 || dims[1] > INT32_MAX || dims[2] > INT32_MAX ||
        dims[0] > INT32_MAX)
        return tw_error_set("tw_summary_image: tag '%s': an empty or too large image (%lld x %lld x %lld)", tag,
                            (long long)dims[0], (long long)dims[1], (long long)dims[2]);
    if ((size_t)tw_tensor_numel(images) > MAX_IMAGE_BYTES)
        return tw_error_set("tw_summary_image: tag '%s': %lld values, more than the %zu MiB a call may log", tag,
                            (long long)tw_tensor_numel(images), MAX_IMAGE_BYTES >> 20);
    return 0;
}

int tw_summary_image(tw_summary_writer *w, const char *tag, tw_tensor *images, int64_t step)
{
    if (!w || !tag || !images)
        return tw_error_set("tw_summary_image: %s is NULL", !w ? "the writer" : !tag ? "the tag" : "the tensor");
    int64_t dims[4];
    if (check(tag, images, dims))
        return -1;
    size_t n = (size_t)tw_tensor_numel(images);
    tw_image_payload *p = malloc(sizeof *p + n);
    if (!p)
        return tw_error_set("tw_summary_image: out of memory");
    *p = (tw_image_payload){.n = (int)dims[0], .height = (int)dims[1], .width = (int)dims[2],
                            .channels = (int)dims[3], .size = n};
    tw_scope_begin(); /* owns the packed or host copy, if one is made */
    tw_tensor *c = tw__host_contiguous(images);
    if (c) {
        const void *v = tw_tensor_data(c);
        if (tw_tensor_dtype(c) == TW_UINT8)
            memcpy(p->data, v, n);
        else if (tw_tensor_dtype(c) == TW_FLOAT32)
            for (size_t i = 0; i < n; i++)
                p->data[i] = to_byte(((const float *)v)[i]);
        else
            for (size_t i = 0; i < n; i++)
                p->data[i] = to_byte(((const double *)v)[i]);
    }
    tw_scope_end();
    if (!c) {
        free(p);
        return -1;
    }
    return tw__queue_push(&w->queue, TW_RECORD_IMAGE, tag, step, wall_clock(), p);
}
