/* The input pipeline's transformations (map, shuffle, batch, repeat, take,
 * skip, cache, prefetch, scale, split) and the synthetic sets. */
#include <glib.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dataset_internal.h"

/* ---- helpers ----------------------------------------------------------------- */

/* n elements: (x, y) with x = (i, -i) float32 and y = i int64. */
static tw_dataset *range_ds(int64_t n)
{
    tw_scope_begin();
    tw_tensor *y = tw_arange(0, (double)n, 1, TW_INT64);
    tw_tensor *i = tw_arange(0, (double)n, 1, TW_FLOAT32);
    tw_tensor *x = tw_stack(TW_TENSORS(i, tw_neg(i)), 1);
    tw_dataset *ds = tw_dataset_from_tensors(TW_TENSORS(x, y));
    tw_scope_end();
    g_assert_nonnull(ds);
    return ds;
}

/* The int64 labels (component 1) of one pass, unbatched or batched; returns
 * how many, asserting the pass ends cleanly. */
static int64_t labels_of_pass(tw_iterator *it, int64_t *out, int64_t max)
{
    g_assert_nonnull(it);
    int64_t count = 0;
    tw_element e;
    int rc;
    while ((rc = tw_iterator_next(it, &e)) > 0) {
        g_assert_cmpint(e.n, >=, 2);
        tw_tensor *y = e.t[1];
        int64_t k = tw_tensor_numel(y);
        g_assert_cmpint(tw_tensor_dtype(y), ==, TW_INT64);
        const int64_t *v = tw_tensor_data(y);
        g_assert_true(tw_tensor_is_contiguous(y));
        for (int64_t j = 0; j < k; j++) {
            g_assert_cmpint(count, <, max);
            out[count++] = v[j];
        }
        /* x agrees with y: x = (i, -i) */
        tw_tensor *x = e.t[0];
        g_assert_cmpint(tw_tensor_numel(x), ==, 2 * k);
        for (int64_t j = 0; j < k; j++) {
            int64_t index[2] = {j, 0};
            if (tw_tensor_ndim(x) == 1)
                g_assert_cmpfloat(tw_tensor_get(x, (int64_t[]){0}), ==, (double)v[j]);
            else
                g_assert_cmpfloat(tw_tensor_get(x, index), ==, (double)v[j]);
        }
        tw_element_clear(&e);
    }
    g_assert_cmpint(rc, ==, 0);
    tw_iterator_free(it);
    return count;
}

static int64_t labels(tw_dataset *ds, int64_t *out, int64_t max)
{
    return labels_of_pass(tw_dataset_iter(ds), out, max);
}

static int cmp_int64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static void assert_permutation(const int64_t *v, int64_t n)
{
    int64_t *s = g_memdup2(v, (gsize)n * sizeof *v);
    qsort(s, (size_t)n, sizeof *s, cmp_int64);
    for (int64_t i = 0; i < n; i++)
        g_assert_cmpint(s[i], ==, i);
    g_free(s);
}

static bool is_identity(const int64_t *v, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        if (v[i] != i)
            return false;
    return true;
}

static void assert_same_tensor(tw_tensor *a, tw_tensor *b)
{
    g_assert_cmpint(tw_tensor_dtype(a), ==, tw_tensor_dtype(b));
    g_assert_cmpint(tw_tensor_ndim(a), ==, tw_tensor_ndim(b));
    for (int d = 0; d < tw_tensor_ndim(a); d++)
        g_assert_cmpint(tw_tensor_dim(a, d), ==, tw_tensor_dim(b, d));
    size_t bytes = (size_t)tw_tensor_numel(a) * tw_dtype_size(tw_tensor_dtype(a));
    void *x = g_malloc(bytes + 1), *y = g_malloc(bytes + 1);
    g_assert_cmpint(tw_tensor_copy_to(a, x, bytes), ==, 0);
    g_assert_cmpint(tw_tensor_copy_to(b, y, bytes), ==, 0);
    g_assert_cmpmem(x, bytes, y, bytes);
    g_free(x);
    g_free(y);
}

/* Two iterators give the same stream (same elements, same end). */
static int64_t assert_same_stream(tw_iterator *a, tw_iterator *b)
{
    g_assert_nonnull(a);
    g_assert_nonnull(b);
    int64_t count = 0;
    for (;;) {
        tw_element ea, eb;
        int ra = tw_iterator_next(a, &ea), rb = tw_iterator_next(b, &eb);
        g_assert_cmpint(ra, ==, rb);
        if (ra <= 0)
            break;
        g_assert_cmpint(ea.n, ==, eb.n);
        for (int c = 0; c < ea.n; c++)
            assert_same_tensor(ea.t[c], eb.t[c]);
        tw_element_clear(&ea);
        tw_element_clear(&eb);
        count++;
    }
    tw_iterator_free(a);
    tw_iterator_free(b);
    return count;
}

/* map functions */
static int identity_fn(const tw_element *in, tw_element *out, void *user_data)
{
    out->n = in->n;
    for (int c = 0; c < in->n; c++)
        out->t[c] = tw_tensor_ref(in->t[c]);
    return 0;
}

static int counting_fn(const tw_element *in, tw_element *out, void *user_data)
{
    (*(int *)user_data)++;
    return identity_fn(in, out, NULL);
}

/* Fails on the element whose label is *user_data. */
static int failing_fn(const tw_element *in, tw_element *out, void *user_data)
{
    int64_t label = (int64_t)tw_tensor_item(in->t[1]);
    if (label == *(int64_t *)user_data)
        return tw_error_set("failing_fn: element %lld is bad", (long long)label);
    return identity_fn(in, out, NULL);
}

static tw_dataset *identity_map(tw_dataset *ds)
{
    return tw_dataset_map(ds, identity_fn, NULL, NULL);
}

/* A pass-through dataset that does not know its cardinality (as a filter
 * would not). */
typedef struct {
    tw_iterator base;
    tw_iterator *input;
} unknown_iterator;

static int unknown_next(tw_iterator *it, tw_element *out)
{
    return tw_iterator_next(((unknown_iterator *)it)->input, out);
}

static void unknown_free(tw_iterator *it)
{
    tw_iterator_free(((unknown_iterator *)it)->input);
    g_free(it);
}

static tw_iterator *unknown_iter(tw_dataset *ds)
{
    unknown_iterator *it = g_new0(unknown_iterator, 1);
    it->input = tw_dataset_iter(ds->input);
    tw__iterator_init(&it->base, ds, unknown_next, unknown_free);
    return &it->base;
}

static int64_t unknown_cardinality(const tw_dataset *ds)
{
    return TW_UNKNOWN_CARDINALITY;
}

static const tw_dataset_class unknown_class = {
    .kind = "unknown",
    .iter = unknown_iter,
    .cardinality = unknown_cardinality,
};

static tw_dataset *unknown_ds(tw_dataset *input)
{
    return tw__dataset_new(&unknown_class, input, NULL, "unknown(%s)", input->name);
}

/* ---- shuffle ------------------------------------------------------------------ */
static void test_shuffle_permutation(void)
{
    enum { N = 1000 };
    static int64_t a0[N], a1[N], b0[N], b1[N], c0[N];
    tw_dataset *a = tw_dataset_shuffle(range_ds(N), N, 7, true);
    g_assert_nonnull(a);
    g_assert_cmpstr(tw_dataset_name(a), ==, "shuffle(1000, from_tensors(1000))");
    g_assert_cmpint(tw_dataset_cardinality(a), ==, N);
    g_assert_cmpint(labels(a, a0, N), ==, N);
    g_assert_cmpint(labels(a, a1, N), ==, N);
    assert_permutation(a0, N);
    assert_permutation(a1, N);
    g_assert_false(is_identity(a0, N));
    g_assert_true(memcmp(a0, a1, sizeof a0) != 0); /* a new order each epoch */

    /* the same seed gives the same epochs; another seed another order */
    tw_dataset *b = tw_dataset_shuffle(range_ds(N), N, 7, true);
    g_assert_cmpint(labels(b, b0, N), ==, N);
    g_assert_cmpint(labels(b, b1, N), ==, N);
    g_assert_cmpmem(a0, sizeof a0, b0, sizeof b0);
    g_assert_cmpmem(a1, sizeof a1, b1, sizeof b1);
    tw_dataset *c = tw_dataset_shuffle(range_ds(N), N, 8, true);
    g_assert_cmpint(labels(c, c0, N), ==, N);
    assert_permutation(c0, N);
    g_assert_true(memcmp(a0, c0, sizeof a0) != 0);
    tw_dataset_unref(a);
    tw_dataset_unref(b);
    tw_dataset_unref(c);
}

