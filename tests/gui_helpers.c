#include "gui_helpers.h"

#include "dashboard_view.h"
#include "scratch_tree.h"

gboolean timed_out(gpointer data)
{
    *(gboolean *)data = TRUE;
    return G_SOURCE_REMOVE;
}

void wait_until(gboolean (*cond)(gpointer), gpointer data, double seconds, const char *what)
{
    gboolean expired = FALSE;
    guint timer = g_timeout_add((guint)(seconds * 1000), timed_out, &expired);
    while (!cond(data) && !expired)
        g_main_context_iteration(NULL, TRUE);
    if (expired)
        g_error("waited %.0f s for %s", seconds, what);
    g_source_remove(timer);
}

static gboolean wake(gpointer data)
{
    return G_SOURCE_CONTINUE;
}

gboolean wait_polled(GSourceFunc cond, gpointer data, double seconds)
{
    guint ticker = g_timeout_add(10, wake, NULL);
    gint64 end = g_get_monotonic_time() + (gint64)(seconds * G_USEC_PER_SEC);
    while (!cond(data) && g_get_monotonic_time() < end)
        g_main_context_iteration(NULL, TRUE);
    g_source_remove(ticker);
    return cond(data);
}

void drain(void)
{
    while (g_main_context_iteration(NULL, FALSE))
        ;
}

void must(gboolean ok, GError *error)
{
    g_assert_no_error(error);
    g_assert_true(ok);
}

void spin(double seconds)
{
    gboolean expired = FALSE;
    g_timeout_add((guint)(seconds * 1000), timed_out, &expired);
    while (!expired)
        g_main_context_iteration(NULL, TRUE);
}

void collect_class(GtkWidget *root, const char *css_class, GPtrArray *out)
{
    if (gtk_widget_has_css_class(root, css_class))
        g_ptr_array_add(out, root);
    for (GtkWidget *c = gtk_widget_get_first_child(root); c; c = gtk_widget_get_next_sibling(c))
        collect_class(c, css_class, out);
}

GtkWidget *titlebar_find(GtkWindow *window, gboolean (*match)(GtkWidget *widget, gconstpointer data),
                         gconstpointer data)
{
    GtkWidget *found = widget_find(gtk_window_get_titlebar(window), match, data);
    g_assert_nonnull(found);
    return found;
}

static gboolean has_action(GtkWidget *widget, gconstpointer action)
{
    return GTK_IS_BUTTON(widget) && !g_strcmp0(gtk_actionable_get_action_name(GTK_ACTIONABLE(widget)), action);
}

GtkWidget *titlebar_button(GtkWindow *window, const char *action)
{
    return titlebar_find(window, has_action, action);
}

void designer_window_open(int width, int height, TwModelDoc **doc, GtkWidget **window, TwDesignerView **view)
{
    *doc = tw_model_doc_new();
    *window = gtk_window_new();
    gtk_window_set_default_size(GTK_WINDOW(*window), width, height);
    *view = TW_DESIGNER_VIEW(tw_designer_view_new(*doc));
    gtk_window_set_child(GTK_WINDOW(*window), GTK_WIDGET(*view));
    gtk_window_present(GTK_WINDOW(*window));
    drain();
}

void designer_window_close(GtkWidget *window, TwModelDoc *doc)
{
    gtk_window_destroy(GTK_WINDOW(window));
    drain();
    g_object_unref(doc);
}

char *scratch_logdb(const char *dir_template, char **dir)
{
    GError *error = NULL;
    *dir = g_dir_make_tmp(dir_template, &error);
    g_assert_no_error(error);
    return g_build_filename(*dir, "runs.db", NULL);
}

void scratch_close(GtkWidget *window, char *dir, char *logdb)
{
    if (window)
        gtk_window_destroy(GTK_WINDOW(window));
    drain();
    scratch_remove_tree(dir);
    g_free(dir);
    g_free(logdb);
}

void stored_run(const char *logdb, const char *name, tw_run_info *run)
{
    tw_run_store *store = tw_run_store_open(logdb, TW_STORE_READ_ONLY);
    g_assert_nonnull(store);
    g_assert_cmpint(tw_run_store_get_run(store, name, run), ==, 0);
    tw_run_store_close(store);
}

gint64 run_id_of(const char *logdb, const char *name)
{
    tw_run_info run;
    stored_run(logdb, name, &run);
    gint64 id = run.id;
    tw_run_info_clear(&run);
    return id;
}

