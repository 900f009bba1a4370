/* The merge layers (forward against hand values, Keras' shape rules and
 * messages, gradients by finite differences) and Functional models: graphs
 * of several inputs and outputs, shared layers, nested models, counts and
 * the summary. */
#include <glib.h>
#include <math.h>
#include <string.h>

#include "gradcheck.h"
#include "halves_layer.h"
#include "tw/model.h"

static tw_tensor *values(int ndim, const int64_t *shape, const double *v)
{
    tw_tensor *t = tw_zeros(TW_FLOAT64, ndim, shape);
    memcpy(tw_tensor_data(t), v, sizeof(double) * (size_t)tw_tensor_numel(t));
    return t;
}

static void assert_values(tw_tensor *t, const double *want, int n)
{
    g_assert_nonnull(t);
    g_assert_cmpint(tw_tensor_numel(t), ==, n);
    tw_tensor *d = tw_contiguous(tw_cast(t, TW_FLOAT64));
    const double *got = tw_tensor_data(d);
    for (int i = 0; i < n; i++)
        g_assert_cmpfloat_with_epsilon(got[i], want[i], 1e-9);
}

static tw_tensor *rand32(unsigned seed, int ndim, const int64_t *shape)
{
    return tw_cast(gc_tensor(seed, -1, 1, ndim, shape), TW_FLOAT32);
}

static bool near(tw_tensor *a, tw_tensor *b, double tol)
{
    return a && b && tw_tensor_item(tw_max(tw_abs(tw_sub(a, b)), 0, NULL, false)) <= tol;
}

static tw_tensor *merge2(const char *klass, tw_tensor *a, tw_tensor *b)
{
    tw_layer *l = tw_layer_new(klass, "m");
    tw_tensor *out[TW_MAX_LAYER_IO];
    tw_call_context ctx = {0};
    int n = tw_layer_call_n(l, (tw_tensor *[]){a, b}, 2, out, &ctx);
    tw_layer_unref(l);
    return n == 1 ? out[0] : NULL;
}

static void test_merge_forward(void)
{
    tw_scope_begin();
    tw_tensor *a = values(TW_SHAPE(2, 2), (double[]){1, -2, 3, 4});
    tw_tensor *b = values(TW_SHAPE(2, 2), (double[]){5, 6, -7, 8});
    assert_values(merge2("Add", a, b), (double[]){6, 4, -4, 12}, 4);
    assert_values(merge2("Subtract", a, b), (double[]){-4, -8, 10, -4}, 4);
    assert_values(merge2("Multiply", a, b), (double[]){5, -12, -21, 32}, 4);
    assert_values(merge2("Average", a, b), (double[]){3, 2, -2, 6}, 4);
    assert_values(merge2("Maximum", a, b), (double[]){5, 6, 3, 8}, 4);
    assert_values(merge2("Minimum", a, b), (double[]){1, -2, -7, 4}, 4);
    /* Broadcast as Keras: (2, 1) against (2, 2). */
    tw_tensor *c = values(TW_SHAPE(2, 1), (double[]){10, 20});
    assert_values(merge2("Add", a, c), (double[]){11, 8, 23, 24}, 4);
    /* Three inputs. */
    tw_layer *avg = tw_layer_new("Average", NULL);
    tw_tensor *out[TW_MAX_LAYER_IO];
    g_assert_cmpint(tw_layer_call_n(avg, (tw_tensor *[]){a, b, a}, 3, out, &(tw_call_context){0}), ==, 1);
    assert_values(out[0], (double[]){7.0 / 3, 2.0 / 3, -1.0 / 3, 16.0 / 3}, 4);
    tw_layer_unref(avg);
    /* Concatenate: default axis -1, and axis 1 of rank 3. */
    assert_values(merge2("Concatenate", a, c), (double[]){1, -2, 10, 3, 4, 20}, 6);
    tw_layer *cat = tw_layer_new("Concatenate", NULL);
    g_assert_cmpint(tw_layer_set(cat, "axis", "1"), ==, 0);
    tw_tensor *p = values(TW_SHAPE(1, 1, 2), (double[]){1, 2}), *q = values(TW_SHAPE(1, 2, 2), (double[]){3, 4, 5, 6});
    g_assert_cmpint(tw_layer_call_n(cat, (tw_tensor *[]){p, q}, 2, out, &(tw_call_context){0}), ==, 1);
    assert_values(out[0], (double[]){1, 2, 3, 4, 5, 6}, 6);
    g_assert_cmpint(tw_tensor_dim(out[0], 1), ==, 3);
    tw_layer_unref(cat);
    /* Dot over the features: per-example dot products, shape (2, 1). */
    tw_tensor *d = merge2("Dot", a, b);
    assert_values(d, (double[]){5 - 12, -21 + 32}, 2);
    g_assert_cmpint(tw_tensor_ndim(d), ==, 2);
    tw_scope_end();
}

