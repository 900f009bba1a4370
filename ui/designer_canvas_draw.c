/* The designer canvas's geometry and drawing (designer_canvas_draw.h). */
#include "designer_canvas_draw.h"

#include <inttypes.h>
#include <math.h>
#include <pango/pangocairo.h>
#include <stdio.h>
#include <string.h>

#include "designer_arrange.h"
#include "designer_route.h"

#define W TW_DESIGNER_BOX_WIDTH
#define H TW_DESIGNER_BOX_HEIGHT
#define PORT_RADIUS 5.0

int tw_designer_input_ports(TwModelDoc *doc, int node)
{
    int max = tw_model_doc_node_max_inputs(doc, node);
    if (max <= 1)
        return max;
    int n = tw_model_doc_node_ninputs(doc, node);
    return n < max ? n + 1 : n;
}

static void box_origin(TwModelDoc *doc, int node, const tw_designer_overlay *o, double *x, double *y)
{
    tw_model_doc_node_position(doc, node, x, y);
    if (o && o->selected && o->selected[node]) {
        *x += o->move_dx;
        *y += o->move_dy;
    }
}

/* An open nested model lists at most this many of its layers. */
#define NESTED_ROWS 40
#define NESTED_ROW_HEIGHT 15.0

static int nested_rows(TwModelDoc *doc, int node)
{
    if (!tw_model_doc_node_expanded(doc, node))
        return 0;
    int n = tw_model_nlayers(tw_model_doc_layer(doc, node));
    return n > NESTED_ROWS ? NESTED_ROWS + 1 : n; /* the last: "… and k more" */
}

double tw_designer_box_height(TwModelDoc *doc, int node)
{
    int rows = nested_rows(doc, node);
    return rows ? H + 6 + rows * NESTED_ROW_HEIGHT + 6 : H;
}

char **tw_designer_nested_rows(TwModelDoc *doc, int node)
{
    tw_layer *model = tw_model_doc_layer(doc, node);
    if (!model || !tw_layer_is_model(model))
        return NULL;
    int n = tw_model_nlayers(model);
    /* Shapes from what feeds the box, else the nested model's own input. */
    const tw_shape *input = NULL;
    int from, port;
    if (tw_model_doc_node_ninputs(doc, node) == 1 && tw_model_doc_node_input(doc, node, 0, &from, &port))
        input = tw_model_doc_node_output(doc, from, port);
    if (!input)
        input = tw_model_input_shape(model);
    tw_layer_info *info = g_new0(tw_layer_info, MAX(n, 1));
    int known = input ? tw_model_infer(model, input, info) : 0;
    GStrvBuilder *rows = g_strv_builder_new();
    for (int i = 0; i < n && i < NESTED_ROWS; i++) {
        tw_layer *layer = tw_model_layer_at(model, i);
        char shape[96] = "", count[32] = "";
        if (i < known) {
            tw_shape_format(&info[i].output, shape, sizeof shape);
            tw_designer_format_count(info[i].trainable_params + info[i].non_trainable_params, count, sizeof count);
        }
        char *row = g_strdup_printf("%s\t%s\t%s\t%s", tw_layer_class_shown(layer), tw_layer_name(layer), shape,
                                    count);
        g_strv_builder_add(rows, row);
        g_free(row);
    }
    if (n > NESTED_ROWS) {
        char *more = g_strdup_printf("… and %d more layers\t\t\t", n - NESTED_ROWS);
        g_strv_builder_add(rows, more);
        g_free(more);
    }
    g_free(info);
    char **strv = g_strv_builder_end(rows);
    g_strv_builder_unref(rows);
    return strv;
}

static void port_at(TwModelDoc *doc, int node, gboolean output, int port, const tw_designer_overlay *o, double *x,
                    double *y)
{
    double bx, by;
    box_origin(doc, node, o, &bx, &by);
    int count = output ? tw_model_doc_node_noutputs(doc, node) : tw_designer_input_ports(doc, node);
    *x = bx + W * (port + 1) / (count + 1);
    *y = output ? by + tw_designer_box_height(doc, node) : by;
}

