/* The hover box (see chart_hover.h). */
#include "chart_hover.h"

#include <glib.h>
#include <math.h>
#include <stdlib.h>
#include <time.h>

#include "render_style.h"

#define LABEL_SIZE 11
#define PAD 6
#define GAP 12      /* between columns */
#define SWATCH 8
#define OFFSET 14   /* from the pointer */
#define NCOLS 5     /* run, smoothed, value, step, time */

static const char *const headers[NCOLS] = {"Run", "Smoothed", "Value", "Step", "Time"};
/* The box's last line: how to zoom, since the wheel alone scrolls the page. */
static const char hint[] = "Ctrl+wheel or drag: zoom · Shift+drag: pan · double-click: reset";

/* The point the renderer marks for x: among the raw points, or the
 * columns' last points, the one nearest x with a finite drawn value. */
static bool nearest_point(const tw_chart *chart, const tw_chart_series *s, double x, tw_hover_row *row)
{
    bool raw = s->points && s->npoints > 0;
    int64_t n = raw ? s->npoints : s->columns ? s->ncolumns : 0;
    double best = INFINITY;
    for (int64_t i = 0; i < n; i++) {
        if (!raw && s->columns[i].count == 0)
            continue;
        const tw_scalar_point *p = raw ? &s->points[i] : &s->columns[i].last;
        double drawn = s->smoothed ? s->smoothed[i] : p->value, d = fabs(tw_chart_point_x(chart, s, p) - x);
        if (isfinite(drawn) && d < best) {
            best = d;
            row->point = *p;
            row->smoothed = drawn;
        }
    }
    return isfinite(best);
}

static int by_distance(const void *a, const void *b)
{
    double da = ((const tw_hover_row *)a)->distance, db = ((const tw_hover_row *)b)->distance;
    return (da > db) - (da < db);
}

int tw_chart_hover_rows(const tw_chart *chart, tw_rect plot, double px, double py, tw_hover_row *rows)
{
    double x = tw_chart_px_to_x(chart, plot, px);
    int n = 0;
    for (int i = 0; i < chart->nseries; i++) {
        tw_hover_row row = {.series = i};
        if (!nearest_point(chart, &chart->series[i], x, &row))
            continue;
        double y = tw_chart_y_to_px(chart, plot, row.smoothed);
        row.distance = isfinite(y) ? fabs(y - py) : INFINITY;
        rows[n++] = row;
    }
    qsort(rows, (size_t)n, sizeof *rows, by_distance);
    return n;
}

/* "12.5s", "4m05s", "2h03m": the time since the run's start. */
static void format_duration(double seconds, char *buf, size_t size)
{
    const char *sign = seconds < 0 ? "-" : "";
    seconds = fabs(seconds);
    if (seconds < 60)
        g_snprintf(buf, size, "%s%.1fs", sign, seconds);
    else if (seconds < 3600)
        g_snprintf(buf, size, "%s%dm%02ds", sign, (int)(seconds / 60), (int)fmod(seconds, 60));
    else
        g_snprintf(buf, size, "%s%dh%02dm", sign, (int)(seconds / 3600), (int)fmod(seconds / 60, 60));
}

/* The row's cells; the time as a clock time on the wall-time axis. */
static void row_cells(const tw_chart *chart, const tw_hover_row *row, char cells[NCOLS][64])
{
    const tw_chart_series *s = &chart->series[row->series];
    g_snprintf(cells[0], 64, "%s", s->label ? s->label : "");
    g_snprintf(cells[1], 64, "%.4g", row->smoothed);
    g_snprintf(cells[2], 64, "%.4g", row->point.value);
    g_snprintf(cells[3], 64, "%" G_GINT64_FORMAT, (gint64)row->point.step);
    if (chart->x_axis == TW_X_WALL_TIME) {
        time_t t = (time_t)floor(row->point.wall_time);
        struct tm tm;
        localtime_r(&t, &tm);
        strftime(cells[4], 64, "%H:%M:%S", &tm);
    } else {
        format_duration(row->point.wall_time - s->time_origin, cells[4], 64);
    }
}

char *tw_chart_hover_text(const tw_chart *chart, const tw_hover_row *rows, int n)
{
    GString *text = g_string_new(NULL);
    for (int c = 0; c < NCOLS; c++)
        g_string_append_printf(text, "%s%s", c ? "\t" : "", headers[c]);
    for (int r = 0; r < n; r++) {
        char cells[NCOLS][64];
        row_cells(chart, &rows[r], cells);
        g_string_append_c(text, '\n');
        for (int c = 0; c < NCOLS; c++)
            g_string_append_printf(text, "%s%s", c ? "\t" : "", cells[c]);
    }
    return g_string_free(text, FALSE);
}

/* Column widths of the header and the rows listed. */
static void measure(PangoLayout *layout, const tw_chart *chart, const tw_hover_row *rows, int n,
                    double widths[NCOLS])
{
    for (int r = -1; r < n; r++) {
        char cells[NCOLS][64];
        if (r >= 0)
            row_cells(chart, &rows[r], cells);
        for (int c = 0; c < NCOLS; c++) {
            double w, h;
            tw_render_label_size(layout, r < 0 ? headers[c] : cells[c], &w, &h);
            widths[c] = MAX(widths[c], w);
        }
    }
}

