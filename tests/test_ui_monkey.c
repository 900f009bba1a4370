/* The monkey test: a seeded driver performs random user actions on the real
 * window and the process must survive them all — no crash, no failed
 * assertion, no GTK critical or warning (g_test_init makes both fatal).
 *
 * Two kinds of action are mixed:
 * - real input from the X server (xdotool: clicks, drags between two points,
 *   key presses such as Tab, Return, Delete, Ctrl+Z, Alt+Up), landing
 *   wherever the pointer or the focus happens to be, as a person's would;
 * - the widgets' own paths where synthesizing the input would be slow or
 *   depend on layout: what a palette drop does at a random gap, a card
 *   dragged to another gap, a field focused then given valid or invalid
 *   text (committed with Enter, by leaving, or left pending while the next
 *   action rebuilds the editor), a drop-down or switch changed, a reset,
 *   the window's actions (undo, redo, delete, duplicate, templates, views),
 *   the designer canvas's actions (a class dropped at a random point or
 *   on an edge, a drag from a random output port onto a random box or
 *   between two random points, clicks, delete, copy, paste, duplicate,
 *   Tab, arrows, Alt+Up/Down, auto-arrange, zoom, fit, into a nested
 *   model and back out to a random level; the other actions then work on
 *   the nested model shown, as a person's would),
 *   model files opened (the examples, the Keras corpus, broken files),
 *   training started, paused, resumed and stopped on a small dataset, and
 *   the window resized between 800x600 and 1600x1000.
 * Dialogs that an action opens are answered at random (a file chooser is
 * cancelled, a save question cancelled or discarded). A window closed by an
 * action is replaced by a new one.
 *
 * TWB_MONKEY_SEED picks the seed (printed, so a failure can be replayed)
 * and TWB_MONKEY_ACTIONS the number of actions (TWB_MONKEY_TRACE=1 also
 * prints each action's number and kind with the focus widget's path, each
 * xdotool command, window action and button clicked, with its widget
 * path; a warning prints the last twelve of these even without the trace):
 * make test runs a short fixed-seed round; the 10,000-action rounds run
 * under ASan by hand:
 *   TWB_MONKEY_ACTIONS=10000 xvfb-run -a -s "-screen 0 1920x1200x24" \
 *     build-asan/tests/test_ui_monkey
 * Runs under Xvfb (tests/meson.build). */
#include <gtk/gtk.h>
#include <stdlib.h>
#include <string.h>

#include <gdk/x11/gdkx.h>
#include <glib/gstdio.h>

#include "application.h"
#include "designer_canvas.h"
#include "designer_view.h"
#include "layer_palette.h"
#include "layer_stack.h"
#include "property_editor.h"
#include "scratch_tree.h"
#include "train_panel.h"
#include "widget_tree.h"

static TwbApplication *app;
static GRand *rng;
static char *scratch;   /* HOME-like folder of the test's own */
static char *logdb;     /* the training panel's run database */
static GPtrArray *model_files;
static int unexpected_warnings; /* counted by count_warnings() */
static long current_action = -1; /* the action running, named with a warning */
static int current_kind = -1;

/* ---- what the monkey did ------------------------------------------------- */
/* The last steps (actions, xdotool commands, window actions, buttons
 * clicked), kept even without TWB_MONKEY_TRACE: a warning in make test,
 * which runs without the trace, prints them (count_warnings). A warning
 * may come from another thread, hence the lock. */
#define RECENT_STEPS 12
static char *recent_steps[RECENT_STEPS];
static guint n_steps;
static GMutex steps_lock;

static void step(const char *fmt, ...) G_GNUC_PRINTF(1, 2);
static void step(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *text = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    if (g_getenv("TWB_MONKEY_TRACE"))
        g_test_message("monkey: %s", text);
    g_mutex_lock(&steps_lock);
    g_free(recent_steps[n_steps % RECENT_STEPS]);
    recent_steps[n_steps++ % RECENT_STEPS] = text;
    g_mutex_unlock(&steps_lock);
}

static void print_recent_steps(void)
{
    g_mutex_lock(&steps_lock);
    if (current_action < 0 && n_steps)
        g_printerr("monkey: the next warning came after the actions\n");
    for (guint i = n_steps > RECENT_STEPS ? n_steps - RECENT_STEPS : 0; i < n_steps; i++)
        g_printerr("monkey:   before it: %s\n", recent_steps[i % RECENT_STEPS]);
    g_mutex_unlock(&steps_lock);
}

/* "GtkButton < GtkBox < ... < TwWindow", or "none" (free it). */
static char *widget_path(GtkWidget *widget)
{
    GString *path = g_string_new(NULL);
    for (GtkWidget *w = widget; w; w = gtk_widget_get_parent(w))
        g_string_append_printf(path, "%s%s", path->len ? " < " : "", G_OBJECT_TYPE_NAME(w));
    return path->len ? g_string_free(path, FALSE) : (g_string_free(path, TRUE), g_strdup("none"));
}

/* ---- main loop ----------------------------------------------------------- */
static void drain(void)
{
    while (g_main_context_iteration(NULL, FALSE))
        ;
}

static gboolean set_flag(gpointer data)
{
    *(gboolean *)data = TRUE;
    return G_SOURCE_REMOVE;
}

/* Runs the main loop for ms milliseconds (input from the X server and the
 * worker's reports arrive meanwhile). */