void tw_designer_port_point(TwModelDoc *doc, int node, gboolean output, int port, double *x, double *y)
{
    port_at(doc, node, output, port, NULL, x, y);
}

/* Every box's top-left corner (2n doubles), moved boxes shifted, then
 * every box's height (n doubles). */
static double *box_corners(TwModelDoc *doc, const tw_designer_overlay *o)
{
    int n = tw_model_doc_n_layers(doc);
    double *xy = g_new(double, 3 * MAX(n, 1));
    for (int i = 0; i < n; i++) {
        box_origin(doc, i, o, &xy[2 * i], &xy[2 * i + 1]);
        xy[2 * n + i] = tw_designer_box_height(doc, i);
    }
    return xy;
}

static int route_edge(TwModelDoc *doc, const double *xy, int node, int input, const tw_designer_overlay *o,
                      GArray *points)
{
    int from = 0, port = 0;
    tw_model_doc_node_input(doc, node, input, &from, &port);
    double x0, y0, x1, y1;
    port_at(doc, from, TRUE, port, o, &x0, &y0);
    port_at(doc, node, FALSE, input, o, &x1, &y1);
    int n = tw_model_doc_n_layers(doc);
    tw_designer_boxes boxes = {n, xy, W, H, xy + 2 * n};
    return tw_designer_route(&boxes, x0, y0, x1, y1, points);
}

/* Every edge's route, in node and input order, kept on the document until
 * anything they depend on changes (a position, a port, an edge): drawing a
 * frame, a hit test and the next frame reuse them. While boxes are being
 * dragged, an edge whose ends stayed put and whose route misses every
 * moved box keeps its route; everything is routed afresh otherwise (the
 * drop), so no detour outlives the box it went around. */
typedef struct {
    guint64 key; /* what the routes depend on but positions */
    int n;
    double *xy;     /* box_corners' positions and heights they were made for */
    GArray *points; /* doubles: all routes one after the other */
    GArray *starts; /* ints per edge: its first point; one more at the end */
} route_cache;

static void route_cache_free(gpointer data)
{
    route_cache *cache = data;
    g_free(cache->xy);
    g_array_free(cache->points, TRUE);
    g_array_free(cache->starts, TRUE);
    g_free(cache);
}

static guint64 mix(guint64 h, const void *data, size_t size)
{
    const guint8 *b = data; /* FNV-1a */
    for (size_t i = 0; i < size; i++)
        h = (h ^ b[i]) * 1099511628211ull;
    return h;
}

static guint64 routes_key(TwModelDoc *doc, const double *xy)
{
    int n = tw_model_doc_n_layers(doc);
    guint64 h = mix(14695981039346656037ull, &n, sizeof n);
    h = mix(h, xy + 2 * n, sizeof(double) * n); /* the heights */
    for (int i = 0; i < n; i++) {
        int ports[3] = {tw_model_doc_node_noutputs(doc, i), tw_designer_input_ports(doc, i),
                        tw_model_doc_node_ninputs(doc, i)};
        h = mix(h, ports, sizeof ports);
        for (int e = 0; e < ports[2]; e++) {
            int from[2] = {0, 0};
            tw_model_doc_node_input(doc, i, e, &from[0], &from[1]);
            h = mix(h, from, sizeof from);
        }
    }
    return h;
}

/* Whether the route misses every moved box (with half the margin). */
static gboolean misses_moved(const double *p, int np, const double *xy, int n, const gboolean *moved)
{
    double m = TW_DESIGNER_ROUTE_MARGIN / 2;
    for (int b = 0; b < n; b++)
        if (moved[b])
            for (int s = 0; s + 1 < np; s++)
                if (tw_designer_segment_crosses(p[2 * s], p[2 * s + 1], p[2 * s + 2], p[2 * s + 3], xy[2 * b] - m,
                                                xy[2 * b + 1] - m, W + 2 * m, xy[2 * n + b] + 2 * m))
                    return FALSE;
    return TRUE;
}

