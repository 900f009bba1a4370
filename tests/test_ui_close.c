/* Closing the workbench window while work is in flight: a training run
 * going on the worker thread, the question about unsaved changes answered
 * each way (Discard, Save, Cancel and then Discard), each of the three views
 * shown, a model file just opened (its graph still loading on the graph
 * view's thread), the Open dialog, an export's file chooser or the
 * Dashboard's window renaming a run up. The window must go at once (or stay,
 * for Cancel) with the dialogs it opened, the run be stored as stopped,
 * and nothing of the closed window may run afterwards: the main loop runs
 * on for a while and opens the next window, with every GTK and GLib
 * critical fatal (g_test_init).
 * The monkey test found a notify on a finalized object after such a close
 * (seed 861777358, a weighted mix): the layer list's handler of its list
 * box, which outlived the list with the focus (layer-list-focused,
 * focus-anywhere). Runs under Xvfb (tests/meson.build). */
#include <gtk/gtk.h>
#include <string.h>

#include <glib/gstdio.h>

#include <tw/run_store.h>

#include "application.h"
#include "dashboard_view.h"
#include "designer_view.h"
#include "gui_helpers.h"
#include "hparams_view.h"
#include "run_list.h"
#include "scratch_tree.h"
#include "train_panel.h"

enum { DATA_SPIRALS = 1 };
enum { ANSWER_DISCARD = 1, ANSWER_SAVE = 2 }; /* the question's responses (ui/window.c) */

static TwbApplication *app;
static char *dir, *logdb;
static int runs; /* numbers the runs: one database for the suite */

/* ---- the window -------------------------------------------------------------- */
static gboolean is_mapped(gpointer widget)
{
    return gtk_widget_get_mapped(widget);
}

static GtkWidget *panel_widget(TwWindow *win, const char *name)
{
    GtkWidget *w = find_named(GTK_WIDGET(tw_window_train_panel(win)), name);
    g_assert_nonnull(w);
    return w;
}

/* A window on a copy of the spirals model in the scratch folder (Save
 * writes it in place); *path is that file. */
static TwWindow *open_window(char **path)
{
    *path = g_build_filename(dir, "spirals.json", NULL);
    g_assert_true(g_file_set_contents(*path, spirals_model, -1, NULL));
    TwWindow *win = twb_application_new_window(app, *path);
    g_object_set(tw_window_train_panel(win), "logdb", logdb, NULL);
    gtk_window_present(GTK_WINDOW(win));
    wait_until(is_mapped, win, 10, "the window to map");
    return win;
}

static gboolean train_on(gpointer win)
{
    return gtk_widget_is_sensitive(panel_widget(win, "train"));
}

static gboolean training(gpointer win)
{
    const char *text = gtk_inscription_get_text(GTK_INSCRIPTION(panel_widget(win, "progress-text")));
    return text && g_str_has_prefix(text, "Epoch ");
}

/* The spin button's most epochs (10000) of the spirals one sample a step:
 * minutes of training, still going when closed. (100 epochs in batches
 * of 8 take 0.4 s since a tiny model's steps run on one thread: such a
 * run had finished before a slow close and was stored as finished.) */
static char *start_long_run(TwWindow *win)
{
    char *name = g_strdup_printf("closed-%d", ++runs);
    gtk_drop_down_set_selected(GTK_DROP_DOWN(panel_widget(win, "dataset")), DATA_SPIRALS);
    gtk_spin_button_set_value(GTK_SPIN_BUTTON(panel_widget(win, "epochs")), 10000);
    gtk_spin_button_set_value(GTK_SPIN_BUTTON(panel_widget(win, "batch-size")), 1);
    gtk_editable_set_text(GTK_EDITABLE(panel_widget(win, "run-name")), name);
    g_assert_true(wait_polled(train_on, win, 60));
    g_signal_emit_by_name(panel_widget(win, "train"), "clicked");
    g_assert_true(wait_polled(training, win, 60));
    return name;
}

/* An unsaved edit: the hidden layer goes. */
static void edit(TwWindow *win)
{
    GError *error = NULL;
    g_assert_true(tw_model_doc_remove(tw_window_doc(win), 1, &error));
    g_assert_no_error(error);
    g_assert_true(tw_model_doc_modified(tw_window_doc(win)));
}

