/* TwChartView (see chart_view.h).
 *
 * The view state is the x range (automatic: every series' extent with room
 * on the right for points still coming; or the user's zoom) and the y
 * range (automatic from the visible data, or the user's). Every change
 * asks TwDashboardData for each series reduced to the plot's width in
 * pixels; until the answer comes the older columns are regrouped into the
 * new range, so a pan moves what is there at once.
 *
 * The chart (tw_chart_render without the hover) is drawn into an image
 * kept between frames: hovering draws only the guide, the dots and the
 * box over it. A chart of a few series is drawn on the main loop when it
 * changes (a few milliseconds) while the frame's drawing budget lasts; a
 * larger one (200 runs take 200 ms), or one past the budget (the twentieth
 * chart of a live run in one frame), in a worker thread, the frames
 * meanwhile showing the last image moved and scaled to the current view,
 * so a frame stays under 16 ms whatever the number of runs and charts. */
#include "chart_view.h"

#include <math.h>

#include "chart_export.h"
#include "chart_hover.h"
#include "render_style.h"
#include "series_view.h"
#include "widget_image.h"

#define HEADROOM 0.05         /* of the span, right of the last point while following */
#define LONE_SPAN 2           /* steps or seconds: the least x range that follows the data */
#define ZOOM_STEP 1.2         /* per scroll notch */
#define MIN_DRAG 5            /* pixels: a smaller rectangle is a click */
#define PROBE_RANGE 1e300     /* a range holding every point: a view that only gives the extent */
#define EXPORT_WIDTH 800      /* when the chart was never shown */
#define EXPORT_HEIGHT 450
#define MAIN_LOOP_RENDER 8000 /* columns and points drawn on the main loop; more go to a thread */
#define FRAME_RENDER_BUDGET_MS 3 /* chart drawing on the main loop per frame, all charts together */
/* A chart drawn in a thread is drawn again for new data no sooner than this
 * many times its last drawing took after that one landed: a chart of 1,000
 * runs whose series arrive batch by batch would otherwise be redrawn
 * without pause, each chart shown in a thread of its own, and starve the
 * threads that read the runs in (a log directory's runs took minutes to
 * list). The user's zoom and pan do not wait. */
#define RENDER_GAP_FACTOR 3
/* Holds of tw_chart_view_hold_live_gap: while any, new data is drawn at
 * most every TW_CHART_LIVE_GAP_MS. Main thread. */
static int live_gap_holds;

void tw_chart_view_hold_live_gap(gboolean hold)
{
    live_gap_holds += hold ? 1 : live_gap_holds > 0 ? -1 : 0;
}

/* When a chart that drew data (a render of ms) may draw new data again. */
static gint64 next_render_after(double ms)
{
    double gap_ms = MAX(RENDER_GAP_FACTOR * ms, live_gap_holds > 0 ? TW_CHART_LIVE_GAP_MS : 0);
    return g_get_monotonic_time() + (gint64)(gap_ms * 1000);
}

/* What a series draws, immutable once derived: shared by the view (hover,
 * CSV) and the render jobs in flight (an atomic reference count). It keeps
 * a reference to the data's snapshot and draws its arrays as they are when
 * the snapshot covers the current view (no copy of 200 runs' columns). */
typedef struct {
    const TwSeriesView *source;
    int ncolumns;
    const tw_lod_column *columns; /* the source's, or `regrouped` */
    tw_lod_column *regrouped;     /* the source's columns regrouped into the current view; NULL */
    int64_t npoints;
    const tw_scalar_point *points; /* the source's */
    double *smoothed;
} drawn;

/* The chart drawn without the hover, and the view it was drawn for. Under
 * GSK's GL renderer frames show it as a texture (made on the main thread,
 * sharing the surface's pixels): the same texture frame after frame is
 * uploaded once, where a Cairo node would be uploaded anew. GSK's Cairo
 * renderer would copy a texture's pixels every frame instead, so there it
 * is painted from a Cairo node. */
typedef struct {
    cairo_surface_t *surface;
    GdkTexture *texture;
    int width, height, scale;
    gboolean dark;
    guint generation;
    tw_chart view;  /* ranges and axes; no series */
    int64_t points; /* the points its columns hold, over every series */
} chart_image;

typedef struct {
    gint64 tag_id;
    tw_rgb color;
    char *label;
    double time_origin;
    drawn *drawn; /* from the data's snapshot; NULL when there is none */
    /* The last request, so the same one is not sent twice. */
    double asked_lo, asked_hi;
    int asked_columns;
    tw_axis asked_axis;
} series_slot;

typedef enum { DRAG_NONE, DRAG_ZOOM, DRAG_PAN } drag_mode;

struct _TwChartView {
    GtkWidget parent_instance;
    TwDashboardData *data;
    gulong series_handler;
    char *title;
    int nseries;
    series_slot *series;
    double smoothing;
    tw_x_axis x_axis;
    tw_y_axis y_axis;
    gboolean ignore_outliers;
    int header_reserve; /* tw_chart.header_reserve: the card's buttons */

    int allocated_width;
    gboolean auto_x, auto_y;
    double x_lo, x_hi, y_lo, y_hi;
    gboolean dirty; /* the drawn data must be derived again */
    guint generation; /* counts derivations: an image is current when it has this one */
    chart_image image;
    int64_t points_shown; /* image.points as the last frame painted it */
    GCancellable *rendering; /* a render job in a thread; NULL when none */
    double render_ms;         /* what its last render took */
    gint64 next_render;       /* monotonic time before which no thread render starts */
    guint render_wait;        /* the timeout that draws again at next_render, or 0 */

    gboolean hovering;
    double hover_px, hover_py;
    drag_mode drag;
    double drag_x, drag_y, drag_dx, drag_dy; /* start and offset, pixels */
    double drag_x_lo, drag_x_hi, drag_y_lo, drag_y_hi;
};

G_DEFINE_FINAL_TYPE(TwChartView, tw_chart_view, GTK_TYPE_WIDGET)

