/* The graph view's model and layout (ui/graph_model.c, ui/graph_layout.c):
 * no display. Layouts are checked for what a reader sees: no two boxes
 * overlap, edges run down, a chain is a column, the same input gives the
 * same drawing; a 5,000-node graph lays out within a second; the CNN
 * example's traced forward pass collapses into one box per layer; open
 * scopes' frames cover no box and no frame of another scope. */
#include <glib.h>
#include <math.h>
#include <string.h>
#include <tw/engine.h>
#include <tw/model_file.h>

#include "graph_arrangement.h"
#include "graph_layout.h"
#include "graph_model.h"

/* A layered random DAG as graph JSON: `layers` layers of ops, each reading
 * one to three ops of earlier layers (mostly the previous one), in scopes
 * "block_B/unit_U" of 50 nodes; every tenth op also reads a variable. */
static char *random_graph_json(int nnodes, int layers, guint32 seed)
{
    GRand *rand = g_rand_new_with_seed(seed);
    GString *s = g_string_new("{\"format\": \"twb-graph\", \"version\": 1, \"function\": \"random\", \"nodes\": [");
    int per_layer = nnodes / layers;
    for (int i = 0; i < nnodes; i++) {
        int layer = i / per_layer;
        gboolean variable = layer > 0 && i % 10 == 9;
        g_string_append_printf(s, "%s{\"id\": %d, \"op\": \"%s\", \"name\": \"n%d\", \"scope\": \"block_%d/unit_%d\", "
                               "\"inputs\": [", i ? ", " : "", i, layer == 0 ? "input" : variable ? "variable" : "add",
                               i, i / 1000, i / 50);
        for (int k = 0; layer > 0 && !variable && k < 1 + (i % 3); k++) {
            int from_layer = g_rand_int_range(rand, 0, 4) == 0 ? g_rand_int_range(rand, 0, layer) : layer - 1;
            int from = from_layer * per_layer + g_rand_int_range(rand, 0, per_layer);
            if (from % 10 == 9 && from_layer > 0)
                from--; /* a variable is read by the op after it */
            g_string_append_printf(s, "%s[%d, 0]", k ? ", " : "", from);
        }
        if (!variable && layer > 0 && i % 10 == 0)
            g_string_append_printf(s, "%s[%d, 0]", s->str[s->len - 1] == '[' ? "" : ", ", i - 1);
        g_string_append_printf(s, "], \"outputs\": [{\"dtype\": \"float32\", \"shape\": [1, %d]}], "
                               "\"attrs\": {\"ints\": [], \"floats\": []}}", 1 + i % 7);
    }
    g_string_append(s, "]}");
    g_rand_free(rand);
    return g_string_free(s, FALSE);
}

/* Box sizes as the view would measure them: wider for longer titles. */
static tw_graph_layout *layout_visible(const tw_graph_model *m, const tw_visible_graph *g)
{
    double *w = g_new(double, MAX(g->nnodes, 1)), *h = g_new(double, MAX(g->nnodes, 1));
    int *edges = g_new(int, 2 * MAX(g->nedges, 1));
    for (int v = 0; v < g->nnodes; v++) {
        char *title = tw_visible_node_title(m, &g->nodes[v]);
        w[v] = 40 + 7.0 * (double)strlen(title);
        h[v] = g->nodes[v].is_scope ? 44 : 36;
        g_free(title);
    }
    for (int e = 0; e < g->nedges; e++)
        edges[2 * e] = g->edges[e].from, edges[2 * e + 1] = g->edges[e].to;
    tw_graph_layout *layout = tw_graph_layout_new(g->nnodes, w, h, g->nedges, edges);
    g_free(w), g_free(h), g_free(edges);
    return layout;
}

static int compare_by_layer_then_x(gconstpointer a, gconstpointer b, gpointer boxes)
{
    const tw_layout_box *all = boxes;
    const tw_layout_box *p = &all[*(const int *)a], *q = &all[*(const int *)b];
    if (p->layer != q->layer)
        return p->layer - q->layer;
    return p->x < q->x ? -1 : p->x > q->x;
}