static void test_dot_axes_and_normalize(void)
{
    tw_scope_begin();
    /* x (1, 2, 3), y (1, 2, 4), axes (1, 1): x^T y per example, (1, 3, 4). */
    tw_tensor *x = values(TW_SHAPE(1, 2, 3), (double[]){1, 2, 3, 4, 5, 6});
    tw_tensor *y = values(TW_SHAPE(1, 2, 4), (double[]){1, 0, 2, 1, 0, 1, 1, 3});
    tw_layer *dot = tw_layer_new("Dot", "dot");
    g_assert_cmpint(tw_layer_set(dot, "axes", "1,1"), ==, 0);
    tw_tensor *out[TW_MAX_LAYER_IO];
    g_assert_cmpint(tw_layer_call_n(dot, (tw_tensor *[]){x, y}, 2, out, &(tw_call_context){0}), ==, 1);
    g_assert_cmpint(tw_tensor_ndim(out[0]), ==, 3);
    g_assert_cmpint(tw_tensor_dim(out[0], 1), ==, 3);
    g_assert_cmpint(tw_tensor_dim(out[0], 2), ==, 4);
    assert_values(out[0], (double[]){1, 4, 6, 13, 2, 5, 9, 17, 3, 6, 12, 21}, 12);
    tw_layer_unref(dot);
    /* normalize: cosine similarity. (3, 4) and (4, 3): 24 / 25. */
    tw_layer *cos = tw_layer_new("Dot", "cos");
    g_assert_cmpint(tw_layer_set(cos, "axes", "1"), ==, 0);
    g_assert_cmpint(tw_layer_set(cos, "normalize", "true"), ==, 0);
    tw_tensor *a = values(TW_SHAPE(1, 2), (double[]){3, 4}), *b = values(TW_SHAPE(1, 2), (double[]){4, 3});
    g_assert_cmpint(tw_layer_call_n(cos, (tw_tensor *[]){a, b}, 2, out, &(tw_call_context){0}), ==, 1);
    assert_values(out[0], (double[]){24.0 / 25}, 1);
    tw_layer_unref(cos);
    tw_scope_end();
}

static void expect_infer_error(const char *klass, const char *name, const char *key, const char *value,
                               const tw_shape *shapes, int n, const char *message)
{
    tw_layer *l = tw_layer_new(klass, name);
    if (key)
        g_assert_cmpint(tw_layer_set(l, key, value), ==, 0);
    tw_shape out[TW_MAX_LAYER_IO];
    int nout;
    g_assert_cmpint(tw_layer_infer_n(l, shapes, n, out, &nout, NULL, NULL), ==, -1);
    g_assert_cmpstr(tw_last_error(), ==, message);
    tw_layer_unref(l);
}

