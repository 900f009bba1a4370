/* The frame-time cases' shared parts (ui_frames.h). */
#include "ui_frames.h"

#include "gui_helpers.h"
#include "nasnet_size.h"

typedef struct {
    GtkWidget *canvas;
    const ui_frames_moves *moves;
    gboolean zoom;
    int frames;
} mover;

static gboolean move_each_frame(GtkWidget *widget, GdkFrameClock *clock, gpointer data)
{
    mover *mv = data;
    mv->frames++;
    if (mv->zoom)
        mv->moves->zoom(mv->canvas, (mv->frames / 8) % 2 ? 1 / 1.15 : 1.15, 500, 300);
    else
        mv->moves->pan(mv->canvas, (mv->frames / 40) % 2 ? -23 : 23, -9);
    return G_SOURCE_CONTINUE;
}

frame_stats ui_frames_round(GtkWidget *window, GtkWidget *canvas, const ui_frames_moves *moves, gboolean zoom,
                            const char *what)
{
    mover mv = {canvas, moves, zoom, 0};
    frame_meter *m = frame_meter_start(window, what);
    guint tick = gtk_widget_add_tick_callback(canvas, move_each_frame, &mv, NULL);
    spin(1.5);
    gtk_widget_remove_tick_callback(canvas, tick);
    return frame_meter_stop(m);
}

typedef struct {
    ui_frames_open_and_move open_and_move;
    gboolean generated; /* the NASNet-size model, else ResNet50 */
} large_case;

static void run_large_case(gconstpointer data)
{
    const large_case *c = data;
    if (!c->generated) {
        c->open_and_move("ResNet50", "resnet50.json", NULL, 177);
        return;
    }
    char *json = nasnet_size_json();
    c->open_and_move("1,000-layer NASNet-size model", NULL, json, 1000);
    g_free(json);
}

void ui_frames_add_large_models(const char *prefix, ui_frames_open_and_move open_and_move)
{
    for (int generated = 0; generated < 2; generated++) {
        large_case *c = g_new(large_case, 1); /* the test program's to the end */
        *c = (large_case){open_and_move, generated};
        char *path = g_strdup_printf("%s/%s", prefix, generated ? "nasnet-size" : "resnet50");
        g_test_add_data_func_full(path, c, run_large_case, g_free);
        g_free(path);
    }
}

gboolean ui_frames_init_gtk(void)
{
    g_setenv("GTK_A11Y", "none", TRUE);
    /* Frame times are the app's with GSK's Cairo renderer; Mesa's software
     * GL under Xvfb takes 12-54 ms a frame by itself (test_ui_training.c). */
    g_setenv("GSK_RENDERER", "cairo", FALSE);
    if (!gtk_init_check()) {
        g_test_message("no display: run under xvfb-run (meson test --suite gui does)");
        return FALSE;
    }
    return TRUE;
}