/* Whether the segment (x0, y0)-(x1, y1) passes through the inside of box b
 * (touching its border, as an edge touches its ends, does not count):
 * Liang-Barsky clipping against the box shrunk by a hair. */
static gboolean segment_crosses_box(double x0, double y0, double x1, double y1, const tw_layout_box *b)
{
    const double eps = 1e-6;
    double lo = 0, hi = 1, dx = x1 - x0, dy = y1 - y0;
    double p[4] = {-dx, dx, -dy, dy};
    double q[4] = {x0 - (b->x + eps), (b->x + b->width - eps) - x0, y0 - (b->y + eps), (b->y + b->height - eps) - y0};
    for (int i = 0; i < 4; i++) {
        if (p[i] == 0) {
            if (q[i] < 0)
                return FALSE;
            continue;
        }
        double t = q[i] / p[i];
        if (p[i] < 0)
            lo = MAX(lo, t);
        else
            hi = MIN(hi, t);
    }
    return lo < hi;
}

/* No segment of an edge passes through a box other than its two ends (nor
 * through those: it starts at one's border and ends at the other's). The
 * boxes sorted by top let each segment look only at the layers it spans. */
static void assert_edges_clear_of_boxes(const tw_graph_layout *g)
{
    for (int e = 0; e < g->nedges; e++) {
        const tw_layout_edge *edge = &g->edges[e];
        for (int p = 1; p < edge->npoints; p++) {
            double x0 = edge->points[2 * p - 2], y0 = edge->points[2 * p - 1];
            double x1 = edge->points[2 * p], y1 = edge->points[2 * p + 1];
            for (int v = 0; v < g->nnodes; v++) {
                const tw_layout_box *b = &g->nodes[v];
                if (b->y > MAX(y0, y1) || b->y + b->height < MIN(y0, y1))
                    continue;
                if (segment_crosses_box(x0, y0, x1, y1, b))
                    g_error("edge %d (%d -> %d), segment %d (%.1f, %.1f)-(%.1f, %.1f) crosses box %d at (%.1f, %.1f) "
                            "%.0f x %.0f", e, edge->from, edge->to, p, x0, y0, x1, y1, v, b->x, b->y, b->width,
                            b->height);
            }
        }
    }
}

/* No two boxes overlap: layers are bands apart, so neighbours in a layer
 * by x are the only pairs that could. Edges run from a lower layer to a
 * higher one, their points downwards, from the producer's bottom to the
 * reader's top, through no box. */
static void assert_layout_sane(const tw_graph_layout *g)
{
    int *order = g_new(int, MAX(g->nnodes, 1));
    for (int v = 0; v < g->nnodes; v++)
        order[v] = v;
    g_qsort_with_data(order, g->nnodes, sizeof(int), compare_by_layer_then_x, g->nodes);
    for (int i = 1; i < g->nnodes; i++) {
        const tw_layout_box *p = &g->nodes[order[i - 1]], *q = &g->nodes[order[i]];
        if (p->layer == q->layer)
            g_assert_cmpfloat(p->x + p->width, <=, q->x + 1e-6);
        else
            g_assert_cmpfloat(p->y + p->height, <, q->y);
        g_assert_cmpfloat(q->x, >=, 0);
        g_assert_cmpfloat(q->x + q->width, <=, g->width + 1e-6);
    }
    for (int e = 0; e < g->nedges; e++) {
        const tw_layout_edge *edge = &g->edges[e];
        g_assert_false(edge->reversed);
        g_assert_cmpint(g->nodes[edge->from].layer, <, g->nodes[edge->to].layer);
        g_assert_cmpint(edge->npoints, >=, 2);
        for (int p = 1; p < edge->npoints; p++)
            g_assert_cmpfloat(edge->points[2 * p + 1], >, edge->points[2 * p - 1]);
        g_assert_cmpfloat(fabs(edge->points[1] - (g->nodes[edge->from].y + g->nodes[edge->from].height)), <, 1e-6);
        const tw_layout_box *to = &g->nodes[edge->to];
        g_assert_cmpfloat(fabs(edge->points[2 * edge->npoints - 1] - to->y), <, 1e-6);
        g_assert_cmpfloat(fabs(edge->points[2 * edge->npoints - 2] - (to->x + to->width / 2)), <, 1e-6);
    }
    g_free(order);
    assert_edges_clear_of_boxes(g);
}