static void test_shuffle_no_reshuffle(void)
{
    enum { N = 300 };
    static int64_t e0[N], e1[N], e2[N];
    tw_dataset *ds = tw_dataset_shuffle(range_ds(N), N, 3, false);
    g_assert_cmpint(labels(ds, e0, N), ==, N);
    g_assert_cmpint(labels(ds, e1, N), ==, N);
    g_assert_cmpint(labels(ds, e2, N), ==, N);
    assert_permutation(e0, N);
    g_assert_false(is_identity(e0, N));
    g_assert_cmpmem(e0, sizeof e0, e1, sizeof e1);
    g_assert_cmpmem(e0, sizeof e0, e2, sizeof e2);
    tw_dataset_unref(ds);
}

static void test_shuffle_small_buffer(void)
{
    enum { N = 1000, BUFFER = 10 };
    static int64_t v[N], w[N];
    tw_dataset *ds = tw_dataset_shuffle(range_ds(N), BUFFER, 11, true);
    g_assert_cmpint(labels(ds, v, N), ==, N);
    assert_permutation(v, N);
    g_assert_false(is_identity(v, N));
    /* the k-th output was among the first k + BUFFER inputs */
    for (int64_t k = 0; k < N; k++)
        g_assert_cmpint(v[k], <, k + BUFFER);
    /* a shuffle within a small buffer moves elements a little, not far */
    int64_t far = 0;
    for (int64_t k = 0; k < N; k++)
        far += llabs(v[k] - k) > 100;
    g_assert_cmpint(far, <, N / 20);
    tw_dataset_unref(ds);

    /* a buffer of one changes nothing */
    ds = tw_dataset_shuffle(range_ds(N), 1, 11, true);
    g_assert_cmpint(labels(ds, w, N), ==, N);
    g_assert_true(is_identity(w, N));
    tw_dataset_unref(ds);

    /* a buffer larger than the input */
    ds = tw_dataset_shuffle(range_ds(N), 1 << 30, 11, true);
    g_assert_cmpint(labels(ds, w, N), ==, N);
    assert_permutation(w, N);
    tw_dataset_unref(ds);

    g_assert_null(tw_dataset_shuffle(range_ds(4), 0, 1, true));
    g_assert_cmpstr(tw_last_error(), ==, "shuffle: buffer_size must be at least 1, got 0");
}

/* Every element is equally likely in every position. */
static void test_shuffle_uniform(void)
{
    enum { N = 5, EPOCHS = 4000 };
    int first[N] = {0}, last[N] = {0};
    tw_dataset *ds = tw_dataset_shuffle(range_ds(N), N, 99, true);
    for (int epoch = 0; epoch < EPOCHS; epoch++) {
        int64_t v[N];
        g_assert_cmpint(labels(ds, v, N), ==, N);
        first[v[0]]++;
        last[v[N - 1]]++;
    }
    for (int i = 0; i < N; i++) {
        /* expected 800 each; 5 standard deviations is about 126 */
        g_assert_cmpint(abs(first[i] - EPOCHS / N), <, 130);
        g_assert_cmpint(abs(last[i] - EPOCHS / N), <, 130);
    }
    tw_dataset_unref(ds);
}

/* ---- batch -------------------------------------------------------------------- */
static void check_batches(tw_dataset *ds, const int64_t *sizes, int nbatches)
{
    tw_iterator *it = tw_dataset_iter(ds);
    g_assert_nonnull(it);
    tw_element e;
    int64_t next_label = 0;
    for (int b = 0; b < nbatches; b++) {
        g_assert_cmpint(tw_iterator_next(it, &e), ==, 1);
        g_assert_cmpint(e.n, ==, 2);
        g_assert_cmpint(tw_tensor_ndim(e.t[0]), ==, 2);
        g_assert_cmpint(tw_tensor_dim(e.t[0], 0), ==, sizes[b]);
        g_assert_cmpint(tw_tensor_dim(e.t[0], 1), ==, 2);
        g_assert_cmpint(tw_tensor_ndim(e.t[1]), ==, 1);
        g_assert_cmpint(tw_tensor_dim(e.t[1], 0), ==, sizes[b]);
        g_assert_cmpint(tw_tensor_dtype(e.t[0]), ==, TW_FLOAT32);
        for (int64_t k = 0; k < sizes[b]; k++, next_label++) {
            g_assert_cmpfloat(tw_tensor_get(e.t[1], (int64_t[]){k}), ==, next_label);
            g_assert_cmpfloat(tw_tensor_get(e.t[0], (int64_t[]){k, 1}), ==, -(double)next_label);
        }
        tw_element_clear(&e);
    }
    g_assert_cmpint(tw_iterator_next(it, &e), ==, 0);
    g_assert_cmpint(e.n, ==, 0);
    g_assert_cmpint(tw_iterator_next(it, &e), ==, 0);
    tw_iterator_free(it);
}

static void test_batch_remainder(void)
{
    for (int general = 0; general < 2; general++) {
        /* general: a map in between hides the from_tensors source from the fast path */
        tw_dataset *keep = tw_dataset_batch(general ? identity_map(range_ds(10)) : range_ds(10), 4, false);
        tw_dataset *drop = tw_dataset_batch(general ? identity_map(range_ds(10)) : range_ds(10), 4, true);
        g_assert_cmpint(tw_dataset_cardinality(keep), ==, 3);
        g_assert_cmpint(tw_dataset_cardinality(drop), ==, 2);
        check_batches(keep, (const int64_t[]){4, 4, 2}, 3);
        check_batches(drop, (const int64_t[]){4, 4}, 2);
        tw_dataset_unref(keep);
        tw_dataset_unref(drop);

        tw_dataset *exact = tw_dataset_batch(general ? identity_map(range_ds(8)) : range_ds(8), 4, false);
        g_assert_cmpint(tw_dataset_cardinality(exact), ==, 2);
        check_batches(exact, (const int64_t[]){4, 4}, 2);
        tw_dataset_unref(exact);

        tw_dataset *big = tw_dataset_batch(general ? identity_map(range_ds(3)) : range_ds(3), 1000000000, false);
        g_assert_cmpint(tw_dataset_cardinality(big), ==, 1);
        check_batches(big, (const int64_t[]){3}, 1);
        tw_dataset_unref(big);
        big = tw_dataset_batch(general ? identity_map(range_ds(3)) : range_ds(3), 1000000000, true);
        g_assert_cmpint(tw_dataset_cardinality(big), ==, 0);
        check_batches(big, NULL, 0);
        tw_dataset_unref(big);
    }
    tw_dataset *ds = tw_dataset_batch(tw_dataset_shuffle(range_ds(60), 60, 1, true), 16, true);
    g_assert_cmpstr(tw_dataset_name(ds), ==, "batch(16, drop_remainder, shuffle(60, from_tensors(60)))");
    tw_dataset_unref(ds);
    ds = tw_dataset_batch(range_ds(6), 4, false);
    g_assert_cmpstr(tw_dataset_name(ds), ==, "batch(4, from_tensors(6))");
    tw_dataset_unref(ds);
    g_assert_null(tw_dataset_batch(range_ds(6), 0, false));
    g_assert_nonnull(strstr(tw_last_error(), "batch: batch_size must be between 1"));
    g_assert_null(tw_dataset_batch(NULL, 4, false));
}

/* The memcpy fast path (from_tensors or a shuffle of it) yields what the
 * general path (tw_stack) does, epoch after epoch. */
