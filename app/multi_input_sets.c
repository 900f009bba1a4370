/* The two-input built-in sets (see multi_input_sets.h). Drawn with GLib's
 * Mersenne Twister from the seed, so a seed gives the same set everywhere. */
#include "multi_input_sets.h"

#include <stdio.h>
#include <string.h>

#include <glib.h>

#include <tw/error.h>
#include <tw/ops.h>

static GRand *rand_of(uint64_t seed)
{
    guint32 words[2] = {(guint32)seed, (guint32)(seed >> 32)};
    return g_rand_new_with_seed_array(words, 2);
}

/* The images x[order[i]] as (N, 28, 28, 1). New reference. */
static tw_tensor *images_at(tw_tensor *x, const int64_t *order, int64_t n)
{
    tw_scope_begin();
    tw_tensor *picked = tw_gather(x, tw_tensor_from_data(order, TW_INT64, 1, (int64_t[]){n}), 0);
    tw_tensor *images = picked ? tw_reshape(picked, 4, (int64_t[]){n, 28, 28, 1}) : NULL;
    if (images)
        tw_tensor_ref(images);
    tw_scope_end();
    return images;
}

/* One split's pairs: *a and *b the two images, *same the labels. */
static int pair_split(tw_tensor *x, tw_tensor *y, GRand *rng, tw_tensor **a, tw_tensor **b, tw_tensor **same)
{
    enum { CLASSES = 10 };
    int64_t n = tw_tensor_dim(x, 0);
    if (tw_tensor_ndim(x) != 3 || tw_tensor_dim(x, 1) != 28 || tw_tensor_dim(x, 2) != 28 || n < 1 ||
        n > G_MAXINT32)
        return tw_error_set("fashion-mnist-pairs: the images are not N 28x28 images");
    const int32_t *label = tw_tensor_data(y);
    int64_t *first = g_new(int64_t, n), *second = g_new(int64_t, n), *members[CLASSES];
    int64_t count[CLASSES] = {0}, filled[CLASSES] = {0};
    float *value = g_new(float, n);
    for (int64_t i = 0; i < n; i++)
        count[label[i] >= 0 && label[i] < CLASSES ? label[i] : 0]++;
    for (int c = 0; c < CLASSES; c++)
        members[c] = g_new(int64_t, count[c] ? count[c] : 1);
    int rc = 0;
    for (int64_t i = 0; i < n && !rc; i++) {
        if (label[i] < 0 || label[i] >= CLASSES)
            rc = tw_error_set("fashion-mnist-pairs: label %d of image %lld is not a class 0 to 9", label[i],
                              (long long)i);
        else
            members[label[i]][filled[label[i]]++] = i;
    }
    for (int c = 0; c < CLASSES && !rc; c++)
        if (count[c] == 0)
            rc = tw_error_set("fashion-mnist-pairs: class %d has no images to pair", c);
    for (int64_t i = 0; i < n; i++) /* the anchors' order: a Fisher-Yates shuffle */
        first[i] = i;
    for (int64_t i = n - 1; i > 0 && !rc; i--) {
        int64_t j = g_rand_int_range(rng, 0, (gint32)i + 1), t = first[i];
        first[i] = first[j];
        first[j] = t;
    }
    for (int64_t i = 0; i < n && !rc; i++) {
        int c = label[first[i]];
        bool is_same = i % 2 == 0;
        if (!is_same) /* any other class, evenly */
            c = (c + 1 + g_rand_int_range(rng, 0, CLASSES - 1)) % CLASSES;
        second[i] = members[c][g_rand_int_range(rng, 0, (gint32)count[c])];
        value[i] = is_same ? 1.0f : 0.0f;
    }
    if (!rc) {
        *a = images_at(x, first, n);
        *b = images_at(x, second, n);
        *same = tw_tensor_from_data(value, TW_FLOAT32, 2, (int64_t[]){n, 1});
        rc = *a && *b && *same ? 0 : -1;
    }
    for (int c = 0; c < CLASSES; c++)
        g_free(members[c]);
    g_free(first), g_free(second), g_free(value);
    return rc;
}

