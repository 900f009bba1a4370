/* Real key presses and clicks for the GUI tests: xdotool types them
 * (through XTEST) into the test's window under Xvfb, so that they take the
 * path a person's keys and clicks take (capture and bubble phases,
 * bindings, key capture, gestures). */
#ifndef TW_TESTS_UI_KEYS_H
#define TW_TESTS_UI_KEYS_H

#include <gdk/x11/gdkx.h>
#include <gtk/gtk.h>
#include <string.h>

/* Focuses window on the X server, runs xdotool with the arguments that
 * follow (WID in them stands for the window's X id), then runs the main
 * loop until done(data) holds or 5 s pass. FALSE when there is no xdotool
 * or no X11 display (the caller skips). */
static inline gboolean ui_xdotool(GtkWidget *window, const char *const *args, gboolean (*done)(gpointer),
                                  gpointer data)
{
    char *xdotool = g_find_program_in_path("xdotool");
    GdkSurface *surface = gtk_native_get_surface(GTK_NATIVE(window));
    if (!xdotool || !GDK_IS_X11_SURFACE(surface)) {
        g_free(xdotool);
        return FALSE;
    }
    char *wid = g_strdup_printf("%lu", (unsigned long)gdk_x11_surface_get_xid(surface));
    GStrvBuilder *builder = g_strv_builder_new();
    const char *head[] = {xdotool, "windowfocus", "--sync", wid, NULL};
    g_strv_builder_addv(builder, head);
    for (int i = 0; args[i]; i++)
        g_strv_builder_add(builder, strcmp(args[i], "WID") ? args[i] : wid);
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
    g_strv_builder_unref(builder);
    g_free(wid);
    g_free(xdotool);
    return TRUE;
}

/* Presses keys ("Return", "ctrl+z", "a b") in window (ui_xdotool). */
static inline gboolean ui_keys_send(GtkWidget *window, const char *keys, gboolean (*done)(gpointer), gpointer data)
{
    GStrvBuilder *builder = g_strv_builder_new();
    g_strv_builder_add_many(builder, "key", "--clearmodifiers", NULL);
    char **each = g_strsplit(keys, " ", -1);
    g_strv_builder_addv(builder, (const char **)each);
    char **args = g_strv_builder_end(builder);
    gboolean sent = ui_xdotool(window, (const char *const *)args, done, data);
    g_strfreev(args);
    g_strfreev(each);
    g_strv_builder_unref(builder);
    return sent;
}

/* Clicks the first mouse button at (x, y) of widget, in window (ui_xdotool). */
static inline gboolean ui_click_send(GtkWidget *window, GtkWidget *widget, double x, double y,
                                     gboolean (*done)(gpointer), gpointer data)
{
    double wx, wy, sx, sy;
    g_assert_true(gtk_widget_translate_coordinates(widget, window, x, y, &wx, &wy));
    gtk_native_get_surface_transform(GTK_NATIVE(window), &sx, &sy); /* the decorations' frame */
    char *px = g_strdup_printf("%d", (int)(wx + sx)), *py = g_strdup_printf("%d", (int)(wy + sy));
    const char *args[] = {"mousemove", "--window", "WID", "--sync", px, py, "click", "1", NULL};
    gboolean sent = ui_xdotool(window, args, done, data);
    g_free(px), g_free(py);
    return sent;
}

#endif