static void show_view(TwWindow *win, const char *view)
{
    g_action_group_activate_action(G_ACTION_GROUP(win), "show-view", g_variant_new_string(view));
}

static gboolean is_controls_button(GtkWidget *w, gconstpointer data)
{
    return GTK_IS_BUTTON(w) && gtk_widget_get_ancestor(w, GTK_TYPE_WINDOW_CONTROLS);
}

/* The header bar's close button, clicked as the monkey clicks it. */
static void click_close(TwWindow *win)
{
    g_signal_emit_by_name(titlebar_find(GTK_WINDOW(win), is_controls_button, NULL), "clicked");
    drain();
}

static GtkWidget *find_question(void)
{
    GListModel *toplevels = gtk_window_get_toplevels();
    for (guint i = 0; i < g_list_model_get_n_items(toplevels); i++) {
        GtkWidget *w = g_list_model_get_item(toplevels, i);
        g_object_unref(w);
        if (GTK_IS_MESSAGE_DIALOG(w) && gtk_widget_get_visible(w))
            return w;
    }
    return NULL;
}

static void answer(int response)
{
    GtkWidget *question = find_question();
    g_assert_nonnull(question);
    gtk_dialog_response(GTK_DIALOG(question), response);
    drain();
}

/* After the window went: the main loop runs on, then a new window opens
 * and closes (its allocations reuse the freed window's memory). */
static void after_close(void)
{
    spin(0.5);
    char *path;
    TwWindow *next = open_window(&path);
    spin(0.2);
    gtk_window_destroy(GTK_WINDOW(next));
    spin(0.2);
    g_free(path);
    g_assert_null(find_question());
}

static tw_run_status run_status(const char *name)
{
    tw_run_info run;
    stored_run(logdb, name, &run);
    tw_run_status status = run.status;
    tw_run_info_clear(&run);
    return status;
}

/* ---- closing while training ---------------------------------------------------- */
/* Training, the view shown, an edit; close and answer. */
static void close_while_training(const char *view, int response)
{
    char *path;
    TwWindow *win = open_window(&path);
    char *name = start_long_run(win);
    show_view(win, view);
    edit(win);
    spin(0.2);
    g_object_add_weak_pointer(G_OBJECT(win), (gpointer *)&win);
    click_close(win);
    answer(response);
    g_assert_null(win); /* closed inside the answer */
    g_assert_cmpint(run_status(name), ==, TW_RUN_STOPPED);
    char *saved = NULL;
    g_assert_true(g_file_get_contents(path, &saved, NULL, NULL));
    /* Saved: the edit is in the file; discarded: the file is as it was. */
    g_assert_cmpint(strstr(saved, "\"hidden\"") != NULL, ==, response == ANSWER_DISCARD);
    g_free(saved);
    after_close();
    g_free(name);
    g_free(path);
}

static void test_training_discard(void)
{
    close_while_training("designer", ANSWER_DISCARD);
    close_while_training("dashboard", ANSWER_DISCARD);
    close_while_training("graph", ANSWER_DISCARD);
}

static void test_training_save(void)
{
    close_while_training("designer", ANSWER_SAVE);
    close_while_training("dashboard", ANSWER_SAVE);
    close_while_training("graph", ANSWER_SAVE);
}

/* Cancel keeps the window and the run; closing again with Discard ends both. */
static void test_training_cancel_then_close(void)
{
    char *path;
    TwWindow *win = open_window(&path);
    char *name = start_long_run(win);
    show_view(win, "dashboard");
    edit(win);
    g_object_add_weak_pointer(G_OBJECT(win), (gpointer *)&win);
    click_close(win);
    answer(GTK_RESPONSE_CANCEL);
    g_assert_nonnull(win);
    g_assert_true(gtk_widget_get_visible(GTK_WIDGET(win)));
    char *before = g_strdup(gtk_inscription_get_text(GTK_INSCRIPTION(panel_widget(win, "progress-text"))));
    gint64 end = g_get_monotonic_time() + 30 * G_USEC_PER_SEC;
    while (!strcmp(before, gtk_inscription_get_text(GTK_INSCRIPTION(panel_widget(win, "progress-text")))) &&
           g_get_monotonic_time() < end)
        spin(0.05);
    g_assert_cmpstr(before, !=, gtk_inscription_get_text(GTK_INSCRIPTION(panel_widget(win, "progress-text"))));
    g_free(before);
    show_view(win, "graph");
    click_close(win);
    answer(ANSWER_DISCARD);
    g_assert_null(win);
    g_assert_cmpint(run_status(name), ==, TW_RUN_STOPPED);
    after_close();
    g_free(name);
    g_free(path);
}

