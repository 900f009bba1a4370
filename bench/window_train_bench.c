/* twb-window-train-bench: training from the window against `twb train`
 * (issue 12: the window, with the Dashboard drawing live, reaches at least
 * 80% of the CLI's samples/s). bench/run window_train runs the CLI with
 * `twb train` and the window with this program, in turn, and compares the
 * figure this program computes for both from the run database.
 *
 *   twb-window-train-bench --window MODEL.json --logdb DB [--epochs N]
 *       opens the workbench window as `twb --logdb DB MODEL.json` does (the
 *       application, its training controller, the renderer twb picks),
 *       sets the training panel's epochs, clicks Train, shows the
 *       Dashboard (its charts follow the run live) and waits for the run
 *       to end; then prints the run's figure as below. Needs a display:
 *       bench/run runs it under xvfb-run.
 *   twb-window-train-bench --measure DB
 *       prints the figure of the newest run in DB:
 *
 *   samples_per_second=X run=NAME steps=N
 *
 * The figure is the same for both sides: train/loss's wall times between
 * the first logged step at or after SKIP_STEPS (start-up and the data's
 * first load left out) and the last logged step, times the batch size
 * (`batch_size` of the run's settings). */
#include <glib/gstdio.h>
#include <gtk/gtk.h>
#include <json-glib/json-glib.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tw/engine.h>
#include <tw/run_store.h>

#include "application.h"
#include "renderer_choice.h"
#include "train_panel.h"
#include "scratch_tree.h"
#include "widget_tree.h"

#define SKIP_STEPS 50
#define GIVE_UP_S 3600.0

static int fail(const char *what)
{
    fprintf(stderr, "twb-window-train-bench: %s\n", what);
    return 1;
}

static int64_t batch_size_of(const tw_run_info *run)
{
    if (!run->hparams_json)
        return -1;
    JsonParser *parser = json_parser_new();
    int64_t batch = -1;
    if (json_parser_load_from_data(parser, run->hparams_json, -1, NULL)) {
        JsonNode *root = json_parser_get_root(parser);
        if (JSON_NODE_HOLDS_OBJECT(root) && json_object_has_member(json_node_get_object(root), "batch_size"))
            batch = json_object_get_int_member(json_node_get_object(root), "batch_size");
    }
    g_object_unref(parser);
    return batch;
}

/* The newest run's samples/s, as the header comment says. */
static int measure(const char *logdb)
{
    tw_run_store *store = tw_run_store_open(logdb, TW_STORE_READ_ONLY);
    if (!store)
        return fail(tw_last_error());
    tw_run_info *runs = NULL;
    int n = 0;
    int rc = 1;
    if (tw_run_store_list_runs(store, &runs, &n) < 0 || n == 0) {
        fail(n == 0 ? "no run in the database" : tw_last_error());
        goto out;
    }
    const tw_run_info *run = &runs[n - 1];
    int64_t batch = batch_size_of(run);
    int64_t tag = tw_run_store_find_tag(store, run->id, "train/loss");
    tw_scalar_point *points = NULL;
    int64_t np = 0;
    tw_series_cursor cursor = {0};
    if (batch < 1 || tag < 0 || tw_run_store_read_scalars(store, tag, &cursor, 0, &points, &np) < 0) {
        fail("the newest run has no batch_size setting or no train/loss series");
        goto out;
    }
    int64_t first = 0;
    while (first < np && points[first].step < SKIP_STEPS)
        first++;
    if (np - first < 2) {
        fail("the run logged too few steps to measure (train for longer)");
    } else {
        const tw_scalar_point *a = &points[first], *b = &points[np - 1];
        printf("samples_per_second=%.1f run=%s steps=%" PRId64 "\n",
               (double)(b->step - a->step) * (double)batch / (b->wall_time - a->wall_time), run->name,
               b->step - a->step);
        rc = 0;
    }
    free(points);
out:
    tw_run_info_free(runs, n);
    tw_run_store_close(store);
    return rc;
}

static gboolean wait_until(gboolean (*cond)(GtkWidget *), GtkWidget *w)
{
    gint64 end = g_get_monotonic_time() + (gint64)(GIVE_UP_S * 1e6);
    while (!cond(w)) {
        if (g_get_monotonic_time() > end)
            return FALSE;
        g_main_context_iteration(NULL, TRUE);
    }
    return TRUE;
}

static gboolean sensitive(GtkWidget *w)
{
    return gtk_widget_is_sensitive(w);
}

static gboolean not_sensitive(GtkWidget *w)
{
    return !gtk_widget_is_sensitive(w);
}

static int train_in_window(const char *model, const char *logdb, int epochs)
{
    /* Settings of the window's own (the panel remembers its database) go
     * to a folder of this run, not the user's. */
    char *home = g_dir_make_tmp("twb-window-train-XXXXXX", NULL);
    if (!home)
        return fail("cannot make a temporary folder");
    g_setenv("XDG_CONFIG_HOME", home, TRUE);
    g_setenv("XDG_DATA_HOME", home, TRUE);
    g_setenv("GSETTINGS_BACKEND", "memory", TRUE);
    if (!twb_application_can_open_windows())
        return 1;
    twb_choose_renderer();
    TwbApplication *app = twb_application_new(G_APPLICATION_NON_UNIQUE);
    if (!g_application_register(G_APPLICATION(app), NULL, NULL))
        return fail("cannot register the application");
    TwWindow *win = twb_application_new_window(app, model);
    tw_window_set_logdb(win, logdb);
    gtk_window_set_default_size(GTK_WINDOW(win), 1280, 800);
    gtk_window_present(GTK_WINDOW(win));
    GtkWidget *panel = GTK_WIDGET(tw_window_train_panel(win));
    GtkWidget *train = find_named(panel, "train"), *epochs_spin = find_named(panel, "epochs");
    GtkWidget *stop = find_named(panel, "stop");
    if (!train || !epochs_spin || !stop)
        return fail("the training panel has no train, stop or epochs widget");
    gtk_spin_button_set_value(GTK_SPIN_BUTTON(epochs_spin), epochs);
    /* Train turns on once the data is checked against the model. */
    if (!wait_until(sensitive, train))
        return fail("Train never turned on (does the model fit Fashion-MNIST?)");
    g_signal_emit_by_name(train, "clicked");
    tw_window_show_view(win, "dashboard");
    if (!wait_until(sensitive, stop) || !wait_until(not_sensitive, stop))
        return fail("the run did not end");
    gtk_window_destroy(GTK_WINDOW(win));
    while (g_main_context_iteration(NULL, FALSE))
        ;
    g_object_unref(app);
    scratch_remove_tree(home); /* the settings the window wrote */
    g_free(home);
    return measure(logdb);
}

int main(int argc, char **argv)
{
    const char *model = NULL, *logdb = NULL, *measured = NULL;
    int epochs = 1;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--window"))
            model = argv[i + 1];
        else if (!strcmp(argv[i], "--logdb"))
            logdb = argv[i + 1];
        else if (!strcmp(argv[i], "--epochs"))
            epochs = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--measure"))
            measured = argv[i + 1];
        else {
            fprintf(stderr, "twb-window-train-bench: unknown option '%s'\n", argv[i]);
            return 2;
        }
    }
    if (measured)
        return measure(measured);
    if (!model || !logdb || epochs < 1) {
        fputs("usage: twb-window-train-bench --window MODEL.json --logdb DB [--epochs N] | --measure DB\n", stderr);
        return 2;
    }
    return train_in_window(model, logdb, epochs);
}