static void test_batch_fast_path_matches(void)
{
    const int64_t buffers[] = {1, 37, 1000};
    for (size_t i = 0; i < G_N_ELEMENTS(buffers); i++) {
        tw_dataset *fast = tw_dataset_batch(tw_dataset_shuffle(range_ds(1000), buffers[i], 5, true), 64, false);
        tw_dataset *general =
            tw_dataset_batch(tw_dataset_shuffle(identity_map(range_ds(1000)), buffers[i], 5, true), 64, false);
        for (int epoch = 0; epoch < 3; epoch++)
            g_assert_cmpint(assert_same_stream(tw_dataset_iter(fast), tw_dataset_iter(general)), ==, 16);
        tw_dataset_unref(fast);
        tw_dataset_unref(general);
    }
    /* the same order as the unbatched shuffle */
    enum { N = 500 };
    static int64_t a[N], b[N];
    tw_dataset *unbatched = tw_dataset_shuffle(range_ds(N), 100, 9, true);
    tw_dataset *batched = tw_dataset_batch(tw_dataset_shuffle(range_ds(N), 100, 9, true), 32, false);
    for (int epoch = 0; epoch < 2; epoch++) {
        g_assert_cmpint(labels(unbatched, a, N), ==, N);
        g_assert_cmpint(labels(batched, b, N), ==, N);
        g_assert_cmpmem(a, sizeof a, b, sizeof b);
    }
    tw_dataset_unref(unbatched);
    tw_dataset_unref(batched);

    /* rows that are not contiguous (a transposed source) and 3-d images */
    tw_scope_begin();
    tw_tensor *images = tw_reshape(tw_arange(0, 5 * 3 * 4, 1, TW_UINT8), TW_SHAPE(5, 3, 4));
    tw_tensor *columns = tw_transpose(tw_reshape(tw_arange(0, 10, 1, TW_INT64), TW_SHAPE(2, 5)));
    tw_dataset *src = tw_dataset_from_tensors(TW_TENSORS(images, columns));
    tw_dataset *src2 = tw_dataset_from_tensors(TW_TENSORS(images, columns));
    tw_scope_end();
    tw_dataset *x = tw_dataset_batch(tw_dataset_shuffle(src, 5, 2, true), 2, false);
    tw_dataset *y = tw_dataset_batch(tw_dataset_shuffle(identity_map(src2), 5, 2, true), 2, false);
    g_assert_cmpint(assert_same_stream(tw_dataset_iter(x), tw_dataset_iter(y)), ==, 3);
    tw_iterator *it = tw_dataset_iter(x);
    tw_element e;
    g_assert_cmpint(tw_iterator_next(it, &e), ==, 1);
    g_assert_cmpint(tw_tensor_ndim(e.t[0]), ==, 3);
    int64_t row = (int64_t)tw_tensor_get(e.t[0], (int64_t[]){1, 0, 0}) / 12;
    g_assert_cmpfloat(tw_tensor_get(e.t[0], (int64_t[]){1, 2, 3}), ==, row * 12 + 11);
    g_assert_cmpfloat(tw_tensor_get(e.t[1], (int64_t[]){1, 1}), ==, row + 5);
    tw_element_clear(&e);
    tw_iterator_free(it);
    tw_dataset_unref(x);
    tw_dataset_unref(y);

    /* the fast path on 3-d rows, and on rows that all share storage (a broadcast) */
    tw_scope_begin();
    images = tw_reshape(tw_arange(0, 5 * 3 * 4, 1, TW_UINT8), TW_SHAPE(5, 3, 4));
    tw_tensor *same_row = tw_broadcast_to(tw_reshape(tw_arange(0, 3, 1, TW_FLOAT64), TW_SHAPE(1, 3)), TW_SHAPE(5, 3));
    tw_dataset *sources[2][2];
    for (int k = 0; k < 2; k++) {
        sources[0][k] = tw_dataset_from_tensors(TW_TENSORS(images));
        sources[1][k] = tw_dataset_from_tensors(TW_TENSORS(same_row, images));
    }
    tw_scope_end();
    for (int k = 0; k < 2; k++) {
        x = tw_dataset_batch(tw_dataset_shuffle(sources[k][0], 3, 2, true), 2, false);
        y = tw_dataset_batch(tw_dataset_shuffle(identity_map(sources[k][1]), 3, 2, true), 2, false);
        g_assert_cmpint(assert_same_stream(tw_dataset_iter(x), tw_dataset_iter(y)), ==, 3);
        tw_dataset_unref(x);
        tw_dataset_unref(y);
    }
}

/* Element tensors belong to the element, not to a scope the caller has open. */
static void test_batch_inside_scope(void)
{
    tw_dataset *sets[] = {
        tw_dataset_batch(tw_dataset_shuffle(range_ds(10), 10, 1, true), 4, false),
        tw_dataset_batch(identity_map(range_ds(10)), 4, false),
        tw_dataset_scale(tw_dataset_batch(range_ds(10), 4, false), 0, 0.5),
    };
    for (size_t i = 0; i < G_N_ELEMENTS(sets); i++) {
        tw_iterator *it = tw_dataset_iter(sets[i]);
        tw_element e;
        tw_scope_begin();
        g_assert_cmpint(tw_iterator_next(it, &e), ==, 1);
        tw_scope_end();
        g_assert_cmpint(tw_tensor_dim(e.t[0], 0), ==, 4);
        g_assert_cmpint(tw_tensor_dim(e.t[1], 0), ==, 4);
        tw_element_clear(&e);
        tw_iterator_free(it);
        tw_dataset_unref(sets[i]);
    }
}

/* The label as a vector whose length varies: element 5 has (3,), the rest (2,). */
static int ragged_fn(const tw_element *in, tw_element *out, void *user_data)
{
    int64_t label = (int64_t)tw_tensor_item(in->t[1]);
    out->n = 1;
    out->t[0] = tw_zeros(TW_FLOAT32, TW_SHAPE(label == 5 ? 3 : 2));
    return 0;
}

static int dtype_fn(const tw_element *in, tw_element *out, void *user_data)
{
    int64_t label = (int64_t)tw_tensor_item(in->t[1]);
    out->n = 1;
    out->t[0] = tw_zeros(label == 2 ? TW_INT64 : TW_FLOAT32, TW_SHAPE(2));
    return 0;
}

static void test_batch_shape_mismatch(void)
{
    tw_dataset *ds = tw_dataset_batch(tw_dataset_map(range_ds(10), ragged_fn, NULL, NULL), 4, false);
    tw_iterator *it = tw_dataset_iter(ds);
    tw_element e;
    g_assert_cmpint(tw_iterator_next(it, &e), ==, 1);
    tw_element_clear(&e);
    g_assert_cmpint(tw_iterator_next(it, &e), ==, -1);
    g_assert_cmpint(e.n, ==, 0);
    g_assert_cmpstr(tw_last_error(), ==,
                    "batch: element 5 has shape (3,) but element 4 has shape (2,) (component 0); the elements of a "
                    "batch must agree in shape");
    tw_iterator_free(it);
    tw_dataset_unref(ds);

    ds = tw_dataset_batch(tw_dataset_map(range_ds(10), dtype_fn, NULL, NULL), 4, false);
    it = tw_dataset_iter(ds);
    g_assert_cmpint(tw_iterator_next(it, &e), ==, -1);
    g_assert_cmpstr(tw_last_error(), ==, "batch: component 0 of element 2 is int64 but of element 0 is float32");
    tw_iterator_free(it);
    tw_dataset_unref(ds);
}