const char *const spirals_model =
    "{\"class_name\": \"Sequential\", \"config\": {\"name\": \"spiral_mlp\", \"layers\": ["
    "{\"class_name\": \"InputLayer\", \"config\": {\"batch_input_shape\": [null, 2], \"name\": \"input\"}},"
    "{\"class_name\": \"Dense\", \"config\": {\"name\": \"hidden\", \"units\": 16, \"activation\": \"relu\"}},"
    "{\"class_name\": \"Dense\", \"config\": {\"name\": \"out\", \"units\": 2, \"activation\": \"softmax\"}}]}}";

const char *const invalid_model =
    "{\"class_name\": \"Sequential\", \"config\": {\"name\": \"bad\", \"layers\": ["
    "{\"class_name\": \"InputLayer\", \"config\": {\"batch_input_shape\": [null, 28, 28, 1], \"name\": \"input\"}},"
    "{\"class_name\": \"Flatten\", \"config\": {\"name\": \"flatten\"}},"
    "{\"class_name\": \"Dense\", \"config\": {\"name\": \"dense\", \"units\": 4}},"
    "{\"class_name\": \"Conv2D\", \"config\": {\"name\": \"conv\", \"filters\": 2, \"kernel_size\": [3, 3]}}]}}";

TwWindow *train_window_open(GtkApplication *app, const char *model_json, const char *model_path,
                            void (*attach)(TwWindow *), const char *logdb)
{
    TwModelDoc *doc = tw_model_doc_new();
    GError *error = NULL;
    gboolean ok = model_path ? tw_model_doc_load(doc, model_path, &error)
                             : tw_model_doc_load_json(doc, model_json, "spirals.json", &error);
    must(ok, error);
    TwWindow *window = tw_window_new(app, doc);
    g_object_unref(doc);
    attach(window);
    g_object_set(tw_window_train_panel(window), "logdb", logdb, NULL);
    gtk_window_present(GTK_WINDOW(window));
    return window;
}

GtkApplication *train_suite_start(const char *home_template, const char *app_id, char **home)
{
    *home = g_dir_make_tmp(home_template, NULL);
    g_assert_nonnull(*home);
    char *config = g_build_filename(*home, "config", NULL), *data = g_build_filename(*home, "data", NULL);
    g_setenv("XDG_CONFIG_HOME", config, TRUE);
    g_setenv("XDG_DATA_HOME", data, TRUE);
    g_free(config);
    g_free(data);
    g_setenv("GSETTINGS_BACKEND", "memory", TRUE); /* the file chooser's own settings: no dconf under Xvfb */
    g_setenv("GTK_A11Y", "none", TRUE);            /* no accessibility bus under Xvfb */
    /* Under Xvfb GTK's GL renderer runs on Mesa's software rasterizer, whose
     * frames alone take 12-54 ms with nothing training (measured); Cairo
     * draws the same frames in 5-6 ms, so the gaps measured are the app's. */
    g_setenv("GSK_RENDERER", "cairo", FALSE);
    if (!gtk_init_check()) {
        g_test_message("no display: run under xvfb-run (meson test --suite gui does)");
        train_suite_finish(0, NULL, *home);
        return NULL;
    }
    GtkApplication *app = gtk_application_new(app_id, G_APPLICATION_NON_UNIQUE);
    g_assert_true(g_application_register(G_APPLICATION(app), NULL, NULL));
    return app;
}

int train_suite_finish(int rc, GtkApplication *app, char *home)
{
    g_clear_object(&app);
    scratch_remove_tree(home);
    g_free(home);
    return rc;
}

static gboolean dashboard_ready(gpointer dashboard)
{
    return tw_dashboard_view_ready(dashboard);
}

GtkWidget *dashboard_window_open(const char *logdb, const char *tab, GtkWidget **dashboard)
{
    GtkWidget *window = gtk_window_new();
    gtk_window_set_default_size(GTK_WINDOW(window), 1280, 800);
    *dashboard = tw_dashboard_view_new(logdb);
    gtk_window_set_child(GTK_WINDOW(window), *dashboard);
    gtk_window_present(GTK_WINDOW(window));
    tw_dashboard_view_show_tab(TW_DASHBOARD_VIEW(*dashboard), tab);
    wait_until(dashboard_ready, *dashboard, 10, "the dashboard's first data");
    return window;
}
