/* Training Functional models: two inputs and two outputs with per-output
 * losses, loss_weights and metrics as Keras' compile has them; the traced
 * step against the eager one; a resumed fit against an uninterrupted one;
 * gradients through shared layers and nested models by finite
 * differences; the summary's Functional form. */
#include <math.h>
#include <string.h>

#include <glib.h>

#include "gradcheck.h"
#include "tw/model.h"

/* x1 (n, 3), x2 (n, 2); y1 = a regression target, y2 = a class in {0, 1}. */
static void data(int64_t n, tw_tensor **x1, tw_tensor **x2, tw_tensor **y1, tw_tensor **y2)
{
    tw_scope_begin();
    tw_rng *rng = tw_rng_new(4);
    tw_tensor *a = tw_random_normal(rng, TW_FLOAT32, TW_SHAPE(n, 3), 0, 1);
    tw_tensor *b = tw_random_normal(rng, TW_FLOAT32, TW_SHAPE(n, 2), 0, 1);
    tw_tensor *s = tw_sum(a, 1, (int[]){1}, true);
    *x1 = tw_tensor_ref(a);
    *x2 = tw_tensor_ref(b);
    *y1 = tw_tensor_ref(tw_add(s, tw_sum(b, 1, (int[]){1}, true)));
    *y2 = tw_tensor_ref(tw_cast(tw_greater(s, tw_scalar_of(0, TW_FLOAT32)), TW_FLOAT32));
    tw_rng_free(rng);
    tw_scope_end();
}

/* Two inputs, two heads; with Dropout (which cannot be traced yet) the
 * step's randomness is exercised. */
static tw_model *two_heads(double dropout)
{
    tw_node *a = tw_input("a", TW_SHAPE(3));
    tw_node *b = tw_input("b", TW_SHAPE(2));
    tw_layer *shared = tw_dense(8, "tanh");
    tw_layer_set_name(shared, "shared");
    tw_node *h = tw_apply_n(tw_layer_new("Concatenate", NULL), 2,
                            (tw_node *[]){tw_apply(tw_layer_ref(shared), a), tw_apply(tw_dense(8, "tanh"), b)});
    if (dropout > 0)
        h = tw_apply(tw_dropout_layer(dropout), h);
    tw_layer *reg = tw_dense(1, NULL), *cls = tw_dense(1, "sigmoid");
    tw_layer_set_name(reg, "value");
    tw_layer_set_name(cls, "label");
    tw_node *y1 = tw_apply(reg, h), *y2 = tw_apply(cls, h);
    tw_layer_unref(shared);
    tw_model *m = tw_functional_new("heads", 2, (tw_node *[]){a, b}, 2, (tw_node *[]){y1, y2});
    tw_nodes_clear();
    g_assert_nonnull(m);
    return m;
}

static void compile(tw_model *m, const double *weights)
{
    tw_loss losses[2] = {tw_loss_default(TW_LOSS_MEAN_SQUARED_ERROR), tw_loss_default(TW_LOSS_BINARY_CROSSENTROPY)};
    const char *metrics[] = {"accuracy"};
    tw_compile_options o = {.nlosses = 2, .losses = losses, .loss_weights = weights, .nmetrics = 1, .metrics = metrics};
    g_assert_cmpint(tw_model_compile_n(m, tw_optimizer_new_named("adam", 0.01), &o), ==, 0);
}