/* ---- repeat, take, skip --------------------------------------------------------- */
static void test_repeat(void)
{
    int64_t v[32];
    tw_dataset *ds = tw_dataset_repeat(range_ds(3), 2);
    g_assert_cmpint(tw_dataset_cardinality(ds), ==, 6);
    g_assert_cmpstr(tw_dataset_name(ds), ==, "repeat(2, from_tensors(3))");
    g_assert_cmpint(labels(ds, v, 32), ==, 6);
    g_assert_cmpmem(v, 6 * sizeof *v, ((int64_t[]){0, 1, 2, 0, 1, 2}), 6 * sizeof *v);
    tw_dataset_unref(ds);

    ds = tw_dataset_repeat(range_ds(3), -1);
    g_assert_cmpint(tw_dataset_cardinality(ds), ==, TW_INFINITE_CARDINALITY);
    g_assert_cmpstr(tw_dataset_name(ds), ==, "repeat(forever, from_tensors(3))");
    ds = tw_dataset_take(ds, 7);
    g_assert_cmpint(tw_dataset_cardinality(ds), ==, 7);
    g_assert_cmpint(labels(ds, v, 32), ==, 7);
    g_assert_cmpmem(v, 7 * sizeof *v, ((int64_t[]){0, 1, 2, 0, 1, 2, 0}), 7 * sizeof *v);
    tw_dataset_unref(ds);

    ds = tw_dataset_repeat(range_ds(3), 0);
    g_assert_cmpint(tw_dataset_cardinality(ds), ==, 0);
    g_assert_cmpint(labels(ds, v, 32), ==, 0);
    tw_dataset_unref(ds);

    /* an empty input repeated forever is empty, not a hang */
    ds = tw_dataset_repeat(tw_dataset_take(range_ds(3), 0), -1);
    g_assert_cmpint(tw_dataset_cardinality(ds), ==, 0);
    g_assert_cmpint(labels(ds, v, 32), ==, 0);
    tw_dataset_unref(ds);

    /* each repetition is a new pass: a reshuffling shuffle reorders */
    enum { N = 50 };
    static int64_t w[3 * N];
    ds = tw_dataset_repeat(tw_dataset_shuffle(range_ds(N), N, 4, true), 3);
    g_assert_cmpint(labels(ds, w, 3 * N), ==, 3 * N);
    for (int pass = 0; pass < 3; pass++)
        assert_permutation(w + pass * N, N);
    g_assert_true(memcmp(w, w + N, N * sizeof *w) != 0);
    tw_dataset_unref(ds);
}

static void test_take_skip(void)
{
    int64_t v[32];
    tw_dataset *ds = tw_dataset_take(range_ds(10), 3);
    g_assert_cmpstr(tw_dataset_name(ds), ==, "take(3, from_tensors(10))");
    g_assert_cmpint(tw_dataset_cardinality(ds), ==, 3);
    g_assert_cmpint(labels(ds, v, 32), ==, 3);
    g_assert_cmpmem(v, 3 * sizeof *v, ((int64_t[]){0, 1, 2}), 3 * sizeof *v);
    tw_dataset_unref(ds);

    ds = tw_dataset_take(range_ds(10), 20);
    g_assert_cmpint(tw_dataset_cardinality(ds), ==, 10);
    g_assert_cmpint(labels(ds, v, 32), ==, 10);
    tw_dataset_unref(ds);
    ds = tw_dataset_take(range_ds(10), -1);
    g_assert_cmpint(tw_dataset_cardinality(ds), ==, 10);
    g_assert_cmpint(labels(ds, v, 32), ==, 10);
    tw_dataset_unref(ds);

    ds = tw_dataset_skip(range_ds(10), 3);
    g_assert_cmpstr(tw_dataset_name(ds), ==, "skip(3, from_tensors(10))");
    g_assert_cmpint(tw_dataset_cardinality(ds), ==, 7);
    g_assert_cmpint(labels(ds, v, 32), ==, 7);
    g_assert_cmpint(v[0], ==, 3);
    g_assert_cmpint(v[6], ==, 9);
    tw_dataset_unref(ds);
    ds = tw_dataset_skip(range_ds(10), 20);
    g_assert_cmpint(tw_dataset_cardinality(ds), ==, 0);
    g_assert_cmpint(labels(ds, v, 32), ==, 0);
    tw_dataset_unref(ds);
    ds = tw_dataset_skip(range_ds(10), -1);
    g_assert_cmpint(tw_dataset_cardinality(ds), ==, 0);
    g_assert_cmpint(labels(ds, v, 32), ==, 0);
    tw_dataset_unref(ds);

    /* take and skip over an infinite input */
    ds = tw_dataset_skip(tw_dataset_repeat(range_ds(10), -1), 25);
    g_assert_cmpint(tw_dataset_cardinality(ds), ==, TW_INFINITE_CARDINALITY);
    ds = tw_dataset_take(ds, 4);
    g_assert_cmpint(tw_dataset_cardinality(ds), ==, 4);
    g_assert_cmpint(labels(ds, v, 32), ==, 4);
    g_assert_cmpmem(v, 4 * sizeof *v, ((int64_t[]){5, 6, 7, 8}), 4 * sizeof *v);
    tw_dataset_unref(ds);
    ds = tw_dataset_take(tw_dataset_repeat(range_ds(10), -1), -1);
    g_assert_cmpint(tw_dataset_cardinality(ds), ==, TW_INFINITE_CARDINALITY);
    tw_dataset_unref(ds);
    ds = tw_dataset_batch(tw_dataset_repeat(range_ds(10), -1), 3, false);
    g_assert_cmpint(tw_dataset_cardinality(ds), ==, TW_INFINITE_CARDINALITY);
    tw_dataset_unref(ds);
    ds = tw_dataset_repeat(tw_dataset_repeat(range_ds(10), -1), 2);
    g_assert_cmpint(tw_dataset_cardinality(ds), ==, TW_INFINITE_CARDINALITY);
    tw_dataset_unref(ds);

    /* unknown cardinality stays unknown, and take(0) is known to be empty */
    tw_dataset *u = unknown_ds(range_ds(10));
    g_assert_cmpint(tw_dataset_cardinality(u), ==, TW_UNKNOWN_CARDINALITY);
    tw_dataset *t = tw_dataset_take(tw_dataset_ref(u), 3);
    tw_dataset *s = tw_dataset_skip(tw_dataset_ref(u), 3);
    tw_dataset *t0 = tw_dataset_take(tw_dataset_ref(u), 0);
    tw_dataset *b = tw_dataset_batch(tw_dataset_ref(u), 3, false);
    tw_dataset *r = tw_dataset_repeat(tw_dataset_ref(u), 2);
    tw_dataset *rf = tw_dataset_repeat(tw_dataset_ref(u), -1);
    g_assert_cmpint(tw_dataset_cardinality(t), ==, TW_UNKNOWN_CARDINALITY);
    g_assert_cmpint(tw_dataset_cardinality(s), ==, TW_UNKNOWN_CARDINALITY);
    g_assert_cmpint(tw_dataset_cardinality(t0), ==, 0);
    g_assert_cmpint(tw_dataset_cardinality(b), ==, TW_UNKNOWN_CARDINALITY);
    g_assert_cmpint(tw_dataset_cardinality(r), ==, TW_UNKNOWN_CARDINALITY);
    g_assert_cmpint(tw_dataset_cardinality(rf), ==, TW_INFINITE_CARDINALITY);
    g_assert_cmpint(labels(t, v, 32), ==, 3);
    g_assert_cmpint(labels(s, v, 32), ==, 7);
    g_assert_cmpint(labels(r, v, 32), ==, 20);
    tw_dataset *sets[] = {u, t, s, t0, b, r, rf};
    for (size_t i = 0; i < G_N_ELEMENTS(sets); i++)
        tw_dataset_unref(sets[i]);
}