static void test_chain_is_a_column(void)
{
    double w[5] = {60, 100, 80, 120, 60}, h[5] = {30, 30, 30, 30, 30};
    int edges[8] = {0, 1, 1, 2, 2, 3, 3, 4};
    tw_graph_layout *g = tw_graph_layout_new(5, w, h, 4, edges);
    g_assert_cmpint(g->nlayers, ==, 5);
    for (int v = 0; v < 5; v++) {
        g_assert_cmpint(g->nodes[v].layer, ==, v);
        g_assert_cmpfloat(fabs(g->nodes[v].x + w[v] / 2 - (g->nodes[0].x + w[0] / 2)), <, 1e-6);
    }
    assert_layout_sane(g);
    tw_graph_layout_free(g);
}

static void test_diamond_and_long_edge(void)
{
    /* 0 -> 1, 0 -> 2, 1 -> 3, 2 -> 3, 0 -> 3 (spans two layers: one dummy). */
    double w[4] = {50, 50, 50, 50}, h[4] = {30, 30, 30, 30};
    int edges[10] = {0, 1, 0, 2, 1, 3, 2, 3, 0, 3};
    tw_graph_layout *g = tw_graph_layout_new(4, w, h, 5, edges);
    g_assert_cmpint(g->nodes[3].layer, ==, 2);
    /* Down through layer 1 beside boxes 1 and 2: in at its top, out at its bottom. */
    g_assert_cmpint(g->edges[4].npoints, ==, 4);
    g_assert_cmpfloat(g->edges[4].points[2], ==, g->edges[4].points[4]);
    g_assert_cmpfloat(g->edges[4].points[3], ==, g->nodes[1].y);
    g_assert_cmpfloat(g->edges[4].points[5], ==, g->nodes[1].y + g->nodes[1].height);
    g_assert_cmpfloat(g->nodes[1].y, ==, g->nodes[2].y);
    assert_layout_sane(g);
    tw_graph_layout_free(g);
}

static void test_cycle_is_broken(void)
{
    double w[3] = {50, 50, 50}, h[3] = {30, 30, 30};
    int edges[6] = {0, 1, 1, 2, 2, 1};
    tw_graph_layout *g = tw_graph_layout_new(3, w, h, 3, edges);
    int reversed = 0;
    for (int e = 0; e < 3; e++)
        reversed += g->edges[e].reversed;
    g_assert_cmpint(reversed, ==, 1);
    g_assert_true(g->edges[2].reversed); /* 2 -> 1 closed the cycle */
    g_assert_cmpint(g->nodes[2].layer, >, g->nodes[1].layer);
    tw_graph_layout_free(g);
}

static void assert_same_layout(const tw_graph_layout *a, const tw_graph_layout *b)
{
    g_assert_cmpint(a->nnodes, ==, b->nnodes);
    /* Field by field: a box's padding bytes are not part of it. */
    for (int v = 0; v < a->nnodes; v++) {
        const tw_layout_box *p = &a->nodes[v], *q = &b->nodes[v];
        g_assert_true(p->x == q->x && p->y == q->y && p->width == q->width && p->height == q->height &&
                      p->layer == q->layer);
    }
    for (int e = 0; e < a->nedges; e++) {
        g_assert_cmpint(a->edges[e].npoints, ==, b->edges[e].npoints);
        size_t bytes = sizeof(double) * 2 * (size_t)a->edges[e].npoints;
        g_assert_cmpint(memcmp(a->edges[e].points, b->edges[e].points, bytes), ==, 0);
    }
}

