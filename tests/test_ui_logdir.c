/* TensorBoard log directories in the workbench window, under Xvfb: `twb
 * --logdir DIR` (the application's option, a relative DIR read where twb
 * started, and twb's own refusals), File → "Open TensorBoard Log
 * Directory…" (win.open-logdir, through its folder chooser), and a run
 * that another process writes while the window follows it — a
 * SummaryWriter-style Python writer of our own (tests/tb_write.py) — whose
 * new point reaches the chart on screen (a catastrophic bound only; bench/run
 * tfevents_live_screen times it); a run's model (the Keras callback's
 * model config) opened in the Designer from the run list's menu. */
#include <glib/gstdio.h>
#include <gtk/gtk.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <tw/tfevents.h>

#include "application.h"
#include "chart_card.h"
#include "dashboard_view.h"
#include "gui_helpers.h"
#include "scratch_tree.h"
#include "tag_sections.h"

static TwbApplication *app;

/* A log directory DIR/logs with the run "train" of a few scalar points. */
static char *make_logdir(char **dir)
{
    *dir = g_dir_make_tmp("twb-ui-logdir-XXXXXX", NULL);
    g_assert_nonnull(*dir);
    char *logs = g_build_filename(*dir, "logs", NULL), *run = g_build_filename(logs, "train", NULL);
    tw_tb_writer *w = tw_tb_writer_open(run);
    g_assert_nonnull(w);
    for (int step = 0; step < 3; step++)
        g_assert_cmpint(tw_tb_write_scalar(w, "epoch_loss", step, 1.7e9 + step, 1.0 / (1 + step)), ==, 0);
    g_assert_cmpint(tw_tb_writer_close(w), ==, 0);
    g_free(run);
    return logs;
}

static TwDashboardView *dashboard_of(GtkWindow *win)
{
    GtkWidget *view = find_type(GTK_WIDGET(win), TW_TYPE_DASHBOARD_VIEW);
    g_assert_nonnull(view);
    return TW_DASHBOARD_VIEW(view);
}

static gboolean run_listed(gpointer view)
{
    TwDashboardData *data = tw_dashboard_view_data(view);
    return tw_dashboard_data_n_runs(data) == 1 && !g_strcmp0(tw_dashboard_data_run(data, 0)->name, "train");
}

static gboolean two_runs(gpointer view)
{
    return tw_dashboard_data_n_runs(tw_dashboard_view_data(view)) == 2;
}

/* The window shows the directory's runs: its Dashboard follows dir, is
 * the view on screen and lists the run "train". */
static void assert_follows(GtkWindow *win, const char *dir)
{
    TwDashboardView *dashboard = dashboard_of(win);
    g_assert_cmpstr(tw_dashboard_view_logdir(dashboard), ==, dir);
    g_assert_cmpstr(tw_window_visible_view(TW_WINDOW(win)), ==, "dashboard");
    wait_until(run_listed, dashboard, 20, "the log directory's run in the Dashboard");
}

/* ---- twb --logdir DIR ---------------------------------------------------------- */
typedef struct {
    const char *dir;
    gboolean checked;
} logdir_check;

static gboolean check_logdir_window(gpointer data)
{
    GtkApplication *other = data;
    logdir_check *check = g_object_get_data(G_OBJECT(other), "check");
    GtkWindow *win = gtk_application_get_active_window(other);
    assert_follows(win, check->dir);
    check->checked = TRUE;
    gtk_window_destroy(win);
    return G_SOURCE_REMOVE;
}

static void on_window_added(GtkApplication *other, GtkWindow *win)
{
    g_idle_add(check_logdir_window, other);
}

