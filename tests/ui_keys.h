/* Real key presses for the GUI tests: xdotool types them (through XTEST)
 * into the test's window under Xvfb, so that they take the path a person's
 * keys take (capture and bubble phases, bindings, key capture). */
#ifndef TW_TESTS_UI_KEYS_H
#define TW_TESTS_UI_KEYS_H

#include <gdk/x11/gdkx.h>
#include <gtk/gtk.h>

/* Focuses window on the X server, presses keys ("Return", "ctrl+z", "a b"), then
 * runs the main loop until done(data) holds or 5 s pass. FALSE when there
 * is no xdotool or no X11 display to type with (the caller skips). */
static inline gboolean ui_keys_send(GtkWidget *window, const char *keys, gboolean (*done)(gpointer), gpointer data)
{
    char *xdotool = g_find_program_in_path("xdotool");
    GdkSurface *surface = gtk_native_get_surface(GTK_NATIVE(window));
    if (!xdotool || !GDK_IS_X11_SURFACE(surface)) {
        g_free(xdotool);
        return FALSE;
    }
    char *wid = g_strdup_printf("%lu", (unsigned long)gdk_x11_surface_get_xid(surface));
    GStrvBuilder *builder = g_strv_builder_new();
    const char *head[] = {xdotool, "windowfocus", "--sync", wid, "key", "--clearmodifiers", NULL};
    g_strv_builder_addv(builder, head);
    char **each = g_strsplit(keys, " ", -1);
    g_strv_builder_addv(builder, (const char **)each);
    char **argv = g_strv_builder_end(builder);
    GError *error = NULL;
    int status = 0;
    g_spawn_sync(NULL, argv, NULL, G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL, NULL, NULL, &status, &error);
    g_assert_no_error(error);
    g_assert_true(g_spawn_check_wait_status(status, NULL));
    gint64 end = g_get_monotonic_time() + 5 * G_USEC_PER_SEC;
    while (!done(data) && g_get_monotonic_time() < end)
        if (!g_main_context_iteration(NULL, FALSE))
            g_usleep(1000);
    while (g_main_context_iteration(NULL, FALSE))
        ;
    g_strfreev(argv);
    g_strfreev(each);
    g_strv_builder_unref(builder);
    g_free(wid);
    g_free(xdotool);
    return TRUE;
}

#endif
