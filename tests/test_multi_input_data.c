/* The built-in data of two inputs (app/multi_input_sets.c) and how the
 * training data checks and losses treat them (app/train_data.c): the
 * Fashion-MNIST pairs, made here from small images whose pixels say which
 * image each is, and the reversed sequences of the seq2seq template. */
#include <glib.h>
#include <string.h>

#include "tw/model_file.h"
#include "tw/ops.h"

#include "multi_input_sets.h"
#include "train_data.h"

enum { IMAGES = 40 };

/* IMAGES images of 28x28, image i filled with i, of class i % 10; and a
 * test split of 10 more. */
static void images_make(twb_data *d)
{
    memset(d, 0, sizeof *d);
    d->ninputs = 1;
    float *pixels = g_new(float, (IMAGES + 10) * 28 * 28);
    int32_t classes[IMAGES + 10];
    for (int i = 0; i < IMAGES + 10; i++) {
        for (int p = 0; p < 28 * 28; p++)
            pixels[i * 28 * 28 + p] = (float)i;
        classes[i] = i % 10;
    }
    d->x[0] = tw_tensor_from_data(pixels, TW_FLOAT32, 3, (int64_t[]){IMAGES, 28, 28});
    d->y = tw_tensor_from_data(classes, TW_INT32, 1, (int64_t[]){IMAGES});
    d->test_x[0] = tw_tensor_from_data(pixels + IMAGES * 28 * 28, TW_FLOAT32, 3, (int64_t[]){10, 28, 28});
    d->test_y = tw_tensor_from_data(classes + IMAGES, TW_INT32, 1, (int64_t[]){10});
    g_free(pixels);
}

/* Which image of images_make a pair's image is (its first pixel). */
static int image_of(tw_tensor *x, int64_t i)
{
    return (int)tw_tensor_get(x, (int64_t[]){i, 0, 0, 0});
}

static void test_pairs(void)
{
    twb_data d;
    images_make(&d);
    g_assert_cmpint(twb_pairs_of_classes(&d, 7), ==, 0);
    g_assert_cmpint(d.ninputs, ==, 2);
    g_assert_cmpint(tw_tensor_ndim(d.x[1]), ==, 4);
    g_assert_cmpint(tw_tensor_dim(d.x[0], 0), ==, IMAGES);
    g_assert_cmpint(tw_tensor_dim(d.x[1], 3), ==, 1);
    g_assert_cmpint(tw_tensor_dim(d.y, 1), ==, 1);
    g_assert_cmpint(tw_tensor_dim(d.test_x[1], 0), ==, 10);
    int same = 0, seen[IMAGES] = {0};
    for (int64_t i = 0; i < IMAGES; i++) {
        int a = image_of(d.x[0], i), b = image_of(d.x[1], i);
        double label = tw_tensor_get(d.y, (int64_t[]){i, 0});
        g_assert_cmpfloat(label, ==, a % 10 == b % 10 ? 1.0 : 0.0);
        same += label == 1.0;
        seen[a]++;
    }
    g_assert_cmpint(same, ==, IMAGES / 2);
    for (int i = 0; i < IMAGES; i++)
        g_assert_cmpint(seen[i], ==, 1); /* every image the first of one pair */
    for (int64_t i = 0; i < 10; i++) /* the test split pairs its own images */
        g_assert_cmpint(image_of(d.test_x[1], i), >=, IMAGES);

    twb_data again, other;
    images_make(&again);
    images_make(&other);
    g_assert_cmpint(twb_pairs_of_classes(&again, 7), ==, 0);
    g_assert_cmpint(twb_pairs_of_classes(&other, 8), ==, 0);
    bool differs = false;
    for (int64_t i = 0; i < IMAGES; i++) {
        g_assert_cmpint(image_of(again.x[0], i), ==, image_of(d.x[0], i));
        g_assert_cmpint(image_of(again.x[1], i), ==, image_of(d.x[1], i));
        differs |= image_of(other.x[0], i) != image_of(d.x[0], i);
    }
    g_assert_true(differs);
    twb_data_clear(&d), twb_data_clear(&again), twb_data_clear(&other);
}

/* The index of the one 1 of x[i, t, :]. */
static int token_at(tw_tensor *x, int64_t i, int64_t t)
{
    int found = -1;
    for (int64_t k = 0; k < tw_tensor_dim(x, 2); k++)
        if (tw_tensor_get(x, (int64_t[]){i, t, k}) == 1) {
            g_assert_cmpint(found, ==, -1);
            found = (int)k;
        }
    g_assert_cmpint(found, >=, 0);
    return found;
}

