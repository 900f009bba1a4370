/* The graph view's renderer (ui/graph_render.c) drawn into image surfaces:
 * no display. Boxes are where the layout put them in their kind's colour,
 * or, with a profile (ui/graph_profile.c), in their time's heat colour;
 * the selection's inputs are marked, and only what the viewport shows is
 * drawn (the time for a 5,000-node graph's frame is printed). */
#include <cairo.h>
#include <glib.h>
#include <math.h>
#include <string.h>

#include "graph_profile.h"
#include "graph_render.h"

/* input -> matmul (reads a variable: tucked) -> relu -> sum */
static const char chain_json[] =
    "{\"format\": \"twb-graph\", \"version\": 1, \"function\": \"f\", \"nodes\": ["
    "{\"id\": 0, \"op\": \"input\", \"name\": \"input_0\", \"scope\": \"\", \"inputs\": [],"
    " \"outputs\": [{\"dtype\": \"float32\", \"shape\": [1, 4]}], \"attrs\": {}},"
    "{\"id\": 1, \"op\": \"variable\", \"name\": \"dense/kernel\", \"scope\": \"m/dense\", \"inputs\": [],"
    " \"outputs\": [{\"dtype\": \"float32\", \"shape\": [4, 8]}], \"attrs\": {}},"
    "{\"id\": 2, \"op\": \"matmul\", \"name\": \"m/dense/matmul\", \"scope\": \"m/dense\","
    " \"inputs\": [[0, 0], [1, 0]], \"outputs\": [{\"dtype\": \"float32\", \"shape\": [1, 8]}], \"attrs\": {}},"
    "{\"id\": 3, \"op\": \"relu\", \"name\": \"m/dense/relu\", \"scope\": \"m/dense\", \"inputs\": [[2, 0]],"
    " \"outputs\": [{\"dtype\": \"float32\", \"shape\": [1, 8]}], \"attrs\": {}},"
    "{\"id\": 4, \"op\": \"sum\", \"name\": \"m/sum\", \"scope\": \"m\", \"inputs\": [[3, 0]],"
    " \"outputs\": [{\"dtype\": \"float32\", \"shape\": []}], \"attrs\": {}}]}";

typedef struct {
    tw_graph_model *model;
    tw_visible_graph *graph;
    tw_graph_layout *layout;
} fixture;

/* The graph, with the profile's times when profile is not NULL. */
static void fixture_make_profiled(fixture *f, const char *json, const char *profile, const bool *expanded)
{
    GError *error = NULL;
    f->model = tw_graph_model_parse(json, -1, &error);
    g_assert_no_error(error);
    if (profile) {
        g_assert_true(tw_graph_profile_apply(f->model, profile, &error));
        g_assert_no_error(error);
    }
    f->graph = tw_visible_graph_new(f->model, expanded);
    int n = f->graph->nnodes;
    double *w = g_new(double, MAX(n, 1)), *h = g_new(double, MAX(n, 1));
    int *edges = g_new(int, 2 * MAX(f->graph->nedges, 1));
    for (int v = 0; v < n; v++)
        tw_graph_node_size(f->model, &f->graph->nodes[v], &w[v], &h[v]);
    for (int e = 0; e < f->graph->nedges; e++)
        edges[2 * e] = f->graph->edges[e].from, edges[2 * e + 1] = f->graph->edges[e].to;
    f->layout = tw_graph_layout_new(n, w, h, f->graph->nedges, edges);
    g_free(w), g_free(h), g_free(edges);
}

static void fixture_make(fixture *f, const char *json, const bool *expanded)
{
    fixture_make_profiled(f, json, NULL, expanded);
}

static void fixture_free(fixture *f)
{
    tw_graph_layout_free(f->layout);
    tw_visible_graph_free(f->graph);
    tw_graph_model_free(f->model);
}

static tw_rgb pixel(cairo_surface_t *surface, int x, int y)
{
    cairo_surface_flush(surface);
    const guint32 *row = (const guint32 *)(cairo_image_surface_get_data(surface) +
                                           y * cairo_image_surface_get_stride(surface));
    guint32 p = row[x];
    return (tw_rgb){((p >> 16) & 255) / 255.0, ((p >> 8) & 255) / 255.0, (p & 255) / 255.0};
}