/* ---- geometry ------------------------------------------------------------------ */

static int view_width(TwChartView *view)
{
    int width = gtk_widget_get_width(GTK_WIDGET(view));
    return width > 0 ? width : EXPORT_WIDTH;
}

static int view_height(TwChartView *view)
{
    int height = gtk_widget_get_height(GTK_WIDGET(view));
    return height > 0 ? height : EXPORT_HEIGHT;
}

static tw_rect plot_area(TwChartView *view)
{
    return tw_chart_plot_area(view_width(view), view_height(view));
}

/* The reduction's width: a column per pixel of the plot. */
static int plot_columns(TwChartView *view)
{
    return MAX(1, (int)plot_area(view).width);
}

static tw_axis store_axis(tw_x_axis axis)
{
    return axis == TW_X_STEP ? TW_AXIS_STEP : TW_AXIS_WALL_TIME;
}

/* Chart x units minus store units: the run's start on the relative axis. */
static double x_offset(TwChartView *view, const series_slot *s)
{
    return view->x_axis == TW_X_RELATIVE_TIME ? s->time_origin : 0;
}

/* The chart with the current view and no data: for mapping pixels. */
static tw_chart bare_chart(TwChartView *view)
{
    return (tw_chart){.x_axis = view->x_axis, .y_axis = view->y_axis, .x_lo = view->x_lo, .x_hi = view->x_hi,
                      .y_lo = view->y_lo, .y_hi = view->y_hi, .hover_x = NAN,
                      .header_reserve = view->header_reserve};
}

/* ---- asking for data ------------------------------------------------------------- */

static const TwSeriesView *snapshot_of(TwChartView *view, const series_slot *s)
{
    const TwSeriesView *v = tw_dashboard_data_series_view(view->data, s->tag_id);
    return v && v->axis == store_axis(view->x_axis) ? v : NULL;
}

static void request(TwChartView *view, series_slot *s, double lo, double hi, int ncolumns)
{
    tw_axis axis = store_axis(view->x_axis);
    if (s->asked_lo == lo && s->asked_hi == hi && s->asked_columns == ncolumns && s->asked_axis == axis)
        return;
    s->asked_lo = lo;
    s->asked_hi = hi;
    s->asked_columns = ncolumns;
    s->asked_axis = axis;
    tw_dashboard_data_request_view(view->data, s->tag_id, axis, lo, hi, ncolumns);
}

/* Every series over the current x range, a column per pixel. */
static void request_views(TwChartView *view)
{
    int ncolumns = plot_columns(view);
    for (int i = 0; i < view->nseries; i++) {
        series_slot *s = &view->series[i];
        double offset = x_offset(view, s);
        request(view, s, view->x_lo + offset, view->x_hi + offset, ncolumns);
    }
}

/* Extents on the current axis, for series that have none yet. */
static void probe_extents(TwChartView *view)
{
    for (int i = 0; i < view->nseries; i++)
        if (!snapshot_of(view, &view->series[i]))
            request(view, &view->series[i], -PROBE_RANGE, PROBE_RANGE, 1);
}

/* The union of the series' extents in chart units; FALSE when none has points. */
static gboolean data_extent(TwChartView *view, double *lo, double *hi)
{
    *lo = INFINITY;
    *hi = -INFINITY;
    for (int i = 0; i < view->nseries; i++) {
        const TwSeriesView *v = snapshot_of(view, &view->series[i]);
        if (!v || v->count == 0)
            continue;
        double offset = x_offset(view, &view->series[i]);
        *lo = MIN(*lo, v->first_x - offset);
        *hi = MAX(*hi, v->last_x - offset);
    }
    return *lo <= *hi;
}

/* The automatic x range: the data, with room on the right so that new
 * points land inside the view (reduced into its columns by the data
 * thread) instead of asking for the series again at every point. */
static void follow_data(TwChartView *view, gboolean force)
{
    double lo, hi;
    if (!view->auto_x || !data_extent(view, &lo, &hi))
        return;
    if (hi - lo < LONE_SPAN) { /* a lone point (an epoch's first value) in the middle */
        double middle = (lo + hi) / 2;
        lo = middle - LONE_SPAN / 2;
        hi = middle + LONE_SPAN / 2;
    }
    double span = hi - lo;
    gboolean inside = lo == view->x_lo && hi <= view->x_hi && view->x_hi <= hi + 2 * HEADROOM * span;
    if (inside && !force)
        return;
    view->x_lo = lo;
    view->x_hi = hi + HEADROOM * span;
    view->dirty = TRUE;
    request_views(view);
}

/* ---- what a frame draws ------------------------------------------------------------ */

static void drawn_clear(gpointer data)
{
    drawn *d = data;
    g_free(d->regrouped);
    g_free(d->smoothed);
    tw_series_view_unref(d->source);
}

static void drawn_unref(drawn *d)
{
    g_atomic_rc_box_release_full(d, drawn_clear);
}

/* The smoothed line: over the raw points, or over the columns' last values
 * (empty columns are NaN, which the average skips). */
static void smooth(TwChartView *view, drawn *d)
{
    if (!(view->smoothing > 0))
        return;
    gboolean raw = d->points && d->npoints > 0;
    int64_t n = raw ? d->npoints : d->ncolumns;
    double *values = g_new(double, MAX(n, 1));
    for (int64_t i = 0; i < n; i++)
        values[i] = raw ? d->points[i].value : d->columns[i].count ? d->columns[i].last.value : NAN;
    d->smoothed = g_new(double, MAX(n, 1));
    tw_smooth_ema(values, n, view->smoothing, d->smoothed);
    g_free(values);
}

/* A series' columns for the current range, from the snapshot as it is or
 * regrouped when it covers another range; its raw points as they are. */
