/* What the widgets that keep a drawn image (chart_view.c, graph_canvas.c)
 * share: drawing the image off the main loop, the image as a texture for
 * GSK's GL renderer, and whether the widget is drawn by GSK's Cairo
 * renderer (then the image is painted directly, no texture). */
#ifndef TW_UI_WIDGET_IMAGE_H
#define TW_UI_WIDGET_IMAGE_H

#include <gtk/gtk.h>

/* An ARGB32 image surface as a texture; the texture holds a reference to
 * the surface whose pixels it shows. */
GdkTexture *tw_texture_of_surface(cairo_surface_t *surface);
gboolean tw_widget_cairo_rendered(GtkWidget *widget);

/* One drawing of a widget's state at one size. A widget's job is a struct
 * that begins with this one and owns (or references) everything its draw
 * reads, so that any thread can run it. */
typedef struct tw_image_job tw_image_job;
struct tw_image_job {
    int width, height, scale;                     /* logical size, device scale */
    void (*draw)(tw_image_job *job, cairo_t *cr); /* pure drawing */
    void (*finalize)(tw_image_job *job);          /* frees the widget's part, or NULL */
    cairo_surface_t *surface;                     /* the result (ARGB32), owned by the job */
    double ms;                                    /* how long the drawing took */
};

/* Draws the job into a new surface, on whichever thread. */
void tw_image_job_run(tw_image_job *job);
void tw_image_job_free(tw_image_job *job);
/* Hands the job to a thread; its result comes back on the main loop to
 * done (which owns the job; *rendering is cleared first, and the widget is
 * queued for drawing after), unless *rendering, which this sets, was
 * cancelled meanwhile (the widget's dispose does): then the job is freed.
 * One job at a time per widget: *rendering must be NULL. */
typedef void (*tw_image_job_done)(GtkWidget *widget, tw_image_job *job);
void tw_image_job_start(GtkWidget *widget, GCancellable **rendering, tw_image_job *job, tw_image_job_done done);

/* cairo_set_source_surface for an image that is never drawn on again,
 * without the copy Cairo would otherwise make of it: under GSK's Cairo
 * renderer (GTK 4.8) a Cairo node records its drawing, and the recording
 * takes a copy-on-write snapshot of a surface source, so that destroying
 * the image while a frame's node still holds it copies it whole first, on
 * the main loop. The raster source this sets holds a reference instead. */
void tw_cairo_set_source_kept(cairo_t *cr, cairo_surface_t *image, double x, double y);

#endif
