/* The example models of examples/models/ that are too big for the engine and
 * data suites (which also run under valgrind): ResNet50 opens with Keras'
 * parameter counts and takes a training step; the residual Fashion-MNIST
 * template opens with its hand-counted parameters. Suite 'models'. */
#include <math.h>
#include <stdlib.h>

#include <glib.h>
#include <tw/engine.h>
#include <tw/model.h>
#include <tw/model_file.h>

static tw_model *load_example(const char *file)
{
    char *path = g_build_filename(g_getenv("G_TEST_SRCDIR"), "..", "examples", "models", file, NULL);
    tw_model *model = tw_model_load(path);
    if (!model)
        g_test_message("%s: %s", path, tw_last_error());
    g_free(path);
    return model;
}

/* Keras applications' ResNet50 as Keras' summary counts it: every conv has a
 * bias, BatchNormalization's moving statistics are the non-trainable part. */
static void test_resnet50_counts(void)
{
    tw_model *model = load_example("resnet50.json");
    g_assert_nonnull(model);
    int64_t total = 0, trainable = 0, non_trainable = 0;
    g_assert_cmpint(tw_model_count_params(model, &total, &trainable, &non_trainable), ==, 0);
    g_assert_cmpint(total, ==, 25636712);
    g_assert_cmpint(trainable, ==, 25583592);
    g_assert_cmpint(non_trainable, ==, 53120);
    g_assert_cmpint(tw_model_nlayers(model), ==, 177);
    tw_layer_unref(model);
}

/* One SGD step on 8 random 224x224x3 images: a finite loss near ln(1000)
 * (softmax over 1000 classes at initialization), and the weights move. */
static void test_resnet50_train_step(void)
{
    tw_model *model = load_example("resnet50.json");
    g_assert_nonnull(model);
    tw_loss loss = tw_loss_default(TW_LOSS_SPARSE_CATEGORICAL_CROSSENTROPY);
    g_assert_cmpint(tw_model_compile(model, tw_optimizer_new_named("sgd", 0.01), &loss, 0, NULL), ==, 0);

    tw_rng *rng = tw_rng_new(7);
    tw_scope_begin();
    tw_tensor *x = tw_tensor_ref(tw_random_uniform(rng, TW_FLOAT32, TW_SHAPE(8, 224, 224, 3), 0, 1));
    tw_tensor *y = tw_tensor_ref(tw_cast(tw_random_uniform(rng, TW_FLOAT32, TW_SHAPE(8), 0, 1000), TW_INT32));
    tw_scope_end();
    tw_rng_free(rng);

    tw_logs logs = {0};
    int rc = tw_model_train_on_batch(model, x, y, &logs);
    if (rc != 0)
        g_test_message("train_on_batch: %s", tw_last_error());
    g_assert_cmpint(rc, ==, 0);
    double value = tw_logs_get(&logs, "loss");
    g_test_message("loss %g", value);
    g_assert_true(isfinite(value));
    /* Random inputs through untrained BatchNormalized blocks: the softmax is
     * far from peaked, so the loss stays within a few units of ln(1000). */
    g_assert_cmpfloat(value, >, 1.0);
    g_assert_cmpfloat(value, <, 30.0);

    /* The predictions layer's bias starts at zero (Zeros, the file's
     * bias_initializer) and its gradient, softmax minus one-hot averaged
     * over the batch, is never zero: the step moved it. The weights exist
     * once the model has been called; the bias is the last of them. */
    tw_variables vars = tw_model_trainable_variables(model);
    g_assert_cmpint(vars.n, ==, 53 * 4 + 2); /* conv kernel, bias, BN gamma, beta; the Dense's */
    const tw_tensor *bias = vars.items[vars.n - 1];
    g_assert_cmpint(tw_tensor_numel(bias), ==, 1000);
    float after[1000];
    g_assert_cmpint(tw_tensor_copy_to(bias, after, sizeof after), ==, 0);
    int moved = 0;
    for (int i = 0; i < 1000; i++)
        moved += after[i] != 0;
    g_assert_cmpint(moved, ==, 1000);

    tw_tensor_unref(x);
    tw_tensor_unref(y);
    tw_layer_unref(model);
}

/* The residual Fashion-MNIST template, counted by hand: conv1 3*3*1*32+32,
 * block1 two 3*3*32*32+32, conv2 3*3*32*64+64, block2 two 3*3*64*64+64,
 * fc 7*7*64*128+128, predictions 128*10+10, and six BatchNormalizations over
 * 32, 32, 32, 64, 64, 64 channels (4 numbers each, half of them trainable). */
static void test_resnet_fashion_mnist_counts(void)
{
    tw_model *model = load_example("resnet_fashion_mnist.json");
    g_assert_nonnull(model);
    int64_t total = 0, trainable = 0, non_trainable = 0;
    g_assert_cmpint(tw_model_count_params(model, &total, &trainable, &non_trainable), ==, 0);
    int64_t convs = (9 * 1 * 32 + 32) + 2 * (9 * 32 * 32 + 32) + (9 * 32 * 64 + 64) + 2 * (9 * 64 * 64 + 64);
    int64_t dense = (7 * 7 * 64 * 128 + 128) + (128 * 10 + 10);
    int64_t bn_channels = 3 * 32 + 3 * 64;
    g_assert_cmpint(trainable, ==, convs + dense + 2 * bn_channels);
    g_assert_cmpint(non_trainable, ==, 2 * bn_channels);
    g_assert_cmpint(total, ==, trainable + non_trainable);
    tw_layer_unref(model);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/models/resnet50/counts", test_resnet50_counts);
    g_test_add_func("/models/resnet50/train-step", test_resnet50_train_step);
    g_test_add_func("/models/resnet-fashion-mnist/counts", test_resnet_fashion_mnist_counts);
    return g_test_run();
}