static void test_compile_semantics(void)
{
    tw_tensor *x1, *x2, *y1, *y2;
    data(64, &x1, &x2, &y1, &y2);
    tw_model *m = two_heads(0.1);
    compile(m, (double[]){1, 0.5});
    g_assert_cmpint(tw_model_build(m, NULL, 2), ==, 0);
    tw_logs logs;
    g_assert_cmpint(tw_model_test_on_batch_n(m, 2, (tw_tensor *[]){x1, x2}, 2, (tw_tensor *[]){y1, y2}, &logs), ==, 0);
    /* The total is the weighted sum; each output has its loss and metric. */
    double l1 = tw_logs_get(&logs, "value_loss"), l2 = tw_logs_get(&logs, "label_loss");
    g_assert_false(isnan(l1) || isnan(l2));
    g_assert_cmpfloat_with_epsilon(tw_logs_get(&logs, "loss"), l1 + 0.5 * l2, 1e-5);
    g_assert_false(isnan(tw_logs_get(&logs, "value_accuracy")));
    g_assert_false(isnan(tw_logs_get(&logs, "label_accuracy")));
    /* The same losses by hand from the predictions. */
    tw_scope_begin();
    tw_tensor *out[TW_MAX_LAYER_IO];
    g_assert_cmpint(tw_model_call_n(m, 2, (tw_tensor *[]){x1, x2}, out, false), ==, 2);
    tw_loss mse = tw_loss_default(TW_LOSS_MEAN_SQUARED_ERROR), bce = tw_loss_default(TW_LOSS_BINARY_CROSSENTROPY);
    g_assert_cmpfloat_with_epsilon(tw_tensor_item(tw_loss_compute(&mse, y1, out[0])), l1, 1e-5);
    g_assert_cmpfloat_with_epsilon(tw_tensor_item(tw_loss_compute(&bce, y2, out[1])), l2, 1e-5);
    tw_scope_end();
    /* predict_n gives both outputs over batches. */
    tw_scope_begin();
    g_assert_cmpint(tw_model_predict_n(m, 2, (tw_tensor *[]){x1, x2}, 10, out), ==, 2);
    g_assert_cmpint(tw_tensor_dim(out[0], 0), ==, 64);
    g_assert_cmpint(tw_tensor_dim(out[1], 1), ==, 1);
    g_assert_null(tw_model_predict(m, x1, 10));
    tw_scope_end();
    /* Validation data of several tensors: val_ logs per output. */
    tw_fit_options opt = tw_fit_options_default();
    opt.validation_inputs = (tw_tensor *[]){x1, x2};
    opt.validation_targets = (tw_tensor *[]){y1, y2};
    tw_history *h = tw_model_fit_n(m, 2, (tw_tensor *[]){x1, x2}, 2, (tw_tensor *[]){y1, y2}, &opt);
    g_assert_nonnull(h);
    g_assert_false(isnan(tw_logs_get(&h->epoch_logs[0], "val_loss")));
    g_assert_false(isnan(tw_logs_get(&h->epoch_logs[0], "val_label_accuracy")));
    tw_history_free(h);
    /* Counts that do not fit are refused. */
    g_assert_cmpint(tw_model_evaluate_n(m, 1, &x1, 2, (tw_tensor *[]){y1, y2}, 8, NULL), ==, -1);
    g_assert_cmpstr(tw_last_error(), ==, "evaluate: model 'heads' takes 2 inputs and 2 targets, got 1 and 2");
    tw_loss three[3] = {0};
    tw_compile_options bad = {.nlosses = 3, .losses = three};
    g_assert_cmpint(tw_model_compile_n(m, tw_optimizer_new_named("sgd", 0.1), &bad), ==, -1);
    g_assert_cmpstr(tw_last_error(), ==,
                    "compile: model 'heads' has 2 outputs; give one loss for all or one per output, got 3");
    tw_layer_unref(m);
    tw_tensor_unref(x1);
    tw_tensor_unref(x2);
    tw_tensor_unref(y1);
    tw_tensor_unref(y2);
}

static tw_history *fit(tw_model *m, tw_tensor *const *x, tw_tensor *const *y, tw_trace_mode mode, int epochs,
                       int initial_epoch, const tw_callback *cb)
{
    tw_fit_options opt = tw_fit_options_default();
    opt.epochs = epochs;
    opt.initial_epoch = initial_epoch;
    opt.seed = 7;
    opt.batch_size = 16;
    opt.traced = mode;
    opt.validation_split = 0.25;
    opt.ncallbacks = cb ? 1 : 0;
    opt.callbacks = cb;
    return tw_model_fit_n(m, 2, x, 2, y, &opt);
}

