/* The window's model templates (examples/models/, listed in the GResource
 * and the window's "New from Template" menu): each opens with Keras'
 * parameter counts (counted by hand below), `twb summary` prints them, and
 * each small one trains for an epoch of 8 random examples through
 * `twb train` — except the siamese network and the seq2seq LSTM, whose
 * two inputs `twb train` does not feed (it says so), trained through the
 * engine instead.
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
    {"resnet_fashion_mnist", 230634, 230346, "Total params: 230,634"},
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

/* twb train feeds one input; it refuses the siamese network's two clearly,
 * and the engine trains it a step on pairs. */
static void test_train_siamese(void)
{
    char *path = template_path("siamese_fashion_mnist");
    data_files d;
    data_files_make(&d);
    twb_run run = run_twb("train", path, "--data", d.images, "--labels", d.classes, "--epochs", "1", NULL);
    g_assert_cmpint(run.exit_status, !=, 0);
    g_assert_nonnull(strstr(run.err, "takes 2 inputs"));
    twb_run_clear(&run);
    data_files_clear(&d);

    tw_model *model = tw_model_load(path);
    g_assert_nonnull(model);
    tw_loss loss = tw_loss_default(TW_LOSS_BINARY_CROSSENTROPY);
    g_assert_cmpint(tw_model_compile(model, tw_optimizer_new_named("adam", 0.001), &loss, 0, NULL), ==, 0);
    tw_rng *rng = tw_rng_new(5);
    tw_scope_begin();
    tw_tensor *x[2] = {tw_tensor_ref(tw_random_uniform(rng, TW_FLOAT32, TW_SHAPE(8, 28, 28, 1), 0, 1)),
                       tw_tensor_ref(tw_random_uniform(rng, TW_FLOAT32, TW_SHAPE(8, 28, 28, 1), 0, 1))};
    tw_tensor *y = tw_tensor_ref(tw_cast(tw_greater(tw_random_uniform(rng, TW_FLOAT32, TW_SHAPE(8, 1), 0, 1),
                                                    tw_scalar(0.5)),
                                         TW_FLOAT32));
    tw_scope_end();
    tw_rng_free(rng);
    tw_logs logs = {0};
    int rc = tw_model_train_on_batch_n(model, 2, x, 1, &y, &logs);
    if (rc != 0)
        g_error("train_on_batch_n: %s", tw_last_error());
    double value = tw_logs_get(&logs, "loss");
    g_test_message("siamese: loss %g after one step", value);
    g_assert_true(isfinite(value) && value > 0);
    tw_tensor_unref(x[0]), tw_tensor_unref(x[1]), tw_tensor_unref(y);
    tw_layer_unref(model);
    g_free(path);
}

/* The seq2seq LSTM: the encoder's final states start the decoder; two
 * inputs, so (as the siamese network) a few steps through the engine on
 * random sequences and next-token classes, and the loss goes down. */
static void test_train_seq2seq(void)
{
    char *path = template_path("seq2seq_lstm");
    tw_model *model = tw_model_load(path);
    g_assert_nonnull(model);
    tw_loss loss = tw_loss_default(TW_LOSS_SPARSE_CATEGORICAL_CROSSENTROPY);
    g_assert_cmpint(tw_model_compile(model, tw_optimizer_new_named("adam", 0.01), &loss, 0, NULL), ==, 0);
    tw_rng *rng = tw_rng_new(7);
    tw_scope_begin();
    tw_tensor *x[2] = {tw_tensor_ref(tw_random_uniform(rng, TW_FLOAT32, TW_SHAPE(8, 10, 20), 0, 1)),
                       tw_tensor_ref(tw_random_uniform(rng, TW_FLOAT32, TW_SHAPE(8, 12, 24), 0, 1))};
    tw_tensor *y = tw_tensor_ref(tw_cast(tw_random_uniform(rng, TW_FLOAT32, TW_SHAPE(8, 12), 0, 24), TW_INT32));
    tw_scope_end();
    tw_rng_free(rng);
    double first = NAN, last = NAN;
    for (int step = 0; step < 5; step++) {
        tw_logs logs = {0};
        if (tw_model_train_on_batch_n(model, 2, x, 1, &y, &logs) != 0)
            g_error("train_on_batch_n: %s", tw_last_error());
        last = tw_logs_get(&logs, "loss");
        if (step == 0)
            first = last;
    }
    g_test_message("seq2seq: loss %g, then %g after five steps", first, last);
    g_assert_true(isfinite(first) && isfinite(last) && last < first);
    tw_tensor_unref(x[0]), tw_tensor_unref(x[1]), tw_tensor_unref(y);
    tw_layer_unref(model);
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
    g_test_add_func("/templates/train-seq2seq", test_train_seq2seq);
    return g_test_run();
}
