/* The window's model templates (examples/models/, listed in the GResource
 * and the window's "New from Template" menu): each opens with Keras'
 * parameter counts (counted by hand below), `twb summary` prints them, and
 * each small one trains for an epoch of 8 random examples through
 * `twb train` (the siamese network's two inputs from two --data files),
 * the seq2seq LSTM an epoch of the built-in reversed sequences.
 * ResNet50 only opens and summarizes here (tests/test_models.c trains it). */
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#include "tw/data.h"
#include "tw/model.h"
#include "tw/model_file.h"

#include "scratch_tree.h"
#include "twb_run.h"

typedef struct {
    const char *name;
    int64_t total, trainable;
    const char *total_text; /* as twb summary prints it */
} template_info;

/* Conv2D k x k: k*k*in*out + out; Conv2DTranspose the same; Dense in*out + out.
 * resnet_fashion_mnist: see tests/test_models.c. unet_small: 80 + 584 (down1)
 * + 1,168 + 2,320 (down2) + 4,640 + 9,248 (bottom) + 2,064 + 4,624 + 2,320
 * (up2) + 520 + 1,160 + 584 (up1) + 9 (mask). siamese: the encoder 160 +
 * 4,640 + 1,056, shared by both inputs, and the head 33. seq2seq_lstm:
 * LSTM 4 * (in * 64 + 64 * 64 + 64), encoder in 20 (21,760), decoder in 24
 * (22,784), and Dense 64 * 24 + 24 (1,560). ResNet50: Keras
 * applications' (tests/test_models.c). */
static const template_info templates[] = {
    {"resnet_fashion_mnist", 515146, 514570, "Total params: 515,146"},
    {"unet_small", 29321, 29321, "Total params: 29,321"},
    {"siamese_fashion_mnist", 5889, 5889, "Total params: 5,889"},
    {"seq2seq_lstm", 46104, 46104, "Total params: 46,104"},
    {"resnet50", 25636712, 25583592, "Total params: 25,636,712"},
};

static char *source_path(const char *a, const char *b, const char *c)
{
    return g_build_filename(g_getenv("G_TEST_SRCDIR"), "..", a, b, c, NULL);
}

static char *template_path(const char *name)
{
    char *file = g_strdup_printf("%s.json", name);
    char *path = source_path("examples", "models", file);
    g_free(file);
    return path;
}

static char *read_text(char *path)
{
    char *text = NULL;
    g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
    g_free(path);
    return text;
}

/* Listed in the GResource and offered by the window's template menu. */
static void test_listed(void)
{
    char *resources = read_text(source_path("resources", "twb.gresource.xml", NULL));
    char *window = read_text(source_path("resources", "window.ui", NULL));
    for (size_t t = 0; t < G_N_ELEMENTS(templates); t++) {
        char *alias = g_strdup_printf("alias=\"templates/%s.json\"", templates[t].name);
        char *target = g_strdup_printf("<attribute name=\"target\">%s</attribute>", templates[t].name);
        g_assert_nonnull(strstr(resources, alias));
        g_assert_nonnull(strstr(window, target));
        g_free(alias), g_free(target);
    }
    g_free(resources), g_free(window);
}

static void test_counts(void)
{
    for (size_t t = 0; t < G_N_ELEMENTS(templates); t++) {
        char *path = template_path(templates[t].name);
        tw_model *model = tw_model_load(path);
        if (!model)
            g_error("%s: %s", path, tw_last_error());
        int64_t total = 0, trainable = 0, frozen = 0;
        g_assert_cmpint(tw_model_count_params(model, &total, &trainable, &frozen), ==, 0);
        g_assert_cmpint(total, ==, templates[t].total);
        g_assert_cmpint(trainable, ==, templates[t].trainable);
        tw_layer_unref(model);

        twb_run run = run_twb("summary", path, NULL);
        g_assert_cmpint(run.exit_status, ==, 0);
        g_assert_nonnull(strstr(run.out, templates[t].total_text));
        twb_run_clear(&run);
        g_free(path);
    }
}

typedef struct {
    char *dir, *images, *classes, *masks;
} data_files;

