/* batch: stack batch_size consecutive elements along a new first axis; the
 * last batch is smaller unless drop_remainder.
 *
 * Two paths give the same batches:
 *   - the general one pulls elements from the input and stacks each
 *     component with tw_stack, after checking that the elements agree in
 *     components, dtypes and shapes;
 *   - the fast one, when the input is a from_tensors source or a shuffle of
 *     one (index_stream.h), takes the rows' indices in the order the elements
 *     would come and copies the rows straight into the batch tensor, with no
 *     per-row view and no stacking. */
#include <stdlib.h>
#include <string.h>

#include "index_stream.h"

typedef struct {
    int64_t batch_size;
    bool drop_remainder;
} batch_state;

typedef struct {
    tw_iterator base;
    int64_t batch_size;
    bool drop_remainder;
    bool done;
    /* the general path */
    tw_iterator *input;
    tw_element *pending;
    tw_tensor **parts;
    int64_t capacity; /* of pending and parts; grows up to batch_size */
    int64_t position; /* index in the input of the next element */
    /* the fast path */
    tw__index_stream *rows;
    int64_t *indices;
} batch_iterator;

/* ---- the general path ------------------------------------------------------ */
static int check_like(const tw_element *first, int64_t first_position, const tw_element *e, int64_t position)
{
    if (e->n != first->n)
        return tw_error_set("batch: element %lld has %d components but element %lld has %d; the elements of a batch "
                            "must have the same structure",
                            (long long)position, e->n, (long long)first_position, first->n);
    for (int c = 0; c < e->n; c++) {
        const tw_tensor *a = first->t[c], *b = e->t[c];
        if (tw_tensor_dtype(a) != tw_tensor_dtype(b))
            return tw_error_set("batch: component %d of element %lld is %s but of element %lld is %s", c,
                                (long long)position, tw_dtype_name(tw_tensor_dtype(b)), (long long)first_position,
                                tw_dtype_name(tw_tensor_dtype(a)));
        if (tw_tensor_ndim(a) != tw_tensor_ndim(b) ||
            memcmp(tw_tensor_shape(a), tw_tensor_shape(b), sizeof(int64_t) * (size_t)tw_tensor_ndim(a)) != 0) {
            char sa[160], sb[160];
            return tw_error_set("batch: element %lld has shape %s but element %lld has shape %s (component %d); the "
                                "elements of a batch must agree in shape",
                                (long long)position, tw_shape_str(tw_tensor_ndim(b), tw_tensor_shape(b), sb, sizeof sb),
                                (long long)first_position,
                                tw_shape_str(tw_tensor_ndim(a), tw_tensor_shape(a), sa, sizeof sa), c);
        }
    }
    return 0;
}

static int grow_pending(batch_iterator *bi)
{
    int64_t cap = bi->capacity ? bi->capacity * 2 : 64;
    if (cap > bi->batch_size)
        cap = bi->batch_size;
    tw_element *pending = realloc(bi->pending, (size_t)cap * sizeof *pending);
    if (pending)
        bi->pending = pending;
    tw_tensor **parts = realloc(bi->parts, (size_t)cap * sizeof *parts);
    if (parts)
        bi->parts = parts;
    if (!pending || !parts)
        return tw_error_set("batch: out of memory for a batch of %lld", (long long)cap);
    bi->capacity = cap;
    return 0;
}

static int batch_next_general(batch_iterator *bi, tw_element *out)
{
    int64_t n = 0, first_position = bi->position;
    int rc = 0;
    while (n < bi->batch_size) {
        if (n == bi->capacity && grow_pending(bi) < 0) {
            rc = -1;
            break;
        }
        rc = tw_iterator_next(bi->input, &bi->pending[n]);
        if (rc < 0)
            break;
        if (rc == 0) {
            bi->done = true;
            break;
        }
        if (n > 0 && (rc = check_like(&bi->pending[0], first_position, &bi->pending[n], bi->position)) < 0) {
            n++;
            break;
        }
        n++;
        bi->position++;
    }
    if (rc >= 0 && n > 0 && !(n < bi->batch_size && bi->drop_remainder)) {
        tw_scope_begin();
        for (int c = 0; c < bi->pending[0].n; c++) {
            for (int64_t k = 0; k < n; k++)
                bi->parts[k] = bi->pending[k].t[c];
            out->t[c] = tw_tensor_ref(tw_stack((int)n, bi->parts, 0));
            out->n = c + 1;
            if (!out->t[c]) {
                rc = -1;
                break;
            }
        }
        tw_scope_end();
        if (rc < 0)
            tw_element_clear(out);
        else
            rc = 1;
    }
    for (int64_t k = 0; k < n; k++)
        tw_element_clear(&bi->pending[k]);
    return rc < 0 ? -1 : rc;
}

