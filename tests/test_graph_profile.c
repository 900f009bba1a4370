/* Per-node time profiles of graphs (tw/function.h, docs/graph_json.md
 * "Profiles"): runs are counted through tw_function_call and tw_graph_run,
 * every op node is listed once under its graph JSON name with time spent,
 * a node doing far more work has the larger mean, nothing is counted after
 * a stop, a restart begins from zero, and a fused chain's time reaches
 * each of its members. */
#include <glib.h>
#include <string.h>

#include "graph/graph_internal.h"
#include "json_value.h"

static tw_json *parse(char *text)
{
    g_assert_nonnull(text);
    char error[128];
    tw_json *v = tw__json_parse(text, error, sizeof error);
    if (!v)
        g_error("profile JSON does not parse: %s\n%s", error, text);
    free(text);
    return v;
}

static const char *string_member(const tw_json *v, const char *key)
{
    const tw_json *m = tw__json_get(v, key);
    g_assert_nonnull(m);
    g_assert_cmpint(m->kind, ==, TW_JSON_STRING);
    return m->string;
}

static double number_member(const tw_json *v, const char *key)
{
    const tw_json *m = tw__json_get(v, key);
    g_assert_nonnull(m);
    g_assert_cmpint(m->kind, ==, TW_JSON_NUMBER);
    return m->number;
}

static tw_json *profile_of(const tw_graph *g)
{
    tw_json *p = parse(tw_graph_profile_json(g));
    g_assert_cmpstr(string_member(p, "format"), ==, "twb-graph-profile");
    g_assert_cmpfloat(number_member(p, "version"), ==, 1);
    g_assert_cmpstr(string_member(p, "function"), ==, tw_graph_function_name(g));
    const tw_json *nodes = tw__json_get(p, "nodes");
    g_assert_nonnull(nodes);
    g_assert_cmpint(nodes->kind, ==, TW_JSON_ARRAY);
    return p;
}

/* The profile's entry for the node named name, or NULL. */
static const tw_json *entry(const tw_json *profile, const char *name)
{
    const tw_json *nodes = tw__json_get(profile, "nodes");
    for (int i = 0; i < nodes->count; i++)
        if (strcmp(string_member(&nodes->items[i], "name"), name) == 0)
            return &nodes->items[i];
    return NULL;
}

/* The profile lists exactly the graph JSON's op nodes, in order, by name and op. */
static void assert_lists_op_nodes(const tw_json *profile, const tw_graph *g)
{
    tw_json *graph = parse(tw_graph_json(g));
    const tw_json *gnodes = tw__json_get(graph, "nodes"), *pnodes = tw__json_get(profile, "nodes");
    int k = 0;
    for (int i = 0; i < gnodes->count; i++) {
        const char *op = string_member(&gnodes->items[i], "op");
        if (!strcmp(op, "input") || !strcmp(op, "constant") || !strcmp(op, "variable"))
            continue;
        g_assert_cmpint(k, <, pnodes->count);
        g_assert_cmpstr(string_member(&pnodes->items[k], "name"), ==, string_member(&gnodes->items[i], "name"));
        g_assert_cmpstr(string_member(&pnodes->items[k], "op"), ==, op);
        k++;
    }
    g_assert_cmpint(k, ==, pnodes->count);
    g_assert_cmpint(k, >, 0);
    tw__json_free(graph);
}

/* A 200x200 matmul beside an add of 4 elements: about 2 million times the work. */
static int unequal(tw_tensor *const *in, int n, tw_tensor **out, int max, void *user_data)
{
    out[0] = tw_matmul(in[0], in[0]);
    out[1] = tw_add(in[1], in[1]);
    return 2;
}