static const route_cache *all_routes(TwModelDoc *doc, const tw_designer_overlay *o)
{
    int n = tw_model_doc_n_layers(doc);
    double *xy = box_corners(doc, o);
    guint64 key = routes_key(doc, xy);
    route_cache *old = g_object_get_data(G_OBJECT(doc), "tw-designer-routes");
    if (old && old->key == key && !memcmp(old->xy, xy, sizeof(double) * 2 * n)) {
        g_free(xy);
        return old;
    }
    gboolean *moved = NULL;
    gboolean dragging = o && o->selected && (o->move_dx != 0 || o->move_dy != 0);
    if (old && old->key == key && dragging) {
        moved = g_new(gboolean, MAX(n, 1));
        for (int i = 0; i < n; i++)
            moved[i] = xy[2 * i] != old->xy[2 * i] || xy[2 * i + 1] != old->xy[2 * i + 1];
    }
    route_cache *cache = g_new0(route_cache, 1);
    cache->key = key;
    cache->n = n;
    cache->xy = xy;
    cache->points = g_array_new(FALSE, FALSE, sizeof(double));
    cache->starts = g_array_new(FALSE, FALSE, sizeof(int));
    GArray *points = g_array_new(FALSE, FALSE, sizeof(double));
    int k = 0;
    for (int i = 0; i < n; i++)
        for (int e = 0; e < tw_model_doc_node_ninputs(doc, i); e++, k++) {
            int start = cache->points->len / 2;
            g_array_append_val(cache->starts, start);
            if (moved) {
                int from = 0, port = 0, np;
                tw_model_doc_node_input(doc, i, e, &from, &port);
                const double *p = (const double *)old->points->data + 2 * g_array_index(old->starts, int, k);
                np = g_array_index(old->starts, int, k + 1) - g_array_index(old->starts, int, k);
                if (!moved[from] && !moved[i] && misses_moved(p, np, xy, n, moved)) {
                    g_array_append_vals(cache->points, p, 2 * np);
                    continue;
                }
            }
            route_edge(doc, xy, i, e, o, points);
            g_array_append_vals(cache->points, points->data, points->len);
        }
    int end = cache->points->len / 2;
    g_array_append_val(cache->starts, end);
    tw_designer_boxes boxes = {n, xy, W, H, xy + 2 * n};
    tw_designer_routes_order_channels(&boxes, cache->points, cache->starts);
    g_array_free(points, TRUE);
    g_free(moved);
    g_object_set_data_full(G_OBJECT(doc), "tw-designer-routes", cache, route_cache_free); /* frees old */
    return cache;
}

/* The points of edge number k of the cache (node and input order). */
static const double *cached_route(const route_cache *cache, int k, int *n)
{
    int start = g_array_index(cache->starts, int, k);
    *n = g_array_index(cache->starts, int, k + 1) - start;
    return (const double *)cache->points->data + 2 * start;
}

int tw_designer_edge_route(TwModelDoc *doc, int node, int input, const tw_designer_overlay *o, GArray *points)
{
    const route_cache *cache = all_routes(doc, o);
    int k = input;
    for (int i = 0; i < node; i++)
        k += tw_model_doc_node_ninputs(doc, i);
    int n;
    const double *p = cached_route(cache, k, &n);
    g_array_set_size(points, 0);
    g_array_append_vals(points, p, 2 * n);
    return n;
}

int tw_designer_hit_box(TwModelDoc *doc, double x, double y)
{
    for (int i = tw_model_doc_n_layers(doc) - 1; i >= 0; i--) {
        double bx, by;
        tw_model_doc_node_position(doc, i, &bx, &by);
        if (x >= bx && x <= bx + W && y >= by && y <= by + tw_designer_box_height(doc, i))
            return i;
    }
    return -1;
}

gboolean tw_designer_hit_output(TwModelDoc *doc, double x, double y, double reach, int *node, int *port)
{
    for (int i = tw_model_doc_n_layers(doc) - 1; i >= 0; i--)
        for (int k = 0; k < tw_model_doc_node_noutputs(doc, i); k++) {
            double px, py;
            port_at(doc, i, TRUE, k, NULL, &px, &py);
            if (hypot(px - x, py - y) <= reach) {
                *node = i;
                *port = k;
                return TRUE;
            }
        }
    return FALSE;
}