/* ---- the fast path ------------------------------------------------------------ */
static int batch_next_rows(batch_iterator *bi, tw_element *out)
{
    int64_t n = tw__index_stream_next(bi->rows, bi->indices, bi->batch_size);
    if (n < 0)
        return -1;
    if (n < bi->batch_size)
        bi->done = true;
    if (n == 0 || (n < bi->batch_size && bi->drop_remainder))
        return 0;
    const tw__rows *rows = tw__index_stream_rows(bi->rows);
    for (int c = 0; c < rows->n; c++) {
        const tw_tensor *row0 = rows->row0[c];
        int ndim = tw_tensor_ndim(row0);
        int64_t shape[TW_MAX_DIMS + 1];
        shape[0] = n;
        memcpy(shape + 1, tw_tensor_shape(row0), sizeof(int64_t) * (size_t)ndim);
        if (ndim + 1 > TW_MAX_DIMS) {
            char buf[160];
            tw_element_clear(out);
            return tw_error_set("batch: rows of shape %s would make a batch of rank %d; at most %d dimensions",
                                tw_shape_str(ndim, tw_tensor_shape(row0), buf, sizeof buf), ndim + 1, TW_MAX_DIMS);
        }
        tw_scope_begin();
        tw_tensor *t = tw_tensor_ref(tw_tensor_empty_on(TW_CPU, tw_tensor_dtype(row0), ndim + 1, shape));
        tw_scope_end();
        if (!t) {
            tw_element_clear(out);
            return -1;
        }
        out->t[c] = t;
        out->n = c + 1;
        char *dst = tw_tensor_data(t);
        const char *base = rows->base[c];
        size_t bytes = rows->row_bytes[c];
        ptrdiff_t stride = rows->stride[c];
        for (int64_t k = 0; k < n; k++)
            memcpy(dst + (size_t)k * bytes, base + bi->indices[k] * stride, bytes);
    }
    return 1;
}

/* ---- the dataset ---------------------------------------------------------------- */
static int batch_next(tw_iterator *it, tw_element *out)
{
    batch_iterator *bi = (batch_iterator *)it;
    if (bi->done)
        return 0;
    return bi->rows ? batch_next_rows(bi, out) : batch_next_general(bi, out);
}

static void batch_free(tw_iterator *it)
{
    batch_iterator *bi = (batch_iterator *)it;
    tw_iterator_free(bi->input);
    tw__index_stream_free(bi->rows);
    free(bi->pending);
    free(bi->parts);
    free(bi->indices);
    free(bi);
}

static tw_iterator *batch_iter(tw_dataset *ds)
{
    const batch_state *s = ds->state;
    batch_iterator *bi = calloc(1, sizeof *bi);
    if (!bi) {
        tw_error_set("batch: out of memory");
        return NULL;
    }
    bi->batch_size = s->batch_size;
    bi->drop_remainder = s->drop_remainder;
    bi->rows = tw__index_stream_new(ds->input);
    if (bi->rows) {
        /* A batch never holds more than every row. */
        int64_t count = tw__index_stream_rows(bi->rows)->count;
        bi->indices = malloc((size_t)(s->batch_size < count ? s->batch_size : count) * sizeof *bi->indices);
        if (!bi->indices) {
            tw_error_set("batch: out of memory for a batch of %lld", (long long)s->batch_size);
            batch_free(&bi->base);
            return NULL;
        }
    } else {
        bi->input = tw_dataset_iter(ds->input);
        if (!bi->input) {
            batch_free(&bi->base);
            return NULL;
        }
    }
    tw__iterator_init(&bi->base, ds, batch_next, batch_free);
    return &bi->base;
}

static int64_t batch_cardinality(const tw_dataset *ds)
{
    const batch_state *s = ds->state;
    int64_t n = tw_dataset_cardinality(ds->input);
    if (n < 0)
        return n;
    return n / s->batch_size + (n % s->batch_size == 0 || s->drop_remainder ? 0 : 1);
}

static void batch_finalize(void *state)
{
    free(state);
}

static const tw_dataset_class batch_class = {
    .kind = "batch",
    .iter = batch_iter,
    .cardinality = batch_cardinality,
    .finalize = batch_finalize,
};

tw_dataset *tw_dataset_batch(tw_dataset *ds, int64_t batch_size, bool drop_remainder)
{
    if (tw__dataset_check("batch", ds) < 0)
        return NULL;
    if (batch_size < 1 || batch_size > INT32_MAX) {
        tw_error_set("batch: batch_size must be between 1 and %d, got %lld", INT32_MAX, (long long)batch_size);
        tw_dataset_unref(ds);
        return NULL;
    }
    batch_state *s = malloc(sizeof *s);
    if (!s) {
        tw_error_set("batch: out of memory");
        tw_dataset_unref(ds);
        return NULL;
    }
    s->batch_size = batch_size;
    s->drop_remainder = drop_remainder;
    if (drop_remainder)
        return tw__dataset_new(&batch_class, ds, s, "batch(%lld, drop_remainder, %s)", (long long)batch_size, ds->name);
    return tw__dataset_new(&batch_class, ds, s, "batch(%lld, %s)", (long long)batch_size, ds->name);
}
