/* The HParams plots (hparams_render.h). */
#include "hparams_render.h"

#include <limits.h>
#include <math.h>
#include <string.h>

#include <cairo-svg.h>
#include <glib.h>

#include <tw/error.h>

#include "line_mask.h"
#include "render_style.h"

#define MARGIN_TOP 36.0    /* the axis names, on two rows */
#define MARGIN_BOTTOM 22.0 /* the lowest value */
#define MARGIN_SIDE 48.0
#define POINT_RADIUS 4.0

static const tw_rgb unselected = {0.62, 0.62, 0.66};

/* row: the selected row's colour; unselected rows share the grey. */
static void draw_row_style(cairo_t *cr, const tw_hp_plot *plot, int row, bool selected)
{
    if (selected) {
        tw_render_set_color(cr, plot->colors[row], 0.95);
        cairo_set_line_width(cr, 2.0);
    } else {
        tw_render_set_color(cr, unselected, 0.45);
        cairo_set_line_width(cr, 1.0);
    }
}

/* A column's lowest and highest value as text for its axis ends. */
static void axis_ends(const tw_hp_column *col, char *lo, char *hi, size_t size)
{
    if (col->kind == TW_HP_NUMBER && isfinite(col->lo)) {
        g_snprintf(lo, size, "%.3g", col->lo);
        g_snprintf(hi, size, "%.3g", col->hi);
    } else if (col->ncategories > 0) {
        g_strlcpy(lo, col->categories[0], size);
        g_strlcpy(hi, col->categories[col->ncategories - 1], size);
    } else {
        g_strlcpy(lo, "", size);
        g_strlcpy(hi, "", size);
    }
}

/* Whether cr draws into a vector file (an export) rather than pixels. */
static bool vector_target(cairo_t *cr)
{
    switch (cairo_surface_get_type(cairo_get_target(cr))) {
    case CAIRO_SURFACE_TYPE_SVG:
    case CAIRO_SURFACE_TYPE_PDF:
    case CAIRO_SURFACE_TYPE_PS:
        return true;
    default:
        return false;
    }
}

/* The parallel plot's axes: their x, and the top and bottom of their
 * values. FALSE when there is nothing to draw lines on. */
static bool parallel_axes(int width, int height, const tw_hp_plot *plot, int ncolumns, double *xs, double *top,
                          double *bottom)
{
    if (ncolumns < 1 || plot->nrows == 0)
        return false;
    double left = MARGIN_SIDE, right = width - MARGIN_SIDE;
    double step = ncolumns > 1 ? (right - left) / (ncolumns - 1) : 0;
    for (int a = 0; a < ncolumns; a++)
        xs[a] = ncolumns > 1 ? left + a * step : width / 2.0;
    *top = MARGIN_TOP;
    *bottom = height - MARGIN_BOTTOM;
    return true;
}

/* The pixel row of each row's value on the column's axis, between top and
 * bottom, or NO_PIXEL where it has none. */
#define NO_PIXEL INT_MIN
static void axis_pixels(const tw_hp_plot *plot, int column, double top, double bottom, int *ys)
{
    for (int i = 0; i < plot->nrows; i++) {
        double p = tw_hp_table_position(plot->table, plot->rows[i], column);
        ys[i] = isnan(p) ? NO_PIXEL : (int)round(bottom - p * (bottom - top));
    }
}

