/* TwChartView under Xvfb (suite gui, GSK's Cairo renderer): the chart
 * follows its series (a lone point in the middle), hovering lists the
 * nearest points nearest first, dragging a rectangle zooms and asks for a finer reduction (raw points
 * when zoomed in far enough), the middle button pans, scrolling zooms
 * around the pointer, a double click resets; PNG, SVG and CSV exports; and
 * a 10,000,000-point series: its first frame, pan and zoom frames; 200
 * runs in one chart (drawn in a thread): hover frames, the runs then on
 * screen; sixteen charts of a live run: every chart follows. Frames are
 * held to catastrophic bounds (MAX_FRAME_CPU_MS); bench/run ui_frames
 * measures them against 16 ms.
 *
 * Input goes through the chart's own event controllers: the test emits
 * their signals ("motion", "drag-begin", ...) as GTK does for real events. */
#include <gtk/gtk.h>
#include <math.h>
#include <string.h>
#include <time.h>

#include <glib/gstdio.h>
#include <sqlite3.h>

#include <tw/summary.h>

#include "chart_card.h"
#include "chart_view.h"
#include "frame_meter.h"

#define WIDTH 800
#define HEIGHT 400
#define SMALL 1000
#define MANY 200 /* runs in one chart */

static char *scratch, *small_db;

static char *scratch_file(const char *name)
{
    return g_build_filename(scratch, name, NULL);
}

/* ---- waiting ------------------------------------------------------------------ */

static gboolean expired(gpointer flag)
{
    *(gboolean *)flag = TRUE;
    return G_SOURCE_REMOVE;
}

static void wait_until(gboolean (*cond)(gpointer), gpointer data, double seconds, const char *what)
{
    gboolean late = FALSE;
    guint timer = g_timeout_add((guint)(seconds * 1000), expired, &late);
    while (!cond(data) && !late)
        g_main_context_iteration(NULL, TRUE);
    if (late)
        g_error("waited %.1f s for %s", seconds, what);
    g_source_remove(timer);
}

static void drain(void)
{
    while (g_main_context_iteration(NULL, FALSE))
        ;
}

/* ---- the runs ------------------------------------------------------------------- */

static double value_a(int64_t step)
{
    return sin((double)step * 0.02);
}

static void write_small(const char *path)
{
    tw_summary_writer *a = tw_summary_writer_open(path, "a", NULL), *b = tw_summary_writer_open(path, "b", NULL);
    g_assert_nonnull(a);
    g_assert_nonnull(b);
    for (int64_t s = 0; s < SMALL; s++) {
        tw_summary_scalar(a, "train/loss", value_a(s), s);
        tw_summary_scalar(b, "train/loss", value_a(s) + 10, s);
    }
    g_assert_cmpint(tw_summary_writer_close(a, TW_RUN_FINISHED), ==, 0);
    g_assert_cmpint(tw_summary_writer_close(b, TW_RUN_FINISHED), ==, 0);
}

/* ---- a chart in a window ------------------------------------------------------------ */

typedef struct {
    TwDashboardData *data;
    GtkWidget *window, *chart;
    int nseries;
    gint64 tags[MANY];
} fixture;

static gboolean has_tags(gpointer data)
{
    return tw_dashboard_data_n_tag_names(data) > 0;
}

static gboolean is_mapped(gpointer widget)
{
    return gtk_widget_get_mapped(widget) && gtk_widget_get_width(widget) > 0;
}

/* The window is shown before the chart gets its series. */
static void open_chart(fixture *f, const char *path)
{
    f->data = tw_dashboard_data_new(path);
    wait_until(has_tags, f->data, 10, "the tags");
    f->nseries = tw_dashboard_data_n_runs(f->data);
    for (int r = 0; r < f->nseries; r++)
        f->tags[r] = tw_dashboard_data_tag_id(f->data, 0, r);
    f->window = gtk_window_new();
    gtk_window_set_default_size(GTK_WINDOW(f->window), WIDTH, HEIGHT);
    f->chart = tw_chart_view_new(f->data, tw_dashboard_data_tag_name(f->data, 0));
    gtk_window_set_child(GTK_WINDOW(f->window), f->chart);
    gtk_window_present(GTK_WINDOW(f->window));
    wait_until(is_mapped, f->chart, 10, "the chart on screen");
}

static void set_series(fixture *f)
{
    tw_rgb colors[MANY];
    const char *labels[MANY];
    double origins[MANY];
    for (int r = 0; r < f->nseries; r++) {
        colors[r] = tw_run_color(r);
        labels[r] = tw_dashboard_data_run(f->data, r)->name;
        origins[r] = tw_dashboard_data_run(f->data, r)->start_time;
    }
    tw_chart_view_set_series(TW_CHART_VIEW(f->chart), f->nseries, f->tags, colors, labels, origins);
}

static void close_chart(fixture *f)
{
    gtk_window_destroy(GTK_WINDOW(f->window));
    drain();
    g_object_unref(f->data);
}

static tw_rect plot(fixture *f)
{
    return tw_chart_plot_area(gtk_widget_get_width(f->chart), gtk_widget_get_height(f->chart));
}

static int plot_columns(fixture *f)
{
    return (int)plot(f).width;
}

typedef struct {
    double x_lo, x_hi, y_lo, y_hi;
} range;

static range get_range(fixture *f)
{
    range r;
    tw_chart_view_get_range(TW_CHART_VIEW(f->chart), &r.x_lo, &r.x_hi, &r.y_lo, &r.y_hi);
    return r;
}

/* The pixel of step x (or value y) in the chart's current view. */
static double px_of(fixture *f, double x)
{
    range r = get_range(f);
    tw_rect p = plot(f);
    return p.x + (x - r.x_lo) / (r.x_hi - r.x_lo) * p.width;
}

static double py_of(fixture *f, double y)
{
    range r = get_range(f);
    tw_rect p = plot(f);
    return p.y + p.height - (y - r.y_lo) / (r.y_hi - r.y_lo) * p.height;
}

