/* The designer's canvas holding a large model at life size: panned a step
 * a frame, zoomed in and out a step a frame, and zoomed a step at a time
 * with stops between (the frames after a zoom stops, when the tiles of the
 * new zoom are drawn); ResNet50 (177 layers) and a generated 1,002-layer
 * NASNet-size model. Frames are timed by frame_meter.c; the bounds here
 * are catastrophic only, in the main thread's CPU time (bench/run
 * ui_frames reports these cases against 16 ms). */
#include <gtk/gtk.h>

#include "designer_canvas.h"
#include "designer_view.h"
#include "frame_meter.h"
#include "gui_helpers.h"
#include "ui_frames.h"

#define MAX_FRAME_CPU_MS 100.0
#define ROUNDS 3

static void designer_pan(GtkWidget *canvas, double dx, double dy)
{
    tw_designer_canvas_pan(TW_DESIGNER_CANVAS(canvas), dx, dy);
}

static void designer_zoom(GtkWidget *canvas, double factor, double x, double y)
{
    tw_designer_canvas_zoom(TW_DESIGNER_CANVAS(canvas), factor, x, y);
}

static const ui_frames_moves designer_moves = {designer_pan, designer_zoom};

/* Life size, the middle of the model in the middle of the canvas. */
static void life_size_middle(TwDesignerCanvas *canvas, int node)
{
    tw_designer_canvas_zoom(canvas, 1.0 / tw_designer_canvas_scale(canvas), 0, 0);
    double x, y;
    tw_designer_canvas_box_center(canvas, node, &x, &y);
    tw_designer_canvas_pan(canvas, gtk_widget_get_width(GTK_WIDGET(canvas)) / 2.0 - x,
                           gtk_widget_get_height(GTK_WIDGET(canvas)) / 2.0 - y);
    drain();
}

/* A zoom step every STOP_MS, in and out by 1.3 in turn around the canvas's
 * centre: each stops long enough for the zoom to settle (the canvas's
 * ZOOM_SETTLE_MS, 150) and the tiles of the new zoom to be drawn, so the
 * round's frames hold those that follow a zoom's stop. */
#define STOP_MS 400

typedef struct {
    TwDesignerCanvas *canvas;
    int steps;
} stopper;

static gboolean zoom_and_stop(gpointer data)
{
    stopper *st = data;
    GtkWidget *w = GTK_WIDGET(st->canvas);
    tw_designer_canvas_zoom(st->canvas, st->steps++ % 2 ? 1 / 1.3 : 1.3, gtk_widget_get_width(w) / 2.0,
                            gtk_widget_get_height(w) / 2.0);
    return G_SOURCE_CONTINUE;
}

static frame_stats stopping_round(GtkWidget *window, TwDesignerCanvas *canvas, const char *what)
{
    stopper st = {canvas, 0};
    frame_meter *m = frame_meter_start(window, what);
    guint source = g_timeout_add(STOP_MS, zoom_and_stop, &st);
    spin(6 * STOP_MS / 1000.0 + 0.2);
    g_source_remove(source);
    return frame_meter_stop(m);
}

static void assert_frames(const frame_stats *rounds)
{
    frame_stats median = frame_stats_median(rounds, ROUNDS);
    g_assert_cmpint(median.frames, >, 0);
    g_assert_cmpfloat(median.longest_cpu_ms, <=, MAX_FRAME_CPU_MS);
    g_assert_cmpfloat(median.longest_stall_cpu_ms, <=, MAX_FRAME_CPU_MS);
}

static void open_and_move(const char *label, const char *file, const char *json, int min_layers)
{
    TwModelDoc *doc;
    GtkWidget *window;
    TwDesignerView *view;
    designer_window_open(1280, 800, &doc, &window, &view);
    TwDesignerCanvas *canvas = TW_DESIGNER_CANVAS(tw_designer_view_canvas(view));
    GError *error = NULL;
    if (file) {
        char *path = g_build_filename(g_getenv("G_TEST_SRCDIR"), "..", "examples", "models", file, NULL);
        must(tw_model_doc_load(doc, path, &error), error);
        g_free(path);
    } else {
        must(tw_model_doc_load_json(doc, json, label, &error), error);
    }
    int n = tw_model_doc_n_layers(doc);
    g_assert_cmpint(n, >=, min_layers);
    drain();
    g_assert_cmpfloat(tw_designer_canvas_scale(canvas), >, 0);

    frame_stats pans[ROUNDS], zooms[ROUNDS], stops[ROUNDS];
    char *pan_what = g_strdup_printf("%s designer panning", label);
    char *zoom_what = g_strdup_printf("%s designer zooming", label);
    char *stop_what = g_strdup_printf("%s designer after zooms stop", label);
    for (int r = 0; r < ROUNDS; r++) {
        life_size_middle(canvas, n / 2);
        g_assert_cmpfloat_with_epsilon(tw_designer_canvas_scale(canvas), 1.0, 1e-9);
        pans[r] = ui_frames_round(window, GTK_WIDGET(canvas), &designer_moves, FALSE, pan_what);
        life_size_middle(canvas, n / 2);
        zooms[r] = ui_frames_round(window, GTK_WIDGET(canvas), &designer_moves, TRUE, zoom_what);
        life_size_middle(canvas, n / 2);
        stops[r] = stopping_round(window, canvas, stop_what);
    }
    assert_frames(pans);
    assert_frames(zooms);
    assert_frames(stops);
    g_free(pan_what), g_free(zoom_what), g_free(stop_what);
    designer_window_close(window, doc);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    if (!ui_frames_init_gtk())
        return 77;
    ui_frames_add_large_models("/ui/designer_frames", open_and_move);
    return g_test_run();
}
