/* What the frame-time cases of the graph view (test_ui_graph.c) and the
 * designer's canvas (test_ui_designer_frames.c) share: a view moved a step
 * each frame, panned or zoomed, its window's frames timed by frame_meter.c;
 * the two large models both open; and the set-up of their main. */
#ifndef TW_TESTS_UI_FRAMES_H
#define TW_TESTS_UI_FRAMES_H

#include <gtk/gtk.h>

#include "frame_meter.h"

/* How a view pans and zooms (points in the canvas widget's pixels). */
typedef struct {
    void (*pan)(GtkWidget *canvas, double dx, double dy);
    void (*zoom)(GtkWidget *canvas, double factor, double x, double y);
} ui_frames_moves;

/* For 1.5 s, a step every frame of canvas: a pan by (23, -9) px, turning
 * back every 40 frames, or a zoom by 1.15 around (500, 300), in for 8
 * frames and out for 8. Returns the window's frames, named `what`. */
frame_stats ui_frames_round(GtkWidget *window, GtkWidget *canvas, const ui_frames_moves *moves, gboolean zoom,
                            const char *what);

/* The large models as test cases PREFIX/resnet50 (examples/models'
 * resnet50.json, 177 layers or more) and PREFIX/nasnet-size (nasnet_size.h,
 * 1,000 or more): each calls open_and_move(label, file, json, min_layers)
 * with the file's name or else the model's JSON. */
typedef void (*ui_frames_open_and_move)(const char *label, const char *file, const char *json, int min_layers);
void ui_frames_add_large_models(const char *prefix, ui_frames_open_and_move open_and_move);

/* The start of main, after g_test_init: no accessibility bus, GSK's Cairo
 * renderer (unless GSK_RENDERER says otherwise), GTK initialised. FALSE
 * (with a message) when there is no display: main returns 77 (skipped). */
gboolean ui_frames_init_gtk(void);

#endif