static void assert_color(tw_rgb got, tw_rgb want)
{
    g_assert_cmpfloat(fabs(got.r - want.r) + fabs(got.g - want.g) + fabs(got.b - want.b), <, 0.03);
}

static void test_boxes_where_laid_out(void)
{
    fixture f;
    fixture_make(&f, chain_json, NULL);
    g_assert_cmpint(f.graph->nnodes, ==, 4); /* the kernel is tucked into matmul */
    int width = (int)f.layout->width + 40, height = (int)f.layout->height + 40;
    cairo_surface_t *surface = cairo_image_surface_create(CAIRO_FORMAT_RGB24, width, height);
    cairo_t *cr = cairo_create(surface);
    tw_graph_scene scene = {f.model, f.graph, f.layout, -1, NULL};
    tw_graph_viewport vp = {1, -20, -20};
    g_assert_cmpint(tw_graph_render(cr, &scene, &vp, width, height, false), ==, 7);
    for (int v = 0; v < f.graph->nnodes; v++) {
        const tw_layout_box *b = &f.layout->nodes[v];
        /* Inside the box, left of its centred labels. */
        assert_color(pixel(surface, (int)b->x + 20 + 5, (int)(b->y + b->height / 2) + 20),
                     tw_graph_kind_color(f.graph->nodes[v].kind, false));
    }
    g_assert_cmpint(f.graph->nodes[1].kind, ==, TW_OP_KIND_LINEAR);
    g_assert_cmpint(f.graph->nodes[3].kind, ==, TW_OP_KIND_REDUCTION);
    /* Left of the column: background. */
    tw_rgb background = pixel(surface, 2, height / 2);
    g_assert_cmpfloat(background.r, >, 0.9);

    /* Selecting relu marks it and its inputs (matmul, input), not sum. */
    bool *lit = tw_graph_dependencies(f.graph, 2);
    g_assert_true(lit[0] && lit[1] && lit[2]);
    g_assert_false(lit[3]);
    scene.selected = 2, scene.highlighted = lit;
    tw_graph_render(cr, &scene, &vp, width, height, false);
    const tw_layout_box *relu = &f.layout->nodes[2], *sum = &f.layout->nodes[3];
    tw_rgb border = pixel(surface, (int)(relu->x + relu->width / 2) + 20, (int)relu->y + 20);
    g_assert_cmpfloat(border.r, >, border.g + 0.3); /* the accent */
    border = pixel(surface, (int)(sum->x + sum->width / 2) + 20, (int)sum->y + 20);
    g_assert_cmpfloat(border.r, <, border.g + 0.3);
    g_free(lit);

    /* The node under a point. */
    g_assert_cmpint(tw_graph_node_at(f.layout, relu->x + 1, relu->y + 1), ==, 2);
    g_assert_cmpint(tw_graph_node_at(f.layout, -5, -5), ==, -1);
    cairo_destroy(cr);
    cairo_surface_destroy(surface);
    fixture_free(&f);
}

/* A layered DAG of n adds, each reading two nodes of the previous layer. */
static char *wide_graph_json(int n, int per_layer)
{
    GString *s = g_string_new("{\"format\": \"twb-graph\", \"version\": 1, \"function\": \"g\", \"nodes\": [");
    for (int i = 0; i < n; i++) {
        int layer = i / per_layer, prev = (layer - 1) * per_layer;
        g_string_append_printf(s, "%s{\"id\": %d, \"op\": \"%s\", \"name\": \"n%d\", \"scope\": \"s%d\", \"inputs\": [",
                               i ? ", " : "", i, layer ? "add" : "input", i, i / 100);
        if (layer)
            g_string_append_printf(s, "[%d, 0], [%d, 0]", prev + i % per_layer, prev + (i * 7 + 3) % per_layer);
        g_string_append(s, "], \"outputs\": [{\"dtype\": \"float32\", \"shape\": [1, 16]}], \"attrs\": {}}");
    }
    g_string_append(s, "]}");
    return g_string_free(s, FALSE);
}