/* Distance from (x, y) to the segment a-b. */
static double segment_distance(double x, double y, double ax, double ay, double bx, double by)
{
    double dx = bx - ax, dy = by - ay, len2 = dx * dx + dy * dy;
    double t = len2 > 0 ? CLAMP(((x - ax) * dx + (y - ay) * dy) / len2, 0, 1) : 0;
    return hypot(ax + t * dx - x, ay + t * dy - y);
}

gboolean tw_designer_hit_edge(TwModelDoc *doc, double x, double y, double reach, int *node, int *input)
{
    double best = reach;
    gboolean found = FALSE;
    const route_cache *cache = all_routes(doc, NULL);
    int k = 0;
    for (int i = 0; i < tw_model_doc_n_layers(doc); i++)
        for (int e = 0; e < tw_model_doc_node_ninputs(doc, i); e++) {
            int n;
            const double *p = cached_route(cache, k++, &n);
            /* Not within a port's reach: there the box or port is meant. */
            for (int s = 0; s + 1 < n; s++) {
                double d = segment_distance(x, y, p[2 * s], p[2 * s + 1], p[2 * s + 2], p[2 * s + 3]);
                if (d < best && hypot(x - p[0], y - p[1]) > reach &&
                    hypot(x - p[2 * n - 2], y - p[2 * n - 1]) > reach) {
                    best = d;
                    *node = i;
                    *input = e;
                    found = TRUE;
                }
            }
        }
    return found;
}

/* ---- drawing -------------------------------------------------------------- */
/* "54,410": Keras' summary separates thousands with commas. */
void tw_designer_format_count(int64_t n, char *buf, size_t size)
{
    char digits[32];
    int len = snprintf(digits, sizeof digits, "%" PRId64, n < 0 ? -n : n);
    size_t o = 0;
    if (n < 0 && o + 1 < size)
        buf[o++] = '-';
    for (int i = 0; i < len && o + 2 < size; i++) {
        if (i && (len - i) % 3 == 0)
            buf[o++] = ',';
        buf[o++] = digits[i];
    }
    buf[o] = '\0';
}

/* One line of s, or up to `lines` wrapped lines, ellipsized. */
static void text_lines(cairo_t *cr, PangoLayout *layout, const char *s, double x, double y, double width,
                       gboolean bold, int lines)
{
    PangoFontDescription *font = pango_font_description_from_string(bold ? "Sans Bold 9" : "Sans 8");
    pango_layout_set_font_description(layout, font);
    pango_font_description_free(font);
    pango_layout_set_width(layout, (int)(width * PANGO_SCALE));
    pango_layout_set_ellipsize(layout, PANGO_ELLIPSIZE_END);
    pango_layout_set_wrap(layout, PANGO_WRAP_WORD_CHAR);
    pango_layout_set_height(layout, -lines);
    pango_layout_set_text(layout, s, -1);
    cairo_move_to(cr, x, y);
    pango_cairo_show_layout(cr, layout);
}

static void text(cairo_t *cr, PangoLayout *layout, const char *s, double x, double y, double width, gboolean bold)
{
    text_lines(cr, layout, s, x, y, width, bold, 1);
}

static void rounded(cairo_t *cr, double x, double y, double w, double h, double r)
{
    cairo_new_sub_path(cr);
    cairo_arc(cr, x + w - r, y + r, r, -G_PI / 2, 0);
    cairo_arc(cr, x + w - r, y + h - r, r, 0, G_PI / 2);
    cairo_arc(cr, x + r, y + h - r, r, G_PI / 2, G_PI);
    cairo_arc(cr, x + r, y + r, r, G_PI, 3 * G_PI / 2);
    cairo_close_path(cr);
}