static void test_large_random_graph(void)
{
    char *json = random_graph_json(5000, 60, 7);
    GError *error = NULL;
    gint64 t0 = g_get_monotonic_time();
    tw_graph_model *m = tw_graph_model_parse(json, -1, &error);
    g_assert_no_error(error);
    tw_visible_graph *vg = tw_visible_graph_new(m, NULL);
    gint64 t1 = g_get_monotonic_time();
    tw_graph_layout *g = layout_visible(m, vg);
    gint64 t2 = g_get_monotonic_time();
    double seconds = (double)(t2 - t1) / 1e6;
    g_test_message("5,000 nodes: parse %.3f s; layout of %d boxes, %d edges in %d layers: %.3f s",
                   (double)(t1 - t0) / 1e6, vg->nnodes, vg->nedges, g->nlayers, seconds);
    g_print("# 5,000-node graph: %d boxes, %d edges, %d layers laid out in %.3f s\n", vg->nnodes, vg->nedges,
            g->nlayers, seconds);
    /* Every tenth op reads a variable read by nothing else: tucked. */
    g_assert_cmpint(vg->nnodes, <, 5000);
    g_assert_cmpint(vg->nnodes, >, 4000);
    g_assert_cmpfloat(seconds, <=, 1.0);
    assert_layout_sane(g);
    tw_graph_layout *again = layout_visible(m, vg);
    assert_same_layout(g, again);
    tw_graph_layout_free(again);
    tw_graph_layout_free(g);
    tw_visible_graph_free(vg);

    /* Collapsed into its 100 units: one box each, edges merged. */
    bool *expanded = g_new0(bool, m->nscopes);
    expanded[0] = true;
    for (int s = 0; s < m->nscopes; s++)
        expanded[s] = m->scopes[s].depth < 2;
    vg = tw_visible_graph_new(m, expanded);
    g_assert_cmpint(vg->nnodes, ==, 100);
    for (int e = 0; e < vg->nedges; e++)
        for (int f = 0; f < e; f++)
            g_assert_false(vg->edges[e].from == vg->edges[f].from && vg->edges[e].to == vg->edges[f].to);
    g = layout_visible(m, vg);
    assert_layout_sane(g);
    tw_graph_layout_free(g);
    tw_visible_graph_free(vg);
    g_free(expanded);
    tw_graph_model_free(m);
    g_free(json);
}

static int forward(tw_tensor *const *inputs, int ninputs, tw_tensor **outputs, int max_outputs, void *model)
{
    (void)ninputs, (void)max_outputs;
    outputs[0] = tw_model_call(model, inputs[0], false);
    return outputs[0] ? 1 : -1;
}