/* The view of series i answered for the chart's current range. */
static gboolean view_current(gpointer data)
{
    fixture *f = data;
    range r = get_range(f);
    for (int i = 0; i < f->nseries; i++) {
        const TwSeriesView *v = tw_dashboard_data_series_view(f->data, f->tags[i]);
        if (!v || v->ncolumns != plot_columns(f) || v->lo != r.x_lo || v->hi != r.x_hi)
            return FALSE;
    }
    return TRUE;
}

static void wait_view(fixture *f)
{
    wait_until(view_current, f, 10, "the view for the chart's range");
    drain();
}

/* ---- the chart's controllers --------------------------------------------------------- */

static GtkEventController *controller(fixture *f, GType type, guint button)
{
    GListModel *list = gtk_widget_observe_controllers(f->chart);
    GtkEventController *found = NULL;
    for (guint i = 0; !found && i < g_list_model_get_n_items(list); i++) {
        GtkEventController *c = g_list_model_get_item(list, i);
        if (G_TYPE_CHECK_INSTANCE_TYPE(c, type) &&
            (!button || gtk_gesture_single_get_button(GTK_GESTURE_SINGLE(c)) == button))
            found = c;
        g_object_unref(c);
    }
    g_object_unref(list);
    g_assert_nonnull(found);
    return found;
}

static void hover(fixture *f, double x, double y)
{
    g_signal_emit_by_name(controller(f, GTK_TYPE_EVENT_CONTROLLER_MOTION, 0), "motion", x, y);
}

static void drag(fixture *f, guint button, double x, double y, double dx, double dy)
{
    GtkEventController *gesture = controller(f, GTK_TYPE_GESTURE_DRAG, button);
    g_signal_emit_by_name(gesture, "drag-begin", x, y);
    g_signal_emit_by_name(gesture, "drag-update", dx / 2, dy / 2);
    g_signal_emit_by_name(gesture, "drag-update", dx, dy);
    g_signal_emit_by_name(gesture, "drag-end", dx, dy);
}

/* Ctrl+wheel: an emitted "scroll" carries no modifiers, so the zoom it
 * does is called directly (test_wheel_scrolls_page emits the plain wheel). */
static void scroll(fixture *f, double dy)
{
    tw_chart_view_zoom(TW_CHART_VIEW(f->chart), dy);
}

static void double_click(fixture *f, double x, double y)
{
    g_signal_emit_by_name(controller(f, GTK_TYPE_GESTURE_CLICK, 0), "pressed", 2, x, y);
}

/* ---- behaviour ---------------------------------------------------------------------------- */

/* Set, the chart covers every point with room on the right for more, a
 * column per pixel, and the y range covers both runs. */
static void test_follows_series(void)
{
    fixture f = {0};
    open_chart(&f, small_db);
    set_series(&f);
    wait_view(&f);
    range r = get_range(&f);
    g_assert_cmpfloat(r.x_lo, ==, 0);
    g_assert_cmpfloat(r.x_hi, >=, SMALL - 1);
    g_assert_cmpfloat(r.x_hi, <, (SMALL - 1) * 1.1);
    g_assert_cmpfloat(r.y_lo, <=, -1);
    g_assert_cmpfloat(r.y_hi, >=, 11);
    close_chart(&f);
}

/* A lone point (an epoch's first value) sits in the middle of the chart. */
static void test_lone_point(void)
{
    char *path = scratch_file("lone.db");
    tw_summary_writer *w = tw_summary_writer_open(path, "cnn", NULL);
    tw_summary_scalar(w, "epoch/accuracy", 0.85, 1688);
    g_assert_cmpint(tw_summary_writer_close(w, TW_RUN_FINISHED), ==, 0);
    fixture f = {0};
    open_chart(&f, path);
    set_series(&f);
    wait_view(&f);
    range r = get_range(&f);
    g_assert_cmpfloat(r.x_lo, <, 1688);
    g_assert_cmpfloat(r.x_hi, >, 1688);
    g_assert_cmpfloat(fabs((r.x_lo + r.x_hi) / 2 - 1688), <, 0.1 * (r.x_hi - r.x_lo));
    g_assert_cmpfloat(r.y_lo, <, 0.85);
    g_assert_cmpfloat(r.y_hi, >, 0.85);
    const TwSeriesView *v = tw_dashboard_data_series_view(f.data, f.tags[0]);
    g_assert_cmpint(v->npoints, ==, 1);
    close_chart(&f);
    g_remove(path);
    g_free(path);
}

/* The header, then a row per run: name, smoothed, value, step, time. */
static char **hover_rows(fixture *f, double x, double y)
{
    hover(f, x, y);
    char *text = tw_chart_view_hover_text(TW_CHART_VIEW(f->chart));
    g_assert_nonnull(text);
    char **rows = g_strsplit(text, "\n", -1);
    g_free(text);
    g_assert_cmpstr(rows[0], ==, "Run\tSmoothed\tValue\tStep\tTime");
    return rows;
}

static void test_hover(void)
{
    fixture f = {0};
    open_chart(&f, small_db);
    set_series(&f);
    wait_view(&f);
    tw_chart_view_set_smoothing(TW_CHART_VIEW(f.chart), 0);
    /* Near run b's line (values around 10) at step 500: b first. */
    double x = px_of(&f, 500);
    char **rows = hover_rows(&f, x, py_of(&f, 10));
    g_assert_cmpuint(g_strv_length(rows), ==, 3);
    char **b = g_strsplit(rows[1], "\t", -1), **a = g_strsplit(rows[2], "\t", -1);
    g_assert_cmpstr(b[0], ==, "b");
    g_assert_cmpstr(a[0], ==, "a");
    /* The nearest point: step 500 (or its neighbour when the pixel falls
     * between them), its value, and smoothing off: the same value. */
    int64_t step = g_ascii_strtoll(a[3], NULL, 10);
    g_assert_cmpint(llabs(step - 500), <=, 1);
    char want[64];
    g_snprintf(want, sizeof want, "%.4g", value_a(step));
    g_assert_cmpstr(a[2], ==, want);
    g_assert_cmpstr(a[1], ==, want);
    g_snprintf(want, sizeof want, "%.4g", value_a(step) + 10);
    g_assert_cmpstr(b[2], ==, want);
    g_strfreev(a);
    g_strfreev(b);
    g_strfreev(rows);

    /* Near run a's line: a first. */
    rows = hover_rows(&f, x, py_of(&f, 0));
    g_assert_true(g_str_has_prefix(rows[1], "a\t"));
    g_strfreev(rows);

    /* Away from the plot: no box. */
    hover(&f, 2, 2);
    g_assert_null(tw_chart_view_hover_text(TW_CHART_VIEW(f.chart)));
    close_chart(&f);
}