static void test_merge_shapes(void)
{
    tw_shape s32 = {2, {-1, 32}}, s16 = {2, {-1, 16}}, s1 = {2, {-1, 1}}, r3 = {3, {-1, 4, 32}};
    tw_shape out[TW_MAX_LAYER_IO];
    int nout;
    tw_layer *add = tw_layer_new("Add", "add_1");
    /* (None, 1) broadcasts against (None, 32); (None, 32) against (None, 4, 32). */
    g_assert_cmpint(tw_layer_infer_n(add, (tw_shape[]){s32, s1}, 2, out, &nout, NULL, NULL), ==, 0);
    g_assert_cmpint(out[0].dims[1], ==, 32);
    g_assert_cmpint(tw_layer_infer_n(add, (tw_shape[]){s32, r3}, 2, out, &nout, NULL, NULL), ==, 0);
    g_assert_cmpint(out[0].ndim, ==, 3);
    tw_layer_unref(add);
    expect_infer_error("Add", "add_1", NULL, NULL, (tw_shape[]){s32, s16}, 2,
                       "Add 'add_1': inputs (None, 32) and (None, 16) cannot be added");
    expect_infer_error("Subtract", "subtract", NULL, NULL, (tw_shape[]){s32, s32, s32}, 3,
                       "Subtract 'subtract': takes exactly 2 inputs, got 3");
    expect_infer_error("Maximum", "maximum", NULL, NULL, (tw_shape[]){s32}, 1,
                       "Maximum 'maximum': takes at least 2 inputs, got 1");
    expect_infer_error("Concatenate", "concatenate", NULL, NULL, (tw_shape[]){s32, r3}, 2,
                       "Concatenate 'concatenate': inputs (None, 32) and (None, 4, 32) cannot be joined on axis 1: "
                       "every other size must match");
    expect_infer_error("Concatenate", "concatenate", "axis", "0", (tw_shape[]){s32, s16}, 2,
                       "Concatenate 'concatenate': axis 0 does not fit inputs of shape (None, 32) (the batch axis "
                       "cannot be joined)");
    expect_infer_error("Dot", "dot", NULL, NULL, (tw_shape[]){s32, s16}, 2,
                       "Dot 'dot': inputs (None, 32) and (None, 16) cannot be multiplied: axis 1 has 32 and axis 1 "
                       "has 16");
    tw_layer *cat = tw_layer_new("Concatenate", NULL);
    g_assert_cmpint(tw_layer_infer_n(cat, (tw_shape[]){s32, s16, s1}, 3, out, &nout, NULL, NULL), ==, 0);
    g_assert_cmpint(out[0].dims[1], ==, 49);
    tw_layer_unref(cat);
    /* A one-input call of a merge layer through the one-input API. */
    tw_layer *alone = tw_layer_new("Add", "add");
    g_assert_cmpint(tw_layer_infer(alone, &s32, out, NULL, NULL), ==, -1);
    g_assert_cmpstr(tw_last_error(), ==, "Add 'add': takes at least 2 inputs, got 1");
    tw_layer_unref(alone);
}

typedef struct {
    const char *klass, *key, *value;
    int n;
} merge_case;

static tw_tensor *call_merge(tw_tensor *const *inputs, void *data)
{
    const merge_case *c = data;
    tw_layer *l = tw_layer_new(c->klass, NULL);
    if (c->key)
        tw_layer_set(l, c->key, c->value);
    tw_tensor *out[TW_MAX_LAYER_IO];
    int n = tw_layer_call_n(l, inputs, c->n, out, &(tw_call_context){0});
    tw_layer_unref(l);
    return n == 1 ? out[0] : NULL;
}

static void test_merge_gradients(void)
{
    static const merge_case cases[] = {
        {"Add", NULL, NULL, 3},      {"Subtract", NULL, NULL, 2},    {"Multiply", NULL, NULL, 3},
        {"Average", NULL, NULL, 2},  {"Maximum", NULL, NULL, 2},     {"Minimum", NULL, NULL, 3},
        {"Concatenate", NULL, NULL, 3}, {"Dot", NULL, NULL, 2},      {"Dot", "normalize", "true", 2},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        tw_scope_begin();
        tw_tensor *in[3];
        for (int k = 0; k < cases[i].n; k++)
            in[k] = gc_tensor((unsigned)(10 * i + k + 1), -1, 1, TW_SHAPE(3, 4));
        gc_check(cases[i].klass, call_merge, cases[i].n, in, (void *)&cases[i]);
        tw_scope_end();
    }
    /* Dot over axes (1, 1) of rank-3 inputs. */
    tw_scope_begin();
    merge_case dot = {"Dot", "axes", "1,1", 2};
    tw_tensor *in[2] = {gc_tensor(7, -1, 1, TW_SHAPE(2, 3, 4)), gc_tensor(8, -1, 1, TW_SHAPE(2, 3, 5))};
    gc_check("Dot axes 1,1", call_merge, 2, in, &dot);
    tw_scope_end();
}