/* A route with its corners rounded. */
static void route_path(cairo_t *cr, const double *p, int n)
{
    cairo_move_to(cr, p[0], p[1]);
    for (int k = 1; k + 1 < n; k++) {
        double px = p[2 * k - 2], py = p[2 * k - 1], cx = p[2 * k], cy = p[2 * k + 1], nx = p[2 * k + 2],
               ny = p[2 * k + 3];
        double in = hypot(cx - px, cy - py), out = hypot(nx - cx, ny - cy);
        double r = MIN(8.0, MIN(in, out) / 2);
        if (r < 0.5) {
            cairo_line_to(cr, cx, cy);
            continue;
        }
        cairo_line_to(cr, cx + (px - cx) * r / in, cy + (py - cy) * r / in);
        cairo_curve_to(cr, cx, cy, cx, cy, cx + (nx - cx) * r / out, cy + (ny - cy) * r / out);
    }
    cairo_line_to(cr, p[2 * n - 2], p[2 * n - 1]);
}

/* Whether any of the route's points' bounding box, widened by a stroke,
 * meets the doc-unit rectangle (x0, y0)-(x1, y1). */
static gboolean route_meets(const double *p, int n, double x0, double y0, double x1, double y1)
{
    double a = G_MAXDOUBLE, b = G_MAXDOUBLE, c = -G_MAXDOUBLE, d = -G_MAXDOUBLE;
    for (int k = 0; k < n; k++) {
        a = MIN(a, p[2 * k]), c = MAX(c, p[2 * k]);
        b = MIN(b, p[2 * k + 1]), d = MAX(d, p[2 * k + 1]);
    }
    return c >= x0 - 4 && a <= x1 + 4 && d >= y0 - 4 && b <= y1 + 4;
}

/* The edges whose routes meet the doc-unit rectangle (x0, y0)-(x1, y1). */
static void draw_edges(cairo_t *cr, TwModelDoc *doc, const tw_designer_overlay *o, double x0, double y0, double x1,
                       double y1)
{
    const route_cache *cache = all_routes(doc, o);
    int k = 0;
    for (int i = 0; i < tw_model_doc_n_layers(doc); i++)
        for (int e = 0; e < tw_model_doc_node_ninputs(doc, i); e++) {
            int n;
            const double *p = cached_route(cache, k++, &n);
            if (!route_meets(p, n, x0, y0, x1, y1))
                continue;
            gboolean selected = o->edge_node == i && o->edge_input == e;
            if (selected)
                cairo_set_source_rgb(cr, 0.15, 0.45, 0.9);
            else
                cairo_set_source_rgb(cr, 0.45, 0.47, 0.5);
            cairo_set_line_width(cr, selected ? 3.0 : 1.6);
            route_path(cr, p, n);
            cairo_stroke(cr);
        }
}

char *tw_designer_box_shapes(TwModelDoc *doc, int node)
{
    GString *text = g_string_new(NULL);
    for (int k = 0; k < tw_model_doc_node_noutputs(doc, node); k++) {
        const tw_shape *out = tw_model_doc_node_output(doc, node, k);
        char shape[96];
        if (k)
            g_string_append(text, k == 1 ? "\n" : "  ");
        g_string_append(text, out ? tw_shape_format(out, shape, sizeof shape) : "—");
    }
    return g_string_free(text, FALSE);
}

/* An open nested model's layers, one row each, under its own lines. */
static void draw_nested(cairo_t *cr, PangoLayout *layout, TwModelDoc *doc, int node, double x, double y)
{
    char **rows = tw_designer_nested_rows(doc, node);
    int n = rows ? g_strv_length(rows) : 0;
    cairo_rectangle(cr, x + 4, y, W - 8, n * NESTED_ROW_HEIGHT + 6);
    cairo_set_source_rgb(cr, 0.93, 0.95, 0.98);
    cairo_fill(cr);
    for (int k = 0; k < n; k++) {
        char **f = g_strsplit(rows[k], "\t", 4);
        double ry = y + 3 + k * NESTED_ROW_HEIGHT;
        /* The layer's name and output shape; the box's tooltip gives the
         * classes and counts too. */
        gboolean more = !f[1] || !*f[1];
        cairo_set_source_rgb(cr, 0.2, 0.2, 0.25);
        text(cr, layout, more ? f[0] : f[1], x + 10, ry, more ? W - 20 : W * 0.42 - 12, FALSE);
        cairo_set_source_rgb(cr, 0.1, 0.3, 0.55);
        if (!more && f[2])
            text(cr, layout, f[2], x + W * 0.42, ry, W * 0.58 - 8, FALSE);
        g_strfreev(f);
    }
    g_strfreev(rows);
}

