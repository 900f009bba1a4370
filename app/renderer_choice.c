/* twb_choose_renderer (renderer_choice.h). */
#include "renderer_choice.h"

#include <epoxy/gl.h>
#include <gtk/gtk.h>
#include <string.h>

/* Mesa's software rasterisers name themselves in GL_RENDERER. */
static gboolean is_software(const char *renderer)
{
    return renderer && (strstr(renderer, "llvmpipe") || strstr(renderer, "softpipe") ||
                        strstr(renderer, "Software Rasterizer") || strstr(renderer, "SWR"));
}

void twb_choose_renderer(void)
{
    if (g_getenv("GSK_RENDERER"))
        return;
    GdkDisplay *display = gdk_display_get_default();
    if (!display)
        return;
    GError *error = NULL;
    GdkGLContext *context = gdk_display_create_gl_context(display, &error);
    if (context && gdk_gl_context_realize(context, &error)) {
        gdk_gl_context_make_current(context);
        if (is_software((const char *)glGetString(GL_RENDERER)))
            g_setenv("GSK_RENDERER", "cairo", FALSE);
        gdk_gl_context_clear_current();
    }
    /* No GL at all: GTK picks Cairo itself. */
    g_clear_error(&error);
    g_clear_object(&context);
}