/* ---- Functional models ------------------------------------------------------- */

static tw_layer *dense(int64_t units, const char *name)
{
    tw_layer *d = tw_dense(units, NULL);
    if (name)
        tw_layer_set_name(d, name);
    return d;
}

/* Two inputs, a shared Dense on both, Add, then two heads. */
static tw_model *two_in_two_out(void)
{
    tw_node *a = tw_input("a", TW_SHAPE(4));
    tw_node *b = tw_input("b", TW_SHAPE(4));
    tw_layer *shared = dense(3, "shared");
    tw_node *ha = tw_apply(tw_layer_ref(shared), a);
    tw_node *hb = tw_apply(shared, b);
    tw_node *sum = tw_apply_n(tw_layer_new("Add", NULL), 2, (tw_node *[]){ha, hb});
    tw_node *y1 = tw_apply(dense(2, "head1"), sum);
    tw_node *y2 = tw_apply(dense(1, "head2"), tw_apply_n(tw_layer_new("Concatenate", NULL), 2, (tw_node *[]){sum, a}));
    tw_model *m = tw_functional_new("two", 2, (tw_node *[]){a, b}, 2, (tw_node *[]){y1, y2});
    tw_nodes_clear();
    return m;
}

/* A model built on a thread that then ends, releasing its calls by mark as
 * the file readers do (not clearing): the thread's graph is freed with it.
 * The leak this guards against shows under the sanitizer and valgrind
 * runs of make test (LeakSanitizer, valgrind --leak-check=full). */
static gpointer build_and_release(gpointer unused)
{
    int64_t mark = tw_nodes_mark();
    tw_node *x = tw_input("x", 1, (int64_t[]){4});
    tw_node *y = tw_apply(dense(2, NULL), x);
    g_assert_nonnull(y);
    tw_model *m = tw_functional_new("on_a_thread", 1, &x, 1, &y);
    g_assert_nonnull(m);
    g_assert_cmpint(tw_model_nlayers(m), ==, 2);
    tw_layer_unref(m);
    tw_nodes_release(mark);
    return NULL;
}

static void test_graph_freed_at_thread_exit(void)
{
    for (int i = 0; i < 3; i++)
        g_thread_join(g_thread_new("model-reader", build_and_release, NULL));
}