/* A rectangle zooms into its range, and the answer for the new range is
 * finer: raw points once there are at most two per column. */
static void test_drag_zoom_and_reset(void)
{
    fixture f = {0};
    open_chart(&f, small_db);
    set_series(&f);
    wait_view(&f);
    range whole = get_range(&f);
    double x0 = px_of(&f, 200), x1 = px_of(&f, 300);
    drag(&f, GDK_BUTTON_PRIMARY, x0, plot(&f).y + 10, x1 - x0, 0); /* flat: x alone */
    range r = get_range(&f);
    g_assert_cmpfloat(fabs(r.x_lo - 200), <, 1);
    g_assert_cmpfloat(fabs(r.x_hi - 300), <, 1);
    g_assert_cmpfloat(r.y_lo, <=, -1); /* y still automatic: both runs */
    wait_view(&f);
    const TwSeriesView *v = tw_dashboard_data_series_view(f.data, f.tags[0]);
    g_assert_nonnull(v->points);
    g_assert_cmpint(v->npoints, ==, (int64_t)floor(r.x_hi) - (int64_t)ceil(r.x_lo) + 1);

    /* A rectangle with height sets y too (run b is at 9 to 9.72 here). */
    double y0 = py_of(&f, 9.2), y1 = py_of(&f, 9.6);
    drag(&f, GDK_BUTTON_PRIMARY, px_of(&f, 220), y1, px_of(&f, 260) - px_of(&f, 220), y0 - y1);
    r = get_range(&f);
    g_assert_cmpfloat(fabs(r.y_lo - 9.2), <, 0.01);
    g_assert_cmpfloat(fabs(r.y_hi - 9.6), <, 0.01);

    /* A click-sized drag changes nothing. */
    drag(&f, GDK_BUTTON_PRIMARY, px_of(&f, 230), y1, 2, 2);
    range same = get_range(&f);
    g_assert_cmpfloat(same.x_lo, ==, r.x_lo);
    g_assert_cmpfloat(same.x_hi, ==, r.x_hi);

    double_click(&f, 100, 100);
    r = get_range(&f);
    g_assert_cmpfloat(r.x_lo, ==, whole.x_lo);
    g_assert_cmpfloat(r.x_hi, ==, whole.x_hi);
    wait_view(&f);
    g_assert_cmpfloat(get_range(&f).y_lo, ==, whole.y_lo);
    close_chart(&f);
}

static void test_pan_and_scroll(void)
{
    fixture f = {0};
    open_chart(&f, small_db);
    set_series(&f);
    wait_view(&f);
    range r = get_range(&f);
    tw_rect p = plot(&f);
    /* The middle button drags the data 100 pixels right: the range moves left. */
    drag(&f, GDK_BUTTON_MIDDLE, p.x + 300, p.y + 50, 100, 0);
    range moved = get_range(&f);
    double shift = 100 / p.width * (r.x_hi - r.x_lo);
    g_assert_cmpfloat(fabs(moved.x_lo - (r.x_lo - shift)), <, 1e-6);
    g_assert_cmpfloat(fabs(moved.x_hi - (r.x_hi - shift)), <, 1e-6);
    wait_view(&f);

    /* Ctrl+wheel up zooms in around the pointer: step 400 stays under it. */
    double x = px_of(&f, 400);
    hover(&f, x, p.y + 50);
    scroll(&f, -1);
    range zoomed = get_range(&f);
    g_assert_cmpfloat(zoomed.x_hi - zoomed.x_lo, <, (moved.x_hi - moved.x_lo) / 1.1);
    g_assert_cmpfloat(fabs(px_of(&f, 400) - x), <, 1e-6);
    wait_view(&f);
    scroll(&f, 1);
    range back = get_range(&f);
    g_assert_cmpfloat(fabs((back.x_hi - back.x_lo) - (moved.x_hi - moved.x_lo)), <, 1e-6);
    close_chart(&f);
}

/* The wheel alone over a chart scrolls the page: the chart leaves the
 * event unhandled (so it goes on to the scrolled window) and its range as
 * it was. */
static void test_wheel_scrolls_page(void)
{
    fixture f = {0};
    open_chart(&f, small_db);
    set_series(&f);
    wait_view(&f);
    range r = get_range(&f);
    tw_rect p = plot(&f);
    hover(&f, p.x + 100, p.y + 50);
    for (int dy = -1; dy <= 1; dy += 2) {
        gboolean handled = TRUE;
        g_signal_emit_by_name(controller(&f, GTK_TYPE_EVENT_CONTROLLER_SCROLL, 0), "scroll", 0.0, (double)dy,
                              &handled);
        g_assert_false(handled);
        range after = get_range(&f);
        g_assert_cmpfloat(after.x_lo, ==, r.x_lo);
        g_assert_cmpfloat(after.x_hi, ==, r.x_hi);
    }
    close_chart(&f);
}

static gboolean card_marked(gpointer card)
{
    return tw_chart_card_damage(card) != NULL;
}

/* A chart card whose run "b" has a damaged chunk: a mark under the chart
 * names the file, the run, the tag and the chunk, and run "a" still gets
 * its view. */