static void derive_slot(TwChartView *view, series_slot *s)
{
    g_clear_pointer(&s->drawn, drawn_unref);
    const TwSeriesView *v = snapshot_of(view, s);
    if (!v || v->ncolumns == 0 || v->lo <= -PROBE_RANGE)
        return;
    double offset = x_offset(view, s), lo = view->x_lo + offset, hi = view->x_hi + offset;
    drawn *d = g_atomic_rc_box_new0(drawn);
    d->source = tw_series_view_ref(v);
    d->ncolumns = plot_columns(view);
    if (v->lo == lo && v->hi == hi && v->ncolumns == d->ncolumns) {
        d->columns = v->columns;
    } else {
        d->regrouped = g_new(tw_lod_column, d->ncolumns);
        tw_series_view_remap(v, lo, hi, d->ncolumns, d->regrouped);
        d->columns = d->regrouped;
    }
    if (v->points && v->npoints > 0) {
        d->points = v->points;
        d->npoints = v->npoints;
    }
    smooth(view, d);
    s->drawn = d;
}

static tw_chart_series chart_series(const series_slot *s)
{
    tw_chart_series series = {.color = s->color, .label = s->label, .time_origin = s->time_origin};
    if (s->drawn) {
        series.ncolumns = s->drawn->ncolumns;
        series.columns = s->drawn->columns;
        series.npoints = s->drawn->npoints;
        series.points = s->drawn->points;
        series.smoothed = s->drawn->smoothed;
    }
    return series;
}

/* Light text on a dark theme: the renderers' dark style. */
static gboolean is_dark(GtkWidget *widget)
{
    GdkRGBA fg;
    G_GNUC_BEGIN_IGNORE_DEPRECATIONS
    gtk_style_context_get_color(gtk_widget_get_style_context(widget), &fg);
    G_GNUC_END_IGNORE_DEPRECATIONS
    return 0.299 * fg.red + 0.587 * fg.green + 0.114 * fg.blue > 0.5;
}

/* The chart as drawn now (series: view->nseries entries, borrowed from the
 * slots); derives the drawn data first when it changed. */
static tw_chart build_chart(TwChartView *view, tw_chart_series *series)
{
    if (view->dirty) {
        for (int i = 0; i < view->nseries; i++)
            derive_slot(view, &view->series[i]);
        view->generation++;
    }
    for (int i = 0; i < view->nseries; i++)
        series[i] = chart_series(&view->series[i]);
    tw_chart chart = bare_chart(view);
    chart.nseries = view->nseries;
    chart.series = series;
    chart.title = view->title;
    chart.dark = is_dark(GTK_WIDGET(view));
    if (view->dirty && view->auto_y) {
        tw_chart_auto_y_range(&chart, view->ignore_outliers, &view->y_lo, &view->y_hi);
        chart.y_lo = view->y_lo;
        chart.y_hi = view->y_hi;
    }
    view->dirty = FALSE;
    return chart;
}

/* ---- the chart's image ------------------------------------------------------------------ */

/* Everything a render needs, owned, so a thread can draw it. */
typedef struct {
    tw_image_job base;
    gboolean dark;
    guint generation;
    tw_chart view; /* ranges and axes; no series */
    tw_chart chart;
    drawn **drawn;
    char **labels;
    char *title;
} render_job;

static void render_job_draw(tw_image_job *base, cairo_t *cr)
{
    render_job *job = (render_job *)base;
    tw_chart_render(cr, base->width, base->height, &job->chart);
}

static void render_job_finalize(tw_image_job *base)
{
    render_job *job = (render_job *)base;
    for (int i = 0; i < job->chart.nseries; i++)
        if (job->drawn[i])
            drawn_unref(job->drawn[i]);
    g_free(job->drawn);
    g_strfreev(job->labels);
    g_free(job->title);
    g_free((tw_chart_series *)job->chart.series);
}

static render_job *render_job_new(TwChartView *view, int width, int height, int scale)
{
    tw_chart_series *borrowed = g_newa(tw_chart_series, MAX(view->nseries, 1));
    tw_chart chart = build_chart(view, borrowed);
    render_job *job = g_new0(render_job, 1);
    job->base = (tw_image_job){.width = width, .height = height, .scale = scale, .draw = render_job_draw,
                               .finalize = render_job_finalize};
    job->dark = chart.dark;
    job->generation = view->generation;
    job->view = bare_chart(view);
    tw_chart_series *series = g_new(tw_chart_series, MAX(view->nseries, 1));
    job->drawn = g_new0(drawn *, MAX(view->nseries, 1));
    job->labels = g_new0(char *, view->nseries + 1);
    for (int i = 0; i < view->nseries; i++) {
        series[i] = borrowed[i];
        job->labels[i] = g_strdup(borrowed[i].label);
        series[i].label = job->labels[i];
        if (view->series[i].drawn)
            job->drawn[i] = g_atomic_rc_box_acquire(view->series[i].drawn);
    }
    job->title = g_strdup(chart.title);
    chart.series = series;
    chart.title = job->title;
    job->chart = chart;
    return job;
}

static int64_t job_size(const render_job *job)
{
    int64_t size = 0;
    for (int i = 0; i < job->chart.nseries; i++)
        size += job->chart.series[i].ncolumns + job->chart.series[i].npoints;
    return size;
}

static void image_clear(chart_image *im)
{
    g_clear_object(&im->texture);
    g_clear_pointer(&im->surface, cairo_surface_destroy);
}

static int64_t points_in(const tw_chart *chart)
{
    int64_t n = 0;
    for (int i = 0; i < chart->nseries; i++)
        for (int k = 0; k < chart->series[i].ncolumns; k++)
            n += chart->series[i].columns[k].count;
    return n;
}

static void take_image(TwChartView *view, render_job *job)
{
    view->render_ms = job->base.ms;
    image_clear(&view->image);
    view->image = (chart_image){.surface = job->base.surface, .width = job->base.width, .height = job->base.height,
                                .scale = job->base.scale, .dark = job->dark, .generation = job->generation,
                                .view = job->view, .points = points_in(&job->chart)};
    job->base.surface = NULL;
    tw_image_job_free(&job->base);
}

