/* The graph renderer (see graph_render.h). */
#include "graph_render.h"

#include <math.h>
#include <string.h>

#include "graph_profile.h"
#include "render_style.h"

#define LABEL_CHAR_WIDTH 7.0     /* an estimate of the 12 px label font's mean advance */
#define BOX_PADDING 14.0
#define BOX_HEIGHT 40.0
#define SCOPE_HEIGHT 46.0
#define LABEL_MIN_SCALE 0.4 /* below it boxes are too small for text */
#define EXPANDER_ROOM 16.0  /* a scope box's "+" left of its labels */
#define EXPANDER_RADIUS 6.0
#define TIME_CHARS 11       /* " · 123.4 µs" after the detail when there are times */
#define HEAT_FLOOR_US 1e-3  /* log scale: a time of 0 sits with this one */
#define SHAPE_SIZE 10.0     /* the edge labels' font */
#define SHAPE_PAD 2.0       /* around an edge label's text: hinting at other zooms may widen it a little */

static const tw_rgb accent = {0.85, 0.25, 0.15};
static const tw_rgb heat_accent = {0.10, 0.45, 0.95}; /* red would vanish on the hot boxes */
static const tw_rgb blocked = {0.80, 0.10, 0.10};     /* the border of a layer that cannot run */

void tw_graph_node_size(const tw_graph_model *m, const tw_visible_node *v, double *width, double *height)
{
    char *title = tw_visible_node_title(m, v), *detail = tw_visible_node_detail(m, v);
    size_t more = (v->nparams ? 4 : 0) + (m->node_us ? TIME_CHARS : 0);
    size_t chars = MAX(strlen(title), strlen(detail) + more);
    *width = MAX(64.0, LABEL_CHAR_WIDTH * (double)chars + 2 * BOX_PADDING) + (v->is_scope ? EXPANDER_ROOM : 0);
    *height = v->is_scope ? SCOPE_HEIGHT : BOX_HEIGHT;
    g_free(title), g_free(detail);
}

tw_layout_rect *tw_graph_place_edge_labels(const tw_graph_model *m, const tw_visible_graph *g,
                                           const tw_graph_layout *layout, int nframes, const tw_graph_frame *frames)
{
    /* Measured with the font the renderer draws them in (Pango's font map
     * is per thread). */
    cairo_surface_t *surface = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, 1, 1);
    cairo_t *cr = cairo_create(surface);
    PangoLayout *font = tw_render_label_layout(cr, SHAPE_SIZE, false);
    double *widths = g_new(double, MAX(g->nedges, 1)), *heights = g_new(double, MAX(g->nedges, 1));
    /* Shaping text is most of the cost, and a big model has few distinct
     * shapes: each text is measured once (its first edge's index + 1). */
    GHashTable *measured = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    for (int e = 0; e < g->nedges; e++) {
        char shape[96];
        tw_graph_tensor_format(&m->nodes[g->edges[e].node].outputs[g->edges[e].output], shape, sizeof shape);
        int same = GPOINTER_TO_INT(g_hash_table_lookup(measured, shape)) - 1;
        if (same >= 0) {
            widths[e] = widths[same], heights[e] = heights[same];
            continue;
        }
        g_hash_table_insert(measured, g_strdup(shape), GINT_TO_POINTER(e + 1));
        tw_render_label_size(font, shape, &widths[e], &heights[e]);
        widths[e] += 2 * SHAPE_PAD, heights[e] += SHAPE_PAD;
    }
    g_hash_table_destroy(measured);
    g_object_unref(font);
    cairo_destroy(cr);
    cairo_surface_destroy(surface);
    tw_layout_rect *titles = g_new(tw_layout_rect, MAX(nframes, 1));
    for (int f = 0; f < nframes; f++)
        titles[f] = (tw_layout_rect){frames[f].x, frames[f].y, frames[f].width, TW_GRAPH_FRAME_HEADER};
    tw_layout_rect *out = g_new(tw_layout_rect, MAX(g->nedges, 1));
    tw_graph_layout_place_labels(layout, widths, heights, nframes, titles, out);
    g_free(widths), g_free(heights), g_free(titles);
    return out;
}

