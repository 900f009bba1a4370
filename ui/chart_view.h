/* Contract notes (from the implementation): added tw_chart_view_get_range
 * and tw_chart_view_hover_text, what a person sees of the view state, for
 * the dashboard and for tests that drive the chart's gestures.
 *
 * TwChartView: one scalar chart (a tag) for the selected runs. It holds the
 * view state and input handling and draws with tw_chart_render:
 * - hover: a tooltip listing, per run, the nearest point's value, smoothed
 *   value, step and time, sorted by nearness, and a vertical guide line;
 * - zoom by dragging a rectangle, pan by dragging with Shift or the middle
 *   button, Ctrl+wheel to zoom around the pointer (the wheel alone scrolls
 *   the page), double-click to reset;
 * - on every view change it asks TwDashboardData for a reduction to its
 *   width in pixels, so a zoom reveals raw points and a pan never rereads
 *   the series; new points extend the chart without resetting the zoom;
 * - export the chart as PNG or SVG and the visible data as CSV (drawn and
 *   written by chart_export.c). */
#ifndef TW_UI_CHART_VIEW_H
#define TW_UI_CHART_VIEW_H

#include <gtk/gtk.h>

#include "chart_render.h"
#include "dashboard_data.h"

G_BEGIN_DECLS

#define TW_TYPE_CHART_VIEW (tw_chart_view_get_type())
G_DECLARE_FINAL_TYPE(TwChartView, tw_chart_view, TW, CHART_VIEW, GtkWidget)

GtkWidget *tw_chart_view_new(TwDashboardData *data, const char *tag_name);
/* The runs drawn: (tag id, colour, label, time origin) each. */
void tw_chart_view_set_series(TwChartView *view, int n, const gint64 *tag_ids, const tw_rgb *colors,
                              const char *const *labels, const double *time_origins);
void tw_chart_view_set_smoothing(TwChartView *view, double weight);
void tw_chart_view_set_axes(TwChartView *view, tw_x_axis x, tw_y_axis y, gboolean ignore_outliers);
void tw_chart_view_reset_zoom(TwChartView *view);
/* What Ctrl+wheel does: zooms x around the pointer (the plot's middle when
 * the pointer is elsewhere), y too when the user set it; notches < 0 zoom
 * in, each by 1.2. */
void tw_chart_view_zoom(TwChartView *view, double notches);
/* Pixels at the header's right that controls laid over the chart cover:
 * the title and "log scale" stay left of them. */
void tw_chart_view_set_header_reserve(TwChartView *view, int pixels);

/* While the window trains a model itself (a hold each: nested holds
 * count), every chart draws new data at most every TW_CHART_LIVE_GAP_MS,
 * so that the training worker keeps the cores; the user's zoom and pan are
 * drawn at once. Main thread. */
#define TW_CHART_LIVE_GAP_MS 100
void tw_chart_view_hold_live_gap(gboolean hold);
/* The visible range: x in the x axis's units (steps, seconds since the
 * run's start, seconds since the epoch), y in values. */
void tw_chart_view_get_range(TwChartView *view, double *x_lo, double *x_hi, double *y_lo, double *y_hi);
/* What the hover box shows (a header line, then a line per run nearest
 * first: run, smoothed, value, step, time, tab-separated; g_free), or NULL
 * when the pointer is not over the plot. */
char *tw_chart_view_hover_text(TwChartView *view);
/* The points (over every series) of the chart the last frame painted:
 * when a new point is on screen, for the tests and benchmarks that time
 * a value's way there. */
int64_t tw_chart_view_points_shown(TwChartView *view);
gboolean tw_chart_view_export_png(TwChartView *view, const char *path, GError **error);
gboolean tw_chart_view_export_svg(TwChartView *view, const char *path, GError **error);
gboolean tw_chart_view_export_csv(TwChartView *view, const char *path, GError **error);

G_END_DECLS

#endif