static void test_functional_graph(void)
{
    tw_model *m = two_in_two_out();
    g_assert_nonnull(m);
    g_assert_true(tw_layer_is_model(m));
    g_assert_true(tw_layer_is_functional(m));
    g_assert_cmpint(tw_functional_ninputs(m), ==, 2);
    g_assert_cmpint(tw_functional_noutputs(m), ==, 2);
    /* Each input's declared shape, with its batch axis; none past the last. */
    const tw_shape *in_b = tw_model_input_shape_at(m, 1);
    g_assert_nonnull(in_b);
    g_assert_cmpint(in_b->ndim, ==, 2);
    g_assert_cmpint(in_b->dims[1], ==, 4);
    g_assert_null(tw_model_input_shape_at(m, 2));
    g_assert_null(tw_model_input_shape_at(m, -1));
    /* Layers in the order of their first call, each once. */
    const char *names[] = {"a", "b", "shared", "add", "head1", "concatenate", "head2"};
    g_assert_cmpint(tw_model_nlayers(m), ==, G_N_ELEMENTS(names));
    for (int i = 0; i < (int)G_N_ELEMENTS(names); i++)
        g_assert_cmpstr(tw_layer_name(tw_model_layer_at(m, i)), ==, names[i]);
    /* The shared layer has two calls; add's second input is shared[1][0]. */
    g_assert_cmpint(tw_functional_layer_ncalls(m, 2), ==, 2);
    tw_keras_history in[TW_MAX_LAYER_IO];
    g_assert_cmpint(tw_functional_call_inputs(m, 3, 0, in), ==, 2);
    g_assert_cmpint(in[1].layer, ==, 2);
    g_assert_cmpint(in[1].node_index, ==, 1);
    /* Counts: shared 4*3+3 once, head1 3*2+2, head2 7*1+1. */
    int64_t total, trainable, frozen;
    g_assert_cmpint(tw_model_count_params(m, &total, &trainable, &frozen), ==, 0);
    g_assert_cmpint(total, ==, 15 + 8 + 8);
    g_assert_cmpint(frozen, ==, 0);

    /* Calling: the heads against the same computation by hand. */
    g_assert_cmpint(tw_model_build(m, NULL, 1), ==, 0);
    tw_scope_begin();
    tw_tensor *xa = rand32(1, TW_SHAPE(5, 4));
    tw_tensor *xb = rand32(2, TW_SHAPE(5, 4));
    tw_tensor *out[TW_MAX_LAYER_IO];
    g_assert_cmpint(tw_model_call_n(m, 2, (tw_tensor *[]){xa, xb}, out, false), ==, 2);
    tw_layer *shared = tw_model_find_layer(m, "shared");
    tw_tensor *sum = tw_add(tw_layer_call(shared, xa, false), tw_layer_call(shared, xb, false));
    tw_tensor *y1 = tw_layer_call(tw_model_find_layer(m, "head1"), sum, false);
    tw_tensor *y2 = tw_layer_call(tw_model_find_layer(m, "head2"), tw_concat(2, (tw_tensor *[]){sum, xa}, 1), false);
    g_assert_true(near(out[0], y1, 1e-6));
    g_assert_true(near(out[1], y2, 1e-6));
    tw_scope_end();
    /* One set of weights for the shared layer. */
    g_assert_cmpint(tw_model_trainable_variables(m).n, ==, 6);
    tw_layer_unref(m);
}