static void draw_box(cairo_t *cr, PangoLayout *layout, TwModelDoc *doc, int i, const tw_designer_overlay *o)
{
    double x, y;
    box_origin(doc, i, o, &x, &y);
    tw_layer *layer = tw_model_doc_layer(doc, i);
    const char *error = tw_model_doc_node_error(doc, i);
    gboolean selected = o->selected && o->selected[i];
    gboolean input = tw_model_doc_node_max_inputs(doc, i) == 0;
    double h = tw_designer_box_height(doc, i);
    rounded(cr, x, y, W, h, 7);
    if (error)
        cairo_set_source_rgb(cr, 1.0, 0.93, 0.92);
    else if (input)
        cairo_set_source_rgb(cr, 0.92, 0.96, 1.0);
    else
        cairo_set_source_rgb(cr, 0.98, 0.98, 0.98);
    cairo_fill_preserve(cr);
    if (o->hover_target == i)
        cairo_set_source_rgb(cr, 0.1, 0.6, 0.2);
    else if (selected)
        cairo_set_source_rgb(cr, 0.15, 0.45, 0.9);
    else if (error)
        cairo_set_source_rgb(cr, 0.8, 0.1, 0.1);
    else
        cairo_set_source_rgb(cr, 0.6, 0.62, 0.65);
    cairo_set_line_width(cr, selected || error || o->hover_target == i ? 2.4 : 1.0);
    cairo_stroke(cr);

    cairo_set_source_rgb(cr, 0.1, 0.1, 0.12);
    text(cr, layout, tw_layer_class_shown(layer), x + 8, y + 5, W - 16, TRUE);
    char line[160], count[32];
    const tw_layer_info *info = tw_model_doc_info(doc, i);
    tw_designer_format_count(info->trainable_params + info->non_trainable_params, count, sizeof count);
    char *shapes = tw_designer_box_shapes(doc, i);
    gboolean several = tw_model_doc_node_noutputs(doc, i) > 1;
    cairo_set_source_rgb(cr, 0.35, 0.35, 0.4);
    if (several && !error) {
        /* The shapes take two lines; the count goes after the name. */
        snprintf(line, sizeof line, "%s · %s params", tw_layer_name(layer), count);
        text(cr, layout, line, x + 8, y + 20, W - 16, FALSE);
    } else
        text(cr, layout, tw_layer_name(layer), x + 8, y + 20, W - 16, FALSE);
    if (error) {
        cairo_set_source_rgb(cr, 0.75, 0.05, 0.05);
        text_lines(cr, layout, error, x + 8, y + 33, W - 16, FALSE, 2);
    } else if (several) {
        cairo_set_source_rgb(cr, 0.1, 0.3, 0.55);
        text_lines(cr, layout, shapes, x + 8, y + 34, W - 16, FALSE, 2);
    } else {
        cairo_set_source_rgb(cr, 0.1, 0.3, 0.55);
        text(cr, layout, shapes, x + 8, y + 34, W - 16, FALSE);
        snprintf(line, sizeof line, "%s params", count);
        cairo_set_source_rgb(cr, 0.35, 0.35, 0.4);
        text(cr, layout, line, x + 8, y + 48, W - 16, FALSE);
    }
    g_free(shapes);
    if (h > H)
        draw_nested(cr, layout, doc, i, x, y + H);
    /* Ports: inputs on top, outputs below; an empty input port hollow. */
    int nin = tw_designer_input_ports(doc, i), connected = tw_model_doc_node_ninputs(doc, i);
    for (int k = 0; k < nin; k++) {
        double px, py;
        port_at(doc, i, FALSE, k, o, &px, &py);
        cairo_new_path(cr); /* the text leaves a current point */
        cairo_arc(cr, px, py, PORT_RADIUS, 0, 2 * G_PI);
        cairo_set_source_rgb(cr, 1, 1, 1);
        cairo_fill_preserve(cr);
        if (k < connected)
            cairo_set_source_rgb(cr, 0.45, 0.47, 0.5);
        else
            cairo_set_source_rgb(cr, 0.8, 0.3, 0.1);
        cairo_set_line_width(cr, 1.5);
        cairo_stroke(cr);
    }
    for (int k = 0; k < tw_model_doc_node_noutputs(doc, i); k++) {
        double px, py;
        port_at(doc, i, TRUE, k, o, &px, &py);
        cairo_new_path(cr);
        cairo_arc(cr, px, py, PORT_RADIUS, 0, 2 * G_PI);
        cairo_set_source_rgb(cr, 0.15, 0.45, 0.9);
        cairo_fill(cr);
    }
}