static gboolean image_current(TwChartView *view, int width, int height, int scale)
{
    const chart_image *im = &view->image;
    return im->surface && !view->dirty && im->generation == view->generation && im->width == width &&
           im->height == height && im->scale == scale && im->dark == is_dark(GTK_WIDGET(view));
}

static void rendered(GtkWidget *widget, tw_image_job *job)
{
    TwChartView *view = TW_CHART_VIEW(widget);
    gboolean drew_data = job_size((render_job *)job) > 0; /* the first data drawn does not wait */
    take_image(view, (render_job *)job);
    view->next_render = drew_data ? next_render_after(view->render_ms) : 0;
}

static gboolean render_waited(gpointer data)
{
    TwChartView *view = data;
    view->render_wait = 0;
    gtk_widget_queue_draw(GTK_WIDGET(view));
    return G_SOURCE_REMOVE;
}

/* Milliseconds of chart drawing the main loop spent in a frame, over all
 * charts: a dashboard of 20 charts of a live run all change at once, and
 * 20 times 2 ms would not fit in a frame. Main thread only. */
static struct {
    gint64 frame;
    double used_ms;
} frame_budget = {-1, 0};

/* Whether a small job still fits in this frame's drawing budget, taking as
 * long as this chart's last render did. */
static gboolean fits_in_frame(TwChartView *view, const render_job *job)
{
    GdkFrameClock *clock = gtk_widget_get_frame_clock(GTK_WIDGET(view));
    gint64 frame = clock ? gdk_frame_clock_get_frame_counter(clock) : -1;
    if (frame != frame_budget.frame) {
        frame_budget.frame = frame;
        frame_budget.used_ms = 0;
    }
    return job_size(job) <= MAIN_LOOP_RENDER && frame_budget.used_ms + view->render_ms <= FRAME_RENDER_BUDGET_MS;
}

/* A new image when the chart changed: at once when small and the frame has
 * room, else in a thread (one at a time; the frame after it lands asks for
 * the next if needed, once RENDER_GAP_FACTOR allows). */
static void update_image(TwChartView *view, int width, int height, int scale)
{
    if (view->rendering || image_current(view, width, height, scale))
        return;
    gint64 wait = view->next_render - g_get_monotonic_time();
    if (wait > 0) { /* the old image stays until then */
        if (!view->render_wait)
            view->render_wait = g_timeout_add(MAX(1, (guint)(wait / 1000)), render_waited, view);
        return;
    }
    render_job *job = render_job_new(view, width, height, scale);
    if (fits_in_frame(view, job)) {
        gboolean drew_data = job_size(job) > 0;
        tw_image_job_run(&job->base);
        take_image(view, job);
        frame_budget.used_ms += view->render_ms;
        if (drew_data && live_gap_holds > 0) /* small renders wait only while the window trains */
            view->next_render = next_render_after(0);
        return;
    }
    tw_image_job_start(GTK_WIDGET(view), &view->rendering, &job->base, rendered);
}

static gboolean same_view(const tw_chart *a, const tw_chart *b)
{
    return a->x_axis == b->x_axis && a->y_axis == b->y_axis && a->x_lo == b->x_lo && a->x_hi == b->x_hi &&
           a->y_lo == b->y_lo && a->y_hi == b->y_hi;
}

/* Where the image drawn for an older view goes now: its pixel (px, py)
 * shows x = px_to_x(then, px), now at x_to_px(now, x); an affine map, so
 * its origin (*x0, *y0) and scale (*sx, *sy). FALSE when the view is the
 * image's or the map is degenerate. */
static gboolean image_moved(TwChartView *view, double *x0, double *y0, double *sx, double *sy)
{
    const chart_image *im = &view->image;
    tw_chart now = bare_chart(view), then = im->view;
    if (same_view(&now, &then))
        return FALSE;
    tw_rect plot = tw_chart_plot_area(im->width, im->height);
    *x0 = tw_chart_x_to_px(&now, plot, tw_chart_px_to_x(&then, plot, 0));
    *y0 = tw_chart_y_to_px(&now, plot, tw_chart_px_to_y(&then, plot, 0));
    *sx = tw_chart_x_to_px(&now, plot, tw_chart_px_to_x(&then, plot, 1)) - *x0;
    *sy = tw_chart_y_to_px(&now, plot, tw_chart_px_to_y(&then, plot, 1)) - *y0;
    return isfinite(*x0) && isfinite(*y0) && isfinite(*sx) && isfinite(*sy) && *sx > 0 && *sy > 0;
}

/* The image with Cairo; moved, the plot alone over the background (the
 * axes and labels as they were until the new image lands). */
static void paint_image(TwChartView *view, cairo_t *cr)
{
    const chart_image *im = &view->image;
    cairo_set_source_surface(cr, im->surface, 0, 0);
    cairo_paint(cr);
    double x0, y0, sx, sy;
    if (!image_moved(view, &x0, &y0, &sx, &sy))
        return;
    tw_rect plot = tw_chart_plot_area(im->width, im->height);
    tw_rgb background = tw_render_style_get(im->dark).background;
    cairo_save(cr);
    cairo_rectangle(cr, plot.x, plot.y, plot.width, plot.height);
    cairo_clip(cr);
    cairo_set_source_rgb(cr, background.r, background.g, background.b);
    cairo_paint(cr);
    cairo_translate(cr, x0, y0);
    cairo_scale(cr, sx, sy);
    cairo_rectangle(cr, plot.x, plot.y, plot.width, plot.height); /* the image's plot alone */
    cairo_clip(cr);
    cairo_set_source_surface(cr, im->surface, 0, 0);
    cairo_paint(cr);
    cairo_restore(cr);
}

static void append_background(GtkSnapshot *snapshot, gboolean dark, const graphene_rect_t *area)
{
    tw_rgb c = tw_render_style_get(dark).background;
    gtk_snapshot_append_color(snapshot, &(GdkRGBA){(float)c.r, (float)c.g, (float)c.b, 1}, area);
}