tw_rgb tw_graph_kind_color(tw_op_kind kind, bool dark)
{
    static const tw_rgb light[] = {
        [TW_OP_KIND_LINEAR] = {0.62, 0.77, 0.95},      [TW_OP_KIND_ELEMENTWISE] = {0.70, 0.88, 0.70},
        [TW_OP_KIND_REDUCTION] = {0.98, 0.80, 0.56},   [TW_OP_KIND_SHAPE] = {0.82, 0.78, 0.92},
        [TW_OP_KIND_SOURCE] = {0.97, 0.93, 0.62},      [TW_OP_KIND_SCOPE] = {0.86, 0.88, 0.91},
        [TW_OP_KIND_OUTPUT] = {0.97, 0.93, 0.62}, /* the inputs' colour: the function's ends */
    };
    static const tw_rgb darker[] = {
        [TW_OP_KIND_LINEAR] = {0.16, 0.32, 0.52},      [TW_OP_KIND_ELEMENTWISE] = {0.20, 0.40, 0.22},
        [TW_OP_KIND_REDUCTION] = {0.52, 0.34, 0.12},   [TW_OP_KIND_SHAPE] = {0.34, 0.28, 0.48},
        [TW_OP_KIND_SOURCE] = {0.46, 0.42, 0.14},      [TW_OP_KIND_SCOPE] = {0.26, 0.29, 0.33},
        [TW_OP_KIND_OUTPUT] = {0.46, 0.42, 0.14},
    };
    return dark ? darker[kind] : light[kind];
}

tw_rgb tw_graph_heat_color(double t)
{
    static const tw_rgb stops[] = {{1.00, 0.96, 0.72}, {0.99, 0.62, 0.24}, {0.62, 0.05, 0.08}};
    t = CLAMP(t, 0.0, 1.0) * 2;
    int i = MIN((int)t, 1);
    return tw_rgb_mix(stops[i], stops[i + 1], t - i);
}

double tw_graph_heat_position(double us, double min_us, double max_us)
{
    double lo = log(MAX(min_us, HEAT_FLOOR_US)), hi = log(MAX(max_us, HEAT_FLOOR_US));
    return hi > lo ? (log(MAX(us, HEAT_FLOOR_US)) - lo) / (hi - lo) : 1.0;
}

tw_rgb tw_graph_untimed_color(bool dark)
{
    return dark ? (tw_rgb){0.36, 0.37, 0.39} : (tw_rgb){0.84, 0.84, 0.85};
}

bool *tw_graph_dependencies(const tw_visible_graph *g, int selected)
{
    bool *marked = g_new0(bool, MAX(g->nnodes, 1));
    if (selected < 0 || selected >= g->nnodes)
        return marked;
    marked[selected] = true;
    /* Visible ids follow the data (a box takes its first node's place), so
     * one pass from the selection back to the start finds its inputs. */
    for (bool changed = true; changed;) {
        changed = false;
        for (int e = g->nedges - 1; e >= 0; e--)
            if (marked[g->edges[e].to] && !marked[g->edges[e].from])
                marked[g->edges[e].from] = changed = true;
    }
    return marked;
}

int tw_graph_node_at(const tw_graph_layout *layout, double x, double y)
{
    for (int v = 0; v < layout->nnodes; v++) {
        const tw_layout_box *b = &layout->nodes[v];
        if (x >= b->x && x <= b->x + b->width && y >= b->y && y <= b->y + b->height)
            return v;
    }
    return -1;
}

tw_graph_viewport tw_graph_viewport_fit(const tw_graph_layout *layout, int width, int height)
{
    double scale = MIN(1.0, MIN(width / MAX(layout->width, 1.0), height / MAX(layout->height, 1.0)));
    return (tw_graph_viewport){scale, (layout->width - width / scale) / 2, (layout->height - height / scale) / 2};
}

typedef struct {
    double left, top, right, bottom; /* the world rectangle in view */
} world_rect;

static bool reaches(const world_rect *r, double x0, double y0, double x1, double y1)
{
    return x1 >= r->left && x0 <= r->right && y1 >= r->top && y0 <= r->bottom;
}

static bool edge_visible(const tw_layout_edge *e, const world_rect *r)
{
    double x0 = G_MAXDOUBLE, y0 = G_MAXDOUBLE, x1 = -G_MAXDOUBLE, y1 = -G_MAXDOUBLE;
    for (int p = 0; p < e->npoints; p++) {
        x0 = MIN(x0, e->points[2 * p]), x1 = MAX(x1, e->points[2 * p]);
        y0 = MIN(y0, e->points[2 * p + 1]), y1 = MAX(y1, e->points[2 * p + 1]);
    }
    return reaches(r, x0, y0, x1, y1);
}

/* The time colouring of a frame: the range of the graph's box times. */
typedef struct {
    bool on;
    double min_us, max_us;
} heat_range;

static heat_range scene_heat(const tw_graph_scene *s)
{
    heat_range h = {false, 0, 0};
    h.on = s->color_by == TW_GRAPH_COLOR_TIME && s->model->node_us &&
           tw_graph_time_range(s->model, s->graph, &h.min_us, &h.max_us);
    return h;
}