void tw_hp_render_parallel_base(cairo_t *cr, int width, int height, const tw_hp_plot *plot, const int *columns,
                                int ncolumns)
{
    tw_render_style style = tw_render_style_get(plot->dark);
    tw_render_background(cr, width, height, &style);
    ncolumns = MIN(ncolumns, TW_HP_MAX_AXES);
    double xs[TW_HP_MAX_AXES], top, bottom;
    if (!parallel_axes(width, height, plot, ncolumns, xs, &top, &bottom)) {
        const char *note = !plot->table || tw_hp_table_n_rows(plot->table) == 0 ? "No runs yet"
                           : ncolumns < 1 ? "No columns whose values differ"
                                          : "No runs pass the filter";
        tw_render_note(cr, width, height, note, &style);
        return;
    }
    /* the axes with their names and ends */
    PangoLayout *layout = tw_render_label_layout(cr, 11, false);
    cairo_set_line_width(cr, 1.0);
    for (int a = 0; a < ncolumns; a++) {
        const tw_hp_column *col = tw_hp_table_column(plot->table, columns[a]);
        tw_render_set_color(cr, style.axis, 1);
        cairo_move_to(cr, tw_render_crisp(xs[a]), top);
        cairo_line_to(cr, tw_render_crisp(xs[a]), bottom);
        cairo_stroke(cr);
        char lo[40], hi[40];
        axis_ends(col, lo, hi, sizeof lo);
        /* names alternate between two rows, so neighbours do not overlap */
        tw_render_label(cr, layout, col->name, xs[a], a % 2 ? 17 : 2, 0.5, 0,
                        col->role == TW_HP_METRIC ? style.text : style.muted);
        tw_render_label(cr, layout, hi, xs[a] + 3, top, 0, 0, style.muted);
        tw_render_label(cr, layout, lo, xs[a] + 3, bottom + 2, 0, 0, style.muted);
    }
    g_object_unref(layout);
    /* Every row, grey and thin (the selected ones too: their colour goes
     * over it), unantialiased, a segment drawn once however many rows
     * share its pixels, a pixel covered once however many segments cross
     * it. On a raster target (an image, or a recording played into one)
     * the segments are stepped into a mask painted once (line_mask.h:
     * cairo's strokes of them took 5-8 ms for 1,000 runs of 30 columns,
     * most of the frame after a filter); on a vector one (an SVG export)
     * they are a path between each pair of neighbouring axes, stroked
     * once. A missing value breaks the row's line. */
    draw_row_style(cr, plot, -1, false);
    bool vector = vector_target(cr);
    tw_line_mask mask = {0};
    if (!vector)
        tw_line_mask_init(&mask, width, height);
    cairo_set_antialias(cr, CAIRO_ANTIALIAS_NONE);
    /* each row's pixel row on an axis, this one's and the next's */
    int *ys = g_new(int, 2 * (size_t)plot->nrows), *next = ys + plot->nrows;
    axis_pixels(plot, columns[0], top, bottom, ys);
    GHashTable *drawn = g_hash_table_new(g_direct_hash, g_direct_equal);
    for (int a = 0; a + 1 < ncolumns; a++) {
        axis_pixels(plot, columns[a + 1], top, bottom, next);
        g_hash_table_remove_all(drawn);
        for (int i = 0; i < plot->nrows; i++) {
            int y0 = ys[i], y1 = next[i];
            if (y0 == NO_PIXEL || y1 == NO_PIXEL)
                continue;
            if (!g_hash_table_add(drawn, GSIZE_TO_POINTER((gsize)y0 * 65536 + (gsize)y1 + 1)))
                continue;
            if (!vector) { /* from the pixel column of one axis line to the next's */
                tw_line_mask_line(&mask, (int)floor(xs[a]), y0, (int)floor(xs[a + 1]), y1);
                continue;
            }
            cairo_move_to(cr, xs[a], y0 + 0.5);
            cairo_line_to(cr, xs[a + 1], y1 + 0.5);
        }
        if (vector)
            cairo_stroke(cr);
        memcpy(ys, next, sizeof(int) * plot->nrows);
    }
    g_free(ys);
    g_hash_table_unref(drawn);
    if (!vector) {
        tw_line_mask_paint(&mask, cr);
        tw_line_mask_clear(&mask);
    }
    cairo_set_antialias(cr, CAIRO_ANTIALIAS_DEFAULT);
}

/* A stroke each in its run's colour. */
void tw_hp_render_parallel_selected(cairo_t *cr, int width, int height, const tw_hp_plot *plot, const int *columns,
                                    int ncolumns)
{
    ncolumns = MIN(ncolumns, TW_HP_MAX_AXES);
    double xs[TW_HP_MAX_AXES], top, bottom;
    if (!parallel_axes(width, height, plot, ncolumns, xs, &top, &bottom))
        return;
    for (int i = 0; i < plot->nrows; i++) {
        int r = plot->rows[i];
        if (!plot->selected || !plot->selected[r])
            continue;
        draw_row_style(cr, plot, r, true);
        bool drawing = false;
        for (int a = 0; a < ncolumns; a++) {
            double p = tw_hp_table_position(plot->table, r, columns[a]);
            if (isnan(p)) {
                drawing = false;
                continue;
            }
            double y = bottom - p * (bottom - top);
            if (drawing)
                cairo_line_to(cr, xs[a], y);
            else
                cairo_move_to(cr, xs[a], y);
            if (ncolumns == 1)
                cairo_rel_line_to(cr, 0.01, 0);
            drawing = true;
        }
        cairo_stroke(cr);
    }
}