static int stop_after_epoch(tw_model *model, const tw_progress *p, const tw_logs *logs, void *data)
{
    (void)model;
    (void)p;
    (void)logs;
    (void)data;
    return 1;
}

/* Eager and traced steps give the same losses; a fit stopped after one
 * epoch and resumed gives the same last epoch as one that never stopped. */
static void test_fit_traced_and_resumed(void)
{
    tw_tensor *x1, *x2, *y1, *y2;
    data(128, &x1, &x2, &y1, &y2);
    tw_tensor *x[2] = {x1, x2}, *y[2] = {y1, y2};
    tw_history *h[3];
    tw_model *m[3];
    for (int i = 0; i < 3; i++) {
        m[i] = two_heads(i < 2 ? 0 : 0.2);
        compile(m[i], (double[]){1, 0.5});
        g_assert_cmpint(tw_model_build(m[i], NULL, 3), ==, 0);
    }
    h[0] = fit(m[0], x, y, TW_TRACE_OFF, 3, 0, NULL);
    h[1] = fit(m[1], x, y, TW_TRACE_ON, 3, 0, NULL);
    g_assert_nonnull(h[0]);
    g_assert_nonnull(h[1]);
    g_assert_nonnull(tw_model_train_step_graph(m[1]));
    const char *keys[] = {"loss", "value_loss", "label_loss", "label_accuracy", "val_loss", "val_label_loss"};
    for (int e = 0; e < 3; e++)
        for (size_t k = 0; k < G_N_ELEMENTS(keys); k++)
            g_assert_cmpfloat_with_epsilon(tw_logs_get(&h[0]->epoch_logs[e], keys[k]),
                                           tw_logs_get(&h[1]->epoch_logs[e], keys[k]), 1e-4);
    g_assert_cmpfloat(tw_logs_get(&h[0]->epoch_logs[2], "loss"), <, tw_logs_get(&h[0]->epoch_logs[0], "loss"));
    /* With Dropout: 3 epochs at once against 1, then 2 resumed. */
    tw_model *whole = two_heads(0.2);
    compile(whole, NULL);
    g_assert_cmpint(tw_model_build(whole, NULL, 3), ==, 0);
    tw_history *all = fit(whole, x, y, TW_TRACE_OFF, 3, 0, NULL);
    compile(m[2], NULL);
    tw_callback stop = {.on_epoch_end = stop_after_epoch};
    tw_history *first = fit(m[2], x, y, TW_TRACE_OFF, 3, 0, &stop);
    g_assert_cmpint(first->epochs, ==, 1);
    h[2] = fit(m[2], x, y, TW_TRACE_OFF, 3, first->resume_epoch, NULL);
    g_assert_cmpint(h[2]->epochs, ==, 2);
    g_assert_cmpfloat(tw_logs_get(&all->epoch_logs[2], "loss"), ==, tw_logs_get(&h[2]->epoch_logs[1], "loss"));
    tw_history_free(all);
    tw_history_free(first);
    tw_layer_unref(whole);
    for (int i = 0; i < 3; i++) {
        tw_history_free(h[i]);
        tw_layer_unref(m[i]);
    }
    tw_tensor_unref(x1);
    tw_tensor_unref(x2);
    tw_tensor_unref(y1);
    tw_tensor_unref(y2);
}

/* d/d(inputs and weights) of a model with a shared layer inside a nested
 * model, in float64, against central differences. */
typedef struct {
    tw_model *model;
} grad_case;

static tw_tensor *call_model(tw_tensor *const *inputs, void *data)
{
    grad_case *c = data;
    tw_tensor *out[TW_MAX_LAYER_IO];
    if (tw_model_call_n(c->model, 2, inputs, out, false) != 2)
        return NULL;
    return tw_add(tw_sum_all(out[0]), tw_sum_all(tw_square(out[1])));
}