/* ---- closing while a model file opens --------------------------------------------- */
/* A file opened (a broken one: the banner says why; or a good one, whose
 * graph the graph view loads on its thread) and the window closed at
 * once, while training, in each view. */
static void test_just_opened(void)
{
    char *deep = g_build_filename(dir, "deep.json", NULL);
    g_assert_true(g_file_set_contents(deep, "[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]", -1, NULL));
    const char *views[] = {"designer", "dashboard", "graph"};
    for (int i = 0; i < 6; i++) {
        char *path;
        TwWindow *win = open_window(&path);
        char *name = start_long_run(win);
        show_view(win, views[i % 3]);
        tw_window_open_file(win, i < 3 ? deep : path);
        g_object_add_weak_pointer(G_OBJECT(win), (gpointer *)&win);
        click_close(win); /* not modified: no question */
        g_assert_null(win);
        g_assert_cmpint(run_status(name), ==, TW_RUN_STOPPED);
        after_close();
        g_free(name);
        g_free(path);
    }
    g_free(deep);
}

/* Open… on an edited model asks first; Discard brings the file chooser
 * up; the window is closed under it (Ctrl+Q: the chooser is modal) and
 * asks again. */
static void test_open_dialog_up(void)
{
    char *path;
    TwWindow *win = open_window(&path);
    char *name = start_long_run(win);
    edit(win);
    g_action_group_activate_action(G_ACTION_GROUP(win), "open", NULL);
    drain();
    answer(ANSWER_DISCARD);
    GtkWidget *chooser = NULL;
    GListModel *toplevels = gtk_window_get_toplevels();
    for (guint i = 0; i < g_list_model_get_n_items(toplevels); i++) {
        GtkWidget *w = g_list_model_get_item(toplevels, i);
        g_object_unref(w);
        if (GTK_IS_FILE_CHOOSER(w) && gtk_widget_get_visible(w))
            chooser = w;
    }
    g_assert_nonnull(chooser);
    g_object_add_weak_pointer(G_OBJECT(win), (gpointer *)&win);
    g_action_group_activate_action(G_ACTION_GROUP(app), "quit", NULL);
    drain();
    answer(ANSWER_DISCARD);
    g_assert_null(win);
    g_assert_cmpint(run_status(name), ==, TW_RUN_STOPPED);
    after_close();
    g_free(name);
    g_free(path);
}

/* ---- closing with the focus in the layer list -------------------------------------------- */
/* The designer's layer list focused with a layer selected (after a click on
 * a card, say), training: closing the window disposes the layer stack
 * while GTK still holds the focused list box, which then removes its rows
 * and reports the selected one gone. Its handler reached the freed stack
 * and notified "selected" on it: the monkey's critical after a close
 * ("invalid unclassed pointer in cast to 'GObject'", then
 * g_object_notify_by_pspec's). */
static void test_layer_list_focused(void)
{
    char *path;
    TwWindow *win = open_window(&path);
    char *name = start_long_run(win);
    TwDesignerView *designer = TW_DESIGNER_VIEW(find_type(GTK_WIDGET(win), TW_TYPE_DESIGNER_VIEW));
    GtkWidget *stack = tw_designer_view_stack(designer);
    gtk_stack_set_visible_child(GTK_STACK(gtk_widget_get_parent(stack)), stack);
    spin(0.2);
    tw_designer_view_select(designer, 1);
    GtkWidget *list = find_type(stack, GTK_TYPE_LIST_BOX);
    g_assert_nonnull(list);
    g_assert_nonnull(gtk_list_box_get_selected_row(GTK_LIST_BOX(list)));
    g_assert_true(gtk_widget_grab_focus(list));
    g_assert_true(gtk_window_get_focus(GTK_WINDOW(win)) == list);
    spin(0.1);
    g_object_add_weak_pointer(G_OBJECT(win), (gpointer *)&win);
    click_close(win); /* not modified: no question */
    g_assert_null(win);
    g_assert_cmpint(run_status(name), ==, TW_RUN_STOPPED);
    after_close();
    g_free(name);
    g_free(path);
}