#define MINIMAP_SIZE 170.0
#define MINIMAP_MARGIN 10.0

gboolean tw_designer_minimap_place(TwModelDoc *doc, const tw_designer_viewport *view, double width, double height,
                                   tw_designer_minimap *map)
{
    int n = tw_model_doc_n_layers(doc);
    double size = MIN(MINIMAP_SIZE, MIN(width, height) / 3);
    if (n == 0 || size < 60)
        return FALSE;
    double x0 = G_MAXDOUBLE, y0 = G_MAXDOUBLE, x1 = -G_MAXDOUBLE, y1 = -G_MAXDOUBLE;
    for (int i = 0; i < n; i++) {
        double x, y;
        tw_model_doc_node_position(doc, i, &x, &y);
        x0 = MIN(x0, x);
        y0 = MIN(y0, y);
        x1 = MAX(x1, x + W);
        y1 = MAX(y1, y + tw_designer_box_height(doc, i));
    }
    /* All of it in view: no map. */
    double vx0 = -view->ox / view->zoom, vy0 = -view->oy / view->zoom;
    if (x0 >= vx0 && y0 >= vy0 && x1 <= vx0 + width / view->zoom && y1 <= vy0 + height / view->zoom)
        return FALSE;
    map->scale = MIN(size / (x1 - x0), size / (y1 - y0));
    map->width = (x1 - x0) * map->scale;
    map->height = (y1 - y0) * map->scale;
    map->x = width - MINIMAP_MARGIN - map->width;
    map->y = height - MINIMAP_MARGIN - map->height;
    map->x0 = x0;
    map->y0 = y0;
    return TRUE;
}

void tw_designer_minimap_to_doc(const tw_designer_minimap *map, double x, double y, double *doc_x, double *doc_y)
{
    *doc_x = (x - map->x) / map->scale + map->x0;
    *doc_y = (y - map->y) / map->scale + map->y0;
}