static void spin(guint ms)
{
    gboolean done = FALSE;
    g_timeout_add(ms, set_flag, &done);
    while (!done)
        g_main_context_iteration(NULL, TRUE);
}

/* ---- widgets ------------------------------------------------------------- */
static void collect(GtkWidget *root, GType type, GPtrArray *out)
{
    if (!gtk_widget_get_mapped(root))
        return;
    if (G_TYPE_CHECK_INSTANCE_TYPE(root, type))
        g_ptr_array_add(out, root);
    for (GtkWidget *c = gtk_widget_get_first_child(root); c; c = gtk_widget_get_next_sibling(c))
        collect(c, type, out);
}

/* A random mapped widget of the type under root, or NULL. */
static GtkWidget *pick_widget(GtkWidget *root, GType type)
{
    GPtrArray *all = g_ptr_array_new();
    collect(root, type, all);
    GtkWidget *w = all->len ? all->pdata[g_rand_int_range(rng, 0, all->len)] : NULL;
    g_ptr_array_free(all, TRUE);
    return w;
}

static TwDesignerView *designer_of(TwWindow *win)
{
    GPtrArray *all = g_ptr_array_new();
    collect(GTK_WIDGET(win), TW_TYPE_DESIGNER_VIEW, all);
    TwDesignerView *view = all->len ? all->pdata[0] : NULL;
    g_ptr_array_free(all, TRUE);
    return view;
}

/* ---- dialogs --------------------------------------------------------------- */
/* Answers every window besides the main one: file choosers and other dialogs
 * are cancelled; a question about unsaved changes is cancelled or its
 * changes discarded. */
static void answer_dialogs(TwWindow *win)
{
    /* Discard in a question before closing frees the window: only its
     * address is compared after that, never cast. */
    gconstpointer main_window = win;
    for (int round = 0; round < 4; round++) {
        GListModel *toplevels = gtk_window_get_toplevels();
        GtkWidget *other = NULL;
        for (guint i = 0; i < g_list_model_get_n_items(toplevels) && !other; i++) {
            GtkWidget *w = g_list_model_get_item(toplevels, i);
            g_object_unref(w);
            if ((gconstpointer)w != main_window && gtk_widget_get_visible(w) && GTK_IS_WINDOW(w))
                other = w;
        }
        if (!other)
            return;
        G_GNUC_BEGIN_IGNORE_DEPRECATIONS
        if (GTK_IS_MESSAGE_DIALOG(other))
            gtk_dialog_response(GTK_DIALOG(other), g_rand_boolean(rng) ? GTK_RESPONSE_CANCEL : 1 /* Discard */);
        else if (GTK_IS_DIALOG(other))
            gtk_dialog_response(GTK_DIALOG(other), GTK_RESPONSE_CANCEL);
        else
            gtk_window_close(GTK_WINDOW(other));
        G_GNUC_END_IGNORE_DEPRECATIONS
        drain();
    }
}