/* Every focusable widget of the designer page but its buttons (the
 * palette, the layer list and its cards, the training panel's fields; the
 * first row of each list) in turn holds
 * the focus as the window closes: the widgets GTK keeps for the focus a
 * while must not report to their freed owners. */
static void collect_focusable(GtkWidget *root, GPtrArray *out)
{
    if (!gtk_widget_get_mapped(root))
        return;
    /* One row of each list: the palette's rows are alike. */
    gboolean row = GTK_IS_LIST_BOX_ROW(root) || !strcmp(G_OBJECT_TYPE_NAME(root), "GtkListItemWidget");
    for (guint i = 0; row && i < out->len; i++)
        if (gtk_widget_get_parent(out->pdata[i]) == gtk_widget_get_parent(root))
            return;
    /* Buttons report nothing as they go: a click needs a pointer. */
    if (gtk_widget_get_focusable(root) && gtk_widget_is_sensitive(root) && !GTK_IS_BUTTON(root))
        g_ptr_array_add(out, root);
    for (GtkWidget *c = gtk_widget_get_first_child(root); c; c = gtk_widget_get_next_sibling(c))
        collect_focusable(c, out);
}

static guint focus_and_close(guint k)
{
    char *path;
    TwWindow *win = open_window(&path);
    TwDesignerView *designer = TW_DESIGNER_VIEW(find_type(GTK_WIDGET(win), TW_TYPE_DESIGNER_VIEW));
    GtkWidget *stack = tw_designer_view_stack(designer);
    gtk_stack_set_visible_child(GTK_STACK(gtk_widget_get_parent(stack)), stack);
    tw_designer_view_select(designer, 1);
    spin(0.2);
    GPtrArray *all = g_ptr_array_new();
    collect_focusable(GTK_WIDGET(designer), all);
    collect_focusable(GTK_WIDGET(tw_window_train_panel(win)), all);
    guint n = all->len;
    if (k < n) {
        GtkWidget *w = all->pdata[k];
        g_test_message("focus on %s '%s'", G_OBJECT_TYPE_NAME(w), gtk_widget_get_name(w));
        gtk_widget_grab_focus(w);
        drain();
    }
    g_ptr_array_free(all, TRUE);
    g_object_add_weak_pointer(G_OBJECT(win), (gpointer *)&win);
    click_close(win);
    g_assert_null(win);
    spin(0.1);
    g_free(path);
    return n;
}

static void test_focus_anywhere(void)
{
    guint n = focus_and_close(0);
    g_assert_cmpuint(n, >, 5);
    for (guint k = 1; k < n; k++)
        focus_and_close(k);
    after_close();
}

/* ---- closing while the Dashboard asks about a run ----------------------------------- */
static GtkWidget *rename_window(void)
{
    GListModel *toplevels = gtk_window_get_toplevels();
    for (guint i = 0; i < g_list_model_get_n_items(toplevels); i++) {
        GtkWidget *w = g_list_model_get_item(toplevels, i);
        g_object_unref(w);
        if (!g_strcmp0(gtk_widget_get_name(w), "run-edit-window"))
            return w;
    }
    return NULL;
}

static gboolean has_runs(gpointer runs)
{
    return tw_run_list_n_visible(runs) > 0;
}

/* Rename… on a run of the Dashboard brings up a small window asking for the
 * name; the workbench window closed meanwhile takes it along. It stayed up,
 * and its Rename then used the freed run list. */