/* 8 random 28x28x1 images, a class (0..9) and a random 0/1 mask for each. */
static void data_files_make(data_files *d)
{
    d->dir = g_dir_make_tmp("twb-templates-XXXXXX", NULL);
    g_assert_nonnull(d->dir);
    d->images = g_build_filename(d->dir, "images.npy", NULL);
    d->classes = g_build_filename(d->dir, "classes.npy", NULL);
    d->masks = g_build_filename(d->dir, "masks.npy", NULL);
    tw_rng *rng = tw_rng_new(3);
    tw_scope_begin();
    tw_tensor *x = tw_random_uniform(rng, TW_FLOAT32, TW_SHAPE(8, 28, 28, 1), 0, 1);
    tw_tensor *y = tw_cast(tw_random_uniform(rng, TW_FLOAT32, TW_SHAPE(8), 0, 10), TW_INT32);
    tw_tensor *mask = tw_cast(tw_greater(tw_random_uniform(rng, TW_FLOAT32, TW_SHAPE(8, 28, 28, 1), 0, 1),
                                         tw_scalar(0.5)),
                              TW_FLOAT32);
    g_assert_cmpint(tw_npy_save(d->images, x), ==, 0);
    g_assert_cmpint(tw_npy_save(d->classes, y), ==, 0);
    g_assert_cmpint(tw_npy_save(d->masks, mask), ==, 0);
    tw_scope_end();
    tw_rng_free(rng);
}

static void data_files_clear(data_files *d)
{
    scratch_remove_tree(d->dir);
    g_free(d->dir), g_free(d->images), g_free(d->classes), g_free(d->masks);
}

/* twb train's last JSON line's loss: finite. */
static void train_one_epoch(const char *name, const char *labels, const char *loss)
{
    char *path = template_path(name);
    data_files d;
    data_files_make(&d);
    const char *args[] = {"train", path, "--data", d.images, "--labels", strcmp(labels, "masks") ? d.classes : d.masks,
                          "--epochs", "1", "--batch-size", "8", "--loss", loss, "--json", NULL};
    twb_run run = run_twb_argv(args);
    if (run.exit_status != 0)
        g_error("twb train %s: %s", name, run.err);
    const char *result = strstr(run.out, "{\"");
    g_assert_nonnull(result);
    const char *at = strstr(result, "\"loss\":");
    g_assert_nonnull(at);
    double value = g_ascii_strtod(at + strlen("\"loss\":"), NULL);
    g_test_message("%s: loss %g after one step", name, value);
    g_assert_true(isfinite(value) && value > 0);
    twb_run_clear(&run);
    data_files_clear(&d);
    g_free(path);
}

static void test_train_resnet(void)
{
    train_one_epoch("resnet_fashion_mnist", "classes", "sparse_categorical_crossentropy");
}

static void test_train_unet(void)
{
    train_one_epoch("unet_small", "masks", "binary_crossentropy");
}

/* The last JSON line's value of key (finite), from twb train --json. */
static double json_value(const twb_run *run, const char *key)
{
    const char *result = strstr(run->out, "{\"");
    g_assert_nonnull(result);
    char *quoted = g_strdup_printf("\"%s\":", key);
    const char *at = strstr(result, quoted);
    if (!at)
        g_error("no %s in %s", quoted, result);
    double value = g_ascii_strtod(at + strlen(quoted), NULL);
    g_free(quoted);
    g_assert_true(isfinite(value));
    return value;
}

/* Pairs of 8 random images and whether they are "the same" (0.0 or 1.0). */
static void pair_files_make(data_files *d, char **second, char **same, int64_t second_count)
{
    data_files_make(d);
    *second = g_build_filename(d->dir, "second.npy", NULL);
    *same = g_build_filename(d->dir, "same.npy", NULL);
    tw_rng *rng = tw_rng_new(5);
    tw_scope_begin();
    tw_tensor *b = tw_random_uniform(rng, TW_FLOAT32, TW_SHAPE(second_count, 28, 28, 1), 0, 1);
    tw_tensor *y = tw_cast(tw_greater(tw_random_uniform(rng, TW_FLOAT32, TW_SHAPE(8, 1), 0, 1), tw_scalar(0.5)),
                           TW_FLOAT32);
    g_assert_cmpint(tw_npy_save(*second, b), ==, 0);
    g_assert_cmpint(tw_npy_save(*same, y), ==, 0);
    tw_scope_end();
    tw_rng_free(rng);
}

/* twb train feeds the siamese network's two inputs from two --data files,
 * as Keras' fit([x1, x2], y): an epoch of 8 pairs, its 0/1 labels taken as
 * binary cross-entropy's (accuracy logged). One file, or files of other
 * lengths, are refused naming what to give. */