static void draw_edge(cairo_t *cr, const tw_graph_scene *s, int e, PangoLayout *label, const heat_range *heat,
                      const tw_render_style *style)
{
    const tw_layout_edge *edge = &s->layout->edges[e];
    const tw_visible_edge *ve = &s->graph->edges[e];
    const tw_graph_tensor *t = &s->model->nodes[ve->node].outputs[ve->output];
    bool lit = s->highlighted && s->highlighted[ve->from] && s->highlighted[ve->to];
    double width = CLAMP(0.5 + log10(MAX((double)tw_graph_tensor_numel(t), 1.0)) / 1.5, 1.0, 5.0);
    tw_render_set_color(cr, lit ? (heat->on ? heat_accent : accent) : style->muted, lit ? 1.0 : 0.8);
    cairo_set_line_width(cr, width);
    cairo_move_to(cr, edge->points[0], edge->points[1]);
    for (int p = 1; p < edge->npoints; p++)
        cairo_line_to(cr, edge->points[2 * p], edge->points[2 * p + 1]);
    cairo_stroke(cr);
    /* The arrow head at the reader's top. */
    double x = edge->points[2 * edge->npoints - 2], y = edge->points[2 * edge->npoints - 1];
    double dir = edge->reversed ? -1 : 1, head = 4 + width;
    cairo_move_to(cr, x, y);
    cairo_line_to(cr, x - head * 0.6, y - head * dir);
    cairo_line_to(cr, x + head * 0.6, y - head * dir);
    cairo_close_path(cr);
    cairo_fill(cr);
    const tw_layout_rect *spot = s->labels ? &s->labels[e] : NULL;
    if (label && spot && spot->width > 0) {
        char shape[96];
        tw_graph_tensor_format(t, shape, sizeof shape);
        tw_render_label(cr, label, shape, spot->x + spot->width / 2, spot->y + spot->height / 2, 0.5, 0.5,
                        style->muted);
    }
}

/* A circled "+" (opens a scope) or "-" (closes it). */
static void draw_expander(cairo_t *cr, double x, double y, bool plus, tw_rgb ink)
{
    tw_render_set_color(cr, ink, 0.75);
    cairo_set_line_width(cr, 1.2);
    cairo_new_sub_path(cr);
    cairo_arc(cr, x, y, EXPANDER_RADIUS, 0, 2 * G_PI);
    cairo_move_to(cr, x - 3.5, y);
    cairo_line_to(cr, x + 3.5, y);
    if (plus) {
        cairo_move_to(cr, x, y - 3.5);
        cairo_line_to(cr, x, y + 3.5);
    }
    cairo_stroke(cr);
}

/* An open scope: a faint panel behind its nodes, its path's last part and
 * a "-" that closes it along the top. */
static void draw_frame(cairo_t *cr, const tw_graph_scene *s, const tw_graph_frame *f, PangoLayout *label,
                       const tw_render_style *style)
{
    cairo_rectangle(cr, f->x, f->y, f->width, f->height);
    tw_render_set_color(cr, style->text, 0.04);
    cairo_fill_preserve(cr);
    tw_render_set_color(cr, style->axis, 0.9);
    cairo_set_line_width(cr, 1);
    cairo_stroke(cr);
    if (!label)
        return;
    double y = f->y + TW_GRAPH_FRAME_HEADER / 2;
    draw_expander(cr, f->x + 4 + EXPANDER_RADIUS, y, false, style->text);
    tw_render_label(cr, label, s->model->scopes[f->scope].name, f->x + 8 + 2 * EXPANDER_RADIUS, y, 0, 0.5,
                    style->muted);
}

static tw_rgb box_color(const tw_graph_scene *s, const tw_visible_node *node, const heat_range *heat, bool dark)
{
    if (!heat->on)
        return tw_graph_kind_color(node->kind, dark);
    double us = tw_graph_visible_us(s->model, node);
    return us < 0 ? tw_graph_untimed_color(dark)
                  : tw_graph_heat_color(tw_graph_heat_position(us, heat->min_us, heat->max_us));
}

/* The detail line: the op or the scope's size, the parameters tucked in,
 * and in time colouring the time when there is one (boxes are sized for it
 * in either colouring, so switching keeps the layout). */
static char *detail_text(const tw_graph_scene *s, const tw_visible_node *node, const heat_range *heat)
{
    char *more = tw_visible_node_detail(s->model, node);
    if (node->nparams) {
        char *with = g_strdup_printf("%s +%d", more, node->nparams); /* parameters tucked in */
        g_free(more);
        more = with;
    }
    double us = heat->on ? tw_graph_visible_us(s->model, node) : -1;
    if (us >= 0) {
        char time[32];
        char *with = g_strdup_printf("%s · %s", more, tw_graph_format_us(us, time, sizeof time));
        g_free(more);
        more = with;
    }
    return more;
}

