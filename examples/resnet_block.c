/* A residual block with Keras' functional API, in C:
 *
 *     inputs = keras.Input(shape=(8, 8, 3))
 *     x = layers.Conv2D(16, 3, padding="same", activation="relu")(inputs)
 *     y = layers.Conv2D(16, 3, padding="same", activation="relu")(x)
 *     y = layers.Conv2D(16, 3, padding="same")(y)
 *     x = layers.Activation("relu")(layers.Add()([x, y]))
 *     outputs = layers.Dense(2, activation="softmax")(layers.GlobalAveragePooling2D()(x))
 *     model = keras.Model(inputs, outputs, name="resnet_block")
 *
 * It prints the summary, then fits the model to tell images whose red
 * channel is brighter than their green one from the others, and checks the
 * validation accuracy rises well above chance. Exit status 1 if anything is off. */
#include <stdio.h>
#include <stdlib.h>

#include <tw/engine.h>
#include <tw/model.h>

static tw_layer *conv(int64_t filters, const char *activation)
{
    tw_layer *c = tw_conv2d_layer(filters, 3, activation);
    tw_layer_set(c, "padding", "same");
    return c;
}

static tw_layer *layer(const char *class_name, const char *key, const char *value)
{
    tw_layer *l = tw_layer_new(class_name, NULL);
    if (l && key)
        tw_layer_set(l, key, value);
    return l;
}

static tw_model *resnet_block(void)
{
    tw_node *inputs = tw_input("image", TW_SHAPE(8, 8, 3));
    tw_node *x = tw_apply(conv(16, "relu"), inputs);
    tw_node *y = tw_apply(conv(16, "relu"), x);
    y = tw_apply(conv(16, NULL), y);
    x = tw_apply(layer("Activation", "activation", "relu"), tw_apply_n(layer("Add", NULL, NULL), 2, (tw_node *[]){x, y}));
    x = tw_apply(layer("GlobalAveragePooling2D", NULL, NULL), x);
    tw_node *outputs = tw_apply(tw_dense(2, "softmax"), x);
    tw_model *model = tw_functional_new("resnet_block", 1, &inputs, 1, &outputs);
    tw_nodes_clear();
    return model;
}

/* n images of noise, label 1 where channel 0 is brighter than channel 1. */
static void make_data(int64_t n, tw_tensor **x, tw_tensor **y)
{
    tw_scope_begin();
    tw_rng *rng = tw_rng_new(1);
    tw_tensor *images = tw_random_normal(rng, TW_FLOAT32, TW_SHAPE(n, 8, 8, 3), 0, 1);
    tw_tensor *red = tw_mean(tw_slice(images, 3, 0, 1, 1), 3, (int[]){1, 2, 3}, false);
    tw_tensor *green = tw_mean(tw_slice(images, 3, 1, 2, 1), 3, (int[]){1, 2, 3}, false);
    *x = tw_tensor_ref(images);
    *y = tw_tensor_ref(tw_cast(tw_greater(red, green), TW_INT32));
    tw_rng_free(rng);
    tw_scope_end();
}

int main(void)
{
    tw_model *model = resnet_block();
    if (!model) {
        fprintf(stderr, "resnet_block: %s\n", tw_last_error());
        return 1;
    }
    char *summary = tw_model_summary(model, 0);
    printf("%s", summary);
    free(summary);

    tw_loss loss = tw_loss_default(TW_LOSS_SPARSE_CATEGORICAL_CROSSENTROPY);
    const char *metrics[] = {"accuracy"};
    tw_model_compile(model, tw_optimizer_new_named("adam", 0.01), &loss, 1, metrics);
    tw_tensor *x, *y;
    make_data(512, &x, &y);
    tw_fit_options opt = tw_fit_options_default();
    opt.epochs = 6;
    opt.seed = 2;
    opt.validation_split = 0.25;
    tw_history *h = tw_model_fit(model, x, y, &opt);
    int status = 1;
    if (!h) {
        fprintf(stderr, "resnet_block: %s\n", tw_last_error());
    } else {
        for (int e = 0; e < h->epochs; e++)
            printf("epoch %d: loss %.4f, accuracy %.3f, val_accuracy %.3f\n", e + 1,
                   tw_logs_get(&h->epoch_logs[e], "loss"), tw_logs_get(&h->epoch_logs[e], "accuracy"),
                   tw_logs_get(&h->epoch_logs[e], "val_accuracy"));
        double acc = tw_logs_get(&h->epoch_logs[h->epochs - 1], "val_accuracy");
        status = acc > 0.75 ? 0 : 1;
        if (status)
            fprintf(stderr, "resnet_block: validation accuracy %.3f, expected above 0.75\n", acc);
    }
    tw_history_free(h);
    tw_tensor_unref(x);
    tw_tensor_unref(y);
    tw_layer_unref(model);
    return status;
}