static void test_traced_cnn(void)
{
    char *path = g_test_build_filename(G_TEST_DIST, "..", "examples", "models", "cnn_fashion_mnist.json", NULL);
    tw_model *model = tw_model_load(path);
    g_assert_nonnull(model);
    g_assert_cmpint(tw_model_build(model, NULL, 0), ==, 0);
    tw_tensor *x = tw_zeros(TW_FLOAT32, 4, (int64_t[]){1, 28, 28, 1});
    tw_function *f = tw_function_new(tw_layer_name(model), forward, model);
    const tw_graph *graph = tw_function_get_graph(f, 1, &x);
    g_assert_nonnull(graph);
    char *json = tw_graph_json(graph);
    GError *error = NULL;
    tw_graph_model *m = tw_graph_model_parse(json, -1, &error);
    g_assert_no_error(error);

    /* Collapsed by layer: the model's scope is open, one box per layer. */
    bool *expanded = g_new(bool, m->nscopes);
    tw_graph_model_default_expansion(m, expanded);
    tw_visible_graph *vg = tw_visible_graph_new(m, expanded);
    int boxes = 0;
    for (int v = 0; v < vg->nnodes; v++) {
        if (!vg->nodes[v].is_scope)
            continue;
        const tw_graph_scope *s = &m->scopes[vg->nodes[v].index];
        g_assert_nonnull(tw_model_find_layer(model, s->name));
        g_assert_cmpint(s->depth, ==, 2);
        boxes++;
    }
    /* Every layer but the InputLayer, which traces no op. */
    g_assert_cmpint(boxes, ==, tw_model_nlayers(model) - 1);
    for (int i = 1; i < tw_model_nlayers(model); i++) {
        char *scope = g_strdup_printf("cnn/%s", tw_layer_name(tw_model_layer_at(model, i)));
        g_assert_cmpint(tw_graph_model_find_scope(m, scope), >, 0);
        g_free(scope);
    }
    tw_graph_layout *g = layout_visible(m, vg);
    assert_layout_sane(g);
    g_assert_cmpint(g->nlayers, >=, boxes); /* a chain of layers (and the input above) */
    tw_graph_layout_free(g);
    tw_visible_graph_free(vg);

    /* Open: conv2d's matmul-like op shows with its kernel tucked in. */
    int conv = tw_graph_model_find_scope(m, "cnn/conv2d");
    g_assert_cmpint(conv, >, 0);
    expanded[conv] = true;
    vg = tw_visible_graph_new(m, expanded);
    gboolean found = FALSE;
    for (int v = 0; v < vg->nnodes; v++) {
        const tw_visible_node *node = &vg->nodes[v];
        if (!node->is_scope && strcmp(m->nodes[node->index].op, "conv2d") == 0) {
            found = TRUE;
            g_assert_cmpint(node->nparams, >=, 1);
            g_assert_cmpstr(m->nodes[node->params[0]].op, ==, "variable");
        }
    }
    g_assert_true(found);
    g = layout_visible(m, vg);
    assert_layout_sane(g);
    tw_graph_layout_free(g);
    tw_visible_graph_free(vg);

    /* The view's own tracing gives the same graph. */
    char *again = tw_graph_trace_model(model, &error);
    g_assert_no_error(error);
    g_assert_cmpstr(again, ==, json);
    g_free(again);
    g_free(expanded);
    tw_graph_model_free(m);
    free(json);
    tw_function_free(f);
    tw_tensor_unref(x);
    tw_layer_unref(model);
    g_free(path);
}

static void test_bad_input(void)
{
    GError *error = NULL;
    g_assert_null(tw_graph_model_parse("{\"format\": \"other\"}", -1, &error));
    g_assert_nonnull(strstr(error->message, "twb-graph"));
    g_clear_error(&error);
    g_assert_null(tw_graph_model_parse("{\"format\": \"twb-graph\", \"version\": 1, \"nodes\": [{\"id\": 0, \"op\": "
                                       "\"add\", \"inputs\": [[3, 0]], \"outputs\": []}]}", -1, &error));
    g_assert_nonnull(strstr(error->message, "node 0"));
    g_clear_error(&error);
    g_assert_null(tw_graph_model_parse("not json", -1, &error));
    g_clear_error(&error);
    /* Escapes json-glib would read as something else (\777 as the byte
     * 0xff, a lone surrogate as bytes that are not UTF-8): refused, placed. */
    static const char *const escapes[][2] = {{"\\777", "\\7"}, {"\\ud800", "\\ud800"}, {"\\x41", "\\x"}};
    for (size_t i = 0; i < G_N_ELEMENTS(escapes); i++) {
        char *json = g_strdup_printf("{\"format\": \"twb-graph\",\n \"name\": \"é%s\"}", escapes[i][0]);
        g_assert_null(tw_graph_model_parse(json, -1, &error));
        char *expected = g_strdup_printf("graph JSON: line 2, column 12: %s is not an escape JSON has", escapes[i][1]);
        g_assert_true(g_str_has_prefix(error->message, expected));
        g_free(expected);
        g_free(json);
        g_clear_error(&error);
    }
}

/* A box in the way: a wide box beside a long edge's dummy, and boxes of
 * unequal heights, so straight lines from box to box or through a layer's
 * middle would cut corners. Seeded random graphs of unequal boxes too. */