static void test_card_marks_damage(void)
{
    char *path = scratch_file("damaged.db");
    write_small(path);
    sqlite3 *db;
    g_assert_cmpint(sqlite3_open(path, &db), ==, SQLITE_OK);
    g_assert_cmpint(sqlite3_exec(db, "UPDATE scalar_chunks SET points = x'0102030405' WHERE id = (SELECT c.id FROM "
                                     "scalar_chunks c JOIN tags t ON c.tag_id = t.id JOIN runs r ON t.run_id = r.id "
                                     "WHERE r.name = 'b' ORDER BY c.id LIMIT 1)", NULL, NULL, NULL),
                     ==, SQLITE_OK);
    g_assert_cmpint(sqlite3_changes(db), ==, 1);
    sqlite3_close(db);

    TwDashboardData *data = tw_dashboard_data_new(path);
    wait_until(has_tags, data, 10, "the tags");
    g_assert_cmpint(tw_dashboard_data_n_runs(data), ==, 2);
    gint64 ids[2];
    tw_rgb colors[2];
    const char *labels[2];
    double origins[2];
    for (int r = 0; r < 2; r++) {
        ids[r] = tw_dashboard_data_tag_id(data, 0, r);
        colors[r] = tw_run_color(r);
        labels[r] = tw_dashboard_data_run(data, r)->name;
        origins[r] = tw_dashboard_data_run(data, r)->start_time;
    }
    GtkWidget *window = gtk_window_new();
    gtk_window_set_default_size(GTK_WINDOW(window), WIDTH, HEIGHT);
    GtkWidget *card = tw_chart_card_new(data, "train/loss");
    gtk_window_set_child(GTK_WINDOW(window), card);
    gtk_window_present(GTK_WINDOW(window));
    tw_chart_card_set_series(TW_CHART_CARD(card), 2, ids, colors, labels, origins);
    wait_until(card_marked, card, 10, "the card's mark");
    const char *mark = tw_chart_card_damage(TW_CHART_CARD(card));
    g_test_message("%s", mark);
    g_assert_nonnull(strstr(mark, path));
    g_assert_nonnull(strstr(mark, "run “b”, tag “train/loss”: scalar chunk"));
    g_assert_null(strstr(mark, "run “a”"));
    int a = !strcmp(labels[0], "a") ? 0 : 1;
    const TwSeriesView *v = tw_dashboard_data_series_view(data, ids[a]);
    g_assert_nonnull(v);
    g_assert_cmpint(v->count, ==, SMALL);
    gtk_window_destroy(GTK_WINDOW(window));
    drain();
    g_object_unref(data);
    g_remove(path);
    g_free(path);
}

/* ---- exports ------------------------------------------------------------------------------ */

static char *read_text(const char *path)
{
    char *text = NULL;
    g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
    return text;
}

static void test_exports(void)
{
    fixture f = {0};
    open_chart(&f, small_db);
    set_series(&f);
    wait_view(&f);
    GError *error = NULL;

    char *png = scratch_file("chart.png");
    g_assert_true(tw_chart_view_export_png(TW_CHART_VIEW(f.chart), png, &error));
    g_assert_no_error(error);
    cairo_surface_t *image = cairo_image_surface_create_from_png(png);
    g_assert_cmpint(cairo_surface_status(image), ==, CAIRO_STATUS_SUCCESS);
    g_assert_cmpint(cairo_image_surface_get_width(image), ==, gtk_widget_get_width(f.chart));
    g_assert_cmpint(cairo_image_surface_get_height(image), ==, gtk_widget_get_height(f.chart));
    cairo_surface_destroy(image);

    char *svg = scratch_file("chart.svg");
    g_assert_true(tw_chart_view_export_svg(TW_CHART_VIEW(f.chart), svg, &error));
    char *text = read_text(svg);
    g_assert_true(g_str_has_prefix(text, "<?xml") || g_str_has_prefix(text, "<svg"));
    g_assert_nonnull(strstr(text, "</svg>"));
    g_free(text);

    /* Zoomed in: the raw points in the range, no comment. */
    double x0 = px_of(&f, 100), x1 = px_of(&f, 150);
    drag(&f, GDK_BUTTON_PRIMARY, x0, plot(&f).y + 10, x1 - x0, 0);
    wait_view(&f);
    range r = get_range(&f);
    char *csv = scratch_file("chart.csv");
    g_assert_true(tw_chart_view_export_csv(TW_CHART_VIEW(f.chart), csv, &error));
    text = read_text(csv);
    char **lines = g_strsplit(text, "\n", -1);
    g_assert_cmpstr(lines[0], ==, "run,wall_time,step,value");
    int64_t per_run = (int64_t)floor(r.x_hi) - (int64_t)ceil(r.x_lo) + 1;
    g_assert_cmpuint(g_strv_length(lines), ==, 1 + 2 * per_run + 1); /* a last empty string */
    char **first = g_strsplit(lines[1], ",", -1);
    g_assert_cmpstr(first[0], ==, "a");
    g_assert_cmpint(g_ascii_strtoll(first[2], NULL, 10), ==, (int64_t)ceil(r.x_lo));
    g_assert_cmpfloat(g_ascii_strtod(first[3], NULL), ==, value_a((int64_t)ceil(r.x_lo)));
    g_strfreev(first);
    g_strfreev(lines);
    g_free(text);

    /* A read-only folder: an error, not a crash. */
    g_assert_false(tw_chart_view_export_png(TW_CHART_VIEW(f.chart), "/nonexistent/chart.png", &error));
    g_assert_nonnull(error);
    g_clear_error(&error);
    g_assert_false(tw_chart_view_export_csv(TW_CHART_VIEW(f.chart), "/nonexistent/chart.csv", &error));
    g_assert_nonnull(error);
    g_clear_error(&error);
    g_free(png);
    g_free(svg);
    g_free(csv);
    close_chart(&f);
}

/* ---- ten million points ---------------------------------------------------------------------- */

#define BIG 10000000

/* Frames are timed by tests/frame_meter.c. The tests hold catastrophic
 * bounds: the first frame with ten million points within
 * MAX_FIRST_FRAME_MS of the series being set, and no frame taking
 * MAX_FRAME_CPU_MS of the main thread's CPU time; the 16 ms frame target
 * is bench/run ui_frames'. The first frame is wall time (the reader thread
 * loads the points), so its bound is five times the 1 s target: on a
 * loaded 2-core machine it took 0.2-2.2 s. */
#define MAX_FIRST_FRAME_MS 5000.0
#define MAX_FRAME_CPU_MS 100.0

/* When the view with the series arrived, and the first paint after it. */
typedef struct {
    fixture *f;
    gint64 view_at, painted_at;
} first_frame;

static void on_view(TwDashboardData *data, gint64 tag, gpointer user_data)
{
    first_frame *w = user_data;
    if (!w->view_at && view_current(w->f))
        w->view_at = g_get_monotonic_time();
}