static void draw_node(cairo_t *cr, const tw_graph_scene *s, int v, PangoLayout *title, PangoLayout *detail,
                      const heat_range *heat, bool dark, const tw_render_style *style)
{
    const tw_layout_box *b = &s->layout->nodes[v];
    const tw_visible_node *node = &s->graph->nodes[v];
    double radius = node->is_scope ? 3 : 8;
    cairo_new_sub_path(cr);
    cairo_arc(cr, b->x + b->width - radius, b->y + radius, radius, -G_PI / 2, 0);
    cairo_arc(cr, b->x + b->width - radius, b->y + b->height - radius, radius, 0, G_PI / 2);
    cairo_arc(cr, b->x + radius, b->y + b->height - radius, radius, G_PI / 2, G_PI);
    cairo_arc(cr, b->x + radius, b->y + radius, radius, G_PI, 3 * G_PI / 2);
    cairo_close_path(cr);
    tw_rgb fill = box_color(s, node, heat, dark);
    tw_render_set_color(cr, fill, 1);
    cairo_fill_preserve(cr);
    bool selected = v == s->selected, lit = s->highlighted && s->highlighted[v];
    /* A layer that cannot run here (a layer graph's Lambda): dashed red. */
    bool cannot_run = !node->is_scope && node->output < 0 && s->model->nodes[node->index].cannot_run;
    tw_render_set_color(cr, selected || lit ? (heat->on ? heat_accent : accent) : cannot_run ? blocked : style->axis,
                        1);
    cairo_set_line_width(cr, selected ? 3 : lit || cannot_run ? 2 : node->is_scope ? 1.5 : 1);
    if (cannot_run && !selected && !lit)
        cairo_set_dash(cr, (const double[]){5, 3}, 2, 0);
    cairo_stroke(cr);
    cairo_set_dash(cr, NULL, 0, 0);
    if (!title)
        return;
    char *text = tw_visible_node_title(s->model, node), *more = detail_text(s, node, heat);
    /* Heat fills are the same in either style: text in black or white,
     * whichever stands out, the detail too (grey is lost on orange). */
    bool light_text = heat->on && 0.299 * fill.r + 0.587 * fill.g + 0.114 * fill.b < 0.55;
    tw_rgb ink = !heat->on ? style->text : light_text ? (tw_rgb){1, 1, 1} : (tw_rgb){0.1, 0.1, 0.1};
    tw_rgb muted = heat->on ? ink : style->muted;
    double mid = b->x + b->width / 2 + (node->is_scope ? EXPANDER_ROOM / 2 : 0), top = b->y + b->height / 2;
    if (node->is_scope)
        draw_expander(cr, b->x + TW_GRAPH_EXPANDER_WIDTH / 2 + 2, top, true, ink);
    tw_render_label(cr, title, text, mid, top + 1, 0.5, 1, ink);
    tw_render_label(cr, detail, more, mid, top + 1, 0.5, 0, muted);
    g_free(text), g_free(more);
}

int tw_graph_render(cairo_t *cr, const tw_graph_scene *s, const tw_graph_viewport *vp, int width, int height, bool dark)
{
    tw_render_style style = tw_render_style_get(dark);
    tw_render_background(cr, width, height, &style);
    world_rect r = {vp->origin_x, vp->origin_y, vp->origin_x + width / vp->scale, vp->origin_y + height / vp->scale};
    bool labels = vp->scale >= LABEL_MIN_SCALE;
    cairo_save(cr);
    cairo_scale(cr, vp->scale, vp->scale);
    cairo_translate(cr, -vp->origin_x, -vp->origin_y);
    /* Label fonts in world units, made under the world transform. */
    PangoLayout *title = labels ? tw_render_label_layout(cr, 12, true) : NULL;
    PangoLayout *detail = labels ? tw_render_label_layout(cr, 11, false) : NULL;
    PangoLayout *shape = labels ? tw_render_label_layout(cr, SHAPE_SIZE, false) : NULL;
    cairo_set_line_join(cr, CAIRO_LINE_JOIN_ROUND);
    int drawn = 0;
    heat_range heat = scene_heat(s);
    for (int f = 0; f < s->nframes; f++) {
        const tw_graph_frame *fr = &s->frames[f];
        if (reaches(&r, fr->x, fr->y, fr->x + fr->width, fr->y + fr->height))
            draw_frame(cr, s, fr, detail, &style);
    }
    for (int e = 0; e < s->layout->nedges; e++)
        if (edge_visible(&s->layout->edges[e], &r)) {
            draw_edge(cr, s, e, shape, &heat, &style);
            drawn++;
        }
    for (int v = 0; v < s->layout->nnodes; v++) {
        const tw_layout_box *b = &s->layout->nodes[v];
        if (reaches(&r, b->x, b->y, b->x + b->width, b->y + b->height)) {
            draw_node(cr, s, v, title, detail, &heat, dark, &style);
            drawn++;
        }
    }
    cairo_restore(cr);
    if (title)
        g_object_unref(title), g_object_unref(detail), g_object_unref(shape);
    return drawn;
}