static void test_edges_avoid_boxes(void)
{
    /* 0 -> 1 -> 2 -> 3 and 0 -> 3 (two dummies), 4 -> 2; box 1 very wide and
     * tall, box 4 short, so that the long edge's dummies sit right of box 1. */
    double w[5] = {60, 400, 60, 60, 300}, h[5] = {30, 90, 30, 30, 20};
    int edges[10] = {0, 1, 1, 2, 2, 3, 0, 3, 4, 2};
    tw_graph_layout *g = tw_graph_layout_new(5, w, h, 5, edges);
    assert_layout_sane(g);
    tw_graph_layout_free(g);
    for (guint32 seed = 1; seed <= 20; seed++) {
        GRand *rand = g_rand_new_with_seed(seed);
        int n = 60, m = 0;
        double *ws = g_new(double, n), *hs = g_new(double, n);
        int *es = g_new(int, 6 * n);
        for (int v = 0; v < n; v++) {
            ws[v] = g_rand_double_range(rand, 40, 260);
            hs[v] = g_rand_double_range(rand, 16, 70);
            for (int k = 0; v > 0 && k < g_rand_int_range(rand, 1, 4); k++) {
                es[2 * m] = g_rand_int_range(rand, MAX(0, v - 12), v);
                es[2 * m + 1] = v;
                m++;
            }
        }
        g = tw_graph_layout_new(n, ws, hs, m, es);
        assert_layout_sane(g);
        tw_graph_layout_free(g);
        g_free(ws), g_free(hs), g_free(es);
        g_rand_free(rand);
    }
}

static gboolean rects_intersect(const tw_layout_rect *a, const tw_layout_rect *b)
{
    return a->x < b->x + b->width && b->x < a->x + a->width && a->y < b->y + b->height && b->y < a->y + a->height;
}

/* Edge labels: no two intersect, none covers a box or an obstacle; with
 * room, every label finds a spot, and in the 5,000-node graph nearly all
 * do, in a fraction of a second. */
static void test_labels_do_not_overlap(void)
{
    /* A box read by six others: six labels leave it side by side. */
    double w[7] = {80, 60, 60, 60, 60, 60, 60}, h[7] = {30, 30, 30, 30, 30, 30, 30};
    int edges[12] = {0, 1, 0, 2, 0, 3, 0, 4, 0, 5, 0, 6};
    tw_graph_layout *g = tw_graph_layout_new(7, w, h, 6, edges);
    double lw[6], lh[6];
    for (int e = 0; e < 6; e++)
        lw[e] = 70, lh[e] = 14; /* "(32, 28, 28, 16)" */
    tw_layout_rect out[6], obstacle = {0, 0, 10, 10};
    tw_graph_layout_place_labels(g, lw, lh, 1, &obstacle, out);
    for (int e = 0; e < 6; e++) {
        g_assert_cmpfloat(out[e].width, ==, 70);
        for (int f = 0; f < e; f++)
            g_assert_false(rects_intersect(&out[e], &out[f]));
    }
    tw_graph_layout_free(g);

    char *json = random_graph_json(5000, 60, 7);
    GError *error = NULL;
    tw_graph_model *m = tw_graph_model_parse(json, -1, &error);
    g_assert_no_error(error);
    tw_visible_graph *vg = tw_visible_graph_new(m, NULL);
    g = layout_visible(m, vg);
    double *widths = g_new(double, g->nedges), *heights = g_new(double, g->nedges);
    for (int e = 0; e < g->nedges; e++)
        widths[e] = 6.0 * (4 + e % 9), heights[e] = 14;
    tw_layout_rect *labels = g_new(tw_layout_rect, g->nedges);
    /* Obstacles: a title bar over every tenth box. */
    int nobstacles = 0;
    tw_layout_rect *obstacles = g_new(tw_layout_rect, g->nnodes / 10 + 1);
    for (int v = 0; v < g->nnodes; v += 10)
        obstacles[nobstacles++] = (tw_layout_rect){g->nodes[v].x - 8, g->nodes[v].y - 18, g->nodes[v].width + 16, 18};
    gint64 t0 = g_get_monotonic_time();
    tw_graph_layout_place_labels(g, widths, heights, nobstacles, obstacles, labels);
    double seconds = (double)(g_get_monotonic_time() - t0) / 1e6;
    g_assert_cmpfloat(seconds, <, 2.0); /* a catastrophic bound: 0.14 s of CPU here */
    int placed = 0;
    for (int e = 0; e < g->nedges; e++) {
        if (labels[e].width == 0)
            continue;
        placed++;
        for (int v = 0; v < g->nnodes; v++) {
            const tw_layout_box *b = &g->nodes[v];
            g_assert_false(rects_intersect(&labels[e], &(tw_layout_rect){b->x, b->y, b->width, b->height}));
        }
        for (int o = 0; o < nobstacles; o++)
            g_assert_false(rects_intersect(&labels[e], &obstacles[o]));
    }
    for (int e = 0; e < g->nedges; e++)
        for (int f = e + 1; f < g->nedges; f++)
            if (labels[e].width > 0 && labels[f].width > 0 && rects_intersect(&labels[e], &labels[f]))
                g_error("labels of edges %d and %d intersect", e, f);
    g_print("# 5,000-node graph: %d of %d edge labels placed in %.3f s\n", placed, g->nedges, seconds);
    g_assert_cmpint(placed, >, g->nedges / 2);
    g_free(widths), g_free(heights), g_free(labels), g_free(obstacles);
    tw_graph_layout_free(g);
    tw_visible_graph_free(vg);
    tw_graph_model_free(m);
    g_free(json);
}

