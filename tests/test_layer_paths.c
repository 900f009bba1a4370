/* Layers of nested models by path (tw_model_foreach_layer,
 * tw_model_find_layer_path): the walk's order and paths through a
 * Sequential and a Functional model nested in a Functional one, a path, a
 * bare name found once anywhere, a top-level name before a nested one, and
 * the messages naming the candidates (ambiguous, missing, a path through a
 * layer that holds none). */
#include <glib.h>
#include <string.h>

#include "tw/error.h"
#include "tw/model.h"

static tw_layer *dense(const char *name, int units)
{
    tw_layer *d = tw_layer_new("Dense", name);
    char text[16];
    g_snprintf(text, sizeof text, "%d", units);
    g_assert_cmpint(tw_layer_set(d, "units", text), ==, 0);
    return d;
}

/* outer (Functional): x -> encoder (Sequential: dense, hidden) -> head
 * (Functional: head_in -> dense) -> out */
static tw_model *nested_model(void)
{
    tw_model *encoder = tw_sequential_new("encoder");
    g_assert_cmpint(tw_model_add(encoder, dense("dense", 8)), ==, 0);
    g_assert_cmpint(tw_model_add(encoder, dense("hidden", 4)), ==, 0);
    tw_node *head_in = tw_input("head_in", TW_SHAPE(4));
    tw_node *head_out = tw_apply(dense("dense", 3), head_in);
    tw_model *head = tw_functional_new("head", 1, &head_in, 1, &head_out);
    g_assert_nonnull(head);
    tw_node *x = tw_input("x", TW_SHAPE(2));
    tw_node *y = tw_apply(dense("out", 2), tw_apply(head, tw_apply(encoder, x)));
    tw_model *outer = tw_functional_new("outer", 1, &x, 1, &y);
    g_assert_nonnull(outer);
    tw_nodes_clear();
    return outer;
}

static int append_path(const char *path, tw_layer *layer, void *user_data)
{
    GString *out = user_data;
    g_string_append_printf(out, "%s%s(%s)", out->len ? " " : "", path, tw_layer_class_of(layer)->name);
    return 0;
}

static int stop_at_third(const char *path, tw_layer *layer, void *user_data)
{
    int *seen = user_data;
    return ++*seen == 3 ? 7 : 0;
}

static void test_walk(void)
{
    tw_model *outer = nested_model();
    GString *out = g_string_new(NULL);
    g_assert_cmpint(tw_model_foreach_layer(outer, append_path, out), ==, 0);
    g_assert_cmpstr(out->str, ==,
                    "x(InputLayer) encoder(Sequential) encoder/dense(Dense) encoder/hidden(Dense) head(Functional) "
                    "head/head_in(InputLayer) head/dense(Dense) out(Dense)");
    g_string_free(out, TRUE);
    int seen = 0;
    g_assert_cmpint(tw_model_foreach_layer(outer, stop_at_third, &seen), ==, 7);
    g_assert_cmpint(seen, ==, 3);
    tw_layer *plain = dense("plain", 2);
    g_assert_cmpint(tw_model_foreach_layer(plain, append_path, NULL), ==, -1);
    g_assert_cmpstr(tw_last_error(), ==, "model: plain is not a model");
    tw_layer_unref(plain);
    tw_layer_unref(outer);
}

static void test_find(void)
{
    tw_model *outer = nested_model();
    char *path = NULL;
    tw_layer *hidden = tw_model_find_layer_path(outer, "hidden", &path);
    g_assert_nonnull(hidden);
    g_assert_cmpstr(path, ==, "encoder/hidden");
    g_assert_cmpfloat(tw_layer_get(hidden, "units")->number, ==, 4);
    g_free(path);
    tw_layer *enc_dense = tw_model_find_layer_path(outer, "encoder/dense", &path);
    g_assert_cmpstr(path, ==, "encoder/dense");
    g_assert_cmpfloat(tw_layer_get(enc_dense, "units")->number, ==, 8);
    g_free(path);
    g_assert_cmpfloat(tw_layer_get(tw_model_find_layer_path(outer, "head/dense", NULL), "units")->number, ==, 3);
    g_assert_true(tw_model_find_layer_path(outer, "out", NULL) == tw_model_find_layer(outer, "out"));
    g_assert_true(tw_layer_is_model(tw_model_find_layer_path(outer, "head", NULL)));

    const struct {
        const char *path, *message;
    } bad[] = {
        {"dense", "model 'outer': 'dense' names encoder/dense, head/dense; give the layer's path"},
        {"nope", "model 'outer' has no layer named 'nope'; its layers are x, encoder, encoder/dense, encoder/hidden, "
                 "head, head/head_in, head/dense, out"},
        {"encoder/nope", "model 'outer' has no layer 'encoder/nope': 'encoder' has no layer named 'nope'"},
        {"out/x", "model 'outer' has no layer 'out/x': 'out' is a Dense layer, not a model holding layers"},
        {"head/dense/x", "model 'outer' has no layer 'head/dense/x': 'head/dense' is a Dense layer, not a model "
                         "holding layers"},
        {"", "model: no layer named (an empty path)"},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
        path = (char *)"untouched";
        g_assert_null(tw_model_find_layer_path(outer, bad[i].path, &path));
        g_assert_null(path);
        g_assert_cmpstr(tw_last_error(), ==, bad[i].message);
    }
    tw_layer_unref(outer);
}

/* A model's own layer is found by its name before a nested one of the same
 * name (its path is its name); a long list of candidates is cut short. */
static void test_top_level_first(void)
{
    tw_model *inner = tw_sequential_new("inner");
    g_assert_cmpint(tw_model_add(inner, dense("hidden", 5)), ==, 0);
    tw_model *model = tw_sequential_new("m");
    g_assert_cmpint(tw_model_add(model, inner), ==, 0);
    g_assert_cmpint(tw_model_add(model, dense("hidden", 6)), ==, 0);
    char *path = NULL;
    g_assert_cmpfloat(tw_layer_get(tw_model_find_layer_path(model, "hidden", &path), "units")->number, ==, 6);
    g_assert_cmpstr(path, ==, "hidden");
    g_free(path);
    g_assert_cmpfloat(tw_layer_get(tw_model_find_layer_path(model, "inner/hidden", NULL), "units")->number, ==, 5);
    tw_layer_unref(model);

    tw_model *wide = tw_sequential_new("wide");
    for (int i = 0; i < 20; i++) {
        char name[16];
        g_snprintf(name, sizeof name, "d%d", i);
        g_assert_cmpint(tw_model_add(wide, dense(name, 2)), ==, 0);
    }
    g_assert_null(tw_model_find_layer_path(wide, "nope", NULL));
    g_assert_cmpstr(tw_last_error(), ==, "model 'wide' has no layer named 'nope'; its layers are d0, d1, d2, d3, d4, "
                                         "d5, d6, d7, d8, d9, d10, d11 and 8 more");
    tw_layer_unref(wide);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/model/layer-paths/walk", test_walk);
    g_test_add_func("/model/layer-paths/find", test_find);
    g_test_add_func("/model/layer-paths/top-level-first", test_top_level_first);
    return g_test_run();
}