/* The same as a texture, for the GL renderer. */
static void append_texture(TwChartView *view, GtkSnapshot *snapshot)
{
    chart_image *im = &view->image;
    if (!im->texture)
        im->texture = tw_texture_of_surface(im->surface);
    graphene_rect_t whole = GRAPHENE_RECT_INIT(0, 0, im->width, im->height);
    gtk_snapshot_append_texture(snapshot, im->texture, &whole);
    double x0, y0, sx, sy;
    if (!image_moved(view, &x0, &y0, &sx, &sy))
        return;
    tw_rect plot = tw_chart_plot_area(im->width, im->height);
    graphene_rect_t plot_rect = GRAPHENE_RECT_INIT(plot.x, plot.y, plot.width, plot.height);
    gtk_snapshot_push_clip(snapshot, &plot_rect);
    append_background(snapshot, im->dark, &plot_rect);
    gtk_snapshot_save(snapshot);
    gtk_snapshot_translate(snapshot, &GRAPHENE_POINT_INIT((float)x0, (float)y0));
    gtk_snapshot_scale(snapshot, (float)sx, (float)sy);
    gtk_snapshot_push_clip(snapshot, &plot_rect);
    gtk_snapshot_append_texture(snapshot, im->texture, &whole);
    gtk_snapshot_pop(snapshot);
    gtk_snapshot_restore(snapshot);
    gtk_snapshot_pop(snapshot);
}

static gboolean hover_inside(TwChartView *view)
{
    tw_rect plot = plot_area(view);
    return view->hovering && view->drag == DRAG_NONE && view->hover_px >= plot.x &&
           view->hover_px <= plot.x + plot.width && view->hover_py >= plot.y && view->hover_py <= plot.y + plot.height;
}

static void draw_drag_rectangle(TwChartView *view, cairo_t *cr)
{
    if (view->drag != DRAG_ZOOM)
        return;
    tw_rect plot = plot_area(view);
    double x0 = CLAMP(view->drag_x, plot.x, plot.x + plot.width);
    double x1 = CLAMP(view->drag_x + view->drag_dx, plot.x, plot.x + plot.width);
    double y0 = CLAMP(view->drag_y, plot.y, plot.y + plot.height);
    double y1 = CLAMP(view->drag_y + view->drag_dy, plot.y, plot.y + plot.height);
    if (fabs(view->drag_dy) < MIN_DRAG) /* a flat rectangle zooms x alone: show the whole height */
        y0 = plot.y, y1 = plot.y + plot.height;
    cairo_rectangle(cr, MIN(x0, x1), MIN(y0, y1), fabs(x1 - x0), fabs(y1 - y0));
    cairo_set_source_rgba(cr, 0.3, 0.5, 0.9, 0.15);
    cairo_fill_preserve(cr);
    cairo_set_source_rgba(cr, 0.3, 0.5, 0.9, 0.8);
    cairo_set_line_width(cr, 1);
    cairo_stroke(cr);
}

static void draw_hover(TwChartView *view, cairo_t *cr, int width, int height)
{
    if (!hover_inside(view))
        return;
    tw_chart_series *series = g_newa(tw_chart_series, MAX(view->nseries, 1));
    tw_chart chart = build_chart(view, series);
    tw_hover_row *rows = g_newa(tw_hover_row, MAX(view->nseries, 1));
    int n = tw_chart_hover_rows(&chart, tw_chart_plot_area(width, height), view->hover_px, view->hover_py, rows);
    tw_chart_hover_draw(cr, width, height, &chart, view->hover_px, view->hover_py, rows, n);
}

static void tw_chart_view_snapshot(GtkWidget *widget, GtkSnapshot *snapshot)
{
    TwChartView *view = TW_CHART_VIEW(widget);
    int width = gtk_widget_get_width(widget), height = gtk_widget_get_height(widget);
    if (width <= 0 || height <= 0)
        return;
    update_image(view, width, height, gtk_widget_get_scale_factor(widget));
    view->points_shown = view->image.surface ? view->image.points : 0;
    graphene_rect_t bounds = GRAPHENE_RECT_INIT(0, 0, width, height);
    gboolean overlays = view->drag == DRAG_ZOOM || hover_inside(view);
    if (!view->image.surface) /* the first image is being drawn */
        append_background(snapshot, is_dark(widget), &bounds);
    else if (!tw_widget_cairo_rendered(widget))
        append_texture(view, snapshot);
    if (!overlays && (!view->image.surface || !tw_widget_cairo_rendered(widget)))
        return;
    cairo_t *cr = gtk_snapshot_append_cairo(snapshot, &bounds);
    if (view->image.surface && tw_widget_cairo_rendered(widget))
        paint_image(view, cr);
    draw_drag_rectangle(view, cr);
    draw_hover(view, cr, width, height);
    cairo_destroy(cr);
}

/* ---- view changes ----------------------------------------------------------------- */

static void changed(TwChartView *view)
{
    view->dirty = TRUE;
    gtk_widget_queue_draw(GTK_WIDGET(view));
}

/* The user's x range (and y range unless y_lo is NaN). */
static void set_view(TwChartView *view, double x_lo, double x_hi, double y_lo, double y_hi)
{
    double min_span = view->x_axis == TW_X_STEP ? 1 : 1e-3;
    if (x_hi - x_lo < min_span) {
        double middle = (x_lo + x_hi) / 2;
        x_lo = middle - min_span / 2;
        x_hi = middle + min_span / 2;
    }
    view->auto_x = FALSE;
    view->next_render = 0; /* the user's own change */
    view->x_lo = x_lo;
    view->x_hi = x_hi;
    if (!isnan(y_lo) && y_hi > y_lo) {
        view->auto_y = FALSE;
        view->y_lo = y_lo;
        view->y_hi = y_hi;
    }
    request_views(view);
    changed(view);
}

void tw_chart_view_set_header_reserve(TwChartView *view, int pixels)
{
    if (view->header_reserve == pixels)
        return;
    view->header_reserve = pixels;
    changed(view);
}