static void draw_minimap(cairo_t *cr, TwModelDoc *doc, const tw_designer_viewport *view, double width, double height)
{
    tw_designer_minimap map;
    if (!tw_designer_minimap_place(doc, view, width, height, &map))
        return;
    cairo_rectangle(cr, map.x - 4, map.y - 4, map.width + 8, map.height + 8);
    cairo_set_source_rgba(cr, 1, 1, 1, 0.92);
    cairo_fill_preserve(cr);
    cairo_set_source_rgb(cr, 0.6, 0.62, 0.65);
    cairo_set_line_width(cr, 1);
    cairo_stroke(cr);
    for (int i = 0; i < tw_model_doc_n_layers(doc); i++) {
        double x, y;
        tw_model_doc_node_position(doc, i, &x, &y);
        cairo_rectangle(cr, map.x + (x - map.x0) * map.scale, map.y + (y - map.y0) * map.scale,
                        MAX(W * map.scale, 1), MAX(tw_designer_box_height(doc, i) * map.scale, 1));
    }
    cairo_set_source_rgb(cr, 0.55, 0.57, 0.6);
    cairo_fill(cr);
    for (int i = 0; i < tw_model_doc_n_layers(doc); i++)
        if (tw_model_doc_node_error(doc, i)) {
            double x, y;
            tw_model_doc_node_position(doc, i, &x, &y);
            cairo_rectangle(cr, map.x + (x - map.x0) * map.scale - 1, map.y + (y - map.y0) * map.scale - 1,
                            MAX(W * map.scale, 1) + 2, MAX(tw_designer_box_height(doc, i) * map.scale, 1) + 2);
        }
    cairo_set_source_rgb(cr, 0.8, 0.1, 0.1);
    cairo_fill(cr);
    /* The part in view, clipped to the map. */
    cairo_save(cr);
    cairo_rectangle(cr, map.x - 4, map.y - 4, map.width + 8, map.height + 8);
    cairo_clip(cr);
    double vx = -view->ox / view->zoom, vy = -view->oy / view->zoom;
    cairo_rectangle(cr, map.x + (vx - map.x0) * map.scale, map.y + (vy - map.y0) * map.scale,
                    width / view->zoom * map.scale, height / view->zoom * map.scale);
    cairo_set_source_rgba(cr, 0.15, 0.45, 0.9, 0.15);
    cairo_fill_preserve(cr);
    cairo_set_source_rgb(cr, 0.15, 0.45, 0.9);
    cairo_set_line_width(cr, 1.5);
    cairo_stroke(cr);
    cairo_restore(cr);
}

void tw_designer_draw_document(cairo_t *cr, TwModelDoc *doc, const tw_designer_viewport *view,
                               const tw_designer_overlay *o)
{
    cairo_save(cr);
    cairo_set_source_rgb(cr, 0.94, 0.94, 0.95);
    cairo_paint(cr);
    cairo_translate(cr, view->ox, view->oy);
    cairo_scale(cr, view->zoom, view->zoom);
    /* The part of the document inside the clip, for culling. */
    double x0, y0, x1, y1;
    cairo_clip_extents(cr, &x0, &y0, &x1, &y1);
    draw_edges(cr, doc, o, x0, y0, x1, y1);
    PangoLayout *layout = pango_cairo_create_layout(cr);
    for (int i = 0; i < tw_model_doc_n_layers(doc); i++) {
        double x, y;
        box_origin(doc, i, o, &x, &y);
        if (x + W < x0 - 10 || x > x1 + 10 || y + tw_designer_box_height(doc, i) < y0 - 10 || y > y1 + 10)
            continue;
        draw_box(cr, layout, doc, i, o);
    }
    g_object_unref(layout);
    if (o->connecting) {
        cairo_set_source_rgb(cr, 0.1, 0.6, 0.2);
        cairo_set_line_width(cr, 2.0);
        cairo_move_to(cr, o->x0, o->y0);
        cairo_line_to(cr, o->x1, o->y1);
        cairo_stroke(cr);
    }
    if (o->banding) {
        cairo_rectangle(cr, MIN(o->x0, o->x1), MIN(o->y0, o->y1), fabs(o->x1 - o->x0), fabs(o->y1 - o->y0));
        cairo_set_source_rgba(cr, 0.15, 0.45, 0.9, 0.12);
        cairo_fill_preserve(cr);
        cairo_set_source_rgb(cr, 0.15, 0.45, 0.9);
        cairo_set_line_width(cr, 1.0 / view->zoom);
        cairo_stroke(cr);
    }
    cairo_restore(cr);
}

void tw_designer_draw_minimap(cairo_t *cr, TwModelDoc *doc, const tw_designer_viewport *view, double width,
                              double height)
{
    draw_minimap(cr, doc, view, width, height);
}

void tw_designer_draw(cairo_t *cr, TwModelDoc *doc, const tw_designer_viewport *view, double width, double height,
                      const tw_designer_overlay *o)
{
    cairo_save(cr);
    cairo_rectangle(cr, 0, 0, width, height);
    cairo_clip(cr);
    tw_designer_draw_document(cr, doc, view, o);
    cairo_restore(cr);
    draw_minimap(cr, doc, view, width, height);
}