static void on_after_paint(GdkFrameClock *clock, gpointer user_data)
{
    first_frame *w = user_data;
    if (w->view_at && !w->painted_at)
        w->painted_at = g_get_monotonic_time();
}

static gboolean first_frame_painted(gpointer w)
{
    return ((first_frame *)w)->painted_at != 0;
}

typedef struct {
    frame_meter *meter;
    int target;
} frame_count;

static gboolean frames_done(gpointer data)
{
    frame_count *c = data;
    return frame_meter_frames(c->meter) >= c->target;
}

static void paint_one_frame(fixture *f, frame_meter *m)
{
    frame_count c = {m, frame_meter_frames(m) + 1};
    gtk_widget_queue_draw(f->chart);
    wait_until(frames_done, &c, 5, "a frame");
}

static void assert_frames(frame_stats s)
{
    g_assert_cmpint(s.frames, >, 0);
    g_assert_cmpfloat(s.longest_cpu_ms, <=, MAX_FRAME_CPU_MS);
    g_assert_cmpfloat(s.longest_stall_cpu_ms, <=, MAX_FRAME_CPU_MS);
}

static void test_ten_million(void)
{
    char *path = scratch_file("big.db");
    tw_summary_writer *writer = tw_summary_writer_open(path, "big", NULL);
    for (int64_t s = 0; s < BIG; s++)
        tw_summary_scalar(writer, "train/loss", s == 7777777 ? 50 : sin(s * 1e-5) + 0.001 * (double)(s % 7), s);
    g_assert_cmpint(tw_summary_writer_close(writer, TW_RUN_FINISHED), ==, 0);

    fixture f = {0};
    open_chart(&f, path);
    GdkFrameClock *clock = gtk_widget_get_frame_clock(f.chart);
    first_frame w = {&f};
    gulong view_handler = g_signal_connect(f.data, "series-changed", G_CALLBACK(on_view), &w);
    g_signal_connect(clock, "after-paint", G_CALLBACK(on_after_paint), &w);
    gint64 start = g_get_monotonic_time();
    set_series(&f);
    wait_until(first_frame_painted, &w, 10, "the first frame with the series");
    double first_ms = (double)(w.painted_at - start) / 1000.0;
    g_signal_handler_disconnect(f.data, view_handler);
    const TwSeriesView *v = tw_dashboard_data_series_view(f.data, f.tags[0]);
    g_assert_cmpint(v->count, ==, BIG);
    g_printerr("# 10M points: first frame %.1f ms after set_series\n", first_ms);

    /* Pan with the middle button, a frame per move, then zoom with the
     * wheel: every frame is timed. */
    frame_meter *m = frame_meter_start(f.chart, "10M-point chart panning");
    GtkEventController *middle = controller(&f, GTK_TYPE_GESTURE_DRAG, GDK_BUTTON_MIDDLE);
    tw_rect p = plot(&f);
    g_signal_emit_by_name(middle, "drag-begin", p.x + 100, p.y + 50);
    for (int i = 1; i <= 30; i++) {
        g_signal_emit_by_name(middle, "drag-update", 8.0 * i, 0.0);
        paint_one_frame(&f, m);
    }
    g_signal_emit_by_name(middle, "drag-end", 240.0, 0.0);
    frame_stats pan = frame_meter_stop(m);
    m = frame_meter_start(f.chart, "10M-point chart zooming");
    hover(&f, p.x + p.width / 2, p.y + 50);
    for (int i = 0; i < 20; i++) {
        scroll(&f, i < 10 ? -1 : 1);
        paint_one_frame(&f, m);
    }
    frame_stats zoom = frame_meter_stop(m);
    g_assert_cmpfloat(first_ms, <, MAX_FIRST_FRAME_MS);
    assert_frames(pan);
    assert_frames(zoom);
    g_signal_handlers_disconnect_by_data(clock, &w);
    close_chart(&f);
    g_remove(path);
    g_free(path);
}

/* ---- many runs in one chart ------------------------------------------------------------------- */

/* What the chart shows on screen, through the widget's own snapshot. */
static cairo_surface_t *screen_image(fixture *f)
{
    int width = gtk_widget_get_width(f->chart), height = gtk_widget_get_height(f->chart);
    GdkPaintable *paintable = gtk_widget_paintable_new(f->chart);
    GtkSnapshot *snapshot = gtk_snapshot_new();
    gdk_paintable_snapshot(paintable, snapshot, width, height);
    GskRenderNode *node = gtk_snapshot_free_to_node(snapshot);
    cairo_surface_t *image = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, width, height);
    cairo_t *cr = cairo_create(image);
    if (node)
        gsk_render_node_draw(node, cr);
    cairo_destroy(cr);
    g_clear_pointer(&node, gsk_render_node_unref);
    g_object_unref(paintable);
    cairo_surface_flush(image);
    return image;
}

/* Pixels of the plot close to a run's colour. */
static int pixels_of(cairo_surface_t *image, tw_rect plot, tw_rgb color)
{
    const unsigned char *data = cairo_image_surface_get_data(image);
    int stride = cairo_image_surface_get_stride(image), count = 0;
    for (int y = (int)plot.y + 1; y < (int)(plot.y + plot.height) - 1; y++)
        for (int x = (int)plot.x + 1; x < (int)(plot.x + plot.width) - 1; x++) {
            const unsigned char *p = data + y * stride + 4 * x; /* B, G, R, A */
            if (fabs(p[2] / 255.0 - color.r) < 0.05 && fabs(p[1] / 255.0 - color.g) < 0.05 &&
                fabs(p[0] / 255.0 - color.b) < 0.05)
                count++;
        }
    return count;
}

typedef struct {
    fixture *f;
    tw_rgb color;
} color_query;

static gboolean run_drawn(gpointer data)
{
    color_query *q = data;
    cairo_surface_t *image = screen_image(q->f);
    int n = pixels_of(image, plot(q->f), q->color);
    cairo_surface_destroy(image);
    return n > 50;
}

/* 200 runs in one chart (200 ms to draw): the frames stay short while the
 * chart is drawn in a thread, hovering included, and then it is there.
 * Bounded in the main thread's CPU time alone: the render and data threads
 * share the two cores with it here, so its wall-clock time says as much
 * about them (reported). */