static void test_option(void)
{
    char *dir, *logs = make_logdir(&dir);
    /* A relative DIR names the folder where twb was started. */
    char *cwd = g_get_current_dir();
    g_assert_cmpint(g_chdir(dir), ==, 0);
    TwbApplication *other = twb_application_new(G_APPLICATION_NON_UNIQUE);
    logdir_check check = {logs, FALSE};
    g_object_set_data(G_OBJECT(other), "check", &check);
    g_signal_connect(other, "window-added", G_CALLBACK(on_window_added), NULL);
    char *argv[] = {"twb", "--logdir", "logs", NULL};
    g_assert_cmpint(g_application_run(G_APPLICATION(other), 3, argv), ==, 0);
    g_assert_cmpint(g_chdir(cwd), ==, 0);
    g_assert_true(check.checked);
    g_object_unref(other);

    /* twb itself: the option's own mistakes, and no display. */
    char **env = g_environ_unsetenv(g_environ_unsetenv(g_get_environ(), "DISPLAY"), "WAYLAND_DISPLAY");
    struct {
        const char *args[6];
        int status;
        const char *message;
    } cases[] = {
        {{"--logdir", logs, NULL}, 1, "cannot open the workbench window: no display"},
        {{"--logdir", NULL}, 2, "option '--logdir' needs a TensorBoard log directory"},
        {{"--logdir=", NULL}, 2, "option '--logdir' needs a TensorBoard log directory"},
        {{"--logdir", "a", "--logdir=b", NULL}, 2, "option '--logdir' given twice"},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        GPtrArray *args = g_ptr_array_new();
        g_ptr_array_add(args, (char *)g_getenv("TWB"));
        for (int k = 0; cases[i].args[k]; k++)
            g_ptr_array_add(args, (char *)cases[i].args[k]);
        g_ptr_array_add(args, NULL);
        char *err = NULL;
        int wait_status = 0;
        GError *error = NULL;
        g_spawn_sync(NULL, (char **)args->pdata, env, G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL, NULL, &err,
                     &wait_status, &error);
        g_assert_no_error(error);
        int status = WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : -1;
        if (status != cases[i].status || !strstr(err, cases[i].message))
            g_error("case %zu: exit %d, stderr '%s'; expected exit %d and '%s'", i, status, err, cases[i].status,
                    cases[i].message);
        g_free(err);
        g_ptr_array_free(args, TRUE);
    }
    g_strfreev(env);
    scratch_remove_tree(dir);
    g_free(cwd);
    g_free(logs);
    g_free(dir);
}

/* ---- File → Open TensorBoard Log Directory… --------------------------------------- */
static GtkWindow *open_window(void)
{
    GtkWindow *win = GTK_WINDOW(twb_application_new_window(app, NULL));
    gtk_window_present(win);
    wait_until((gboolean(*)(gpointer))gtk_widget_get_mapped, win, 10, "the window to map");
    return win;
}

static gpointer visible_chooser(void)
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

static gboolean chooser_up(gpointer data)
{
    return visible_chooser() != NULL;
}

static gboolean chooser_in(gpointer dir)
{
    GFile *folder = gtk_file_chooser_get_file(GTK_FILE_CHOOSER(visible_chooser()));
    char *path = folder ? g_file_get_path(folder) : NULL;
    gboolean in = !g_strcmp0(path, dir);
    g_free(path);
    g_clear_object(&folder);
    return in;
}

/* The action asks for a folder (the GTK dialog of GtkFileChooserNative under
 * Xvfb); accepting one shows its runs in the Dashboard. */