/* The guide and the dots, clipped to the plot, as the renderer draws them. */
static void draw_marks(cairo_t *cr, tw_rect plot, const tw_chart *chart, double px, const tw_hover_row *rows, int n,
                       const tw_render_style *style)
{
    cairo_save(cr);
    cairo_rectangle(cr, plot.x, plot.y, plot.width, plot.height);
    cairo_clip(cr);
    double guide = tw_render_crisp(px);
    cairo_set_line_width(cr, 1);
    tw_render_set_color(cr, style->muted, 0.7);
    cairo_move_to(cr, guide, plot.y);
    cairo_line_to(cr, guide, plot.y + plot.height);
    cairo_stroke(cr);
    for (int r = 0; r < n; r++) {
        const tw_chart_series *s = &chart->series[rows[r].series];
        double x = tw_chart_x_to_px(chart, plot, tw_chart_point_x(chart, s, &rows[r].point));
        double y = tw_chart_y_to_px(chart, plot, rows[r].smoothed);
        if (!isfinite(x) || !isfinite(y))
            continue;
        cairo_new_sub_path(cr);
        cairo_arc(cr, x, y, 3.5, 0, 2 * G_PI);
        tw_render_set_color(cr, s->color, 1);
        cairo_fill_preserve(cr);
        cairo_set_line_width(cr, 1.5);
        tw_render_set_color(cr, style->background, 1);
        cairo_stroke(cr);
    }
    cairo_restore(cr);
}

void tw_chart_hover_draw(cairo_t *cr, int width, int height, const tw_chart *chart, double px, double py,
                         const tw_hover_row *rows, int n)
{
    tw_render_style style = tw_render_style_get(chart->dark);
    PangoLayout *layout = tw_render_label_layout(cr, LABEL_SIZE, false);
    /* The rows that fit in the chart's height, the nearest, with their
     * dots; a last line says how many more (200 runs would make a box
     * 3,000 pixels tall and a cloud of dots). */
    double text_width, row_height;
    tw_render_label_size(layout, headers[0], &text_width, &row_height);
    row_height += 3;
    int fit = MAX(1, (int)((height - 2 * PAD) / row_height) - 2); /* less the header and the hint */
    int listed = n <= fit ? n : fit - 1, lines = 2 + listed + (listed < n);
    draw_marks(cr, tw_chart_plot_area(width, height), chart, px, rows, listed, &style);
    if (n == 0) {
        g_object_unref(layout);
        return;
    }
    char more[64];
    g_snprintf(more, sizeof more, "%d more", n - listed);
    double widths[NCOLS] = {0};
    measure(layout, chart, rows, listed, widths);
    widths[0] += SWATCH + 6;
    double box_w = 2 * PAD + GAP * (NCOLS - 1), box_h = 2 * PAD + row_height * lines;
    for (int c = 0; c < NCOLS; c++)
        box_w += widths[c];
    double hint_w, hint_h;
    tw_render_label_size(layout, hint, &hint_w, &hint_h);
    box_w = MAX(box_w, hint_w + 2 * PAD);
    /* Right of the pointer, or left of it when that runs out of room. */
    double x = px + OFFSET + box_w <= width ? px + OFFSET : MAX(0, px - OFFSET - box_w);
    double y = CLAMP(py - box_h / 2, 0, MAX(0, height - box_h));
    cairo_save(cr);
    cairo_rectangle(cr, floor(x) + 0.5, floor(y) + 0.5, ceil(box_w), ceil(box_h));
    tw_render_set_color(cr, style.background, 0.94);
    cairo_fill_preserve(cr);
    cairo_set_line_width(cr, 1);
    tw_render_set_color(cr, style.axis, 0.8);
    cairo_stroke(cr);
    for (int r = -1; r < listed; r++) {
        char cells[NCOLS][64];
        if (r >= 0)
            row_cells(chart, &rows[r], cells);
        double cx = x + PAD, cy = y + PAD + (r + 1) * row_height;
        if (r >= 0) {
            cairo_rectangle(cr, cx, cy + (row_height - SWATCH) / 2, SWATCH, SWATCH);
            tw_render_set_color(cr, chart->series[rows[r].series].color, 1);
            cairo_fill(cr);
        }
        for (int c = 0; c < NCOLS; c++) {
            const char *text = r < 0 ? headers[c] : cells[c];
            /* The run's name after the swatch, on the left; numbers on the right. */
            double at = c == 0 ? cx + SWATCH + 6 : cx + widths[c];
            tw_render_label(cr, layout, text, at, cy, c == 0 ? 0 : 1, 0, r < 0 ? style.muted : style.text);
            cx += widths[c] + GAP;
        }
    }
    if (listed < n)
        tw_render_label(cr, layout, more, x + PAD + SWATCH + 6, y + PAD + (listed + 1) * row_height, 0, 0,
                        style.muted);
    tw_render_label(cr, layout, hint, x + PAD, y + PAD + (lines - 1) * row_height, 0, 0, style.muted);
    g_object_unref(layout);
    cairo_restore(cr);
}