static void test_many_runs(void)
{
    char *path = scratch_file("many.db");
    for (int r = 0; r < MANY; r++) {
        char name[16];
        g_snprintf(name, sizeof name, "run-%03d", r);
        tw_summary_writer *w = tw_summary_writer_open(path, name, NULL);
        for (int64_t s = 0; s < 2000; s++)
            tw_summary_scalar(w, "train/loss", 0.02 * r + sin((double)s * 0.01 + r), s);
        g_assert_cmpint(tw_summary_writer_close(w, TW_RUN_FINISHED), ==, 0);
    }
    fixture f = {0};
    open_chart(&f, path);
    g_assert_cmpint(f.nseries, ==, MANY);
    set_series(&f);
    wait_view(&f);
    tw_rect p = plot(&f);
    frame_meter *m = frame_meter_start(f.chart, "200-run chart hovered");
    for (int i = 0; i < 30; i++) {
        hover(&f, p.x + p.width * (i + 1) / 32, p.y + p.height / 2);
        paint_one_frame(&f, m);
    }
    frame_stats frames = frame_meter_stop(m);
    char *text = tw_chart_view_hover_text(TW_CHART_VIEW(f.chart));
    g_assert_cmpuint(strlen(text), >, 0);
    char **rows = g_strsplit(text, "\n", -1);
    g_assert_cmpuint(g_strv_length(rows), ==, MANY + 1);
    g_strfreev(rows);
    g_free(text);
    hover(&f, 1, 1);
    color_query q = {&f, tw_run_color(MANY - 1)}; /* drawn last: on top */
    wait_until(run_drawn, &q, 10, "the chart of 200 runs on screen");
    assert_frames(frames);
    close_chart(&f);
    g_remove(path);
    g_free(path);
}

/* ---- under GSK's GL renderer -------------------------------------------------------------------- */

/* The first texture node in a render node tree. */
static GskRenderNode *find_texture(GskRenderNode *node)
{
    if (!node)
        return NULL;
    switch (gsk_render_node_get_node_type(node)) {
    case GSK_TEXTURE_NODE:
        return node;
    case GSK_CONTAINER_NODE:
        for (guint i = 0; i < gsk_container_node_get_n_children(node); i++) {
            GskRenderNode *found = find_texture(gsk_container_node_get_child(node, i));
            if (found)
                return found;
        }
        return NULL;
    case GSK_CLIP_NODE:
        return find_texture(gsk_clip_node_get_child(node));
    case GSK_TRANSFORM_NODE:
        return find_texture(gsk_transform_node_get_child(node));
    case GSK_DEBUG_NODE:
        return find_texture(gsk_debug_node_get_child(node));
    default:
        return NULL;
    }
}

static void note_painted(GdkFrameClock *clock, gpointer painted)
{
    *(gboolean *)painted = TRUE;
}

static gboolean is_true(gpointer flag)
{
    return *(gboolean *)flag;
}

/* The texture the chart's next frame shows (a reference), or NULL. */
static GdkTexture *frame_texture(fixture *f)
{
    gboolean painted = FALSE;
    GdkFrameClock *clock = gtk_widget_get_frame_clock(f->chart);
    gulong handler = g_signal_connect(clock, "after-paint", G_CALLBACK(note_painted), &painted);
    gtk_widget_queue_draw(f->chart);
    wait_until(is_true, &painted, 10, "a frame");
    g_signal_handler_disconnect(clock, handler);
    GdkPaintable *paintable = gtk_widget_paintable_new(f->chart);
    GtkSnapshot *snapshot = gtk_snapshot_new();
    gdk_paintable_snapshot(paintable, snapshot, gtk_widget_get_width(f->chart), gtk_widget_get_height(f->chart));
    GskRenderNode *node = gtk_snapshot_free_to_node(snapshot);
    GskRenderNode *found = find_texture(node);
    GdkTexture *texture = found ? g_object_ref(gsk_texture_node_get_texture(found)) : NULL;
    g_clear_pointer(&node, gsk_render_node_unref);
    g_object_unref(paintable);
    return texture;
}

/* The texture once the chart's drawing has settled: a chart whose last
 * drawing took longer than a frame's budget draws the next in a thread,
 * and a frame shows the older texture until it lands. */
static GdkTexture *settled_texture(fixture *f)
{
    GdkTexture *texture = frame_texture(f);
    for (int i = 0; i < 100; i++) {
        GdkTexture *next = frame_texture(f);
        gboolean same = next == texture;
        g_clear_object(&texture);
        texture = next;
        if (same)
            break;
    }
    return texture;
}

/* Under the GL renderer the chart is one texture, the same from frame to
 * frame while only the pointer moves (GL uploads it once), a new one when
 * the view changes. */
static void test_gl_texture(void)
{
    /* GTK picks the renderer once per process: GL in a process of its own. */
    if (!g_test_subprocess()) {
        g_test_trap_subprocess(NULL, 0, G_TEST_SUBPROCESS_INHERIT_STDOUT | G_TEST_SUBPROCESS_INHERIT_STDERR);
        g_test_trap_assert_passed();
        return;
    }
    fixture f = {0};
    open_chart(&f, small_db);
    GskRenderer *renderer = gtk_native_get_renderer(GTK_NATIVE(f.window));
    if (GSK_IS_CAIRO_RENDERER(renderer)) { /* Xvfb has Mesa's llvmpipe; a display without GL has not */
        close_chart(&f);
        g_test_message("no GL here: GTK chose its Cairo renderer, nothing to check");
        return;
    }
    set_series(&f);
    wait_view(&f);
    tw_rect p = plot(&f);
    hover(&f, p.x + 100, p.y + 50);
    GdkTexture *first = settled_texture(&f);
    hover(&f, p.x + 200, p.y + 80);
    GdkTexture *second = frame_texture(&f);
    g_assert_nonnull(first);
    g_assert_true(first == second);
    g_assert_cmpint(gdk_texture_get_width(first), ==, gtk_widget_get_width(f.chart) * gtk_widget_get_scale_factor(f.chart));
    double x0 = px_of(&f, 200), x1 = px_of(&f, 300);
    drag(&f, GDK_BUTTON_PRIMARY, x0, p.y + 10, x1 - x0, 0);
    wait_view(&f);
    GdkTexture *zoomed = settled_texture(&f);
    g_assert_nonnull(zoomed);
    g_assert_true(zoomed != first);
    g_object_unref(first);
    g_object_unref(second);
    g_object_unref(zoomed);
    close_chart(&f);
}