static void test_open_action(void)
{
    char *dir, *logs = make_logdir(&dir);
    GtkWindow *win = open_window();
    g_assert_true(g_action_group_get_action_enabled(G_ACTION_GROUP(win), "open-logdir"));
    g_action_group_activate_action(G_ACTION_GROUP(win), "open-logdir", NULL);
    wait_until(chooser_up, NULL, 10, "the folder chooser");
    GtkWidget *chooser = visible_chooser();
    g_assert_cmpint(gtk_file_chooser_get_action(GTK_FILE_CHOOSER(chooser)), ==, GTK_FILE_CHOOSER_ACTION_SELECT_FOLDER);
    g_assert_cmpstr(gtk_window_get_title(GTK_WINDOW(chooser)), ==, "Open TensorBoard Log Directory");
    GFile *folder = g_file_new_for_path(logs);
    g_assert_true(gtk_file_chooser_set_file(GTK_FILE_CHOOSER(chooser), folder, NULL));
    g_object_unref(folder);
    wait_until(chooser_in, logs, 10, "the chooser to select the folder");
    G_GNUC_BEGIN_IGNORE_DEPRECATIONS
    gtk_dialog_response(GTK_DIALOG(chooser), GTK_RESPONSE_ACCEPT);
    G_GNUC_END_IGNORE_DEPRECATIONS
    drain();
    assert_follows(win, logs);
    gtk_window_destroy(win);
    drain();
    scratch_remove_tree(dir);
    g_free(logs);
    g_free(dir);
}

/* ---- a run written live by another process ----------------------------------------- */
typedef struct {
    GPid pid;
    FILE *to, *from;
} writer;

/* tests/tb_write.py serve FILE; FALSE (the test skipped) without
 * python3-protobuf. */
static gboolean writer_start(writer *w, const char *file)
{
    char *script = g_build_filename(g_getenv("G_TEST_SRCDIR"), "tb_write.py", NULL);
    char *argv[] = {"/usr/bin/python3", script, "serve", (char *)file, NULL};
    int to, from;
    GError *error = NULL;
    gboolean ok = g_spawn_async_with_pipes(NULL, argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD, NULL, NULL, &w->pid, &to,
                                           &from, NULL, &error);
    g_free(script);
    if (!ok) {
        g_test_skip(error->message);
        g_error_free(error);
        return FALSE;
    }
    w->to = fdopen(to, "w");
    w->from = fdopen(from, "r");
    return TRUE;
}

/* One scalar appended; FALSE when the writer stopped (exit status 2: no
 * python3-protobuf, the test skipped). */
static gboolean writer_append(writer *w, const char *tag, int step, double value)
{
    char line[64];
    fprintf(w->to, "%s %d %.17g\n", tag, step, value);
    fflush(w->to);
    if (fgets(line, sizeof line, w->from))
        return TRUE;
    int status = 0;
    waitpid(w->pid, &status, 0);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 2)
        g_test_skip("python3-protobuf is not installed (apt-get install python3-protobuf): tests/tb_write.py cannot "
                    "write");
    else
        g_error("tests/tb_write.py stopped (wait status %d)", status);
    return FALSE;
}

static void writer_stop(writer *w)
{
    fclose(w->to);
    fclose(w->from);
    waitpid(w->pid, NULL, 0);
    g_spawn_close_pid(w->pid);
}

typedef struct {
    TwDashboardView *dashboard;
    int64_t points;
} chart_wait;

static gboolean chart_shows(gpointer data)
{
    chart_wait *c = data;
    GtkWidget *scalars = find_named(GTK_WIDGET(c->dashboard), "scalars");
    GtkWidget *card = scalars ? tw_tag_sections_card(TW_TAG_SECTIONS(scalars), "loss") : NULL;
    return card && tw_chart_view_points_shown(tw_chart_card_chart(TW_CHART_CARD(card))) >= c->points;
}

static void test_live_python_writer(void)
{
    char *dir = g_dir_make_tmp("twb-ui-logdir-XXXXXX", NULL), *logs = g_build_filename(dir, "logs", NULL);
    char *run = g_build_filename(logs, "live", NULL);
    char *file = g_build_filename(run, "events.out.tfevents.1700000000.live", NULL);
    g_assert_cmpint(g_mkdir_with_parents(run, 0755), ==, 0);
    writer w;
    if (!writer_start(&w, file))
        goto out;
    if (!writer_append(&w, "loss", 0, 0.75)) /* the file: its file_version record and a first point */
        goto out;
    GtkWindow *win = open_window();
    tw_window_open_logdir(TW_WINDOW(win), logs);
    chart_wait c = {dashboard_of(win), 1};
    g_assert_true(wait_polled(chart_shows, &c, 20)); /* catastrophic bounds */
    for (int step = 1; step <= 3; step++) {
        g_assert_true(writer_append(&w, "loss", step, 0.75 / (1 + step)));
        c.points = step + 1;
        if (!wait_polled(chart_shows, &c, 10))
            g_error("the point of step %d was not on screen after 10 s", step);
    }
    writer_stop(&w);
    gtk_window_destroy(win);
    drain();
out:
    scratch_remove_tree(dir);
    g_free(file);
    g_free(run);
    g_free(logs);
    g_free(dir);
}