static void test_train_siamese(void)
{
    char *path = template_path("siamese_fashion_mnist");
    data_files d;
    char *second, *same;
    pair_files_make(&d, &second, &same, 8);
    twb_run run = run_twb("train", path, "--data", d.images, "--data", second, "--labels", same, "--epochs", "1",
                          "--batch-size", "8", "--json", NULL);
    if (run.exit_status != 0)
        g_error("twb train siamese: %s", run.err);
    double loss = json_value(&run, "loss"), accuracy = json_value(&run, "accuracy");
    g_test_message("siamese: loss %g, accuracy %g after one step", loss, accuracy);
    g_assert_cmpfloat(loss, >, 0);
    g_assert_true(accuracy >= 0 && accuracy <= 1);
    twb_run_clear(&run);

    run = run_twb("train", path, "--data", d.images, "--labels", same, "--epochs", "1", NULL);
    g_assert_cmpint(run.exit_status, !=, 0);
    g_assert_nonnull(strstr(run.err, "model 'siamese_fashion_mnist' takes 2 inputs, got 1 --data file: give --data "
                                     "once per input, in the model's input order"));
    twb_run_clear(&run);

    run = run_twb("train", path, "--data", d.images, "--data", second, "--data", second, "--labels", same, NULL);
    g_assert_cmpint(run.exit_status, !=, 0);
    g_assert_nonnull(strstr(run.err, "takes 2 inputs, got 3 --data files"));
    twb_run_clear(&run);

    run = run_twb("train", path, "--data", "fashion-mnist-pairs", "--data", second, "--labels", same, NULL);
    g_assert_cmpint(run.exit_status, !=, 0);
    g_assert_nonnull(strstr(run.err, "a built-in set gives every input itself"));
    twb_run_clear(&run);
    data_files_clear(&d);
    g_free(second), g_free(same);

    pair_files_make(&d, &second, &same, 7);
    run = run_twb("train", path, "--data", d.images, "--data", second, "--labels", same, NULL);
    g_assert_cmpint(run.exit_status, !=, 0);
    g_test_message("%s", run.err);
    char *counts = g_strdup_printf("%s has 8, %s has 7, the labels (%s) 8", d.images, second, same);
    g_assert_nonnull(strstr(run.err, counts));
    g_free(counts);
    twb_run_clear(&run);
    data_files_clear(&d);
    g_free(second), g_free(same);
    g_free(path);
}

/* The siamese network on the built-in Fashion-MNIST pairs: one epoch of
 * 60,000 pairs is too long here, so the pairs only have to be offered:
 * a single image set names them. */
static void test_train_siamese_names_pairs(void)
{
    if (!g_file_test("/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz", G_FILE_TEST_EXISTS)) {
        g_test_skip("Fashion-MNIST is not installed (apt install dataset-fashion-mnist)");
        return;
    }
    char *path = template_path("siamese_fashion_mnist");
    twb_run run = run_twb("train", path, "--data", "fashion-mnist", "--epochs", "1", NULL);
    g_assert_cmpint(run.exit_status, !=, 0);
    g_assert_nonnull(strstr(run.err, "takes 2 inputs; Fashion-MNIST (60000 train, 10000 test) gives 1: choose "
                                     "Fashion-MNIST pairs (fashion-mnist-pairs)"));
    twb_run_clear(&run);
    g_free(path);
}

/* The seq2seq LSTM on the built-in reversed sequences (encoder: a
 * one-hot sequence; decoder: the target shifted behind a start token;
 * target: a class per position): an epoch, whose integer labels of a class
 * per position get sparse categorical cross-entropy, and the test accuracy
 * beats always answering the end token (2 of the 12 positions). */
static void test_train_seq2seq(void)
{
    char *path = template_path("seq2seq_lstm");
    twb_run run = run_twb("train", path, "--data", "reverse-sequences", "--epochs", "1", "--json", NULL);
    if (run.exit_status != 0)
        g_error("twb train seq2seq: %s", run.err);
    double loss = json_value(&run, "test_loss"), accuracy = json_value(&run, "test_accuracy");
    g_test_message("seq2seq: test loss %g, test accuracy %g after an epoch", loss, accuracy);
    g_assert_cmpfloat(accuracy, >, 2.0 / 12);
    twb_run_clear(&run);
    g_free(path);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/templates/listed", test_listed);
    g_test_add_func("/templates/counts", test_counts);
    g_test_add_func("/templates/train-resnet", test_train_resnet);
    g_test_add_func("/templates/train-unet", test_train_unet);
    g_test_add_func("/templates/train-siamese", test_train_siamese);
    g_test_add_func("/templates/train-siamese-names-pairs", test_train_siamese_names_pairs);
    g_test_add_func("/templates/train-seq2seq", test_train_seq2seq);
    return g_test_run();
}