static void test_functional_errors(void)
{
    /* An Add of (None, 32) and (None, 16), at tw_apply. */
    tw_node *a = tw_input(NULL, TW_SHAPE(8));
    tw_node *x = tw_apply(dense(32, NULL), a), *y = tw_apply(dense(16, NULL), a);
    g_assert_null(tw_apply_n(tw_layer_new("Add", "add_1"), 2, (tw_node *[]){x, y}));
    g_assert_cmpstr(tw_last_error(), ==, "Add 'add_1': inputs (None, 32) and (None, 16) cannot be added");
    /* NULL passes on: the first message stays. */
    g_assert_null(tw_apply(dense(3, NULL), NULL));
    g_assert_cmpstr(tw_last_error(), ==, "Add 'add_1': inputs (None, 32) and (None, 16) cannot be added");
    /* A shared Dense on 16 features after 32. */
    tw_layer *shared = dense(4, "shared");
    g_assert_nonnull(tw_apply(tw_layer_ref(shared), x));
    g_assert_null(tw_apply(shared, y));
    g_assert_cmpstr(tw_last_error(), ==,
                    "Dense 'shared': is shared, and input (None, 16) needs its weight kernel to be (16, 4), but it "
                    "is (32, 4)");
    /* An output that needs an input left out; an input used by nothing. */
    tw_node *b = tw_input("b", TW_SHAPE(8));
    tw_node *both = tw_apply_n(tw_layer_new("Add", NULL), 2, (tw_node *[]){a, b});
    g_assert_null(tw_functional_new("m", 1, &a, 1, &both));
    g_assert_cmpstr(tw_last_error(), ==,
                    "model 'm': the outputs depend on input 'b', which is not among the model's inputs");
    tw_node *unused = tw_input("unused", TW_SHAPE(2));
    g_assert_null(tw_functional_new("m", 2, (tw_node *[]){a, unused}, 1, &x));
    g_assert_cmpstr(tw_last_error(), ==, "model 'm': input 'unused' is not connected to any output");
    /* Two layers of one name. */
    tw_node *c = tw_apply(dense(2, "same"), tw_apply(dense(2, "same"), a));
    g_assert_null(tw_functional_new("m", 1, &a, 1, &c));
    g_assert_cmpstr(tw_last_error(), ==, "model 'm': two layers are named 'same'; layer names must be unique");
    /* A Functional model refuses tw_model_add. */
    tw_model *ok = tw_functional_new("ok", 1, &a, 1, &x);
    g_assert_nonnull(ok);
    g_assert_cmpint(tw_model_add(ok, dense(1, NULL)), ==, -1);
    g_assert_cmpstr(tw_last_error(), ==,
                    "model insert: model 'ok' is Functional; its layers come from its graph (tw_functional_new)");
    tw_nodes_clear();
    /* Built for a shape it does not declare. */
    g_assert_cmpint(tw_model_build(ok, &(tw_shape){2, {-1, 9}}, 1), ==, -1);
    g_assert_cmpstr(tw_last_error(), ==, "model 'ok': input 0 ('input_layer') expects (None, 8), got (None, 9)");
    /* A nested model whose input does not match. */
    tw_node *big = tw_input("big", TW_SHAPE(9));
    g_assert_null(tw_apply(ok, big));
    g_assert_cmpstr(tw_last_error(), ==, "model 'ok': input 0 ('input_layer') expects (None, 8), got (None, 9)");
    tw_nodes_clear();
}

static void test_nested_models(void)
{
    /* A Sequential trunk and a Functional block inside a Functional model,
     * the block frozen; then the whole model inside a Sequential. */
    tw_model *trunk = tw_sequential_new("trunk");
    tw_model_add(trunk, tw_input_layer(&(tw_shape){2, {-1, 6}}));
    tw_model_add(trunk, tw_dense(5, "relu"));
    tw_node *bin = tw_input("block_in", TW_SHAPE(5));
    tw_node *bout = tw_apply_n(tw_layer_new("Add", NULL), 2, (tw_node *[]){bin, tw_apply(dense(5, "inner"), bin)});
    tw_model *block = tw_functional_new("block", 1, &bin, 1, &bout);
    g_assert_nonnull(block);
    tw_layer_set_trainable(block, false);
    tw_node *in = tw_input("x", TW_SHAPE(6));
    tw_node *h = tw_apply(block, tw_apply(trunk, in));
    tw_node *out = tw_apply(dense(1, "out"), h);
    tw_model *m = tw_functional_new("outer", 1, &in, 1, &out);
    tw_nodes_clear();
    g_assert_nonnull(m);
    int64_t total, trainable, frozen;
    g_assert_cmpint(tw_model_count_params(m, &total, &trainable, &frozen), ==, 0);
    g_assert_cmpint(trainable, ==, 35 + 6);
    g_assert_cmpint(frozen, ==, 30);
    tw_model *seq = tw_sequential_new("seq");
    tw_model_add(seq, tw_layer_ref(m));
    g_assert_cmpint(tw_model_count_params(seq, &total, &trainable, &frozen), ==, 0);
    g_assert_cmpint(total, ==, 71);
    g_assert_cmpint(tw_model_build(seq, NULL, 3), ==, 0);
    tw_scope_begin();
    tw_tensor *x = rand32(3, TW_SHAPE(4, 6));
    tw_tensor *y = tw_model_call(seq, x, false);
    g_assert_nonnull(y);
    g_assert_cmpint(tw_tensor_dim(y, 1), ==, 1);
    g_assert_true(near(y, tw_model_call(m, x, false), 1e-6));
    tw_scope_end();
    /* Weights by path, nested names from the model down; trainable ones
     * leave the frozen block out. */
    g_assert_cmpint(tw_model_variables(seq).n, ==, 6);
    g_assert_cmpint(tw_model_trainable_variables(seq).n, ==, 4);
    /* A copy: the same graph and counts over new, unbuilt layers. */
    tw_model *copy = tw_layer_clone(m, "copy");
    g_assert_nonnull(copy);
    g_assert_true(tw_layer_is_functional(copy));
    g_assert_cmpstr(tw_layer_name(copy), ==, "copy");
    g_assert_cmpint(tw_model_nlayers(copy), ==, tw_model_nlayers(m));
    int64_t ct, cf;
    g_assert_cmpint(tw_model_count_params(copy, &total, &ct, &cf), ==, 0);
    g_assert_cmpint(total, ==, 71);
    g_assert_cmpint(cf, ==, 30);
    g_assert_false(tw_layer_built(copy));
    g_assert_true(tw_model_layer_at(copy, 1) != tw_model_layer_at(m, 1));
    tw_layer_unref(copy);
    tw_layer_unref(seq);
    tw_layer_unref(m);
}