static void test_culling(void)
{
    char *json = wide_graph_json(5000, 50);
    fixture f;
    fixture_make(&f, json, NULL);
    int total = f.layout->nnodes + f.layout->nedges;
    cairo_surface_t *surface = cairo_image_surface_create(CAIRO_FORMAT_RGB24, 1280, 800);
    cairo_t *cr = cairo_create(surface);
    tw_graph_scene scene = {f.model, f.graph, f.layout, -1, NULL};
    /* Life size at the top-left: a corner of the graph. */
    tw_graph_viewport vp = {1, 0, 0};
    gint64 t0 = g_get_monotonic_time();
    int drawn = tw_graph_render(cr, &scene, &vp, 1280, 800, false);
    double ms = (double)(g_get_monotonic_time() - t0) / 1000;
    g_print("# 5,000-node graph, 1280x800 life-size frame: %d of %d items drawn in %.2f ms\n", drawn, total, ms);
    g_assert_cmpint(drawn, >, 0);
    g_assert_cmpint(drawn, <, total / 10);
    /* Every node it drew reaches into the view; one far off draws nothing. */
    vp = (tw_graph_viewport){1, -5000, -5000};
    g_assert_cmpint(tw_graph_render(cr, &scene, &vp, 1280, 800, false), ==, 0);
    /* Fitted: everything, without labels (too small). */
    vp = tw_graph_viewport_fit(f.layout, 1280, 800);
    t0 = g_get_monotonic_time();
    drawn = tw_graph_render(cr, &scene, &vp, 1280, 800, false);
    ms = (double)(g_get_monotonic_time() - t0) / 1000;
    g_print("# 5,000-node graph fitted into 1280x800: %d items drawn in %.2f ms\n", drawn, ms);
    g_assert_cmpint(drawn, ==, total);
    cairo_destroy(cr);
    cairo_surface_destroy(surface);
    fixture_free(&f);
    g_free(json);
}

/* chain_json's ops measured: matmul the slowest by far; the input has no
 * entry (not measured); an entry for a node the graph lacks is skipped. */
static const char chain_profile[] =
    "{\"format\": \"twb-graph-profile\", \"version\": 1, \"function\": \"f\", \"runs\": 10, \"nodes\": ["
    "{\"name\": \"m/dense/matmul\", \"op\": \"matmul\", \"total_us\": 4000, \"mean_us\": 400},"
    "{\"name\": \"m/dense/relu\", \"op\": \"relu\", \"total_us\": 20, \"mean_us\": 2},"
    "{\"name\": \"m/sum\", \"op\": \"sum\", \"total_us\": 180, \"mean_us\": 18},"
    "{\"name\": \"elsewhere\", \"op\": \"add\", \"total_us\": 1, \"mean_us\": 0.1}]}";

static tw_rgb box_pixel(cairo_surface_t *surface, const tw_layout_box *b)
{
    return pixel(surface, (int)b->x + 20 + 5, (int)(b->y + b->height / 2) + 20); /* left of the labels */
}

static double color_distance(tw_rgb a, tw_rgb b)
{
    return fabs(a.r - b.r) + fabs(a.g - b.g) + fabs(a.b - b.b);
}