/* Whether the scope holds visible node v (a scope box holds itself). */
static bool scope_holds(const tw_graph_model *m, const tw_visible_node *v, int scope)
{
    if (v->output >= 0)
        return false;
    for (int s = v->is_scope ? v->index : m->nodes[v->index].scope_index; s >= 0; s = m->scopes[s].parent)
        if (s == scope)
            return true;
    return false;
}

static bool scope_within(const tw_graph_model *m, int inner, int outer)
{
    for (int s = inner; s >= 0; s = m->scopes[s].parent)
        if (s == outer)
            return true;
    return false;
}

/* Every frame covers its own boxes and no other; frames of scopes that do
 * not nest do not meet, and a nested one lies inside its parent's. */
static void assert_frames_reserved(const tw_graph_arrangement *a, const char *what)
{
    const tw_graph_model *m = a->model;
    for (int f = 0; f < a->nframes; f++) {
        const tw_graph_frame *fr = &a->frames[f];
        tw_layout_rect frame = {fr->x, fr->y, fr->width, fr->height};
        for (int v = 0; v < a->graph->nnodes; v++) {
            const tw_layout_box *b = &a->layout->nodes[v];
            tw_layout_rect box = {b->x, b->y, b->width, b->height};
            bool inside = box.x >= frame.x && box.y >= frame.y && box.x + box.width <= frame.x + frame.width &&
                          box.y + box.height <= frame.y + frame.height;
            if (scope_holds(m, &a->graph->nodes[v], fr->scope) ? !inside : rects_intersect(&box, &frame))
                g_error("%s: the frame of %s and box %d (%s)", what, m->scopes[fr->scope].path, v,
                        tw_visible_node_title(m, &a->graph->nodes[v]));
        }
        for (int g = 0; g < a->nframes; g++) {
            const tw_graph_frame *other = &a->frames[g];
            tw_layout_rect r = {other->x, other->y, other->width, other->height};
            if (g != f && !scope_within(m, fr->scope, other->scope) && !scope_within(m, other->scope, fr->scope) &&
                rects_intersect(&frame, &r))
                g_error("%s: the frames of %s and %s meet", what, m->scopes[fr->scope].path,
                        m->scopes[other->scope].path);
        }
    }
}

/* An edge with neither end inside a frame runs past it on one side: level
 * with the frame it changes side at most twice, from its producer beside
 * the frame to that side and from there to its reader (a zig-zag crosses
 * the frame between layers again and again), and no point of it is on
 * the frame. */
