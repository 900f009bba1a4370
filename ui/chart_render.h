/* Pure renderers for the dashboard's scalar charts: functions of (data,
 * size, style) drawing onto a cairo_t, with no widget state, so tests draw
 * them into image surfaces and check pixels.
 *
 * A chart shows several series (one per run) in the run's colour. Each
 * series arrives already reduced to columns (tw_lod_column from
 * tw/run_store.h: count, first, last, min, max per column), so drawing cost
 * depends on the width, never on the series' length: every column with
 * points draws its min-max extent, so a single spike among ten million
 * points stays visible. When the view is zoomed in far enough that columns
 * hold one point each, the raw points are drawn as a line.
 */
#ifndef TW_UI_CHART_RENDER_H
#define TW_UI_CHART_RENDER_H

#include <cairo.h>
#include <stdbool.h>
#include <stdint.h>

#include <tw/run_store.h>

typedef enum { TW_X_STEP, TW_X_RELATIVE_TIME, TW_X_WALL_TIME } tw_x_axis;
typedef enum { TW_Y_LINEAR, TW_Y_LOG } tw_y_axis;

typedef struct {
    double r, g, b;
} tw_rgb;

/* The run colours (TensorBoard-like palette), cycled by run index. */
tw_rgb tw_run_color(int index);

/* ---- smoothing (TensorBoard's debiased exponential moving average) -------- */
/* out[i] = EMA of values[0..i] with weight w in [0, 1), debiased by
 * 1 - w^(number of finite values so far); non-finite values are passed
 * through and do not enter the average (TensorBoard's behaviour). */
void tw_smooth_ema(const double *values, int64_t n, double weight, double *out);

/* ---- ticks ----------------------------------------------------------------- */
#define TW_MAX_TICKS 16
typedef struct {
    int n;
    double values[TW_MAX_TICKS];
    char labels[TW_MAX_TICKS][32];
} tw_ticks;
/* About `target` readable ticks in [lo, hi]: 1/2/5 steps for linear axes
 * ("0.25", "1.5k", "2M"), powers of ten (and 2, 5 between when few decades)
 * for log axes ("1e-3", "0.01"), and time units for time axes ("30s",
 * "2m", "1h30m"; wall time as "14:05"). */
void tw_ticks_linear(double lo, double hi, int target, tw_ticks *out);
/* An integer axis (steps): tw_ticks_linear with whole steps only, so a view
 * of two steps gets "1686", "1687", "1688" and never "1687.5". */
void tw_ticks_integer(double lo, double hi, int target, tw_ticks *out);
void tw_ticks_log(double lo, double hi, int target, tw_ticks *out);
void tw_ticks_time(double lo, double hi, int target, bool wall_clock, tw_ticks *out);

/* ---- the chart --------------------------------------------------------------- */
typedef struct {
    tw_rgb color;
    const char *label; /* the run's name */
    /* Reduced data: ncolumns columns over [x_lo, x_hi] of the view. */
    int ncolumns;
    const tw_lod_column *columns;
    /* Or raw points when zoomed in (NULL otherwise), already in x order. */
    int64_t npoints;
    const tw_scalar_point *points;
    /* Smoothed values for the same columns (last value of each column, or
     * each raw point); NULL when smoothing is off. */
    const double *smoothed;
    double time_origin; /* the run's start, for TW_X_RELATIVE_TIME */
} tw_chart_series;

typedef struct {
    tw_x_axis x_axis;
    tw_y_axis y_axis;
    double x_lo, x_hi, y_lo, y_hi; /* the view in data units (y in values, also for log) */
    int nseries;
    const tw_chart_series *series;
    const char *title;       /* the tag */
    bool dark;               /* dark style */
    double hover_x;          /* NAN for none: draws the vertical guide */
    double header_reserve;   /* pixels at the header's right left clear for controls laid over the chart */
} tw_chart;

/* Plot area inside a width x height chart (margins for ticks and title). */
typedef struct {
    double x, y, width, height;
} tw_rect;
tw_rect tw_chart_plot_area(int width, int height);

/* The ticks drawn on the axes: whole steps on the step axis, the time of
 * day on the wall-clock axis. */
void tw_chart_ticks(const tw_chart *chart, tw_rect plot, tw_ticks *x, tw_ticks *y);
/* The x axis's unit, shown at its right end: "step", "time" (since the
 * run's start), "local time" (of day). */
const char *tw_chart_x_unit(tw_x_axis axis);

/* Where a point lies on the chart's x axis (inline: the renderer asks it
 * for each of millions of points). */
static inline double tw_chart_point_x(const tw_chart *chart, const tw_chart_series *s, const tw_scalar_point *p)
{
    switch (chart->x_axis) {
    case TW_X_RELATIVE_TIME:
        return p->wall_time - s->time_origin;
    case TW_X_WALL_TIME:
        return p->wall_time;
    default:
        return (double)p->step;
    }
}

/* Data <-> pixel mapping for the chart's current view. */
double tw_chart_x_to_px(const tw_chart *chart, tw_rect plot, double x);
double tw_chart_px_to_x(const tw_chart *chart, tw_rect plot, double px);
double tw_chart_y_to_px(const tw_chart *chart, tw_rect plot, double y);
double tw_chart_px_to_y(const tw_chart *chart, tw_rect plot, double py);

/* Y range covering the series (raw min/max), or the 5th-95th percentile of
 * the column values when ignore_outliers; a positive range for log axes. */
void tw_chart_auto_y_range(const tw_chart *chart, bool ignore_outliers, double *lo, double *hi);

/* Draw everything: background, grid, ticks, each series (raw min-max
 * extents faint, the smoothed line over it), the hover guide. */
void tw_chart_render(cairo_t *cr, int width, int height, const tw_chart *chart);

#endif