static void test_time_colours(void)
{
    fixture f;
    fixture_make_profiled(&f, chain_json, chain_profile, NULL);
    g_assert_cmpint(f.graph->nnodes, ==, 4); /* input, matmul (+kernel), relu, sum */
    g_assert_cmpfloat(f.model->step_us, ==, 420);
    g_assert_cmpint(f.model->profile_runs, ==, 10);
    int width = (int)f.layout->width + 40, height = (int)f.layout->height + 40;
    cairo_surface_t *surface = cairo_image_surface_create(CAIRO_FORMAT_RGB24, width, height);
    cairo_t *cr = cairo_create(surface);
    tw_graph_scene scene = {f.model, f.graph, f.layout, -1, NULL};
    scene.color_by = TW_GRAPH_COLOR_TIME;
    tw_graph_viewport vp = {1, -20, -20};
    tw_graph_render(cr, &scene, &vp, width, height, false);
    const tw_layout_box *input = &f.layout->nodes[0], *matmul = &f.layout->nodes[1], *relu = &f.layout->nodes[2];
    /* The slowest box in the hottest colour, the fastest in the coolest,
     * the one in between on the log scale between them; the unmeasured
     * input grey. */
    tw_rgb hot = tw_graph_heat_color(1), cool = tw_graph_heat_color(0);
    g_assert_cmpfloat(color_distance(hot, cool), >, 0.5);
    assert_color(box_pixel(surface, matmul), hot);
    assert_color(box_pixel(surface, relu), cool);
    assert_color(box_pixel(surface, &f.layout->nodes[3]), tw_graph_heat_color(log(9) / log(200)));
    assert_color(box_pixel(surface, input), tw_graph_untimed_color(false));
    for (int v = 0; v < f.graph->nnodes; v++)
        if (v != 1)
            g_assert_cmpfloat(color_distance(box_pixel(surface, &f.layout->nodes[v]), hot), >, 0.2);

    /* The same scene by op kind: the profile changes nothing there. */
    scene.color_by = TW_GRAPH_COLOR_KIND;
    tw_graph_render(cr, &scene, &vp, width, height, false);
    assert_color(box_pixel(surface, matmul), tw_graph_kind_color(TW_OP_KIND_LINEAR, false));
    cairo_destroy(cr);
    cairo_surface_destroy(surface);

    /* A closed scope's time is the sum of its nodes'. */
    bool expanded[8] = {false};
    int dense = tw_graph_model_find_scope(f.model, "m/dense");
    g_assert_cmpint(dense, >, 0);
    tw_visible_graph *closed = tw_visible_graph_new(f.model, expanded);
    int box = closed->of_node[2];
    g_assert_true(closed->nodes[box].is_scope);
    double min_us, max_us;
    g_assert_true(tw_graph_time_range(f.model, closed, &min_us, &max_us));
    g_assert_cmpfloat(max_us, ==, 420); /* the root scope "m" closed: every op */
    tw_visible_graph_free(closed);
    expanded[0] = expanded[tw_graph_model_find_scope(f.model, "m")] = true;
    closed = tw_visible_graph_new(f.model, expanded);
    g_assert_cmpfloat(tw_graph_visible_us(f.model, &closed->nodes[closed->of_node[2]]), ==, 402);
    g_assert_cmpfloat(tw_graph_visible_us(f.model, &closed->nodes[closed->of_node[4]]), ==, 18);
    g_assert_cmpfloat(tw_graph_visible_us(f.model, &closed->nodes[closed->of_node[0]]), ==, -1);
    tw_visible_graph_free(closed);
    fixture_free(&f);
}

static void test_profile_errors(void)
{
    static const char *const bad[] = {
        "not json",
        "{\"format\": \"twb-graph\", \"version\": 1, \"nodes\": []}",
        "{\"format\": \"twb-graph-profile\", \"version\": 1}",
        "{\"format\": \"twb-graph-profile\", \"version\": 1, \"nodes\": [{\"name\": \"m/sum\"}]}",
        "{\"format\": \"twb-graph-profile\", \"version\": 1, \"nodes\": [{\"name\": \"x\", \"mean_us\": 1}]}",
    };
    for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
        GError *error = NULL;
        tw_graph_model *m = tw_graph_model_parse(chain_json, -1, &error);
        g_assert_no_error(error);
        g_assert_false(tw_graph_profile_apply(m, bad[i], &error));
        g_assert_nonnull(error);
        g_assert_null(m->node_us);
        g_error_free(error);
        tw_graph_model_free(m);
    }
    char text[32];
    g_assert_cmpstr(tw_graph_format_us(12.34, text, sizeof text), ==, "12.3 µs");
    g_assert_cmpstr(tw_graph_format_us(1204, text, sizeof text), ==, "1.20 ms");
    g_assert_cmpstr(tw_graph_format_us(2.5e6, text, sizeof text), ==, "2.50 s");
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/graph_render/boxes", test_boxes_where_laid_out);
    g_test_add_func("/graph_render/culling", test_culling);
    g_test_add_func("/graph_render/time-colours", test_time_colours);
    g_test_add_func("/graph_render/profile-errors", test_profile_errors);
    return g_test_run();
}