/* ---- a run's model opened in the Designer ------------------------------------------ */
static gboolean named_run_row(GtkWidget *widget, gconstpointer name)
{
    GtkListItem *list_item = g_object_get_data(G_OBJECT(widget), "list-item");
    GObject *item = list_item && g_object_get_data(G_OBJECT(widget), "menu") ? gtk_list_item_get_item(list_item) : NULL;
    char *item_name = NULL;
    if (item)
        g_object_get(item, "name", &item_name, NULL);
    gboolean match = !g_strcmp0(item_name, name);
    g_free(item_name);
    return match;
}

/* The run's menu, as Shift+F10 on its row pops it up (its shortcut's
 * action), and the menu's entry of that label once the menu is on screen. */
typedef struct {
    GtkWindow *win;
    const char *run;
} row_wait;

static gboolean row_built(gpointer data)
{
    row_wait *r = data;
    return widget_find(GTK_WIDGET(r->win), named_run_row, r->run) != NULL;
}

static GtkWidget *menu_entry(GtkWindow *win, const char *run, const char *label)
{
    row_wait r = {win, run};
    wait_until(row_built, &r, 10, "the run's row"); /* rows enter the list a few per frame */
    GtkWidget *row = widget_find(GTK_WIDGET(win), named_run_row, run);
    GListModel *controllers = gtk_widget_observe_controllers(row);
    for (guint i = 0; i < g_list_model_get_n_items(controllers); i++) {
        GObject *c = g_list_model_get_item(controllers, i);
        if (GTK_IS_SHORTCUT_CONTROLLER(c)) {
            GtkShortcut *shortcut = g_list_model_get_item(G_LIST_MODEL(c), 0);
            gtk_shortcut_action_activate(gtk_shortcut_get_action(shortcut), 0, row, NULL);
            g_object_unref(shortcut);
        }
        g_object_unref(c);
    }
    g_object_unref(controllers);
    GtkWidget *popover = g_object_get_data(G_OBJECT(row), "menu");
    wait_until((gboolean(*)(gpointer))gtk_widget_get_mapped, popover, 10, "the run's menu");
    GtkWidget *found = NULL;
    GtkWidget *stack[256] = {popover};
    for (int top = 1; top > 0 && !found;) {
        GtkWidget *w = stack[--top];
        if (!strcmp(G_OBJECT_TYPE_NAME(w), "GtkModelButton")) { /* a private GTK type */
            GtkWidget *text = find_type(w, GTK_TYPE_LABEL);
            if (text && !g_strcmp0(gtk_label_get_text(GTK_LABEL(text)), label))
                found = w;
        }
        for (GtkWidget *c = gtk_widget_get_first_child(w); c && top < 256; c = gtk_widget_get_next_sibling(c))
            stack[top++] = c;
    }
    g_assert_nonnull(found);
    return found;
}

/* A run with a model_json (here the Keras callback's model config of an
 * imported log) offers "Open Model in Designer", which opens the model in
 * the Designer with no file; a run without one has the entry greyed out. */
