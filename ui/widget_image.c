#include "widget_image.h"

GdkTexture *tw_texture_of_surface(cairo_surface_t *surface)
{
    cairo_surface_flush(surface);
    int width = cairo_image_surface_get_width(surface), height = cairo_image_surface_get_height(surface);
    int stride = cairo_image_surface_get_stride(surface);
    GBytes *bytes = g_bytes_new_with_free_func(cairo_image_surface_get_data(surface), (gsize)stride * (gsize)height,
                                               (GDestroyNotify)cairo_surface_destroy, cairo_surface_reference(surface));
    GdkTexture *texture = gdk_memory_texture_new(width, height, GDK_MEMORY_DEFAULT, bytes, (gsize)stride);
    g_bytes_unref(bytes);
    return texture;
}

gboolean tw_widget_cairo_rendered(GtkWidget *widget)
{
    GtkNative *native = gtk_widget_get_native(widget);
    GskRenderer *renderer = native ? gtk_native_get_renderer(native) : NULL;
    return renderer && GSK_IS_CAIRO_RENDERER(renderer);
}