void tw_chart_view_reset_zoom(TwChartView *view)
{
    view->auto_x = TRUE;
    view->auto_y = TRUE;
    view->next_render = 0;
    probe_extents(view);
    follow_data(view, TRUE);
    changed(view);
}

static void on_series_changed(TwDashboardData *data, gint64 tag_id, gpointer user_data)
{
    TwChartView *view = user_data;
    for (int i = 0; i < view->nseries; i++)
        if (view->series[i].tag_id == tag_id) {
            follow_data(view, FALSE);
            changed(view);
            return;
        }
}

/* ---- input ------------------------------------------------------------------------- */

static void on_motion(GtkEventControllerMotion *motion, double x, double y, gpointer user_data)
{
    TwChartView *view = user_data;
    view->hovering = TRUE;
    view->hover_px = x;
    view->hover_py = y;
    gtk_widget_queue_draw(GTK_WIDGET(view));
}

static void on_leave(GtkEventControllerMotion *motion, gpointer user_data)
{
    TwChartView *view = user_data;
    view->hovering = FALSE;
    gtk_widget_queue_draw(GTK_WIDGET(view));
}

static void begin_drag(TwChartView *view, drag_mode mode, double x, double y)
{
    view->drag = mode;
    view->drag_x = x;
    view->drag_y = y;
    view->drag_dx = view->drag_dy = 0;
    view->drag_x_lo = view->x_lo;
    view->drag_x_hi = view->x_hi;
    view->drag_y_lo = view->y_lo;
    view->drag_y_hi = view->y_hi;
}

/* The primary button zooms into a rectangle, or pans with Shift. */
static void on_primary_begin(GtkGestureDrag *gesture, double x, double y, gpointer user_data)
{
    GdkModifierType state = gtk_event_controller_get_current_event_state(GTK_EVENT_CONTROLLER(gesture));
    begin_drag(user_data, state & GDK_SHIFT_MASK ? DRAG_PAN : DRAG_ZOOM, x, y);
}

static void on_middle_begin(GtkGestureDrag *gesture, double x, double y, gpointer user_data)
{
    begin_drag(user_data, DRAG_PAN, x, y);
}

/* Pans by the drag's offset from where it began (y too, on its scale). */
static void pan(TwChartView *view)
{
    tw_rect plot = plot_area(view);
    double dx = view->drag_dx / plot.width * (view->drag_x_hi - view->drag_x_lo);
    double y_lo = view->drag_y_lo, y_hi = view->drag_y_hi;
    if (view->y_axis == TW_Y_LOG && y_lo > 0 && y_hi > y_lo) {
        double factor = pow(y_hi / y_lo, view->drag_dy / plot.height);
        y_lo *= factor, y_hi *= factor;
    } else {
        double dy = view->drag_dy / plot.height * (y_hi - y_lo);
        y_lo += dy, y_hi += dy;
    }
    set_view(view, view->drag_x_lo - dx, view->drag_x_hi - dx, y_lo, y_hi);
}

static void on_drag_update(GtkGestureDrag *gesture, double dx, double dy, gpointer user_data)
{
    TwChartView *view = user_data;
    if (view->drag == DRAG_NONE)
        return;
    view->drag_dx = dx;
    view->drag_dy = dy;
    if (view->drag == DRAG_PAN)
        pan(view);
    else
        gtk_widget_queue_draw(GTK_WIDGET(view));
}

/* The rectangle's x range, and its y range when it is not flat. */
static void zoom_to_rectangle(TwChartView *view)
{
    tw_rect plot = plot_area(view);
    tw_chart chart = bare_chart(view);
    double x0 = CLAMP(view->drag_x, plot.x, plot.x + plot.width);
    double x1 = CLAMP(view->drag_x + view->drag_dx, plot.x, plot.x + plot.width);
    double y0 = CLAMP(view->drag_y, plot.y, plot.y + plot.height);
    double y1 = CLAMP(view->drag_y + view->drag_dy, plot.y, plot.y + plot.height);
    if (fabs(x1 - x0) < MIN_DRAG)
        return;
    gboolean with_y = fabs(y1 - y0) >= MIN_DRAG;
    set_view(view, tw_chart_px_to_x(&chart, plot, MIN(x0, x1)), tw_chart_px_to_x(&chart, plot, MAX(x0, x1)),
             with_y ? tw_chart_px_to_y(&chart, plot, MAX(y0, y1)) : NAN,
             with_y ? tw_chart_px_to_y(&chart, plot, MIN(y0, y1)) : NAN);
}

static void on_drag_end(GtkGestureDrag *gesture, double dx, double dy, gpointer user_data)
{
    TwChartView *view = user_data;
    view->drag_dx = dx;
    view->drag_dy = dy;
    if (view->drag == DRAG_ZOOM)
        zoom_to_rectangle(view);
    view->drag = DRAG_NONE;
    gtk_widget_queue_draw(GTK_WIDGET(view));
}

void tw_chart_view_zoom(TwChartView *view, double notches)
{
    tw_rect plot = plot_area(view);
    tw_chart chart = bare_chart(view);
    double factor = pow(ZOOM_STEP, notches);
    double px = view->hovering ? view->hover_px : plot.x + plot.width / 2;
    double py = view->hovering ? view->hover_py : plot.y + plot.height / 2;
    double cx = tw_chart_px_to_x(&chart, plot, px), cy = tw_chart_px_to_y(&chart, plot, py);
    double y_lo = NAN, y_hi = NAN;
    if (!view->auto_y && view->y_axis == TW_Y_LINEAR) {
        y_lo = cy - (cy - view->y_lo) * factor;
        y_hi = cy + (view->y_hi - cy) * factor;
    } else if (!view->auto_y && cy > 0 && view->y_lo > 0) {
        y_lo = cy * pow(view->y_lo / cy, factor);
        y_hi = cy * pow(view->y_hi / cy, factor);
    }
    set_view(view, cx - (cx - view->x_lo) * factor, cx + (view->x_hi - cx) * factor, y_lo, y_hi);
}