/* ---- cache -------------------------------------------------------------------- */
static void test_cache(void)
{
    enum { N = 10 };
    int calls = 0;
    int64_t v[N], w[N];
    tw_dataset *ds = tw_dataset_cache(tw_dataset_shuffle(tw_dataset_map(range_ds(N), counting_fn, &calls, NULL), N,
                                                         21, true));
    g_assert_cmpstr(tw_dataset_name(ds), ==, "cache(shuffle(10, map(from_tensors(10))))");
    g_assert_cmpint(tw_dataset_cardinality(ds), ==, N);

    /* a partial first pass records nothing */
    tw_iterator *it = tw_dataset_iter(ds);
    tw_element e;
    for (int i = 0; i < 3; i++) {
        g_assert_cmpint(tw_iterator_next(it, &e), ==, 1);
        tw_element_clear(&e);
    }
    tw_iterator_free(it);
    g_assert_cmpint(calls, ==, N); /* the shuffle filled its buffer */

    /* the first full pass reads the input; later passes replay it */
    g_assert_cmpint(labels(ds, v, N), ==, N);
    g_assert_cmpint(calls, ==, 2 * N);
    assert_permutation(v, N);
    for (int pass = 0; pass < 3; pass++) {
        g_assert_cmpint(labels(ds, w, N), ==, N);
        g_assert_cmpmem(v, sizeof v, w, sizeof w); /* the recorded order, not a reshuffle */
    }
    g_assert_cmpint(calls, ==, 2 * N);
    tw_dataset_unref(ds);

    /* a pass that fails records nothing either */
    int64_t bad = 4;
    calls = 0;
    ds = tw_dataset_cache(tw_dataset_map(tw_dataset_map(range_ds(N), counting_fn, &calls, NULL), failing_fn, &bad,
                                         NULL));
    it = tw_dataset_iter(ds);
    int rc, errors = 0, count = 0;
    while ((rc = tw_iterator_next(it, &e)) != 0) {
        if (rc < 0) {
            errors++;
            g_assert_cmpstr(tw_last_error(), ==, "failing_fn: element 4 is bad");
        } else {
            count++;
            tw_element_clear(&e);
        }
    }
    tw_iterator_free(it);
    g_assert_cmpint(errors, ==, 1);
    g_assert_cmpint(count, ==, N - 1);
    bad = -1; /* the input is fine now: the next pass reads it */
    g_assert_cmpint(labels(ds, v, N), ==, N);
    g_assert_cmpint(calls, ==, 2 * N);
    g_assert_cmpint(labels(ds, v, N), ==, N);
    g_assert_cmpint(calls, ==, 2 * N);
    g_assert_true(is_identity(v, N));
    tw_dataset_unref(ds);

    /* recorded and replayed on a prefetch's producer thread */
    calls = 0;
    ds = tw_dataset_prefetch(tw_dataset_cache(tw_dataset_map(range_ds(N), counting_fn, &calls, NULL)), 2);
    for (int pass = 0; pass < 3; pass++) {
        g_assert_cmpint(labels(ds, v, N), ==, N);
        g_assert_true(is_identity(v, N));
        g_assert_cmpint(calls, ==, N);
    }
    tw_dataset_unref(ds);
}

/* ---- prefetch ------------------------------------------------------------------- */
static tw_dataset *pipeline(tw_dataset *source, bool prefetch)
{
    tw_dataset *ds = tw_dataset_batch(tw_dataset_shuffle(source, 64, 13, true), 7, false);
    return prefetch ? tw_dataset_prefetch(ds, 3) : ds;
}

static void test_prefetch_same_stream(void)
{
    tw_dataset *plain = pipeline(range_ds(500), false);
    tw_dataset *ahead = pipeline(range_ds(500), true);
    g_assert_cmpstr(tw_dataset_name(ahead), ==, "prefetch(3, batch(7, shuffle(64, from_tensors(500))))");
    g_assert_cmpint(tw_dataset_cardinality(ahead), ==, 72);
    for (int epoch = 0; epoch < 3; epoch++)
        g_assert_cmpint(assert_same_stream(tw_dataset_iter(plain), tw_dataset_iter(ahead)), ==, 72);
    tw_dataset_unref(plain);
    tw_dataset_unref(ahead);

    /* the general path on the producer thread, with a buffer of one, and nested prefetches */
    plain = identity_map(pipeline(identity_map(range_ds(300)), false));
    ahead = tw_dataset_prefetch(identity_map(tw_dataset_prefetch(pipeline(identity_map(range_ds(300)), true), 1)), 2);
    for (int epoch = 0; epoch < 2; epoch++)
        g_assert_cmpint(assert_same_stream(tw_dataset_iter(plain), tw_dataset_iter(ahead)), ==, 43);
    tw_dataset_unref(plain);
    tw_dataset_unref(ahead);

    g_assert_null(tw_dataset_prefetch(range_ds(3), 0));
    g_assert_nonnull(strstr(tw_last_error(), "prefetch: buffer_size must be between 1"));
}

static void test_prefetch_early_free(void)
{
    tw_dataset *ds = tw_dataset_prefetch(tw_dataset_repeat(range_ds(100), -1), 4);
    g_assert_cmpint(tw_dataset_cardinality(ds), ==, TW_INFINITE_CARDINALITY);
    for (int round = 0; round < 20; round++) {
        tw_iterator *it = tw_dataset_iter(ds);
        g_assert_nonnull(it);
        for (int i = 0; i < round; i++) {
            tw_element e;
            g_assert_cmpint(tw_iterator_next(it, &e), ==, 1);
            g_assert_cmpfloat(tw_tensor_item(e.t[1]), ==, i % 100);
            tw_element_clear(&e);
        }
        if (round % 2)
            g_usleep(1000); /* let the producer fill the queue and block */
        tw_iterator_free(it); /* stops the producer: no hang, no leak */
    }
    tw_dataset_unref(ds);

    /* freed after the end, and the dataset released while an iterator lives */
    ds = tw_dataset_prefetch(range_ds(5), 2);
    tw_iterator *it = tw_dataset_iter(ds);
    tw_dataset_unref(ds);
    int64_t v[5];
    g_assert_cmpint(labels_of_pass(it, v, 5), ==, 5);
    g_assert_true(is_identity(v, 5));
}

static void test_prefetch_errors(void)
{
    int64_t bad = 5;
    tw_dataset *plain = tw_dataset_map(range_ds(10), failing_fn, &bad, NULL);
    tw_dataset *ahead = tw_dataset_prefetch(tw_dataset_map(range_ds(10), failing_fn, &bad, NULL), 2);
    for (int which = 0; which < 2; which++) {
        tw_iterator *it = tw_dataset_iter(which ? ahead : plain);
        tw_element e;
        for (int i = 0; i < 5; i++) {
            g_assert_cmpint(tw_iterator_next(it, &e), ==, 1);
            g_assert_cmpfloat(tw_tensor_item(e.t[1]), ==, i);
            tw_element_clear(&e);
        }
        tw_error_clear();
        g_assert_cmpint(tw_iterator_next(it, &e), ==, -1);
        g_assert_cmpint(e.n, ==, 0);
        g_assert_cmpstr(tw_last_error(), ==, "failing_fn: element 5 is bad"); /* on this thread */
        /* past the error the stream goes on, as it does without prefetch */
        g_assert_cmpint(tw_iterator_next(it, &e), ==, 1);
        g_assert_cmpfloat(tw_tensor_item(e.t[1]), ==, 6);
        tw_element_clear(&e);
        tw_iterator_free(it);
    }
    /* an error waiting in the queue when the iterator is freed */
    tw_iterator *it = tw_dataset_iter(ahead);
    g_usleep(2000);
    tw_iterator_free(it);
    tw_dataset_unref(plain);
    tw_dataset_unref(ahead);
    tw_error_clear();
}

/* ---- map -------------------------------------------------------------------------- */
static int double_fn(const tw_element *in, tw_element *out, void *user_data)
{
    tw_scope_begin();
    out->t[0] = tw_tensor_ref(tw_mul_scalar(in->t[0], *(double *)user_data));
    out->t[1] = tw_tensor_ref(in->t[1]);
    out->n = 2;
    tw_scope_end();
    return out->t[0] ? 0 : -1;
}

static int silent_failure_fn(const tw_element *in, tw_element *out, void *user_data)
{
    return -1;
}

static int empty_fn(const tw_element *in, tw_element *out, void *user_data)
{
    return 0;
}

static void set_flag(void *p)
{
    *(int *)p = 1;
}