static void test_counts_runs_and_nodes(void)
{
    tw_scope_begin();
    tw_tensor *in[2] = {tw_ones(TW_FLOAT32, TW_SHAPE(200, 200)), tw_ones(TW_FLOAT32, TW_SHAPE(4))};
    tw_function *f = tw_function_new("unequal", unequal, NULL);
    tw_tensor *out[2];
    g_assert_cmpint(tw_function_call(f, 2, in, out, 2), ==, 2); /* the trace: not profiled */
    const tw_graph *g = tw_function_graph_at(f, 0);

    tw_json *p = profile_of(g); /* never profiled: listed, all zero */
    g_assert_cmpfloat(number_member(p, "runs"), ==, 0);
    g_assert_cmpfloat(number_member(entry(p, "matmul"), "total_us"), ==, 0);
    tw__json_free(p);

    g_assert_cmpint(tw_graph_profile_start(g), ==, 0);
    for (int run = 0; run < 5; run++)
        g_assert_cmpint(tw_function_call(f, 2, in, out, 2), ==, 2);
    for (int run = 0; run < 5; run++)
        g_assert_cmpint(tw_graph_run(g, 2, in, out, 2), ==, 2);
    p = profile_of(g);
    g_assert_cmpfloat(number_member(p, "runs"), ==, 10);
    assert_lists_op_nodes(p, g);
    const tw_json *nodes = tw__json_get(p, "nodes");
    for (int i = 0; i < nodes->count; i++) {
        double total = number_member(&nodes->items[i], "total_us");
        g_assert_cmpfloat(total, >, 0);
        g_assert_cmpfloat_with_epsilon(number_member(&nodes->items[i], "mean_us"), total / 10, 0.001);
    }
    double matmul_mean = number_member(entry(p, "matmul"), "mean_us");
    double add_mean = number_member(entry(p, "add"), "mean_us");
    g_assert_cmpfloat(matmul_mean, >, add_mean);
    double matmul_total = number_member(entry(p, "matmul"), "total_us");
    tw__json_free(p);

    tw_graph_profile_stop(g);
    for (int run = 0; run < 3; run++)
        g_assert_cmpint(tw_function_call(f, 2, in, out, 2), ==, 2);
    p = profile_of(g);
    g_assert_cmpfloat(number_member(p, "runs"), ==, 10);
    g_assert_cmpfloat(number_member(entry(p, "matmul"), "total_us"), ==, matmul_total);
    tw__json_free(p);

    g_assert_cmpint(tw_graph_profile_start(g), ==, 0); /* a restart counts from zero */
    g_assert_cmpint(tw_function_call(f, 2, in, out, 2), ==, 2);
    tw_graph_profile_stop(g);
    p = profile_of(g);
    g_assert_cmpfloat(number_member(p, "runs"), ==, 1);
    g_assert_cmpfloat(number_member(entry(p, "matmul"), "total_us"), <, matmul_total);
    tw__json_free(p);

    g_assert_cmpint(tw_graph_profile_start(NULL), ==, -1);
    g_assert_null(tw_graph_profile_json(NULL));
    tw_function_free(f);
    tw_scope_end();
}

/* An elementwise chain the graph runs as one fused pass. */
static int chain(tw_tensor *const *in, int n, tw_tensor **out, int max, void *user_data)
{
    out[0] = tw_tanh(tw_mul(tw_exp(tw_neg(tw_abs(in[0]))), in[0]));
    return 1;
}

static void test_fused_chain(void)
{
    tw_scope_begin();
    tw_tensor *x = tw_ones(TW_FLOAT32, TW_SHAPE(100000));
    tw_function *f = tw_function_new("chain", chain, NULL);
    g_assert_nonnull(tw_function_call1(f, 1, &x));
    const tw_graph *g = tw_function_graph_at(f, 0);
    g_assert_cmpint(g->nfused, ==, 1);
    const tw_fgroup *grp = &g->fused[0];
    g_assert_cmpint(grp->nmembers, ==, 5);
    g_assert_cmpint(tw_graph_profile_start(g), ==, 0);
    for (int run = 0; run < 10; run++)
        g_assert_nonnull(tw_function_call1(f, 1, &x));
    tw_graph_profile_stop(g);
    tw_json *p = profile_of(g);
    g_assert_cmpfloat(number_member(p, "runs"), ==, 10);
    assert_lists_op_nodes(p, g);
    /* The one pass's time, split evenly: every member has the same share. */
    double first = number_member(entry(p, tw_graph_node_name(g, grp->members[0])), "total_us");
    g_assert_cmpfloat(first, >, 0);
    for (int i = 1; i < grp->nmembers; i++)
        g_assert_cmpfloat(number_member(entry(p, tw_graph_node_name(g, grp->members[i])), "total_us"), ==, first);
    tw__json_free(p);
    tw_function_free(f);
    tw_scope_end();
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/graph-profile/counts-runs-and-nodes", test_counts_runs_and_nodes);
    g_test_add_func("/graph-profile/fused-chain", test_fused_chain);
    return g_test_run();
}