static void assert_edges_pass_frames(const tw_graph_arrangement *a, const char *what)
{
    const tw_graph_model *m = a->model;
    for (int f = 0; f < a->nframes; f++) {
        const tw_graph_frame *fr = &a->frames[f];
        for (int e = 0; e < a->layout->nedges; e++) {
            const tw_layout_edge *edge = &a->layout->edges[e];
            if (scope_holds(m, &a->graph->nodes[edge->from], fr->scope) ||
                scope_holds(m, &a->graph->nodes[edge->to], fr->scope))
                continue;
            int side = 0, changes = 0; /* side: -1 left of the frame, 1 right */
            for (int i = 0; i < edge->npoints; i++) {
                double x = edge->points[2 * i], y = edge->points[2 * i + 1];
                if (y <= fr->y || y >= fr->y + fr->height)
                    continue;
                int here = x <= fr->x ? -1 : x >= fr->x + fr->width ? 1 : 0;
                changes += side && here != side;
                if (here == 0 || changes > 2)
                    g_error("%s: edge %d (%s to %s) crosses the frame of %s", what, e,
                            tw_visible_node_title(m, &a->graph->nodes[edge->from]),
                            tw_visible_node_title(m, &a->graph->nodes[edge->to]), m->scopes[fr->scope].path);
                side = here;
            }
        }
    }
}

static void check_every_scope_open(char *json, const char *what)
{
    GError *error = NULL;
    tw_graph_model *m = tw_graph_model_parse(json, -1, &error);
    g_assert_no_error(error);
    g_free(json);
    bool *open = g_new(bool, m->nscopes);
    for (int s = 0; s < m->nscopes; s++)
        open[s] = true;
    tw_graph_arrangement *a = tw_graph_arrangement_new(m, open);
    g_assert_cmpint(a->nframes, ==, m->nscopes - 1);
    assert_frames_reserved(a, what);
    assert_edges_pass_frames(a, what);
    /* Every other scope open (the rest boxes) */
    for (int s = 1; s < m->nscopes; s++)
        open[s] = s % 2 == 1;
    tw_graph_arrangement *b = tw_graph_arrangement_rearrange(a, open);
    assert_frames_reserved(b, what);
    assert_edges_pass_frames(b, what);
    tw_graph_arrangement_unref(b);
    tw_graph_arrangement_unref(a);
    g_free(open);
}

static void test_frames_reserved(void)
{
    /* Random edges between 20 scopes of 50 ops in 2 outer scopes. */
    check_every_scope_open(random_graph_json(2000, 100, 11), "random graph");
    static const char *const models[] = {"resnet_fashion_mnist.json", "unet_small.json",
                                         "siamese_fashion_mnist.json"};
    for (size_t i = 0; i < G_N_ELEMENTS(models); i++) {
        char *path = g_test_build_filename(G_TEST_DIST, "..", "examples", "models", models[i], NULL);
        tw_model *model = tw_model_load(path);
        g_assert_nonnull(model);
        GError *error = NULL;
        char *json = tw_graph_trace_model(model, &error);
        g_assert_no_error(error);
        check_every_scope_open(json, models[i]);
        tw_layer_unref(model);
        g_free(path);
    }
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/graph_layout/chain", test_chain_is_a_column);
    g_test_add_func("/graph_layout/diamond", test_diamond_and_long_edge);
    g_test_add_func("/graph_layout/cycle", test_cycle_is_broken);
    g_test_add_func("/graph_layout/large", test_large_random_graph);
    g_test_add_func("/graph_layout/edges-avoid-boxes", test_edges_avoid_boxes);
    g_test_add_func("/graph_layout/labels-do-not-overlap", test_labels_do_not_overlap);
    g_test_add_func("/graph_layout/traced_cnn", test_traced_cnn);
    g_test_add_func("/graph_layout/bad_input", test_bad_input);
    g_test_add_func("/graph_layout/frames-reserved", test_frames_reserved);
    return g_test_run();
}