static void test_map(void)
{
    static double factor = 2.0;
    tw_dataset *ds = tw_dataset_map(range_ds(5), double_fn, &factor, NULL);
    g_assert_cmpstr(tw_dataset_name(ds), ==, "map(from_tensors(5))");
    g_assert_cmpint(tw_dataset_cardinality(ds), ==, 5);
    tw_iterator *it = tw_dataset_iter(ds);
    tw_element e;
    for (int i = 0; i < 5; i++) {
        g_assert_cmpint(tw_iterator_next(it, &e), ==, 1);
        g_assert_cmpfloat(tw_tensor_get(e.t[0], (int64_t[]){1}), ==, -2.0 * i);
        tw_element_clear(&e);
    }
    g_assert_cmpint(tw_iterator_next(it, &e), ==, 0);
    tw_iterator_free(it);
    tw_dataset_unref(ds);

    /* the function's message comes through */
    int64_t bad = 2;
    ds = tw_dataset_map(range_ds(5), failing_fn, &bad, NULL);
    int64_t v[5];
    it = tw_dataset_iter(ds);
    g_assert_cmpint(tw_iterator_next(it, &e), ==, 1);
    tw_element_clear(&e);
    g_assert_cmpint(tw_iterator_next(it, &e), ==, 1);
    tw_element_clear(&e);
    g_assert_cmpint(tw_iterator_next(it, &e), ==, -1);
    g_assert_cmpstr(tw_last_error(), ==, "failing_fn: element 2 is bad");
    tw_iterator_free(it);
    tw_dataset_unref(ds);

    /* a function that fails without a message, or returns nothing */
    tw_error_clear();
    ds = tw_dataset_map(range_ds(5), silent_failure_fn, NULL, NULL);
    it = tw_dataset_iter(ds);
    g_assert_cmpint(tw_iterator_next(it, &e), ==, -1);
    g_assert_cmpstr(tw_last_error(), ==, "map: the function failed on element 0");
    tw_iterator_free(it);
    tw_dataset_unref(ds);
    ds = tw_dataset_map(range_ds(5), empty_fn, NULL, NULL);
    it = tw_dataset_iter(ds);
    g_assert_cmpint(tw_iterator_next(it, &e), ==, -1);
    g_assert_nonnull(strstr(tw_last_error(), "map: the function returned 0 components for element 0"));
    tw_iterator_free(it);
    tw_dataset_unref(ds);

    /* user_data is destroyed with the dataset, not before */
    int destroyed = 0;
    ds = tw_dataset_map(range_ds(5), identity_fn, &destroyed, set_flag);
    it = tw_dataset_iter(ds);
    tw_dataset_unref(ds);
    g_assert_cmpint(destroyed, ==, 0);
    g_assert_cmpint(labels_of_pass(it, v, 5), ==, 5);
    g_assert_cmpint(destroyed, ==, 1);

    destroyed = 0;
    g_assert_null(tw_dataset_map(range_ds(5), NULL, &destroyed, set_flag));
    g_assert_cmpstr(tw_last_error(), ==, "map: the function is NULL");
    g_assert_cmpint(destroyed, ==, 1);
}

/* ---- scale ------------------------------------------------------------------------ */
static void test_scale(void)
{
    tw_scope_begin();
    tw_tensor *pixels = tw_reshape(tw_arange(0, 256, 1, TW_UINT8), TW_SHAPE(16, 4, 4));
    tw_tensor *y = tw_arange(0, 16, 1, TW_INT64);
    tw_dataset *src = tw_dataset_from_tensors(TW_TENSORS(pixels, y));
    tw_tensor *expected = tw_mul_scalar(tw_cast(pixels, TW_FLOAT32), 1.0 / 255);
    tw_dataset *ds = tw_dataset_scale(tw_dataset_batch(src, 8, false), 0, 1.0 / 255);
    g_assert_cmpstr(tw_dataset_name(ds), ==, "scale(0, 0.00392157, batch(8, from_tensors(16)))");
    tw_iterator *it = tw_dataset_iter(ds);
    tw_element e;
    for (int b = 0; b < 2; b++) {
        g_assert_cmpint(tw_iterator_next(it, &e), ==, 1);
        g_assert_cmpint(tw_tensor_dtype(e.t[0]), ==, TW_FLOAT32);
        g_assert_cmpint(tw_tensor_dtype(e.t[1]), ==, TW_INT64);
        assert_same_tensor(e.t[0], tw_slice(expected, 0, 8 * b, 8 * b + 8, 1));
        const float *p = tw_tensor_data(e.t[0]);
        for (int i = 0; i < 128; i++) {
            g_assert_cmpfloat(p[i], >=, 0.0f);
            g_assert_cmpfloat(p[i], <=, 1.0f);
            g_assert_cmpfloat_with_epsilon(p[i], (128 * b + i) / 255.0, 1e-6);
        }
        tw_element_clear(&e);
    }
    g_assert_cmpint(tw_iterator_next(it, &e), ==, 0);
    tw_iterator_free(it);
    tw_dataset_unref(ds);

    /* other dtypes and strided tensors take the engine's ops */
    tw_tensor *cols = tw_transpose(tw_reshape(tw_arange(0, 32, 1, TW_UINT8), TW_SHAPE(2, 16)));
    ds = tw_dataset_scale(tw_dataset_from_tensors(TW_TENSORS(cols, y)), 1, 0.5);
    it = tw_dataset_iter(ds);
    for (int i = 0; i < 16; i++) {
        g_assert_cmpint(tw_iterator_next(it, &e), ==, 1);
        g_assert_cmpint(tw_tensor_dtype(e.t[0]), ==, TW_UINT8);
        g_assert_cmpint(tw_tensor_dtype(e.t[1]), ==, TW_FLOAT32);
        g_assert_cmpfloat(tw_tensor_item(e.t[1]), ==, 0.5 * i);
        tw_element_clear(&e);
    }
    tw_iterator_free(it);
    tw_dataset_unref(ds);
    ds = tw_dataset_scale(tw_dataset_batch(tw_dataset_from_tensors(TW_TENSORS(cols)), 4, false), 0, 2.0);
    it = tw_dataset_iter(ds);
    g_assert_cmpint(tw_iterator_next(it, &e), ==, 1);
    g_assert_cmpfloat(tw_tensor_get(e.t[0], (int64_t[]){3, 1}), ==, 2.0 * 19);
    tw_element_clear(&e);
    tw_iterator_free(it);
    tw_dataset_unref(ds);

    /* a component that is not there */
    ds = tw_dataset_scale(tw_dataset_from_tensors(TW_TENSORS(pixels)), 1, 0.5);
    it = tw_dataset_iter(ds);
    g_assert_cmpint(tw_iterator_next(it, &e), ==, -1);
    g_assert_cmpstr(tw_last_error(), ==, "scale: component 1 does not exist; the elements have 1 component");
    tw_iterator_free(it);
    tw_dataset_unref(ds);
    g_assert_null(tw_dataset_scale(tw_dataset_from_tensors(TW_TENSORS(pixels)), -1, 0.5));
    g_assert_cmpstr(tw_last_error(), ==, "scale: component -1 is outside 0..3");
    tw_scope_end();
}

/* ---- split ------------------------------------------------------------------------- */
static void test_split(void)
{
    int64_t v[100];
    tw_dataset *train, *validation;
    g_assert_cmpint(tw_dataset_split(range_ds(10), 0.2, &train, &validation), ==, 0);
    g_assert_cmpint(tw_dataset_cardinality(train), ==, 8);
    g_assert_cmpint(tw_dataset_cardinality(validation), ==, 2);
    g_assert_cmpint(labels(train, v, 100), ==, 8);
    g_assert_true(is_identity(v, 8));
    g_assert_cmpint(labels(validation, v, 100), ==, 2);
    g_assert_cmpint(v[0], ==, 8);
    g_assert_cmpint(v[1], ==, 9);
    g_assert_cmpstr(tw_dataset_name(validation), ==, "skip(8, from_tensors(10))");
    tw_dataset_unref(train);
    tw_dataset_unref(validation);

    /* Keras: split_at = floor(n * (1 - fraction)) */
    g_assert_cmpint(tw_dataset_split(tw_dataset_batch(range_ds(1000), 10, false), 0.25, &train, &validation), ==, 0);
    g_assert_cmpint(tw_dataset_cardinality(train), ==, 75);
    g_assert_cmpint(tw_dataset_cardinality(validation), ==, 25);
    tw_dataset_unref(train);
    tw_dataset_unref(validation);
    g_assert_cmpint(tw_dataset_split(range_ds(7), 0.5, &train, &validation), ==, 0);
    g_assert_cmpint(tw_dataset_cardinality(train), ==, 3);
    g_assert_cmpint(tw_dataset_cardinality(validation), ==, 4);
    tw_dataset_unref(train);
    tw_dataset_unref(validation);

    g_assert_cmpint(tw_dataset_split(tw_dataset_repeat(range_ds(10), -1), 0.2, &train, &validation), ==, -1);
    g_assert_null(train);
    g_assert_null(validation);
    g_assert_cmpstr(tw_last_error(), ==,
                    "split: repeat(forever, from_tensors(10)) has infinite cardinality; a validation split needs a "
                    "finite dataset of known size");
    g_assert_cmpint(tw_dataset_split(unknown_ds(range_ds(10)), 0.2, &train, &validation), ==, -1);
    g_assert_nonnull(strstr(tw_last_error(), "has unknown cardinality"));
    g_assert_cmpint(tw_dataset_split(range_ds(10), 1.0, &train, &validation), ==, -1);
    g_assert_cmpstr(tw_last_error(), ==, "split: validation_fraction must be between 0 and 1 (exclusive), got 1");
    g_assert_cmpint(tw_dataset_split(range_ds(10), 0.0, &train, &validation), ==, -1);
    g_assert_cmpint(tw_dataset_split(NULL, 0.2, &train, &validation), ==, -1);
}