/* The wheel scrolls the page (unhandled, the event goes on to the
 * scrolled window); Ctrl+wheel zooms. */
static gboolean on_scroll(GtkEventControllerScroll *scroll, double dx, double dy, gpointer user_data)
{
    GdkModifierType state = gtk_event_controller_get_current_event_state(GTK_EVENT_CONTROLLER(scroll));
    if (dy == 0 || !(state & GDK_CONTROL_MASK))
        return FALSE;
    tw_chart_view_zoom(user_data, dy);
    return TRUE;
}

static void on_pressed(GtkGestureClick *click, int n_press, double x, double y, gpointer user_data)
{
    if (n_press == 2)
        tw_chart_view_reset_zoom(user_data);
}

static void add_input(TwChartView *view)
{
    GtkWidget *widget = GTK_WIDGET(view);
    GtkEventController *motion = gtk_event_controller_motion_new();
    g_signal_connect(motion, "motion", G_CALLBACK(on_motion), view);
    g_signal_connect(motion, "leave", G_CALLBACK(on_leave), view);
    gtk_widget_add_controller(widget, motion);

    const guint buttons[] = {GDK_BUTTON_PRIMARY, GDK_BUTTON_MIDDLE};
    for (int i = 0; i < 2; i++) {
        GtkGesture *drag = gtk_gesture_drag_new();
        gtk_gesture_single_set_button(GTK_GESTURE_SINGLE(drag), buttons[i]);
        g_signal_connect(drag, "drag-begin", G_CALLBACK(i == 0 ? on_primary_begin : on_middle_begin), view);
        g_signal_connect(drag, "drag-update", G_CALLBACK(on_drag_update), view);
        g_signal_connect(drag, "drag-end", G_CALLBACK(on_drag_end), view);
        gtk_widget_add_controller(widget, GTK_EVENT_CONTROLLER(drag));
    }

    GtkEventController *scroll = gtk_event_controller_scroll_new(GTK_EVENT_CONTROLLER_SCROLL_VERTICAL);
    g_signal_connect(scroll, "scroll", G_CALLBACK(on_scroll), view);
    gtk_widget_add_controller(widget, scroll);

    GtkGesture *click = gtk_gesture_click_new();
    g_signal_connect(click, "pressed", G_CALLBACK(on_pressed), view);
    gtk_widget_add_controller(widget, GTK_EVENT_CONTROLLER(click));
}

/* ---- the widget ---------------------------------------------------------------------- */

static void watch_all(TwChartView *view, gboolean watch)
{
    for (int i = 0; i < view->nseries; i++)
        tw_dashboard_data_watch(view->data, view->series[i].tag_id, watch);
}

static void clear_series(TwChartView *view)
{
    if (gtk_widget_get_mapped(GTK_WIDGET(view)))
        watch_all(view, FALSE);
    for (int i = 0; i < view->nseries; i++) {
        g_clear_pointer(&view->series[i].drawn, drawn_unref);
        g_free(view->series[i].label);
    }
    g_clear_pointer(&view->series, g_free);
    view->nseries = 0;
}

/* Only the charts on screen follow their series as they grow. */
static void tw_chart_view_map(GtkWidget *widget)
{
    GTK_WIDGET_CLASS(tw_chart_view_parent_class)->map(widget);
    watch_all(TW_CHART_VIEW(widget), TRUE);
}

static void tw_chart_view_unmap(GtkWidget *widget)
{
    watch_all(TW_CHART_VIEW(widget), FALSE);
    GTK_WIDGET_CLASS(tw_chart_view_parent_class)->unmap(widget);
}

/* A new width: a new reduction, a column per pixel (GTK also allocates
 * widgets whose size did not change). */
static void tw_chart_view_size_allocate(GtkWidget *widget, int width, int height, int baseline)
{
    TwChartView *view = TW_CHART_VIEW(widget);
    if (width == view->allocated_width) /* a new height only needs a new image */
        return;
    view->allocated_width = width;
    view->dirty = TRUE;
    if (view->auto_x)
        follow_data(view, TRUE);
    else
        request_views(view);
}

static void tw_chart_view_measure(GtkWidget *widget, GtkOrientation orientation, int for_size, int *minimum,
                                  int *natural, int *minimum_baseline, int *natural_baseline)
{
    gboolean horizontal = orientation == GTK_ORIENTATION_HORIZONTAL;
    *minimum = horizontal ? 200 : 150;
    *natural = horizontal ? 480 : 300;
}

static void tw_chart_view_dispose(GObject *object)
{
    TwChartView *view = TW_CHART_VIEW(object);
    if (view->rendering) {
        g_cancellable_cancel(view->rendering);
        g_clear_object(&view->rendering);
    }
    g_clear_handle_id(&view->render_wait, g_source_remove);
    if (view->data) {
        clear_series(view);
        g_clear_signal_handler(&view->series_handler, view->data);
        g_clear_object(&view->data);
    }
    G_OBJECT_CLASS(tw_chart_view_parent_class)->dispose(object);
}

static void tw_chart_view_finalize(GObject *object)
{
    TwChartView *view = TW_CHART_VIEW(object);
    g_free(view->title);
    image_clear(&view->image);
    G_OBJECT_CLASS(tw_chart_view_parent_class)->finalize(object);
}

static void tw_chart_view_class_init(TwChartViewClass *klass)
{
    GObjectClass *object_class = G_OBJECT_CLASS(klass);
    GtkWidgetClass *widget_class = GTK_WIDGET_CLASS(klass);
    object_class->dispose = tw_chart_view_dispose;
    object_class->finalize = tw_chart_view_finalize;
    widget_class->snapshot = tw_chart_view_snapshot;
    widget_class->measure = tw_chart_view_measure;
    widget_class->size_allocate = tw_chart_view_size_allocate;
    widget_class->map = tw_chart_view_map;
    widget_class->unmap = tw_chart_view_unmap;
    gtk_widget_class_set_css_name(widget_class, "chart");
}