void tw_hp_render_parallel(cairo_t *cr, int width, int height, const tw_hp_plot *plot, const int *columns,
                           int ncolumns)
{
    tw_hp_render_parallel_base(cr, width, height, plot, columns, ncolumns);
    tw_hp_render_parallel_selected(cr, width, height, plot, columns, ncolumns);
}

/* ---- the scatter ---------------------------------------------------------------- */
static tw_rect scatter_area(int width, int height)
{
    return (tw_rect){64, 30, MAX(width - 64 - 16, 1), MAX(height - 30 - 40, 1)};
}

/* The row's point, FALSE when it has no position on either axis. */
static bool scatter_point(const tw_hp_plot *plot, tw_rect area, int row, int x_column, int y_column, double *x,
                          double *y)
{
    double px = tw_hp_table_position(plot->table, row, x_column);
    double py = tw_hp_table_position(plot->table, row, y_column);
    if (isnan(px) || isnan(py))
        return false;
    double pad = 8;
    *x = area.x + pad + px * (area.width - 2 * pad);
    *y = area.y + area.height - pad - py * (area.height - 2 * pad);
    return true;
}

/* An unselected point, centred in a DOT_SIZE square, at two pixels a unit. */
#define DOT_SIZE 10
static cairo_surface_t *grey_dot(const tw_hp_plot *plot)
{
    cairo_surface_t *dot = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, 2 * DOT_SIZE, 2 * DOT_SIZE);
    cairo_surface_set_device_scale(dot, 2, 2);
    cairo_t *cr = cairo_create(dot);
    draw_row_style(cr, plot, -1, false);
    cairo_arc(cr, DOT_SIZE / 2, DOT_SIZE / 2, POINT_RADIUS, 0, 2 * G_PI);
    cairo_fill(cr);
    cairo_destroy(cr);
    return dot;
}

void tw_hp_render_scatter_base(cairo_t *cr, int width, int height, const tw_hp_plot *plot, int x_column,
                               int y_column)
{
    tw_render_style style = tw_render_style_get(plot->dark);
    tw_render_background(cr, width, height, &style);
    if (x_column < 0 || y_column < 0) {
        tw_render_note(cr, width, height, "No columns to plot", &style);
        return;
    }
    const tw_hp_column *xc = tw_hp_table_column(plot->table, x_column), *yc = tw_hp_table_column(plot->table, y_column);
    tw_rect area = scatter_area(width, height);
    tw_render_grid(cr, area, NULL, 0, NULL, 0, &style);
    PangoLayout *layout = tw_render_label_layout(cr, 11, false);
    char lo[40], hi[40];
    axis_ends(xc, lo, hi, sizeof lo);
    tw_render_label(cr, layout, lo, area.x, area.y + area.height + 4, 0, 0, style.muted);
    tw_render_label(cr, layout, hi, area.x + area.width, area.y + area.height + 4, 1, 0, style.muted);
    char *x_title = g_strdup_printf("%s%s", xc->name, xc->log ? " (log)" : "");
    tw_render_label(cr, layout, x_title, area.x + area.width / 2, height - 4, 0.5, 1, style.text);
    g_free(x_title);
    axis_ends(yc, lo, hi, sizeof lo);
    tw_render_label(cr, layout, hi, area.x - 4, area.y, 1, 0, style.muted);
    tw_render_label(cr, layout, lo, area.x - 4, area.y + area.height, 1, 1, style.muted);
    char *y_title = g_strdup_printf("%s%s", yc->name, yc->log ? " (log)" : "");
    tw_render_label(cr, layout, y_title, 4, 4, 0, 0, style.text);
    g_free(y_title);
    g_object_unref(layout);
    /* Every row's point grey (the selected ones too: theirs goes over it),
     * overlapping points darker. Into pixels, one dot drawn once and
     * stamped at each point, rounded to a whole unit: a fill per point
     * took cairo ~1 ms for 250 runs and ~4 for 1,000, a good part of a
     * filter's frame; the stamps a fifth of that. The dot has two pixels a
     * unit, so that it stays sharp at a scale of 2. Into an SVG, circles. */
    bool vector = vector_target(cr);
    cairo_surface_t *dot = vector ? NULL : grey_dot(plot);
    int drawn = 0;
    draw_row_style(cr, plot, -1, false);
    for (int i = 0; i < plot->nrows; i++) {
        double x, y;
        if (!scatter_point(plot, area, plot->rows[i], x_column, y_column, &x, &y))
            continue;
        drawn++;
        if (dot) {
            cairo_set_source_surface(cr, dot, round(x) - DOT_SIZE / 2, round(y) - DOT_SIZE / 2);
            cairo_paint(cr);
            continue;
        }
        cairo_new_sub_path(cr);
        cairo_arc(cr, x, y, POINT_RADIUS, 0, 2 * G_PI);
        cairo_fill(cr);
    }
    if (dot)
        cairo_surface_destroy(dot);
    if (!drawn)
        tw_render_note(cr, width, height, "No run has both values", &style);
}