/* ---- synthetic sets ------------------------------------------------------------------ */
/* All of a component of a from_tensors-like dataset, batched into one tensor. */
static tw_tensor *all_of(tw_dataset *ds, int component)
{
    tw_dataset *b = tw_dataset_batch(tw_dataset_ref(ds), 1 << 30, false);
    tw_iterator *it = tw_dataset_iter(b);
    tw_element e;
    g_assert_cmpint(tw_iterator_next(it, &e), ==, 1);
    tw_tensor *t = tw_tensor_ref(e.t[component]);
    tw_element_clear(&e);
    tw_iterator_free(it);
    tw_dataset_unref(b);
    return t;
}

static void assert_same_data(tw_dataset *a, tw_dataset *b, bool same)
{
    for (int c = 0; c < 2; c++) {
        tw_tensor *x = all_of(a, c), *y = all_of(b, c);
        size_t bytes = (size_t)tw_tensor_numel(x) * tw_dtype_size(tw_tensor_dtype(x));
        if (same || c == 1)
            assert_same_tensor(x, y);
        else
            g_assert_true(memcmp(tw_tensor_data(x), tw_tensor_data(y), bytes) != 0);
        tw_tensor_unref(x);
        tw_tensor_unref(y);
    }
}

static void test_synthetic_linear(void)
{
    enum { N = 4000 };
    tw_dataset *ds = tw_dataset_linear(N, 0.1, 1);
    g_assert_nonnull(ds);
    g_assert_cmpstr(tw_dataset_name(ds), ==, "linear(4000)");
    g_assert_cmpint(tw_dataset_cardinality(ds), ==, N);
    tw_iterator *it = tw_dataset_iter(ds);
    tw_element e;
    g_assert_cmpint(tw_iterator_next(it, &e), ==, 1);
    g_assert_cmpint(e.n, ==, 2);
    g_assert_cmpint(tw_tensor_ndim(e.t[0]), ==, 0);
    g_assert_cmpint(tw_tensor_dtype(e.t[0]), ==, TW_FLOAT32);
    g_assert_cmpint(tw_tensor_dtype(e.t[1]), ==, TW_FLOAT32);
    tw_element_clear(&e);
    tw_iterator_free(it);

    /* least squares: slope 3, intercept 2, residuals with the noise's spread */
    tw_tensor *x = all_of(ds, 0), *y = all_of(ds, 1);
    const float *xs = tw_tensor_data(x), *ys = tw_tensor_data(y);
    double mx = 0, my = 0, sxx = 0, sxy = 0, sx2 = 0;
    for (int i = 0; i < N; i++) {
        mx += xs[i];
        my += ys[i];
    }
    mx /= N;
    my /= N;
    for (int i = 0; i < N; i++) {
        sxx += (xs[i] - mx) * (xs[i] - mx);
        sxy += (xs[i] - mx) * (ys[i] - my);
    }
    double slope = sxy / sxx, intercept = my - slope * mx, rss = 0;
    for (int i = 0; i < N; i++) {
        double r = ys[i] - (slope * xs[i] + intercept);
        rss += r * r;
        sx2 += xs[i] * xs[i];
    }
    g_assert_cmpfloat(fabs(slope - 3), <, 0.01);
    g_assert_cmpfloat(fabs(intercept - 2), <, 0.01);
    g_assert_cmpfloat(fabs(sqrt(rss / N) - 0.1), <, 0.01);
    g_assert_cmpfloat(fabs(mx), <, 0.1);              /* x ~ N(0, 1) */
    g_assert_cmpfloat(fabs(sx2 / N - 1), <, 0.1);
    tw_tensor_unref(x);
    tw_tensor_unref(y);

    tw_dataset *same = tw_dataset_linear(N, 0.1, 1), *other = tw_dataset_linear(N, 0.1, 2);
    assert_same_data(ds, same, true);
    tw_tensor *a = all_of(ds, 0), *b = all_of(other, 0);
    g_assert_true(memcmp(tw_tensor_data(a), tw_tensor_data(b), N * sizeof(float)) != 0);
    tw_tensor_unref(a);
    tw_tensor_unref(b);
    tw_dataset_unref(same);
    tw_dataset_unref(other);
    tw_dataset_unref(ds);

    g_assert_null(tw_dataset_linear(0, 0.1, 1));
    g_assert_nonnull(strstr(tw_last_error(), "linear: n must be between 1"));
    g_assert_null(tw_dataset_linear(10, -1, 1));
    g_assert_cmpstr(tw_last_error(), ==, "linear: noise must be a finite number >= 0, got -1");
}

static void test_synthetic_spirals(void)
{
    enum { N = 1000 };
    tw_dataset *ds = tw_dataset_spirals(N, 0.0, 5);
    g_assert_cmpstr(tw_dataset_name(ds), ==, "spirals(1000)");
    tw_tensor *x = all_of(ds, 0), *y = all_of(ds, 1);
    g_assert_cmpint(tw_tensor_dtype(x), ==, TW_FLOAT32);
    g_assert_cmpint(tw_tensor_dim(x, 1), ==, 2);
    g_assert_cmpint(tw_tensor_dtype(y), ==, TW_INT64);
    const float *p = tw_tensor_data(x);
    const int64_t *l = tw_tensor_data(y);
    int counts[2] = {0, 0};
    for (int i = 0; i < N; i++) {
        g_assert_cmpint(l[i], ==, i % 2);
        counts[l[i]]++;
        /* without noise: radius t, and the two spirals half a turn apart */
        double t = (i / 2 + 0.5) / (N / 2);
        g_assert_cmpfloat_with_epsilon(hypot(p[2 * i], p[2 * i + 1]), t, 1e-5);
        if (i % 2 == 1) {
            g_assert_cmpfloat_with_epsilon(p[2 * i], -p[2 * i - 2], 1e-5);
            g_assert_cmpfloat_with_epsilon(p[2 * i + 1], -p[2 * i - 1], 1e-5);
        }
    }
    g_assert_cmpint(counts[0], ==, N / 2);
    g_assert_cmpint(counts[1], ==, N / 2);
    tw_tensor_unref(x);
    tw_tensor_unref(y);
    tw_dataset_unref(ds);

    /* noise: points scatter around the spiral with about that spread */
    ds = tw_dataset_spirals(N, 0.05, 5);
    tw_dataset *same = tw_dataset_spirals(N, 0.05, 5), *other = tw_dataset_spirals(N, 0.05, 6);
    assert_same_data(ds, same, true);
    assert_same_data(ds, other, false);
    tw_dataset *clean = tw_dataset_spirals(N, 0.0, 5);
    x = all_of(ds, 0);
    tw_tensor *c = all_of(clean, 0);
    p = tw_tensor_data(x);
    const float *q = tw_tensor_data(c);
    double ss = 0;
    for (int i = 0; i < 2 * N; i++)
        ss += (p[i] - q[i]) * (p[i] - q[i]);
    g_assert_cmpfloat(fabs(sqrt(ss / (2 * N)) - 0.05), <, 0.005);
    tw_tensor_unref(x);
    tw_tensor_unref(c);
    tw_dataset_unref(ds);
    tw_dataset_unref(same);
    tw_dataset_unref(other);
    tw_dataset_unref(clean);

    ds = tw_dataset_spirals(7, 0.1, 1); /* odd counts work */
    g_assert_cmpint(tw_dataset_cardinality(ds), ==, 7);
    tw_dataset_unref(ds);
}