static void tw_chart_view_init(TwChartView *view)
{
    view->smoothing = 0.6;
    view->auto_x = view->auto_y = TRUE;
    view->x_lo = 0, view->x_hi = 1, view->y_lo = 0, view->y_hi = 1;
    gtk_widget_set_focusable(GTK_WIDGET(view), FALSE);
    add_input(view);
}

GtkWidget *tw_chart_view_new(TwDashboardData *data, const char *tag_name)
{
    TwChartView *view = g_object_new(TW_TYPE_CHART_VIEW, NULL);
    view->data = g_object_ref(data);
    view->title = g_strdup(tag_name);
    view->series_handler = g_signal_connect(data, "series-changed", G_CALLBACK(on_series_changed), view);
    return GTK_WIDGET(view);
}

/* A series the chart had before keeps what it asked the data for: a run
 * added to a chart of a thousand asks for its own series alone, where
 * asking for all of them again had the data thread read every series once
 * per run added (a log directory's runs arriving one by one took minutes
 * to list). */
void tw_chart_view_set_series(TwChartView *view, int n, const gint64 *tag_ids, const tw_rgb *colors,
                              const char *const *labels, const double *time_origins)
{
    GHashTable *before = g_hash_table_new(g_int64_hash, g_int64_equal); /* tag id -> slot index + 1 */
    for (int i = 0; i < view->nseries; i++)
        g_hash_table_insert(before, &view->series[i].tag_id, GINT_TO_POINTER(i + 1));
    series_slot *slots = g_new0(series_slot, MAX(n, 1));
    for (int i = 0; i < n; i++) {
        slots[i] = (series_slot){.tag_id = tag_ids[i], .color = colors[i], .label = g_strdup(labels[i]),
                                 .time_origin = time_origins ? time_origins[i] : 0, .asked_lo = NAN};
        int k = GPOINTER_TO_INT(g_hash_table_lookup(before, &tag_ids[i])) - 1;
        series_slot *old = k >= 0 ? &view->series[k] : NULL;
        if (old && old->time_origin == slots[i].time_origin) {
            slots[i].asked_lo = old->asked_lo;
            slots[i].asked_hi = old->asked_hi;
            slots[i].asked_columns = old->asked_columns;
            slots[i].asked_axis = old->asked_axis;
        }
    }
    g_hash_table_unref(before);
    /* The new series watched before the old are let go: a series in both
     * stays watched throughout (the counts never reach 0). */
    gboolean mapped = gtk_widget_get_mapped(GTK_WIDGET(view));
    for (int i = 0; mapped && i < n; i++)
        tw_dashboard_data_watch(view->data, tag_ids[i], TRUE);
    clear_series(view);
    view->nseries = n;
    view->series = slots;
    probe_extents(view);
    if (view->auto_x)
        follow_data(view, TRUE);
    else
        request_views(view);
    changed(view);
}

void tw_chart_view_set_smoothing(TwChartView *view, double weight)
{
    if (view->smoothing == weight)
        return;
    view->smoothing = weight;
    changed(view);
}

void tw_chart_view_set_axes(TwChartView *view, tw_x_axis x, tw_y_axis y, gboolean ignore_outliers)
{
    gboolean x_changed = view->x_axis != x;
    gboolean y_changed = view->y_axis != y || view->ignore_outliers != ignore_outliers;
    view->x_axis = x;
    view->y_axis = y;
    view->ignore_outliers = ignore_outliers;
    if (y_changed)
        view->auto_y = TRUE;
    if (x_changed) /* other units: back to the whole series */
        tw_chart_view_reset_zoom(view);
    else if (y_changed)
        changed(view);
}

void tw_chart_view_get_range(TwChartView *view, double *x_lo, double *x_hi, double *y_lo, double *y_hi)
{
    if (view->dirty) { /* the automatic y range follows the data drawn */
        tw_chart_series *series = g_newa(tw_chart_series, MAX(view->nseries, 1));
        build_chart(view, series);
    }
    *x_lo = view->x_lo;
    *x_hi = view->x_hi;
    *y_lo = view->y_lo;
    *y_hi = view->y_hi;
}

char *tw_chart_view_hover_text(TwChartView *view)
{
    if (!hover_inside(view))
        return NULL;
    tw_chart_series *series = g_newa(tw_chart_series, MAX(view->nseries, 1));
    tw_chart chart = build_chart(view, series);
    tw_hover_row *rows = g_newa(tw_hover_row, MAX(view->nseries, 1));
    int n = tw_chart_hover_rows(&chart, plot_area(view), view->hover_px, view->hover_py, rows);
    return tw_chart_hover_text(&chart, rows, n);
}

/* ---- exports (chart_export.c) ----------------------------------------------------------- */

/* The chart as it is now, without the hover and the card's buttons. */
static tw_chart export_chart(TwChartView *view, tw_chart_series *series)
{
    tw_chart chart = build_chart(view, series);
    chart.header_reserve = 0;
    return chart;
}

gboolean tw_chart_view_export_png(TwChartView *view, const char *path, GError **error)
{
    tw_chart_series *series = g_newa(tw_chart_series, MAX(view->nseries, 1));
    tw_chart chart = export_chart(view, series);
    return tw_chart_export_png(&chart, view_width(view), view_height(view), path, error);
}

gboolean tw_chart_view_export_svg(TwChartView *view, const char *path, GError **error)
{
    tw_chart_series *series = g_newa(tw_chart_series, MAX(view->nseries, 1));
    tw_chart chart = export_chart(view, series);
    return tw_chart_export_svg(&chart, view_width(view), view_height(view), path, error);
}

gboolean tw_chart_view_export_csv(TwChartView *view, const char *path, GError **error)
{
    tw_chart_series *series = g_newa(tw_chart_series, MAX(view->nseries, 1));
    tw_chart chart = export_chart(view, series);
    return tw_chart_export_csv(&chart, path, error);
}

int64_t tw_chart_view_points_shown(TwChartView *view)
{
    g_return_val_if_fail(TW_IS_CHART_VIEW(view), 0);
    return view->points_shown;
}