/* ---- a dashboard of a live run ------------------------------------------------------------------ */

#define LIVE_TAGS 16

/* A grid that times its children's snapshots (the charts' part of each
 * frame: drawing the changed ones within their budget, painting all), in
 * the main thread's CPU time. The rest of a frame is GTK's: under Xvfb
 * with the Cairo renderer, copying the whole window into X shared memory,
 * 4-5 ms, and at times 13 ms for a second or so (page faults, measured). */
typedef struct {
    GtkGrid parent_instance;
    double frame_ms, longest_ms;
} TimedGrid;
typedef struct {
    GtkGridClass parent_class;
} TimedGridClass;
G_DEFINE_TYPE(TimedGrid, timed_grid, GTK_TYPE_GRID)

static void timed_grid_snapshot(GtkWidget *widget, GtkSnapshot *snapshot)
{
    TimedGrid *grid = (TimedGrid *)widget;
    double began = frame_meter_thread_cpu_ms();
    GTK_WIDGET_CLASS(timed_grid_parent_class)->snapshot(widget, snapshot);
    grid->frame_ms += frame_meter_thread_cpu_ms() - began;
}

static void timed_grid_class_init(TimedGridClass *klass)
{
    GTK_WIDGET_CLASS(klass)->snapshot = timed_grid_snapshot;
}

static void timed_grid_init(TimedGrid *grid)
{
}

static void on_grid_painted(GdkFrameClock *clock, gpointer user_data)
{
    TimedGrid *grid = user_data;
    grid->longest_ms = MAX(grid->longest_ms, grid->frame_ms);
    grid->frame_ms = 0;
}

typedef struct {
    tw_summary_writer *writer;
    volatile gint stop;
    int64_t steps;
} live_writer;

static gpointer write_live(gpointer data)
{
    live_writer *lw = data;
    for (; !g_atomic_int_get(&lw->stop); lw->steps += 10) {
        for (int t = 0; t < LIVE_TAGS; t++) {
            char tag[32];
            g_snprintf(tag, sizeof tag, "train/metric%02d", t);
            for (int64_t s = lw->steps; s < lw->steps + 10; s++)
                tw_summary_scalar(lw->writer, tag, sin(s * 0.01 + t), s);
        }
        tw_summary_flush(lw->writer);
        g_usleep(20000);
    }
    return NULL;
}

static gboolean all_caught_up(gpointer data)
{
    fixture *f = data;
    for (int i = 0; i < LIVE_TAGS; i++) {
        const TwSeriesView *v = tw_dashboard_data_series_view(f->data, f->tags[i]);
        if (!v || v->count != f->nseries)
            return FALSE;
    }
    return TRUE;
}

static void count_paint(gpointer counter)
{
    (*(int *)counter)++;
}

/* Sixteen charts of one run being written, points every 20 ms: every
 * chart follows, and neither a frame nor the charts' part of one reaches
 * the catastrophic bound (the charts that do not fit in a frame's drawing
 * budget are drawn in threads). */
static void test_live_dashboard(void)
{
    char *path = scratch_file("live.db");
    live_writer lw = {tw_summary_writer_open(path, "live", NULL), 0, 0};
    g_assert_nonnull(lw.writer);
    for (int t = 0; t < LIVE_TAGS; t++) {
        char tag[32];
        g_snprintf(tag, sizeof tag, "train/metric%02d", t);
        tw_summary_scalar(lw.writer, tag, 0, 0);
    }
    tw_summary_flush(lw.writer);
    fixture f = {.data = tw_dashboard_data_new(path)};
    wait_until(has_tags, f.data, 10, "the tags");
    while (tw_dashboard_data_n_tag_names(f.data) < LIVE_TAGS)
        g_main_context_iteration(NULL, TRUE);
    f.window = gtk_window_new();
    gtk_window_set_default_size(GTK_WINDOW(f.window), 1280, 800);
    GtkWidget *grid = g_object_new(timed_grid_get_type(), NULL);
    gtk_grid_set_row_homogeneous(GTK_GRID(grid), TRUE);
    gtk_grid_set_column_homogeneous(GTK_GRID(grid), TRUE);
    const tw_rgb color = tw_run_color(0);
    const char *label = "live";
    double origin = tw_dashboard_data_run(f.data, 0)->start_time;
    for (int t = 0; t < LIVE_TAGS; t++) {
        f.tags[t] = tw_dashboard_data_tag_id(f.data, t, 0);
        GtkWidget *chart = tw_chart_view_new(f.data, tw_dashboard_data_tag_name(f.data, t));
        gtk_widget_set_size_request(chart, 200, 150);
        tw_chart_view_set_series(TW_CHART_VIEW(chart), 1, &f.tags[t], &color, &label, &origin);
        gtk_grid_attach(GTK_GRID(grid), chart, t % 4, t / 4, 1, 1);
    }
    f.chart = gtk_widget_get_first_child(grid);
    gtk_window_set_child(GTK_WINDOW(f.window), grid);
    gtk_window_present(GTK_WINDOW(f.window));
    wait_until(is_mapped, f.chart, 10, "the charts on screen");

    GdkFrameClock *clock = gtk_widget_get_frame_clock(f.window);
    frame_meter *m = frame_meter_start(f.window, "16 charts of a live run");
    g_signal_connect(clock, "after-paint", G_CALLBACK(on_grid_painted), grid);
    int painted = 0;
    g_signal_connect_swapped(clock, "after-paint", G_CALLBACK(count_paint), &painted);
    GThread *thread = g_thread_new("live writer", write_live, &lw);
    /* Two seconds of frames, longer on a busy machine until there are 20
     * to measure (at most 20 s: under 1 frame a second is a failure). */
    gboolean late = FALSE, too_late = FALSE;
    g_timeout_add(2000, expired, &late);
    guint limit = g_timeout_add(20000, expired, &too_late);
    while (!(late && painted > 20) && !too_late) {
        gtk_widget_queue_draw(f.window); /* a frame every turn, as the pointer would */
        g_main_context_iteration(NULL, TRUE);
    }
    if (!too_late)
        g_source_remove(limit);
    g_signal_handlers_disconnect_by_func(clock, count_paint, &painted);
    g_atomic_int_set(&lw.stop, 1);
    g_thread_join(thread);
    frame_stats frames = frame_meter_stop(m);
    g_signal_handlers_disconnect_by_data(clock, grid);
    g_assert_cmpint(tw_summary_writer_close(lw.writer, TW_RUN_FINISHED), ==, 0);
    f.nseries = (int)lw.steps + 1; /* the count every series ends with */
    wait_until(all_caught_up, &f, 10, "every chart's last points");
    double charts_ms = ((TimedGrid *)grid)->longest_ms;
    g_printerr("# 16 charts of a live run: the charts' part of a frame %.1f ms CPU the longest\n", charts_ms);
    g_assert_cmpint(frames.frames, >, 20);
    g_assert_cmpfloat(charts_ms, <=, MAX_FRAME_CPU_MS);
    assert_frames(frames);
    close_chart(&f);
    g_remove(path);
    g_free(path);
}