static void test_synthetic_blobs(void)
{
    enum { N = 3000, K = 3, D = 4 };
    tw_dataset *ds = tw_dataset_blobs(N, K, D, 0.5, 42);
    g_assert_nonnull(ds);
    g_assert_cmpstr(tw_dataset_name(ds), ==, "blobs(3000, 3, 4)");
    tw_tensor *x = all_of(ds, 0), *y = all_of(ds, 1);
    g_assert_cmpint(tw_tensor_dim(x, 0), ==, N);
    g_assert_cmpint(tw_tensor_dim(x, 1), ==, D);
    g_assert_cmpint(tw_tensor_dtype(y), ==, TW_INT64);
    const float *p = tw_tensor_data(x);
    const int64_t *l = tw_tensor_data(y);
    double mean[K][D] = {{0}}, var[K][D] = {{0}};
    int counts[K] = {0};
    for (int i = 0; i < N; i++) {
        g_assert_cmpint(l[i], ==, i % K);
        counts[l[i]]++;
        for (int d = 0; d < D; d++)
            mean[l[i]][d] += p[i * D + d];
    }
    for (int k = 0; k < K; k++) {
        g_assert_cmpint(counts[k], ==, N / K);
        for (int d = 0; d < D; d++) {
            mean[k][d] /= counts[k];
            g_assert_cmpfloat(fabs(mean[k][d]), <=, 10.0 + 0.1); /* centres in [-10, 10] */
        }
    }
    for (int i = 0; i < N; i++)
        for (int d = 0; d < D; d++)
            var[l[i]][d] += (p[i * D + d] - mean[l[i]][d]) * (p[i * D + d] - mean[l[i]][d]);
    for (int k = 0; k < K; k++)
        for (int d = 0; d < D; d++)
            g_assert_cmpfloat(fabs(sqrt(var[k][d] / counts[k]) - 0.5), <, 0.05);
    /* the centres are apart: each point is nearest its own blob's mean */
    int nearest_own = 0;
    for (int i = 0; i < N; i++) {
        int best = 0;
        double best_d = INFINITY;
        for (int k = 0; k < K; k++) {
            double dist = 0;
            for (int d = 0; d < D; d++)
                dist += (p[i * D + d] - mean[k][d]) * (p[i * D + d] - mean[k][d]);
            if (dist < best_d)
                best_d = dist, best = k;
        }
        nearest_own += best == l[i];
    }
    g_assert_cmpint(nearest_own, >, N * 99 / 100);
    tw_tensor_unref(x);
    tw_tensor_unref(y);

    tw_dataset *same = tw_dataset_blobs(N, K, D, 0.5, 42), *other = tw_dataset_blobs(N, K, D, 0.5, 43);
    assert_same_data(ds, same, true);
    assert_same_data(ds, other, false);
    tw_dataset_unref(same);
    tw_dataset_unref(other);
    tw_dataset_unref(ds);

    g_assert_null(tw_dataset_blobs(10, 0, 2, 1, 1));
    g_assert_cmpstr(tw_last_error(), ==, "blobs: centers must be between 1 and 1000000, got 0");
    g_assert_null(tw_dataset_blobs(10, 2, 0, 1, 1));
    g_assert_null(tw_dataset_blobs(10, 2, 2, -1, 1));
    g_assert_cmpstr(tw_last_error(), ==, "blobs: stddev must be a finite number >= 0, got -1");
}

/* ---- a whole pipeline ----------------------------------------------------------------- */
static int add_one_fn(const tw_element *in, tw_element *out, void *user_data)
{
    tw_scope_begin();
    out->t[0] = tw_tensor_ref(tw_add_scalar(in->t[0], 1));
    out->t[1] = tw_tensor_ref(in->t[1]);
    out->n = 2;
    tw_scope_end();
    return out->t[0] ? 0 : -1;
}

static void test_pipeline(void)
{
    enum { N = 10000, B = 32 };
    tw_dataset *ds = tw_dataset_prefetch(
        tw_dataset_repeat(tw_dataset_batch(tw_dataset_map(tw_dataset_shuffle(range_ds(N), 1000, 2024, true),
                                                          add_one_fn, NULL, NULL),
                                           B, false),
                          2),
        4);
    g_assert_cmpstr(tw_dataset_name(ds), ==,
                    "prefetch(4, repeat(2, batch(32, map(shuffle(1000, from_tensors(10000))))))");
    g_assert_cmpint(tw_dataset_cardinality(ds), ==, 2 * ((N + B - 1) / B));
    for (int pass = 0; pass < 2; pass++) {
        tw_iterator *it = tw_dataset_iter(ds);
        static int64_t seen[2 * N];
        int64_t count = 0, batches = 0;
        tw_element e;
        int rc;
        while ((rc = tw_iterator_next(it, &e)) > 0) {
            int64_t k = tw_tensor_dim(e.t[0], 0);
            g_assert_cmpint(k, ==, batches % 313 == 312 ? N % B : B);
            for (int64_t j = 0; j < k; j++) {
                int64_t label = (int64_t)tw_tensor_get(e.t[1], (int64_t[]){j});
                g_assert_cmpfloat(tw_tensor_get(e.t[0], (int64_t[]){j, 0}), ==, label + 1);
                g_assert_cmpfloat(tw_tensor_get(e.t[0], (int64_t[]){j, 1}), ==, 1 - label);
                seen[count++] = label;
            }
            batches++;
            tw_element_clear(&e);
        }
        g_assert_cmpint(rc, ==, 0);
        tw_iterator_free(it);
        g_assert_cmpint(batches, ==, 2 * 313);
        g_assert_cmpint(count, ==, 2 * N);
        assert_permutation(seen, N);
        assert_permutation(seen + N, N);
        g_assert_true(memcmp(seen, seen + N, N * sizeof *seen) != 0);
    }
    tw_dataset_unref(ds);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/data/transforms/shuffle/permutation", test_shuffle_permutation);
    g_test_add_func("/data/transforms/shuffle/no-reshuffle", test_shuffle_no_reshuffle);
    g_test_add_func("/data/transforms/shuffle/small-buffer", test_shuffle_small_buffer);
    g_test_add_func("/data/transforms/shuffle/uniform", test_shuffle_uniform);
    g_test_add_func("/data/transforms/batch/remainder", test_batch_remainder);
    g_test_add_func("/data/transforms/batch/fast-path-matches", test_batch_fast_path_matches);
    g_test_add_func("/data/transforms/batch/inside-scope", test_batch_inside_scope);
    g_test_add_func("/data/transforms/batch/shape-mismatch", test_batch_shape_mismatch);
    g_test_add_func("/data/transforms/repeat", test_repeat);
    g_test_add_func("/data/transforms/take-skip", test_take_skip);
    g_test_add_func("/data/transforms/cache", test_cache);
    g_test_add_func("/data/transforms/prefetch/same-stream", test_prefetch_same_stream);
    g_test_add_func("/data/transforms/prefetch/early-free", test_prefetch_early_free);
    g_test_add_func("/data/transforms/prefetch/errors", test_prefetch_errors);
    g_test_add_func("/data/transforms/map", test_map);
    g_test_add_func("/data/transforms/scale", test_scale);
    g_test_add_func("/data/transforms/split", test_split);
    g_test_add_func("/data/synthetic/linear", test_synthetic_linear);
    g_test_add_func("/data/synthetic/spirals", test_synthetic_spirals);
    g_test_add_func("/data/synthetic/blobs", test_synthetic_blobs);
    g_test_add_func("/data/transforms/pipeline", test_pipeline);
    return g_test_run();
}
