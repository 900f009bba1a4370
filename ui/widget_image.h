/* What the widgets that keep a drawn image (chart_view.c, graph_canvas.c)
 * share: the image as a texture for GSK's GL renderer, and whether the
 * widget is drawn by GSK's Cairo renderer (then the image is painted
 * directly, no texture). */
#ifndef TW_UI_WIDGET_IMAGE_H
#define TW_UI_WIDGET_IMAGE_H

#include <gtk/gtk.h>

/* An ARGB32 image surface as a texture; the texture holds a reference to
 * the surface whose pixels it shows. */
GdkTexture *tw_texture_of_surface(cairo_surface_t *surface);
gboolean tw_widget_cairo_rendered(GtkWidget *widget);

#endif