void tw_hp_render_scatter_selected(cairo_t *cr, int width, int height, const tw_hp_plot *plot, int x_column,
                                   int y_column)
{
    if (x_column < 0 || y_column < 0)
        return;
    tw_rect area = scatter_area(width, height);
    for (int i = 0; i < plot->nrows; i++) {
        int r = plot->rows[i];
        double x, y;
        if (!plot->selected || !plot->selected[r] || !scatter_point(plot, area, r, x_column, y_column, &x, &y))
            continue;
        draw_row_style(cr, plot, r, true);
        cairo_new_sub_path(cr);
        cairo_arc(cr, x, y, POINT_RADIUS + 1, 0, 2 * G_PI);
        cairo_fill(cr);
    }
}

void tw_hp_render_scatter(cairo_t *cr, int width, int height, const tw_hp_plot *plot, int x_column, int y_column)
{
    tw_hp_render_scatter_base(cr, width, height, plot, x_column, y_column);
    tw_hp_render_scatter_selected(cr, width, height, plot, x_column, y_column);
}

int tw_hp_scatter_hit(int width, int height, const tw_hp_plot *plot, int x_column, int y_column, double x, double y)
{
    if (x_column < 0 || y_column < 0)
        return -1;
    tw_rect area = scatter_area(width, height);
    int best = -1;
    double best_d = (POINT_RADIUS + 3) * (POINT_RADIUS + 3);
    for (int i = 0; i < plot->nrows; i++) {
        double px, py;
        if (!scatter_point(plot, area, plot->rows[i], x_column, y_column, &px, &py))
            continue;
        double d = (px - x) * (px - x) + (py - y) * (py - y);
        if (d <= best_d) {
            best_d = d;
            best = plot->rows[i];
        }
    }
    return best;
}

/* ---- files ------------------------------------------------------------------------ */
int tw_hp_render_export(const char *path, int width, int height, tw_hp_draw draw, void *user_data)
{
    bool svg = g_str_has_suffix(path, ".svg") || g_str_has_suffix(path, ".SVG");
    if (!svg && !g_str_has_suffix(path, ".png") && !g_str_has_suffix(path, ".PNG"))
        return tw_error_set("%s: name a .png or .svg file", path);
    cairo_surface_t *surface = svg ? cairo_svg_surface_create(path, width, height)
                                   : cairo_image_surface_create(CAIRO_FORMAT_ARGB32, width, height);
    cairo_t *cr = cairo_create(surface);
    draw(cr, width, height, user_data);
    cairo_destroy(cr);
    cairo_status_t status;
    if (svg) {
        cairo_surface_finish(surface);
        status = cairo_surface_status(surface);
    } else
        status = cairo_surface_write_to_png(surface, path);
    cairo_surface_destroy(surface);
    if (status != CAIRO_STATUS_SUCCESS)
        return tw_error_set("%s: cannot write the plot: %s", path, cairo_status_to_string(status));
    return 0;
}