int twb_pairs_of_classes(twb_data *data, uint64_t seed)
{
    GRand *rng = rand_of(seed);
    tw_tensor *a = NULL, *b = NULL, *same = NULL, *test_a = NULL, *test_b = NULL, *test_same = NULL;
    int rc = pair_split(data->x[0], data->y, rng, &a, &b, &same);
    if (!rc && data->test_x[0])
        rc = pair_split(data->test_x[0], data->test_y, rng, &test_a, &test_b, &test_same);
    g_rand_free(rng);
    if (rc) {
        tw_tensor_unref(a), tw_tensor_unref(b), tw_tensor_unref(same);
        tw_tensor_unref(test_a), tw_tensor_unref(test_b), tw_tensor_unref(test_same);
        return -1;
    }
    twb_data paired = {.ninputs = 2, .x = {a, b}, .y = same, .test_x = {test_a, test_b}, .test_y = test_same};
    twb_data_clear(data);
    *data = paired;
    return 0;
}

/* One split of n sequences. */
static int sequences(GRand *rng, int64_t n, tw_tensor **source, tw_tensor **decoder, tw_tensor **target)
{
    enum { START = 0, END = 1, FIRST_SOURCE = 2 };
    G_STATIC_ASSERT(TWB_SEQ_TARGET_LEN >= TWB_SEQ_SOURCE_LEN);
    G_STATIC_ASSERT(TWB_SEQ_TARGET_TOKENS >= TWB_SEQ_SOURCE_TOKENS + FIRST_SOURCE);
    float *src = g_new0(float, n * TWB_SEQ_SOURCE_LEN * TWB_SEQ_SOURCE_TOKENS);
    float *dec = g_new0(float, n * TWB_SEQ_TARGET_LEN * TWB_SEQ_TARGET_TOKENS);
    int32_t *tgt = g_new(int32_t, n * TWB_SEQ_TARGET_LEN);
    for (int64_t i = 0; i < n; i++) {
        int32_t tokens[TWB_SEQ_SOURCE_LEN];
        for (int t = 0; t < TWB_SEQ_SOURCE_LEN; t++) {
            tokens[t] = g_rand_int_range(rng, 0, TWB_SEQ_SOURCE_TOKENS);
            src[(i * TWB_SEQ_SOURCE_LEN + t) * TWB_SEQ_SOURCE_TOKENS + tokens[t]] = 1;
        }
        int32_t *out = tgt + i * TWB_SEQ_TARGET_LEN;
        for (int t = 0; t < TWB_SEQ_TARGET_LEN; t++)
            out[t] = t < TWB_SEQ_SOURCE_LEN ? tokens[TWB_SEQ_SOURCE_LEN - 1 - t] + FIRST_SOURCE : END;
        for (int t = 0; t < TWB_SEQ_TARGET_LEN; t++)
            dec[(i * TWB_SEQ_TARGET_LEN + t) * TWB_SEQ_TARGET_TOKENS + (t ? out[t - 1] : START)] = 1;
    }
    *source = tw_tensor_from_data(src, TW_FLOAT32, 3, (int64_t[]){n, TWB_SEQ_SOURCE_LEN, TWB_SEQ_SOURCE_TOKENS});
    *decoder = tw_tensor_from_data(dec, TW_FLOAT32, 3, (int64_t[]){n, TWB_SEQ_TARGET_LEN, TWB_SEQ_TARGET_TOKENS});
    *target = tw_tensor_from_data(tgt, TW_INT32, 2, (int64_t[]){n, TWB_SEQ_TARGET_LEN});
    g_free(src), g_free(dec), g_free(tgt);
    return *source && *decoder && *target ? 0 : -1;
}

int twb_reverse_sequences(uint64_t seed, twb_data *out)
{
    memset(out, 0, sizeof *out);
    out->ninputs = 2;
    out->classes = TWB_SEQ_TARGET_TOKENS;
    GRand *rng = rand_of(seed);
    int rc = sequences(rng, TWB_SEQ_TRAIN, &out->x[0], &out->x[1], &out->y);
    if (!rc)
        rc = sequences(rng, TWB_SEQ_TEST, &out->test_x[0], &out->test_x[1], &out->test_y);
    g_rand_free(rng);
    if (!rc)
        snprintf(out->description, sizeof out->description, "reversed sequences (%d train, %d test)", TWB_SEQ_TRAIN,
                 TWB_SEQ_TEST);
    return rc;
}