/* While the window trains (a hold of tw_chart_view_hold_live_gap), a
 * chart draws new data at most every TW_CHART_LIVE_GAP_MS, and still ends
 * on the last point. The writer flushes every 20 ms: without the gap the
 * chart would take up to 50 new images a second. */
typedef struct {
    GtkWidget *chart;
    int64_t last;
    int images;
} image_count;

static void count_images(image_count *c)
{
    int64_t shown = tw_chart_view_points_shown(TW_CHART_VIEW(c->chart));
    if (shown != c->last)
        c->images++, c->last = shown;
}

static gboolean shows_all(gpointer data)
{
    fixture *f = data;
    const TwSeriesView *v = tw_dashboard_data_series_view(f->data, f->tags[0]);
    return v && v->count == f->nseries && tw_chart_view_points_shown(TW_CHART_VIEW(f->chart)) == f->nseries;
}

static void test_live_gap(void)
{
    char *path = scratch_file("gap.db");
    live_writer lw = {tw_summary_writer_open(path, "gap", NULL), 0, 0};
    g_assert_nonnull(lw.writer);
    tw_summary_scalar(lw.writer, "train/metric00", 0, 0);
    tw_summary_flush(lw.writer);
    fixture f = {0};
    open_chart(&f, path);
    set_series(&f);
    wait_view(&f);
    tw_chart_view_hold_live_gap(TRUE);
    GdkFrameClock *clock = gtk_widget_get_frame_clock(f.window);
    image_count c = {f.chart, tw_chart_view_points_shown(TW_CHART_VIEW(f.chart)), 0};
    g_signal_connect_swapped(clock, "after-paint", G_CALLBACK(count_images), &c);
    GThread *thread = g_thread_new("live writer", write_live, &lw);
    gint64 start = g_get_monotonic_time();
    gboolean done = FALSE;
    g_timeout_add(1500, expired, &done);
    while (!done) {
        gtk_widget_queue_draw(f.window); /* a frame every turn, as the pointer would */
        g_main_context_iteration(NULL, TRUE);
    }
    double seconds = (g_get_monotonic_time() - start) / 1e6;
    g_atomic_int_set(&lw.stop, 1);
    g_thread_join(thread);
    g_signal_handlers_disconnect_by_func(clock, count_images, &c);
    g_assert_cmpint(tw_summary_writer_close(lw.writer, TW_RUN_FINISHED), ==, 0);
    /* At most one image a gap, and one more for the first data. */
    g_assert_cmpint(c.images, >, 0);
    g_assert_cmpint(c.images, <=, (int)(seconds * 1000 / TW_CHART_LIVE_GAP_MS) + 2);
    f.nseries = (int)lw.steps + 1; /* train/metric00: the first point, then 10 a flush */
    wait_until(shows_all, &f, 10, "the chart's last point");
    tw_chart_view_hold_live_gap(FALSE);
    close_chart(&f);
    g_remove(path);
    g_free(path);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_setenv("GTK_A11Y", "none", TRUE); /* no accessibility bus under Xvfb */
    /* Frame times measure the app, not Mesa's software GL under Xvfb (the
     * GL test's subprocess keeps GTK's default). */
    if (g_test_subprocess())
        g_unsetenv("GSK_RENDERER");
    else
        g_setenv("GSK_RENDERER", "cairo", TRUE);
    if (!gtk_init_check()) {
        g_test_message("no display: run under xvfb-run (meson test --suite gui does)");
        return 77;
    }
    scratch = g_dir_make_tmp("twb-chart-view-XXXXXX", NULL);
    small_db = scratch_file("small.db");
    write_small(small_db);
    g_test_add_func("/ui/chart_view/follows-series", test_follows_series);
    g_test_add_func("/ui/chart_view/lone-point", test_lone_point);
    g_test_add_func("/ui/chart_view/hover", test_hover);
    g_test_add_func("/ui/chart_view/drag-zoom-and-reset", test_drag_zoom_and_reset);
    g_test_add_func("/ui/chart_view/pan-and-scroll", test_pan_and_scroll);
    g_test_add_func("/ui/chart_view/wheel-scrolls-page", test_wheel_scrolls_page);
    g_test_add_func("/ui/chart_view/card-marks-damage", test_card_marks_damage);
    g_test_add_func("/ui/chart_view/exports", test_exports);
    g_test_add_func("/ui/chart_view/gl-texture", test_gl_texture);
    g_test_add_func("/ui/chart_view/ten-million", test_ten_million);
    g_test_add_func("/ui/chart_view/many-runs", test_many_runs);
    g_test_add_func("/ui/chart_view/live-dashboard", test_live_dashboard);
    g_test_add_func("/ui/chart_view/live-gap", test_live_gap);
    int rc = g_test_run();
    GDir *dir = g_dir_open(scratch, 0, NULL);
    const char *name;
    while (dir && (name = g_dir_read_name(dir))) {
        char *file = scratch_file(name);
        g_remove(file);
        g_free(file);
    }
    if (dir)
        g_dir_close(dir);
    g_rmdir(scratch);
    g_free(small_db);
    g_free(scratch);
    return rc;
}