/* ---- real input (xdotool) ------------------------------------------------ */
static void xdotool(TwWindow *win, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
static void xdotool(TwWindow *win, const char *fmt, ...)
{
    GdkSurface *surface = gtk_native_get_surface(GTK_NATIVE(win));
    if (!surface || !GDK_IS_X11_SURFACE(surface))
        return;
    va_list ap;
    va_start(ap, fmt);
    char *args = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    char *command = g_strdup_printf("xdotool windowfocus --sync %lu %s", (unsigned long)gdk_x11_surface_get_xid(surface),
                                    args);
    step("xdotool %s", args);
    GError *error = NULL;
    int status = 0;
    if (!g_spawn_command_line_sync(command, NULL, NULL, &status, &error))
        g_error("%s: %s", command, error->message);
    g_free(command);
    g_free(args);
    spin(15); /* the events reach the window */
}

/* A round trip to the X server, then the main loop until the window has
 * handled everything that came back (GTK's own requests, such as moving
 * the window, reach the server at the next round). */
static void settle(void)
{
    for (int round = 0; round < 2; round++) {
        gdk_display_sync(gdk_display_get_default());
        drain();
    }
}

static void random_point(TwWindow *win, int *x, int *y)
{
    *x = g_rand_int_range(rng, 0, MAX(1, gtk_widget_get_width(GTK_WIDGET(win))));
    *y = g_rand_int_range(rng, 0, MAX(1, gtk_widget_get_height(GTK_WIDGET(win))));
}

static void x_click(TwWindow *win)
{
    GdkSurface *surface = gtk_native_get_surface(GTK_NATIVE(win));
    int x, y;
    random_point(win, &x, &y);
    xdotool(win, "mousemove --window %lu %d %d click %d", (unsigned long)gdk_x11_surface_get_xid(surface), x, y,
            g_rand_int_range(rng, 0, 8) == 0 ? 3 : 1);
}

static void x_double_click(TwWindow *win)
{
    GdkSurface *surface = gtk_native_get_surface(GTK_NATIVE(win));
    int x, y;
    random_point(win, &x, &y);
    xdotool(win, "mousemove --window %lu %d %d click --repeat 2 --delay 40 1",
            (unsigned long)gdk_x11_surface_get_xid(surface), x, y);
}

/* Press at one point, move in steps, release at another: a drag, each step
 * handled before the next is sent, as a hand is slower than the window.
 * A drag on the header bar moves the window, and without a window manager
 * (Xvfb) GTK moves it itself. Sent at once, the release was handled before
 * GTK had begun the move, which then never ended: the window followed
 * every later pointer motion, off the screen, and swallowed clicks (GTK 4.8
 * fails gdk_monitor_get_geometry's assertion for a popover that opens off
 * every monitor; seed 20261128). Nothing keeps the window on the screen
 * either: it goes back to (0, 0), as a window manager would have kept it. */
static void drag(TwWindow *win, int x0, int y0, int x1, int y1)
{
    unsigned long xid = gdk_x11_surface_get_xid(gtk_native_get_surface(GTK_NATIVE(win)));
    g_object_add_weak_pointer(G_OBJECT(win), (gpointer *)&win);
    xdotool(win, "mousemove --window %lu %d %d mousedown 1", xid, x0, y0);
    settle();
    int steps[][2] = {{x0 + 8, y0 + 8}, {(x0 + x1) / 2, (y0 + y1) / 2}, {x1, y1}};
    for (size_t i = 0; i < G_N_ELEMENTS(steps); i++) {
        xdotool(win, "mousemove --window %lu %d %d", xid, steps[i][0], steps[i][1]);
        settle();
    }
    xdotool(win, "mouseup 1");
    settle();
    if (!win) /* the release closed it: the drag began and ended on its close button */
        return;
    g_object_remove_weak_pointer(G_OBJECT(win), (gpointer *)&win);
    xdotool(win, "windowmove --sync %lu 0 0", xid);
    settle();
}

static void x_drag(TwWindow *win)
{
    int x0, y0, x1, y1;
    random_point(win, &x0, &y0);
    random_point(win, &x1, &y1);
    drag(win, x0, y0, x1, y1);
}

static void x_key(TwWindow *win)
{
    static const char *keys[] = {
        "Tab", "shift+Tab", "Return", "Escape", "Delete", "BackSpace", "Up", "Down", "Left", "Right",
        "space", "ctrl+z", "ctrl+shift+z", "ctrl+y", "alt+Up", "alt+Down", "ctrl+Return", "ctrl+a",
        "ctrl+c", "ctrl+v", "ctrl+d", "Home", "End", "Page_Down", "a", "3", "minus", "period", "comma",
        "ctrl+plus", "ctrl+minus", "ctrl+0", "F10",
        /* into a selected nested model, and to the breadcrumb */
        "shift+Return", "ctrl+shift+Tab",
    };
    xdotool(win, "key --delay 5 %s", keys[g_rand_int_range(rng, 0, G_N_ELEMENTS(keys))]);
}

static void x_type(TwWindow *win)
{
    static const char *texts[] = {"12", "relu", "-3", "1e9", "abc", "(28, 28, 1)", "0"};
    xdotool(win, "type --delay 5 -- '%s'", texts[g_rand_int_range(rng, 0, G_N_ELEMENTS(texts))]);
}

/* ---- the widgets' own paths ---------------------------------------------- */
static const char *random_class(TwDesignerView *view)
{
    static char *classes[64];
    static int n;
    if (!n) {
        TwLayerPalette *palette = TW_LAYER_PALETTE(tw_designer_view_palette(view));
        tw_layer_palette_set_search(palette, "");
        char **all = tw_layer_palette_visible_classes(palette);
        for (int i = 0; all[i] && n < (int)G_N_ELEMENTS(classes); i++)
            classes[n++] = g_strdup(all[i]);
        g_strfreev(all);
        g_assert_cmpint(n, >, 0);
    }
    return classes[g_rand_int_range(rng, 0, n)];
}

/* The shown level's layers: a nested model's while the designer is inside
 * one (the stack and the canvas show it), else the window's model's. */
static int n_layers(TwDesignerView *view)
{
    return tw_model_doc_n_layers(tw_designer_view_doc(view));
}

static void palette_activate(TwWindow *win, TwDesignerView *view)
{
    TwLayerPalette *palette = TW_LAYER_PALETTE(tw_designer_view_palette(view));
    static const char *searches[] = {"", "", "", "conv", "dense", "pool", "zzz"};
    tw_layer_palette_set_search(palette, searches[g_rand_int_range(rng, 0, G_N_ELEMENTS(searches))]);
    tw_layer_palette_activate(palette, random_class(view));
    tw_layer_palette_set_search(palette, "");
    (void)win;
}

static void drop_class(TwWindow *win, TwDesignerView *view)
{
    TwLayerStack *stack = TW_LAYER_STACK(tw_designer_view_stack(view));
    tw_layer_stack_drop_class(stack, random_class(view), g_rand_int_range(rng, 0, n_layers(view) + 1));
}

static void drop_layer(TwWindow *win, TwDesignerView *view)
{
    int n = n_layers(view);
    if (!n)
        return;
    TwLayerStack *stack = TW_LAYER_STACK(tw_designer_view_stack(view));
    tw_layer_stack_drop_layer(stack, g_rand_int_range(rng, 0, n), g_rand_int_range(rng, 0, n + 1));
}

static void select_layer(TwWindow *win, TwDesignerView *view)
{
    tw_designer_view_select(view, g_rand_int_range(rng, -1, n_layers(view)));
}

/* What the canvas's gestures and keys do, at random places. */
static void canvas_action(TwWindow *win, TwDesignerView *view)
{
    TwDesignerCanvas *c = TW_DESIGNER_CANVAS(tw_designer_view_canvas(view));
    TwModelDoc *doc = tw_designer_view_doc(view); /* the shown level's: a nested model's inside one */
    int n = tw_model_doc_n_layers(doc);
    double w = MAX(gtk_widget_get_width(GTK_WIDGET(c)), 1), h = MAX(gtk_widget_get_height(GTK_WIDGET(c)), 1);
    double x0 = g_rand_double_range(rng, 0, w), y0 = g_rand_double_range(rng, 0, h);
    double x1 = g_rand_double_range(rng, 0, w), y1 = g_rand_double_range(rng, 0, h);
    int node = n ? g_rand_int_range(rng, 0, n) : -1, other = n ? g_rand_int_range(rng, 0, n) : -1;
    GdkModifierType state = g_rand_boolean(rng) ? 0 : GDK_CONTROL_MASK;
    int which = g_rand_int_range(rng, 0, 18);
    step("canvas action %d", which);
    switch (which) {
    case 0:
        tw_designer_canvas_drop_class(c, random_class(view), x0, y0);
        break;
    case 1:
        if (node >= 0 && tw_model_doc_node_ninputs(doc, node)) { /* onto an edge */
            tw_designer_canvas_edge_middle(c, node, 0, &x0, &y0);
            tw_designer_canvas_drop_class(c, random_class(view), x0, y0);
        }
        break;
    case 2:
        if (node >= 0) { /* an output port onto a box */
            tw_designer_canvas_port(c, node, TRUE, 0, &x0, &y0);
            tw_designer_canvas_box_center(c, other, &x1, &y1);
        }
        tw_designer_canvas_drag(c, x0, y0, x1, y1, state);
        break;
    case 3:
        tw_designer_canvas_drag(c, x0, y0, x1, y1, state);
        break;
    case 4:
        if (node >= 0 && tw_model_doc_node_ninputs(doc, node))
            tw_designer_canvas_edge_middle(c, node, 0, &x0, &y0);
        tw_designer_canvas_click(c, x0, y0, state);
        break;
    case 5:
        tw_designer_canvas_delete_selection(c);
        break;
    case 6:
        tw_designer_canvas_copy(c);
        break;
    case 7:
        tw_designer_canvas_paste(c);
        break;
    case 8:
        tw_designer_canvas_duplicate(c);
        break;
    case 9:
        tw_designer_canvas_follow_edge(c, g_rand_boolean(rng));
        break;
    case 10:
        tw_designer_canvas_nudge(c, g_rand_int_range(rng, -2, 3) * 10, g_rand_int_range(rng, -2, 3) * 10);
        break;
    case 11:
        tw_designer_canvas_reorder(c, g_rand_boolean(rng) ? 1 : -1);
        break;
    case 12:
        tw_designer_canvas_arrange(c);
        break;
    case 13:
        tw_designer_canvas_zoom(c, g_rand_double_range(rng, 0.5, 2.0), x0, y0);
        break;
    case 14:
        tw_designer_canvas_fit(c);
        break;
    case 15: /* into a nested model, when the shown one has one */
        for (int i = 0, k = node; k >= 0 && i < n; i++, k = (k + 1) % n) {
            const tw_layer *layer = tw_model_doc_layer(doc, k);
            if (layer && tw_layer_is_model(layer)) {
                if (tw_designer_canvas_edit_nested(c, k))
                    step("into nested model %s", tw_layer_name(layer));
                break;
            }
        }
        break;
    case 16: { /* back out, to a random level above */
        int depth = tw_designer_view_depth(view);
        if (depth > 0 && !tw_designer_view_leave_to(view, g_rand_int_range(rng, 0, depth), NULL))
            step("leave refused (an edit inside does not fit)");
        break;
    }
    default:
        tw_designer_canvas_select(c, g_rand_int_range(rng, -1, MAX(n, 1)));
        break;
    }
}

static const char *random_text(void)
{
    static const char *texts[] = {
        "1", "3", "64", "0", "-1", "2.5", "1e9", "1e400", "nan", "", "abc", "relu", "same", "(28, 28, 1)",
        "28, 28", "(3,)", "[null, 4]", "none", "true", "18446744073709551616", "dense_1", "a b/c",
        "\xc3\xa9\xe2\x9c\x93", "((((1))))",
    };
    return texts[g_rand_int_range(rng, 0, G_N_ELEMENTS(texts))];
}

/* Focus a field of the property editor, type into it, then commit with
 * Enter, by moving the focus away, or not at all (the next action finds the
 * field focused with pending text). */
static void edit_field(TwWindow *win, TwDesignerView *view)
{
    GtkWidget *editor = tw_designer_view_property_editor(view);
    int kind = g_rand_int_range(rng, 0, 4);
    if (kind == 0) {
        GtkWidget *w = pick_widget(editor, GTK_TYPE_DROP_DOWN);
        if (w) {
            guint n = g_list_model_get_n_items(gtk_drop_down_get_model(GTK_DROP_DOWN(w)));
            if (n) {
                guint selected = g_rand_int_range(rng, 0, n);
                step("field: drop-down '%s' item %u", gtk_widget_get_name(w), selected);
                gtk_drop_down_set_selected(GTK_DROP_DOWN(w), selected);
            }
        }
        return;
    }
    if (kind == 1) {
        GtkWidget *w = pick_widget(editor, GTK_TYPE_SWITCH);
        if (w) {
            step("field: switch '%s'", gtk_widget_get_name(w));
            gtk_switch_set_active(GTK_SWITCH(w), !gtk_switch_get_active(GTK_SWITCH(w)));
        }
        return;
    }
    GtkWidget *w = pick_widget(editor, GTK_TYPE_EDITABLE);
    if (!w || !gtk_widget_get_sensitive(w))
        return;
    /* Named now: the drains below may rebuild the editor. */
    char *what = g_strdup_printf("%s '%s'", G_OBJECT_TYPE_NAME(w), gtk_widget_get_name(w));
    gtk_widget_grab_focus(w);
    drain();
    const char *text = NULL;
    if (!gtk_widget_in_destruction(w) && gtk_widget_get_mapped(w)) {
        text = random_text();
        gtk_editable_set_text(GTK_EDITABLE(w), text);
        drain();
    }
    int how = g_rand_int_range(rng, 0, 3);
    step("field: %s text '%s', %s", what, text ? text : "(none)", how == 0 ? "Enter" : how == 1 ? "left" : "pending");
    g_free(what);
    switch (how) {
    case 0: /* Enter, as a person presses it in the focused field */
        xdotool(win, "key Return");
        break;
    case 1: /* leave the field */
        gtk_widget_grab_focus(tw_designer_view_stack(view));
        break;
    default: /* leave the text pending */
        break;
    }
}

static void reset_field(TwDesignerView *view)
{
    static const char *keys[] = {"units", "activation", "filters", "kernel_size", "strides", "padding", "rate",
                                 "use_bias", "pool_size", "momentum", "epsilon", "name"};
    tw_property_editor_reset(TW_PROPERTY_EDITOR(tw_designer_view_property_editor(view)),
                             keys[g_rand_int_range(rng, 0, G_N_ELEMENTS(keys))]);
}

static void window_action(TwWindow *win)
{
    static const char *actions[] = {"undo", "undo", "redo", "delete-layer", "duplicate-layer"};
    const char *name = actions[g_rand_int_range(rng, 0, G_N_ELEMENTS(actions))];
    step("action win.%s", name);
    if (g_action_group_get_action_enabled(G_ACTION_GROUP(win), name))
        g_action_group_activate_action(G_ACTION_GROUP(win), name, NULL);
}

static void show_view(TwWindow *win)
{
    static const char *views[] = {"designer", "designer", "dashboard", "graph"};
    const char *name = views[g_rand_int_range(rng, 0, G_N_ELEMENTS(views))];
    step("view %s", name);
    g_action_group_activate_action(G_ACTION_GROUP(win), "show-view", g_variant_new_string(name));
}

static void open_something(TwWindow *win)
{
    if (g_rand_boolean(rng)) {
        static const char *templates[] = {"linear_regression", "mlp_fashion_mnist", "cnn_fashion_mnist",
                                          "siamese_fashion_mnist"}; /* the last with a nested model */
        const char *name = templates[g_rand_int_range(rng, 0, G_N_ELEMENTS(templates))];
        step("template %s", name);
        g_action_group_activate_action(G_ACTION_GROUP(win), "template", g_variant_new_string(name));
    } else {
        const char *path = model_files->pdata[g_rand_int_range(rng, 0, model_files->len)];
        step("open %s", path);
        tw_window_open_file(win, path);
    }
}

static void resize(TwWindow *win)
{
    GdkSurface *surface = gtk_native_get_surface(GTK_NATIVE(win));
    xdotool(win, "windowsize %lu %d %d", (unsigned long)gdk_x11_surface_get_xid(surface),
            g_rand_int_range(rng, 800, 1601), g_rand_int_range(rng, 600, 1001));
}

/* Train on the spirals for a few epochs (the model may not fit them: then
 * Train is off or the worker reports why), or press Pause, Resume or Stop. */
static void training(TwWindow *win)
{
    TwTrainPanel *panel = tw_window_train_panel(win);
    static const char *buttons[] = {"train", "train", "pause", "resume", "stop"};
    const char *name = buttons[g_rand_int_range(rng, 0, G_N_ELEMENTS(buttons))];
    step("training: %s", name);
    if (!strcmp(name, "train")) {
        GtkWidget *dataset = find_named(GTK_WIDGET(panel), "dataset");
        if (GTK_IS_DROP_DOWN(dataset)) {
            /* Any listed dataset after the first, Fashion-MNIST, whose
             * epochs take seconds (a random click may still choose it). */
            guint n = g_list_model_get_n_items(gtk_drop_down_get_model(GTK_DROP_DOWN(dataset)));
            if (n > 1)
                gtk_drop_down_set_selected(GTK_DROP_DOWN(dataset), g_rand_int_range(rng, 1, n));
        }
        GtkWidget *epochs = find_named(GTK_WIDGET(panel), "epochs");
        if (GTK_IS_SPIN_BUTTON(epochs))
            gtk_spin_button_set_value(GTK_SPIN_BUTTON(epochs), g_rand_int_range(rng, 1, 3));
    }
    GtkWidget *button = find_named(GTK_WIDGET(panel), name);
    if (GTK_IS_BUTTON(button) && gtk_widget_is_sensitive(button) && gtk_widget_get_mapped(button))
        g_signal_emit_by_name(button, "clicked");
}

/* Clicks a random visible button of the window as GTK's own click would. */
static void click_button(TwWindow *win)
{
    GtkWidget *button = pick_widget(GTK_WIDGET(win), GTK_TYPE_BUTTON);
    if (button && gtk_widget_is_sensitive(button)) {
        char *path = widget_path(button);
        const char *label = gtk_button_get_label(GTK_BUTTON(button));
        step("click %s '%s'", path, label ? label : "");
        g_free(path);
        g_signal_emit_by_name(button, "clicked");
    }
}

/* ---- the run ----------------------------------------------------------------- */
static TwWindow *new_window(void)
{
    TwWindow *win = twb_application_new_window(app, NULL);
    g_object_add_weak_pointer(G_OBJECT(win), (gpointer *)&win);
    g_object_set(tw_window_train_panel(win), "logdb", logdb, NULL);
    gtk_window_present(GTK_WINDOW(win));
    gint64 end = g_get_monotonic_time() + 10 * G_USEC_PER_SEC;
    while (win && !gtk_widget_get_mapped(GTK_WIDGET(win)) && g_get_monotonic_time() < end)
        g_main_context_iteration(NULL, TRUE);
    g_assert_nonnull(win);
    g_object_remove_weak_pointer(G_OBJECT(win), (gpointer *)&win);
    return win;
}

static gboolean is_running(TwWindow *win)
{
    gboolean running = FALSE;
    g_object_get(tw_window_train_panel(win), "running", &running, NULL);
    return running;
}

/* Stops a running training and waits for the worker to end. */
static void stop_training(TwWindow *win)
{
    GtkWidget *stop = find_named(GTK_WIDGET(tw_window_train_panel(win)), "stop");
    if (is_running(win) && GTK_IS_BUTTON(stop) && gtk_widget_is_sensitive(stop))
        g_signal_emit_by_name(stop, "clicked");
    gint64 end = g_get_monotonic_time() + 60 * G_USEC_PER_SEC;
    while (is_running(win) && g_get_monotonic_time() < end)
        spin(20);
    g_assert_false(is_running(win));
}

static void test_monkey(void)
{
    const char *seed_env = g_getenv("TWB_MONKEY_SEED");
    const char *count_env = g_getenv("TWB_MONKEY_ACTIONS");
    guint32 seed = seed_env ? (guint32)g_ascii_strtoull(seed_env, NULL, 10) : 20261125u;
    long actions = count_env ? atol(count_env) : 400;
    g_test_message("monkey: seed %u, %ld actions (TWB_MONKEY_SEED, TWB_MONKEY_ACTIONS)", seed, actions);
    rng = g_rand_new_with_seed(seed);

    TwWindow *win = new_window();
    g_object_add_weak_pointer(G_OBJECT(win), (gpointer *)&win);
    long counts[18] = {0};
    for (long i = 0; i < actions; i++) {
        if (!win) { /* an action closed it */
            win = new_window();
            g_object_add_weak_pointer(G_OBJECT(win), (gpointer *)&win);
        }
        TwDesignerView *view = designer_of(win);
        int action = g_rand_int_range(rng, 0, 18);
        if (!view && ((action >= 4 && action <= 10) || action >= 16))
            action = 13; /* the designer is not shown: show a view instead */
        counts[action]++;
        current_action = i;
        current_kind = action;
        char *focus = widget_path(gtk_window_get_focus(GTK_WINDOW(win)));
        step("action %ld: kind %d (focus: %s)", i, action, focus);
        g_free(focus);
        switch (action) {
        case 0: x_click(win); break;
        case 1: x_drag(win); break;
        case 2: x_key(win); break;
        case 3: g_rand_boolean(rng) ? x_double_click(win) : x_type(win); break;
        case 4: palette_activate(win, view); break;
        case 5: drop_class(win, view); break;
        case 6: drop_layer(win, view); break;
        case 7: select_layer(win, view); break;
        case 8:
        case 9: edit_field(win, view); break;
        case 10: reset_field(view); break;
        case 11: window_action(win); break;
        case 12: open_something(win); break;
        case 13: show_view(win); break;
        case 14: g_rand_int_range(rng, 0, 4) ? training(win) : resize(win); break;
        case 15: click_button(win); break;
        default: canvas_action(win, view); break;
        }
        drain();
        if (win)
            answer_dialogs(win);
        if (i % 500 == 499)
            g_test_message("monkey: %ld actions done", i + 1);
    }
    current_action = current_kind = -1;
    step("after the actions: training stopped, the window closed");
    if (win) {
        stop_training(win);
        g_object_remove_weak_pointer(G_OBJECT(win), (gpointer *)&win);
        TwModelDoc *doc = tw_window_doc(win);
        g_assert_nonnull(doc);
        gtk_window_destroy(GTK_WINDOW(win));
        drain();
    }
    g_test_message("monkey: clicks %ld, drags %ld, keys %ld, typing %ld, palette %ld, drops %ld, moves %ld, "
                   "selections %ld, field edits %ld, resets %ld, window actions %ld, opens %ld, views %ld, "
                   "training/resize %ld, buttons %ld, canvas %ld",
                   counts[0], counts[1], counts[2], counts[3], counts[4], counts[5], counts[6], counts[7],
                   counts[8] + counts[9], counts[10], counts[11], counts[12], counts[13], counts[14], counts[15],
                   counts[16] + counts[17]);
    g_rand_free(rng);
    g_assert_cmpint(unexpected_warnings, ==, 0);
}

/* ---- a drag on the header bar, then a right-click -------------------------------- */
/* A point of widget in the window's X coordinates (its surface's). */
static void surface_point(TwWindow *win, GtkWidget *widget, double x, double y, int *sx, int *sy)
{
    double nx, ny, wx, wy;
    gtk_native_get_surface_transform(GTK_NATIVE(win), &nx, &ny);
    g_assert_true(gtk_widget_translate_coordinates(widget, GTK_WIDGET(win), x, y, &wx, &wy));
    *sx = (int)(wx + nx);
    *sy = (int)(wy + ny);
}

/* A point of the header bar that no button covers: a press there and a
 * move drag the window. */
static void header_point(TwWindow *win, int *sx, int *sy)
{
    GtkWidget *header = gtk_window_get_titlebar(GTK_WINDOW(win));
    int w = gtk_widget_get_width(header), h = gtk_widget_get_height(header);
    for (int x = w - 80; x > 0; x -= 4) {
        double wx, wy;
        g_assert_true(gtk_widget_translate_coordinates(header, GTK_WIDGET(win), x, h / 2.0, &wx, &wy));
        GtkWidget *picked = gtk_widget_pick(GTK_WIDGET(win), wx, wy, GTK_PICK_DEFAULT);
        if (picked && !gtk_widget_get_ancestor(picked, GTK_TYPE_BUTTON) && !GTK_IS_BUTTON(picked)) {
            surface_point(win, header, x, h / 2.0, sx, sy);
            return;
        }
    }
    g_assert_not_reached();
}

/* The window's position on the screen (xdotool getwindowgeometry). */
static void window_position(TwWindow *win, int *x, int *y)
{
    char *command = g_strdup_printf("xdotool getwindowgeometry %lu",
                                    (unsigned long)gdk_x11_surface_get_xid(gtk_native_get_surface(GTK_NATIVE(win))));
    char *out = NULL;
    g_assert_true(g_spawn_command_line_sync(command, &out, NULL, NULL, NULL));
    const char *at = strstr(out, "Position: ");
    g_assert_nonnull(at);
    g_assert_cmpint(sscanf(at, "Position: %d,%d", x, y), ==, 2);
    g_free(out);
    g_free(command);
}

/* After the monkey's drag on the header bar the window is back at (0, 0)
 * and stays there: a right-click on a card opens its context menu there.
 * With the drag sent at once, GTK's move never ended, the pointer's next
 * motion took the window to (-715, 110) and the click went to the move. */
static void test_header_drag(void)
{
    rng = g_rand_new_with_seed(1);
    TwWindow *win = new_window();
    unsigned long xid = gdk_x11_surface_get_xid(gtk_native_get_surface(GTK_NATIVE(win)));
    xdotool(win, "windowmove --sync %lu 0 0", xid);
    g_action_group_activate_action(G_ACTION_GROUP(win), "template", g_variant_new_string("mlp_fashion_mnist"));
    TwDesignerView *view = designer_of(win);
    GtkWidget *stack = tw_designer_view_stack(view);
    gtk_stack_set_visible_child(GTK_STACK(gtk_widget_get_parent(stack)), stack);
    spin(100);
    GtkWidget *row = pick_widget(stack, GTK_TYPE_LIST_BOX_ROW);
    g_assert_nonnull(row);
    int hx, hy, cx, cy;
    header_point(win, &hx, &hy);
    surface_point(win, row, gtk_widget_get_width(row) / 2.0, gtk_widget_get_height(row) / 2.0, &cx, &cy);

    drag(win, hx, hy, hx - 30, hy + 30);
    xdotool(win, "mousemove --window %lu %d %d click 3", xid, cx, cy);
    settle();
    int x, y;
    window_position(win, &x, &y);
    g_assert_cmpint(x, ==, 0);
    g_assert_cmpint(y, ==, 0);
    g_assert_nonnull(pick_widget(stack, GTK_TYPE_POPOVER_MENU));
    gtk_window_destroy(GTK_WINDOW(win));
    drain();
    g_rand_free(rng);
}

/* ---- set-up ------------------------------------------------------------------ */

static void write_file(const char *name, const char *contents, gssize length)
{
    char *path = g_build_filename(scratch, name, NULL);
    g_assert_true(g_file_set_contents(path, contents, length, NULL));
    g_ptr_array_add(model_files, path);
}

/* The monkey opens copies in its own folder: a Save it clicks writes there,
 * never over the examples or the shared corpus. */
static void add_models(const char *dir, const char *prefix)
{
    GDir *d = g_dir_open(dir, 0, NULL);
    const char *name;
    while (d && (name = g_dir_read_name(d))) {
        if (!g_str_has_suffix(name, ".json") && !g_str_has_suffix(name, ".keras") && !g_str_has_suffix(name, ".h5"))
            continue;
        char *from = g_build_filename(dir, name, NULL);
        char *contents = NULL;
        gsize length = 0;
        g_assert_true(g_file_get_contents(from, &contents, &length, NULL));
        char *copy = g_strconcat(prefix, "-", name, NULL);
        write_file(copy, contents, (gssize)length);
        g_free(copy);
        g_free(contents);
        g_free(from);
    }
    if (d)
        g_dir_close(d);
}

/* GTK's "Trying to snapshot TYPE 0x... without a current allocation" names
 * the widget by type alone; a failure in make test (no trace there) then
 * cannot say which one. The widget is alive while GTK warns (it is being
 * drawn), so its path to the window is printed, with what decides whether
 * it is laid out and drawn. */
static void describe_unallocated(const char *message)
{
    const char *at = strstr(message, " 0x");
    gpointer pointer = NULL;
    /* Also GTK 4.8's label measuring warnings ("reported min width -4"),
     * whose label the 10,000-action round could not name. */
    if ((!strstr(message, "without a current allocation") && !strstr(message, "reported min")) || !at ||
        sscanf(at + 1, "%p", &pointer) != 1 || !GTK_IS_WIDGET(pointer))
        return;
    for (GtkWidget *w = pointer; w; w = gtk_widget_get_parent(w)) {
        const char *text = GTK_IS_BUTTON(w) ? gtk_button_get_label(GTK_BUTTON(w))
                           : GTK_IS_LABEL(w) ? gtk_label_get_text(GTK_LABEL(w))
                                             : NULL;
        g_printerr("monkey:   %s '%s'%s%s%s %dx%d%s%s%s\n", G_OBJECT_TYPE_NAME(w), gtk_widget_get_name(w),
                   gtk_widget_get_visible(w) ? "" : " hidden", gtk_widget_get_child_visible(w) ? "" : " child-hidden",
                   gtk_widget_get_mapped(w) ? " mapped" : "", gtk_widget_get_width(w), gtk_widget_get_height(w),
                   text ? " text '" : "", text ? text : "", text ? "'" : "");
    }
}

/* Criticals stay fatal (g_test_init). Warnings are counted and fail the
 * test at its end, all but one: GTK 4.8 warns "Broken accounting of active
 * state" when a press and its release reach a widget unbalanced (the release
 * lands after a popover grabbed the pointer), an internal state GTK recovers
 * from and the application cannot influence. */

static GLogWriterOutput count_warnings(GLogLevelFlags level, const GLogField *fields, gsize n, gpointer data)
{
    (void)data;
    if (level & G_LOG_LEVEL_WARNING) {
        const char *domain = NULL, *message = NULL;
        for (gsize i = 0; i < n; i++) {
            if (!strcmp(fields[i].key, "GLIB_DOMAIN"))
                domain = fields[i].value;
            else if (!strcmp(fields[i].key, "MESSAGE"))
                message = fields[i].value;
        }
        if (!g_strcmp0(domain, "Gtk") && message && strstr(message, "Broken accounting of active state"))
            return G_LOG_WRITER_HANDLED;
        unexpected_warnings++;
        if (current_action >= 0)
            g_printerr("monkey: the next warning came in action %ld (kind %d)\n", current_action, current_kind);
        print_recent_steps();
        if (message)
            describe_unallocated(message);
    }
    return g_log_writer_default(level, fields, n, NULL);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_log_set_always_fatal(G_LOG_FATAL_MASK | G_LOG_LEVEL_CRITICAL);
    g_log_set_writer_func(count_warnings, NULL, NULL);
    scratch = g_dir_make_tmp("twb-monkey-XXXXXX", NULL);
    g_assert_nonnull(scratch);
    /* Recent files, settings and runs go to the test's own folder. */
    g_setenv("XDG_DATA_HOME", scratch, TRUE);
    g_setenv("XDG_CONFIG_HOME", scratch, TRUE);
    g_setenv("XDG_CACHE_HOME", scratch, TRUE);
    g_setenv("GTK_A11Y", "none", TRUE);
    /* File choosers save their state through GSettings; no dconf under Xvfb. */
    g_setenv("GSETTINGS_BACKEND", "memory", TRUE);
    logdb = g_build_filename(scratch, "runs.db", NULL);

    model_files = g_ptr_array_new_with_free_func(g_free);
    const char *srcdir = g_getenv("G_TEST_SRCDIR");
    char *examples = g_build_filename(srcdir ? srcdir : ".", "..", "examples", "models", NULL);
    add_models(examples, "example");
    g_free(examples);
    char *corpus = g_build_filename(srcdir ? srcdir : ".", "..", "..", "shared", "corpus", NULL);
    char *keras = g_build_filename(corpus, "keras", NULL);
    char *functional = g_build_filename(corpus, "keras-functional", NULL);
    if (!g_file_test(keras, G_FILE_TEST_IS_DIR))
        g_test_message("the Keras corpus (../shared/corpus) is not there: the monkey opens only the examples");
    add_models(keras, "keras");
    add_models(functional, "functional");
    g_free(keras);
    g_free(functional);
    g_free(corpus);
    write_file("empty.json", "", 0);
    write_file("truncated.json", "{\"class_name\": \"Sequential\", \"config\": {\"layers\": [", -1);
    write_file("binary.json", "\x89PNG\r\n\x1a\n\0\0\0", 12);
    write_file("deep.json", "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]", -1);
    char *missing = g_build_filename(scratch, "missing.json", NULL);
    g_ptr_array_add(model_files, missing);

    if (!twb_application_can_open_windows())
        g_error("no display: run under xvfb-run (meson test --suite gui does)");
    g_set_application_name("Tensor Workbench");
    app = twb_application_new(G_APPLICATION_NON_UNIQUE);
    g_assert_true(g_application_register(G_APPLICATION(app), NULL, NULL));

    g_test_add_func("/ui/monkey/random-actions", test_monkey);
    g_test_add_func("/ui/monkey/header-drag", test_header_drag);
    int status = g_test_run();
    g_object_unref(app);
    g_ptr_array_free(model_files, TRUE);
    scratch_remove_tree(scratch);
    g_free(scratch);
    g_free(logdb);
    return status;
}