static void test_reverse_sequences(void)
{
    twb_data d;
    g_assert_cmpint(twb_reverse_sequences(3, &d), ==, 0);
    g_assert_cmpint(d.ninputs, ==, 2);
    g_assert_cmpint(d.classes, ==, TWB_SEQ_TARGET_TOKENS);
    g_assert_cmpint(tw_tensor_dim(d.x[0], 0), ==, TWB_SEQ_TRAIN);
    g_assert_cmpint(tw_tensor_dim(d.test_y, 0), ==, TWB_SEQ_TEST);
    for (int64_t i = 0; i < 5; i++) {
        for (int t = 0; t < TWB_SEQ_TARGET_LEN; t++) {
            int target = (int)tw_tensor_get(d.y, (int64_t[]){i, t});
            int want = t < TWB_SEQ_SOURCE_LEN ? token_at(d.x[0], i, TWB_SEQ_SOURCE_LEN - 1 - t) + 2 : 1;
            g_assert_cmpint(target, ==, want);
            /* the decoder reads the target one step behind a start token */
            g_assert_cmpint(token_at(d.x[1], i, t), ==, t ? (int)tw_tensor_get(d.y, (int64_t[]){i, t - 1}) : 0);
        }
    }
    twb_data_clear(&d);
}

static tw_model *template(const char *name)
{
    char *path = g_build_filename(g_getenv("G_TEST_SRCDIR"), "..", "examples", "models", name, NULL);
    tw_model *model = tw_model_load(path);
    if (!model)
        g_error("%s: %s", path, tw_last_error());
    g_free(path);
    return model;
}

/* The siamese template fits the pairs and takes their 0/1 floats as binary
 * cross-entropy's; other float targets stay mean squared error's. */
static void test_siamese_checks_and_loss(void)
{
    tw_model *model = template("siamese_fashion_mnist.json");
    twb_data d;
    images_make(&d);
    g_assert_cmpint(twb_data_check(model, &d), ==, -1);
    g_assert_nonnull(strstr(tw_last_error(), "takes 2 inputs"));
    g_assert_cmpint(twb_pairs_of_classes(&d, 1), ==, 0);
    if (twb_data_check(model, &d))
        g_error("%s", tw_last_error());
    tw_loss loss;
    g_assert_cmpint(twb_default_loss(model, d.y, &loss), ==, 0);
    g_assert_cmpint(loss.kind, ==, TW_LOSS_BINARY_CROSSENTROPY);
    g_assert_false(loss.from_logits);
    tw_scope_begin();
    g_assert_cmpint(twb_default_loss(model, tw_mul(d.y, tw_scalar(0.5)), &loss), ==, 0);
    tw_scope_end();
    g_assert_cmpint(loss.kind, ==, TW_LOSS_MEAN_SQUARED_ERROR);
    twb_data_clear(&d);
    tw_layer_unref(model);
}

/* The seq2seq template fits the sequences (a class per position); their
 * labels without the positions' axis do not. */
static void test_seq2seq_checks_and_loss(void)
{
    tw_model *model = template("seq2seq_lstm.json");
    twb_data d;
    g_assert_cmpint(twb_reverse_sequences(0, &d), ==, 0);
    if (twb_data_check(model, &d))
        g_error("%s", tw_last_error());
    tw_loss loss;
    g_assert_cmpint(twb_default_loss(model, d.y, &loss), ==, 0);
    g_assert_cmpint(loss.kind, ==, TW_LOSS_SPARSE_CATEGORICAL_CROSSENTROPY);
    tw_scope_begin();
    tw_tensor *first = tw_tensor_ref(tw_reshape(tw_contiguous(tw_slice(d.y, 1, 0, 1, 1)), 1,
                                                (int64_t[]){TWB_SEQ_TRAIN}));
    tw_scope_end();
    tw_tensor_unref(d.y);
    d.y = first;
    g_assert_cmpint(twb_data_check(model, &d), ==, -1);
    g_assert_nonnull(strstr(tw_last_error(), "one class label per example"));
    twb_data_clear(&d);
    tw_layer_unref(model);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/multi-input-data/pairs", test_pairs);
    g_test_add_func("/multi-input-data/reverse-sequences", test_reverse_sequences);
    g_test_add_func("/multi-input-data/siamese-checks-and-loss", test_siamese_checks_and_loss);
    g_test_add_func("/multi-input-data/seq2seq-checks-and-loss", test_seq2seq_checks_and_loss);
    return g_test_run();
}
