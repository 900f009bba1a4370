/* The chart's exports (chart_export.h). */
#include "chart_export.h"

#include <cairo-svg.h>
#include <gio/gio.h>

#include "csv_field.h"

static gboolean cairo_failed(cairo_status_t status, const char *path, GError **error)
{
    if (status == CAIRO_STATUS_SUCCESS)
        return FALSE;
    g_set_error(error, G_IO_ERROR, G_IO_ERROR_FAILED, "%s: %s", path, cairo_status_to_string(status));
    return TRUE;
}

static void draw_chart(const tw_chart *chart, cairo_surface_t *surface, int width, int height)
{
    cairo_t *cr = cairo_create(surface);
    tw_chart_render(cr, width, height, chart);
    cairo_destroy(cr);
}

gboolean tw_chart_export_png(const tw_chart *chart, int width, int height, const char *path, GError **error)
{
    cairo_surface_t *surface = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, width, height);
    draw_chart(chart, surface, width, height);
    gboolean ok = !cairo_failed(cairo_surface_write_to_png(surface, path), path, error);
    cairo_surface_destroy(surface);
    return ok;
}

gboolean tw_chart_export_svg(const tw_chart *chart, int width, int height, const char *path, GError **error)
{
    cairo_surface_t *surface = cairo_svg_surface_create(path, width, height);
    draw_chart(chart, surface, width, height);
    cairo_surface_finish(surface);
    gboolean ok = !cairo_failed(cairo_surface_status(surface), path, error);
    cairo_surface_destroy(surface);
    return ok;
}

static void append_row(GString *out, const char *run, const tw_scalar_point *p)
{
    char wall[G_ASCII_DTOSTR_BUF_SIZE], value[G_ASCII_DTOSTR_BUF_SIZE];
    tw_csv_append_field(out, run);
    g_string_append_printf(out, ",%s,%" G_GINT64_FORMAT ",%s\n", g_ascii_dtostr(wall, sizeof wall, p->wall_time),
                           (gint64)p->step, g_ascii_dtostr(value, sizeof value, p->value));
}

/* A point's x in the chart's units: the step, or the time (since the run's
 * start on the relative axis). */
static double point_chart_x(const tw_chart *chart, const tw_chart_series *s, const tw_scalar_point *p)
{
    if (chart->x_axis == TW_X_STEP)
        return (double)p->step;
    return p->wall_time - (chart->x_axis == TW_X_RELATIVE_TIME ? s->time_origin : 0);
}

/* A series' visible rows: its raw points in the range, or each column's
 * first and last point after a comment saying so. */
static void append_series(GString *out, const tw_chart *chart, const tw_chart_series *s)
{
    const char *run = s->label ? s->label : "";
    if (s->points && s->npoints > 0) {
        for (int64_t i = 0; i < s->npoints; i++) {
            double x = point_chart_x(chart, s, &s->points[i]);
            if (x >= chart->x_lo && x <= chart->x_hi)
                append_row(out, run, &s->points[i]);
        }
        return;
    }
    if (!s->columns) /* no data yet: no rows */
        return;
    g_string_append_printf(out, "# %s: reduced to %d columns, each column's first and last point only\n", run,
                           s->ncolumns);
    for (int i = 0; i < s->ncolumns; i++) {
        const tw_lod_column *c = &s->columns[i];
        if (c->count > 0)
            append_row(out, run, &c->first);
        if (c->count > 1)
            append_row(out, run, &c->last);
    }
}

gboolean tw_chart_export_csv(const tw_chart *chart, const char *path, GError **error)
{
    GString *out = g_string_new("run,wall_time,step,value\n");
    for (int i = 0; i < chart->nseries; i++)
        append_series(out, chart, &chart->series[i]);
    gboolean ok = g_file_set_contents(path, out->str, (gssize)out->len, error);
    g_string_free(out, TRUE);
    return ok;
}
