/* The designer's canvas holding a large model, panned a step a frame and
 * zoomed in and out, at life size: ResNet50 (177 layers) and a generated
 * 1,002-layer NASNet-size model. Frames are timed by frame_meter.c;
 * the bounds here are catastrophic only, in the main thread's CPU time
 * (bench/run ui_frames reports these cases against 16 ms). */
#include <gtk/gtk.h>

#include "designer_canvas.h"
#include "designer_view.h"
#include "frame_meter.h"
#include "gui_helpers.h"
#include "nasnet_size.h"

#define MAX_FRAME_CPU_MS 100.0
#define ROUNDS 3

/* Each frame moves the view: a pan, or a zoom step in and out around a point. */
typedef struct {
    TwDesignerCanvas *canvas;
    gboolean zoom;
    int frames;
} mover;

static gboolean move_each_frame(GtkWidget *widget, GdkFrameClock *clock, gpointer data)
{
    mover *mv = data;
    mv->frames++;
    if (mv->zoom)
        tw_designer_canvas_zoom(mv->canvas, (mv->frames / 8) % 2 ? 1 / 1.15 : 1.15, 500, 300);
    else
        tw_designer_canvas_pan(mv->canvas, (mv->frames / 40) % 2 ? -23 : 23, -9);
    return G_SOURCE_CONTINUE;
}

static frame_stats moving_round(GtkWidget *window, TwDesignerCanvas *canvas, gboolean zoom, const char *what)
{
    mover mv = {canvas, zoom, 0};
    frame_meter *m = frame_meter_start(window, what);
    guint tick = gtk_widget_add_tick_callback(GTK_WIDGET(canvas), move_each_frame, &mv, NULL);
    spin(1.5);
    gtk_widget_remove_tick_callback(GTK_WIDGET(canvas), tick);
    return frame_meter_stop(m);
}

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

    frame_stats pans[ROUNDS], zooms[ROUNDS];
    char *pan_what = g_strdup_printf("%s designer panning", label);
    char *zoom_what = g_strdup_printf("%s designer zooming", label);
    for (int r = 0; r < ROUNDS; r++) {
        life_size_middle(canvas, n / 2);
        g_assert_cmpfloat_with_epsilon(tw_designer_canvas_scale(canvas), 1.0, 1e-9);
        pans[r] = moving_round(window, canvas, FALSE, pan_what);
        life_size_middle(canvas, n / 2);
        zooms[r] = moving_round(window, canvas, TRUE, zoom_what);
    }
    assert_frames(pans);
    assert_frames(zooms);
    g_free(pan_what), g_free(zoom_what);
    designer_window_close(window, doc);
}

static void test_resnet50(void)
{
    open_and_move("ResNet50", "resnet50.json", NULL, 177);
}

static void test_nasnet_size(void)
{
    char *json = nasnet_size_json();
    open_and_move("1,000-layer NASNet-size model", NULL, json, 1000);
    g_free(json);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_setenv("GTK_A11Y", "none", TRUE);
    /* Frame times are the app's with GSK's Cairo renderer (test_ui_graph.c). */
    g_setenv("GSK_RENDERER", "cairo", FALSE);
    if (!gtk_init_check()) {
        g_test_message("no display: run under xvfb-run (meson test --suite gui does)");
        return 77;
    }
    g_test_add_func("/ui/designer_frames/resnet50", test_resnet50);
    g_test_add_func("/ui/designer_frames/nasnet-size", test_nasnet_size);
    return g_test_run();
}