static void test_rename_dialog_up(void)
{
    char *path;
    TwWindow *win = open_window(&path);
    char *name = start_long_run(win);
    show_view(win, "dashboard");
    TwDashboardView *dashboard = TW_DASHBOARD_VIEW(find_type(GTK_WIDGET(win), TW_TYPE_DASHBOARD_VIEW));
    GtkWidget *runs = find_type(GTK_WIDGET(dashboard), TW_TYPE_RUN_LIST);
    g_assert_nonnull(runs);
    g_assert_true(wait_polled(has_runs, runs, 30));
    gint64 id = tw_dashboard_data_run(tw_dashboard_view_data(dashboard), 0)->id;
    gtk_widget_activate_action(runs, "runs.rename", "x", id);
    drain();
    g_assert_nonnull(rename_window());
    g_object_add_weak_pointer(G_OBJECT(win), (gpointer *)&win);
    click_close(win); /* not modified: no question */
    g_assert_null(win);
    g_assert_null(rename_window());
    g_assert_cmpint(run_status(name), ==, TW_RUN_STOPPED);
    after_close();
    g_free(name);
    g_free(path);
}

/* ---- closing while an export asks where ------------------------------------------------ */
static gboolean is_svg_button(GtkWidget *w, gconstpointer data)
{
    return GTK_IS_BUTTON(w) && !g_strcmp0(gtk_button_get_label(GTK_BUTTON(w)), "SVG…");
}

static GtkWidget *file_chooser(void)
{
    GListModel *toplevels = gtk_window_get_toplevels();
    for (guint i = 0; i < g_list_model_get_n_items(toplevels); i++) {
        GtkWidget *w = g_list_model_get_item(toplevels, i);
        g_object_unref(w);
        if (GTK_IS_FILE_CHOOSER(w) && gtk_widget_get_visible(w))
            return w;
    }
    return NULL;
}

/* The Graph view's SVG… (or the HParams tab's export) asks where to
 * write; the window closed meanwhile takes the question along. It stayed
 * up, and an answer then wrote through the freed view. */
static void close_while_exporting(gboolean graph)
{
    char *path;
    TwWindow *win = open_window(&path);
    show_view(win, graph ? "graph" : "dashboard");
    spin(0.3);
    if (graph) {
        GtkWidget *svg = widget_find(GTK_WIDGET(win), is_svg_button, NULL);
        g_assert_nonnull(svg);
        g_signal_emit_by_name(svg, "clicked");
    } else {
        GtkWidget *hparams = find_type(GTK_WIDGET(win), TW_TYPE_HPARAMS_VIEW);
        g_assert_nonnull(hparams);
        g_assert_true(gtk_widget_activate_action(hparams, "hparams.export", "s", "csv"));
    }
    drain();
    g_assert_nonnull(file_chooser());
    g_object_add_weak_pointer(G_OBJECT(win), (gpointer *)&win);
    click_close(win);
    g_assert_null(win);
    g_assert_null(file_chooser());
    after_close();
    g_free(path);
}

static void test_export_dialog_up(void)
{
    close_while_exporting(TRUE);
    close_while_exporting(FALSE);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    char *home;
    /* The suite's home and display (train_suite_start), with the
     * application the workbench runs, which makes every window's
     * training controller and sweep queue. */
    GtkApplication *probe = train_suite_start("twb-ui-close-home-XXXXXX", "io.github.twb.Workbench.TestCloseProbe",
                                              &home);
    if (!probe)
        return 77;
    g_object_unref(probe);
    g_set_application_name("Tensor Workbench");
    app = twb_application_new(G_APPLICATION_NON_UNIQUE);
    g_assert_true(g_application_register(G_APPLICATION(app), NULL, NULL));
    logdb = scratch_logdb("twb-ui-close-XXXXXX", &dir);
    g_test_add_func("/ui/close/training-discard", test_training_discard);
    g_test_add_func("/ui/close/training-save", test_training_save);
    g_test_add_func("/ui/close/training-cancel-then-close", test_training_cancel_then_close);
    g_test_add_func("/ui/close/just-opened", test_just_opened);
    g_test_add_func("/ui/close/open-dialog-up", test_open_dialog_up);
    g_test_add_func("/ui/close/layer-list-focused", test_layer_list_focused);
    g_test_add_func("/ui/close/focus-anywhere", test_focus_anywhere);
    g_test_add_func("/ui/close/rename-dialog-up", test_rename_dialog_up);
    g_test_add_func("/ui/close/export-dialog-up", test_export_dialog_up);
    int rc = g_test_run();
    scratch_close(NULL, dir, logdb);
    return train_suite_finish(rc, GTK_APPLICATION(app), home);
}