static void test_several_outputs(void)
{
    g_assert_cmpint(tw_layer_class_register(&halves_layer_class), ==, 0);
    tw_node *in = tw_input("in", TW_SHAPE(4));
    tw_node *parts[TW_MAX_LAYER_IO];
    g_assert_cmpint(tw_apply_multi(tw_layer_new("Halves", "halves"), 1, &in, parts), ==, 2);
    g_assert_cmpint(tw_node_shape(parts[1])->dims[1], ==, 2);
    tw_node *diff = tw_apply_n(tw_layer_new("Subtract", "diff"), 2, (tw_node *[]){parts[1], parts[0]});
    tw_model *m = tw_functional_new("m", 1, &in, 2, (tw_node *[]){diff, parts[1]});
    tw_nodes_clear();
    g_assert_nonnull(m);
    tw_keras_history h;
    g_assert_cmpint(tw_functional_output(m, 1, &h), ==, 0);
    g_assert_cmpint(h.layer, ==, 1);
    g_assert_cmpint(h.tensor_index, ==, 1);
    tw_keras_history from[TW_MAX_LAYER_IO];
    g_assert_cmpint(tw_functional_call_inputs(m, 2, 0, from), ==, 2);
    g_assert_cmpint(from[0].tensor_index, ==, 1);
    g_assert_cmpint(from[1].tensor_index, ==, 0);
    char *text = tw_model_summary(m, 0);
    g_assert_nonnull(strstr(text, "halves (Halves)                 [(None, 2), (None, 2)] 0         in[0][0]\n"));
    g_assert_nonnull(strstr(text, "diff (Subtract)                 (None, 2)            0           halves[0][1]\n"
                                  "                                                                 halves[0][0]\n"));
    free(text);
    tw_scope_begin();
    tw_tensor *x = values(TW_SHAPE(1, 4), (double[]){1, 2, 3, 5});
    tw_tensor *out[TW_MAX_LAYER_IO];
    g_assert_cmpint(tw_model_call_n(m, 1, &x, out, false), ==, 2);
    assert_values(out[0], (double[]){2, 3}, 2);
    assert_values(out[1], (double[]){3, 5}, 2);
    tw_scope_end();
    tw_layer_unref(m);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/merge/forward", test_merge_forward);
    g_test_add_func("/merge/dot", test_dot_axes_and_normalize);
    g_test_add_func("/merge/shapes", test_merge_shapes);
    g_test_add_func("/merge/gradients", test_merge_gradients);
    g_test_add_func("/functional/graph", test_functional_graph);
    g_test_add_func("/functional/errors", test_functional_errors);
    g_test_add_func("/functional/nested", test_nested_models);
    g_test_add_func("/functional/several-outputs", test_several_outputs);
    g_test_add_func("/functional/graph-freed-at-thread-exit", test_graph_freed_at_thread_exit);
    return g_test_run();
}