static void test_gradients(void)
{
    tw_node *p = tw_input("p", TW_SHAPE(3));
    tw_layer *shared = tw_dense(3, "tanh");
    tw_node *q = tw_apply_n(tw_layer_new("Multiply", NULL), 2,
                            (tw_node *[]){tw_apply(tw_layer_ref(shared), p), tw_apply(tw_layer_ref(shared), tw_apply(tw_layer_ref(shared), p))});
    tw_model *inner = tw_functional_new("inner", 1, &p, 1, &q);
    tw_node *a = tw_input("a", TW_SHAPE(3)), *b = tw_input("b", TW_SHAPE(3));
    tw_node *ia = tw_apply(tw_layer_ref(inner), a), *ib = tw_apply(inner, b);
    tw_node *d = tw_apply_n(tw_layer_new("Dot", NULL), 2, (tw_node *[]){ia, ib});
    tw_node *s = tw_apply_n(tw_layer_new("Subtract", NULL), 2, (tw_node *[]){ia, tw_apply(tw_dense(3, NULL), ib)});
    tw_model *m = tw_functional_new("siamese", 2, (tw_node *[]){a, b}, 2, (tw_node *[]){d, s});
    tw_nodes_clear();
    g_assert_nonnull(m);
    tw_layer_set_dtype(m, TW_FLOAT64);
    g_assert_cmpint(tw_model_build(m, NULL, 5), ==, 0);
    g_assert_cmpint(tw_model_trainable_variables(m).n, ==, 4); /* shared once, the Dense on ib */
    tw_scope_begin();
    tw_tensor *in[4] = {gc_tensor(1, -1, 1, TW_SHAPE(2, 3)), gc_tensor(2, -1, 1, TW_SHAPE(2, 3)), tw_layer_weight(shared, 0),
                        tw_layer_weight(shared, 1)};
    grad_case c = {m};
    gc_check("siamese", call_model, 4, in, &c);
    tw_scope_end();
    tw_layer_unref(shared);
    tw_layer_unref(m);
}

static void test_summary(void)
{
    tw_node *a = tw_input("a", TW_SHAPE(4)), *b = tw_input("b", TW_SHAPE(4));
    tw_layer *shared = tw_dense(3, NULL);
    tw_layer_set_name(shared, "shared");
    tw_node *sa = tw_apply(tw_layer_ref(shared), a), *sb = tw_apply(shared, b);
    tw_node *sum = tw_apply_n(tw_layer_new("Add", "add"), 2, (tw_node *[]){sa, sb});
    tw_model *m = tw_functional_new("model", 2, (tw_node *[]){a, b}, 1, &sum);
    tw_nodes_clear();
    char *text = tw_model_summary(m, 0);
    g_assert_nonnull(text);
    const char *want =
        "Model: \"model\"\n"
        "__________________________________________________________________________________________________\n"
        "Layer (type)                    Output Shape         Param #     Connected to\n"
        "==================================================================================================\n"
        "a (InputLayer)                  [(None, 4)]          0\n"
        "__________________________________________________________________________________________________\n"
        "b (InputLayer)                  [(None, 4)]          0\n"
        "__________________________________________________________________________________________________\n"
        "shared (Dense)                  (None, 3)            15          a[0][0]\n"
        "                                                                 b[0][0]\n"
        "__________________________________________________________________________________________________\n"
        "add (Add)                       (None, 3)            0           shared[0][0]\n"
        "                                                                 shared[1][0]\n"
        "==================================================================================================\n"
        "Total params: 15\n"
        "Trainable params: 15\n"
        "Non-trainable params: 0\n"
        "__________________________________________________________________________________________________\n";
    g_assert_cmpstr(text, ==, want);
    free(text);
    tw_layer_unref(m);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/functional-training/compile", test_compile_semantics);
    g_test_add_func("/functional-training/fit-traced-resumed", test_fit_traced_and_resumed);
    g_test_add_func("/functional-training/gradients", test_gradients);
    g_test_add_func("/functional-training/summary", test_summary);
    return g_test_run();
}