static void test_open_run_model(void)
{
    char *path = g_build_filename(g_getenv("G_TEST_SRCDIR"), "..", "examples", "models", "mlp_fashion_mnist.json", NULL);
    char *model = NULL;
    g_assert_true(g_file_get_contents(path, &model, NULL, NULL));
    char *dir = g_dir_make_tmp("twb-ui-logdir-XXXXXX", NULL), *logs = g_build_filename(dir, "logs", NULL);
    const char *runs[] = {"keras", "plain"};
    for (int r = 0; r < 2; r++) {
        char *run = g_build_filename(logs, runs[r], NULL);
        tw_tb_writer *w = tw_tb_writer_open(run);
        g_assert_nonnull(w);
        if (r == 0)
            g_assert_cmpint(tw_tb_write_keras_model(w, 0, 1.7e9, model), ==, 0);
        g_assert_cmpint(tw_tb_write_scalar(w, "epoch_loss", 0, 1.7e9, 0.5), ==, 0);
        g_assert_cmpint(tw_tb_writer_close(w), ==, 0);
        g_free(run);
    }
    GtkWindow *win = open_window();
    tw_window_open_logdir(TW_WINDOW(win), logs);
    TwDashboardView *dashboard = dashboard_of(win);
    wait_until(two_runs, dashboard, 20, "the two runs in the Dashboard");

    GtkWidget *entry = menu_entry(win, "plain", "Open Model in Designer");
    g_assert_false(gtk_widget_get_sensitive(entry));
    gtk_popover_popdown(GTK_POPOVER(gtk_widget_get_ancestor(entry, GTK_TYPE_POPOVER)));
    entry = menu_entry(win, "keras", "Open Model in Designer");
    g_assert_true(gtk_widget_get_sensitive(entry));
    gtk_widget_activate(entry);
    drain();
    g_assert_cmpstr(tw_window_visible_view(TW_WINDOW(win)), ==, "designer");
    TwModelDoc *doc = tw_window_doc(TW_WINDOW(win)), *reference = tw_model_doc_new();
    g_assert_true(tw_model_doc_load(reference, path, NULL));
    g_assert_null(tw_model_doc_path(doc)); /* no file: Save asks where */
    g_assert_nonnull(tw_model_doc_model(doc));
    g_assert_cmpint(tw_model_doc_n_layers(doc), ==, tw_model_doc_n_layers(reference));
    char *opened = tw_model_doc_to_json(doc), *expected = tw_model_doc_to_json(reference);
    g_assert_cmpstr(opened, ==, expected);
    g_free(opened);
    g_free(expected);
    g_object_unref(reference);
    gtk_window_destroy(win);
    drain();
    scratch_remove_tree(dir);
    g_free(logs);
    g_free(dir);
    g_free(model);
    g_free(path);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    /* The window follows a directory into a database under the cache: the
     * suite's own home for it, the recent files and settings. */
    char *home = g_dir_make_tmp("twb-ui-logdir-home-XXXXXX", NULL);
    g_setenv("XDG_DATA_HOME", home, TRUE);
    g_setenv("XDG_CONFIG_HOME", home, TRUE);
    g_setenv("XDG_CACHE_HOME", home, TRUE);
    g_setenv("GTK_A11Y", "none", TRUE);
    g_setenv("GSETTINGS_BACKEND", "memory", TRUE); /* the file chooser's settings: no dconf under Xvfb */
    if (!twb_application_can_open_windows())
        g_error("no display: run under xvfb-run (meson test --suite gui does)");
    g_set_application_name("Tensor Workbench");
    app = twb_application_new(G_APPLICATION_NON_UNIQUE);
    g_assert_true(g_application_register(G_APPLICATION(app), NULL, NULL));
    g_test_add_func("/ui/logdir/option", test_option);
    g_test_add_func("/ui/logdir/open-action", test_open_action);
    g_test_add_func("/ui/logdir/live-python-writer", test_live_python_writer);
    g_test_add_func("/ui/logdir/open-run-model", test_open_run_model);
    int status = g_test_run();
    g_object_unref(app);
    scratch_remove_tree(home);
    g_free(home);
    return status;
}
