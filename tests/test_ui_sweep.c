/* Sweeps from the window (app/sweep_queue.c, ui/sweep_dialog.c): the
 * training panel's Sweep… opens the dialog; a 2×2 grid of learning rate and
 * batch size runs its four trials one after another on the training worker,
 * each a finished run in the database tagged with the sweep and trained
 * with its values; a bad value is refused with a message naming the
 * setting; in a second sweep a pending trial is cancelled, then Cancel All
 * stops the running one and drops the rest; random draws from a range; the
 * window closed mid-sweep; a failing trial (a diverging loss) shown failed
 * with its reason while the next one runs; the median stopping rule; trials at once as
 * processes, on the panel's device (the simulated one of TW_SIM_DEVICES=1)
 * with their checkpoints where the worker writes its runs'; a layer's
 * property swept, the HParams view showing it as a column; the layers of
 * nested models listed by their paths. Runs under
 * Xvfb.
 *
 * TWB_SWEEP_LINGER=S keeps the window up S seconds while the second sweep
 * runs, for a screenshot of the queue (xvfb-run + import). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <glib/gstdio.h>
#include <json-glib/json-glib.h>

#include <gtk/gtk.h>

#include <tw/error.h>
#include <tw/model_file.h>
#include <tw/run_store.h>

#include "dashboard_view.h"
#include "gui_helpers.h"
#include "scratch_tree.h"
#include "hparams_table.h"
#include "hparams_view.h"
#include "sweep_dialog.h"
#include "sweep_processes.h"
#include "sweep_queue.h"
#include "sweep_spec.h"
#include "sweep_trial.h"
#include "train_controller.h"
#include "train_session.h"
#include "window.h"

static GtkApplication *app;

enum { DATA_FASHION_MNIST, DATA_SPIRALS };
/* Trials still running when a test cancels them or closes the window:
 * minutes of one-sample steps. (1000 epochs at the panel's batch size
 * take about 1 s of a tiny model on one thread: a trial could finish
 * before the test looked at it.) */
#define LONG_BATCH "1"
#define LONG_EPOCHS "10000"

typedef struct {
    TwWindow *window;
    TwTrainPanel *panel;
    TwSweepDialog *dialog;
    char *dir, *logdb;
} fixture;

typedef gboolean (*condition)(fixture *f);

static void wait_for(fixture *f, condition cond, double timeout, const char *what)
{
    if (!wait_polled((GSourceFunc)cond, f, timeout))
        g_error("timed out after %.0f s waiting for %s", timeout, what);
}

static GtkWidget *named(GtkWidget *root, const char *name)
{
    GtkWidget *w = find_named(root, name);
    g_assert_nonnull(w);
    return w;
}

static gboolean train_ready(fixture *f)
{
    return gtk_widget_is_sensitive(named(GTK_WIDGET(f->panel), "train"));
}

static void attach(TwWindow *window)
{
    twb_train_controller_attach(window);
    twb_sweep_queue_attach(window);
}

static void fixture_open_model(fixture *f, const char *model)
{
    f->logdb = scratch_logdb("twb-ui-sweep-XXXXXX", &f->dir);
    f->window = train_window_open(app, model, NULL, attach, f->logdb);
    f->panel = tw_window_train_panel(f->window);
    gtk_drop_down_set_selected(GTK_DROP_DOWN(named(GTK_WIDGET(f->panel), "dataset")), DATA_SPIRALS);
    gtk_spin_button_set_value(GTK_SPIN_BUTTON(named(GTK_WIDGET(f->panel), "epochs")), 1);
    wait_for(f, train_ready, 120, "the spirals to load and Train to turn on");
    /* the panel's Sweep… button, as a person would */
    GtkWidget *sweep = named(GTK_WIDGET(f->panel), "sweep");
    g_assert_true(gtk_widget_is_sensitive(sweep));
    g_signal_emit_by_name(sweep, "clicked");
    f->dialog = TW_SWEEP_DIALOG(twb_sweep_queue_dialog(f->window));
    g_assert_true(gtk_widget_get_visible(GTK_WIDGET(f->dialog)));
}

static void fixture_open(fixture *f)
{
    fixture_open_model(f, spirals_model);
}

static void fixture_close(fixture *f)
{
    scratch_close(GTK_WIDGET(f->window), f->dir, f->logdb);
}

/* ---- the dialog ------------------------------------------------------------ */
static void set_field(fixture *f, const char *name, const char *text)
{
    gtk_editable_set_text(GTK_EDITABLE(named(GTK_WIDGET(f->dialog), name)), text);
}

static void click(fixture *f, const char *name)
{
    GtkWidget *button = named(GTK_WIDGET(f->dialog), name);
    g_assert_true(gtk_widget_is_sensitive(button));
    g_signal_emit_by_name(button, "clicked");
}

static const char *error_text(fixture *f)
{
    GtkWidget *label = named(GTK_WIDGET(f->dialog), "sweep-error");
    return gtk_widget_get_visible(label) ? gtk_label_get_text(GTK_LABEL(label)) : NULL;
}

static const char *counts_text(fixture *f)
{
    return gtk_label_get_text(GTK_LABEL(named(GTK_WIDGET(f->dialog), "sweep-counts")));
}

/* The queue's row of that run: its status label's text and its Cancel. */
static GtkWidget *queue_row(fixture *f, int index)
{
    GtkListBoxRow *row = gtk_list_box_get_row_at_index(GTK_LIST_BOX(named(GTK_WIDGET(f->dialog), "sweep-queue")), index);
    g_assert_nonnull(row);
    return GTK_WIDGET(row);
}

static const char *row_status(fixture *f, int index)
{
    return gtk_label_get_text(GTK_LABEL(named(queue_row(f, index), "status")));
}

static int queue_length(fixture *f)
{
    GtkListBox *list = GTK_LIST_BOX(named(GTK_WIDGET(f->dialog), "sweep-queue"));
    int n = 0;
    while (gtk_list_box_get_row_at_index(list, n))
        n++;
    return n;
}

/* ---- the run database ------------------------------------------------------ */
/* Runs tagged with the sweep, and of them those with the status. */
static int tagged_runs(fixture *f, const char *sweep, tw_run_status status, int *with_status)
{
    *with_status = 0;
    if (!g_file_test(f->logdb, G_FILE_TEST_EXISTS))
        return 0;
    tw_run_store *store = tw_run_store_open(f->logdb, TW_STORE_READ_ONLY);
    if (!store) { /* the first trial's writer is creating it */
        g_test_message("%s", tw_last_error());
        return 0;
    }
    tw_run_info *runs;
    int n, tagged = 0;
    g_assert_cmpint(tw_run_store_list_runs(store, &runs, &n), ==, 0);
    for (int i = 0; i < n; i++)
        if (!g_strcmp0(runs[i].sweep, sweep)) {
            tagged++;
            *with_status += runs[i].status == status;
        }
    tw_run_info_free(runs, n);
    tw_run_store_close(store);
    return tagged;
}

static gboolean grid_finished(fixture *f)
{
    int finished;
    return tagged_runs(f, "grid", TW_RUN_FINISHED, &finished) == 4 && finished == 4;
}

/* The run's settings as stored: "learning_rate" and "batch_size". */
static void run_settings(fixture *f, const char *run_name, double *learning_rate, gint64 *batch_size)
{
    tw_run_store *store = tw_run_store_open(f->logdb, TW_STORE_READ_ONLY);
    tw_run_info run;
    g_assert_cmpint(tw_run_store_get_run(store, run_name, &run), ==, 0);
    g_assert_nonnull(run.hparams_json);
    JsonNode *node = json_from_string(run.hparams_json, NULL);
    g_assert_nonnull(node);
    JsonObject *o = json_node_get_object(node);
    *learning_rate = json_object_get_double_member(o, "learning_rate");
    *batch_size = json_object_get_int_member(o, "batch_size");
    json_node_unref(node);
    tw_run_info_clear(&run);
    tw_run_store_close(store);
}

/* The run's stored settings (hparams_json) and model (model_json); g_free both. */
static void run_json(fixture *f, const char *run_name, char **hparams, char **model)
{
    tw_run_store *store = tw_run_store_open(f->logdb, TW_STORE_READ_ONLY);
    tw_run_info run;
    g_assert_cmpint(tw_run_store_get_run(store, run_name, &run), ==, 0);
    *hparams = g_strdup(run.hparams_json);
    *model = g_strdup(run.model_json);
    tw_run_info_clear(&run);
    tw_run_store_close(store);
    g_assert_nonnull(*hparams);
    g_assert_nonnull(*model);
}

/* A number of a JSON object (NAN when absent). */
static double json_member(const char *json, const char *key)
{
    JsonNode *node = json_from_string(json, NULL);
    g_assert_nonnull(node);
    JsonObject *o = json_node_get_object(node);
    double v = json_object_has_member(o, key) ? json_object_get_double_member(o, key) : NAN;
    json_node_unref(node);
    return v;
}

/* The stored model's "hidden" layer's units (spirals_model's Dense). */
static double hidden_units(const char *model_json)
{
    JsonNode *node = json_from_string(model_json, NULL);
    JsonArray *layers = json_object_get_array_member(
        json_object_get_object_member(json_node_get_object(node), "config"), "layers");
    double units = NAN;
    for (guint i = 0; i < json_array_get_length(layers); i++) {
        JsonObject *config = json_object_get_object_member(json_array_get_object_element(layers, i), "config");
        if (!g_strcmp0(json_object_get_string_member(config, "name"), "hidden"))
            units = json_object_get_double_member(config, "units");
    }
    json_node_unref(node);
    return units;
}

/* One of the run's final metrics as stored (NAN when absent). */
static double run_metric(fixture *f, const char *run_name, const char *key)
{
    tw_run_store *store = tw_run_store_open(f->logdb, TW_STORE_READ_ONLY);
    tw_run_info run;
    g_assert_cmpint(tw_run_store_get_run(store, run_name, &run), ==, 0);
    double value = NAN;
    JsonNode *node = run.metrics_json ? json_from_string(run.metrics_json, NULL) : NULL;
    if (node && JSON_NODE_HOLDS_OBJECT(node) && json_object_has_member(json_node_get_object(node), key))
        value = json_object_get_double_member(json_node_get_object(node), key);
    if (node)
        json_node_unref(node);
    tw_run_info_clear(&run);
    tw_run_store_close(store);
    return value;
}

/* The first widget of the type under root, or NULL. */
static GtkWidget *find_of_type(GtkWidget *root, GType type)
{
    if (G_TYPE_CHECK_INSTANCE_TYPE(root, type))
        return root;
    for (GtkWidget *c = gtk_widget_get_first_child(root); c; c = gtk_widget_get_next_sibling(c)) {
        GtkWidget *found = find_of_type(c, type);
        if (found)
            return found;
    }
    return NULL;
}

static gboolean hparams_has_grid(fixture *f)
{
    GtkWidget *view = find_of_type(GTK_WIDGET(f->window), TW_TYPE_HPARAMS_VIEW);
    return view && tw_hparams_view_n_shown(TW_HPARAMS_VIEW(view)) == 4;
}

/* ---- tests ----------------------------------------------------------------- */
static gboolean second_running(fixture *f)
{
    return queue_length(f) == 7 && g_str_has_prefix(row_status(f, 4), "running");
}

static gboolean nothing_open(fixture *f)
{
    for (int i = 0; i < queue_length(f); i++)
        if (g_str_has_prefix(row_status(f, i), "pending") || g_str_has_prefix(row_status(f, i), "running"))
            return FALSE;
    return TRUE;
}

static void test_grid_then_cancel(void)
{
    fixture f;
    fixture_open(&f);
    g_assert_cmpstr(counts_text(&f), ==, "No trials yet");

    /* bad input: refused with the setting named, nothing queued */
    set_field(&f, "sweep-batch-size", "32,0");
    click(&f, "sweep-start");
    g_assert_nonnull(error_text(&f));
    g_assert_true(g_str_has_prefix(error_text(&f), "--batch-size: '0' is not a batch size"));
    g_assert_cmpint(queue_length(&f), ==, 0);

    /* 2×2: learning rate × batch size */
    set_field(&f, "sweep-learning-rate", "0.01,0.001");
    set_field(&f, "sweep-batch-size", "32,64");
    set_field(&f, "sweep-name", "grid");
    click(&f, "sweep-start");
    g_assert_null(error_text(&f));
    g_assert_cmpint(queue_length(&f), ==, 4);
    wait_for(&f, grid_finished, 240, "four finished runs tagged 'grid'");
    wait_for(&f, nothing_open, 30, "the queue to show the last trial's end");
    for (int i = 0; i < 4; i++) {
        g_assert_cmpstr(row_status(&f, i), ==, "finished");
        /* coloured by its class (resources/sweep.css) */
        g_assert_true(gtk_widget_has_css_class(named(queue_row(&f, i), "status"), "finished"));
    }
    g_assert_cmpstr(counts_text(&f), ==, "0 pending · 0 running · 4 finished · 0 failed");
    /* the grid's order, the last setting fastest, trained with its values */
    const double rates[] = {0.01, 0.01, 0.001, 0.001};
    const gint64 batches[] = {32, 64, 32, 64};
    for (int i = 0; i < 4; i++) {
        char *name = g_strdup_printf("grid-%d", i + 1);
        double lr;
        gint64 batch;
        run_settings(&f, name, &lr, &batch);
        g_assert_cmpfloat_with_epsilon(lr, rates[i], 1e-9);
        g_assert_cmpint(batch, ==, batches[i]);
        /* the result the CLI sweep stores for a trial (train_session.h):
         * the last epoch's logs and the test split's metrics */
        g_assert_false(isnan(run_metric(&f, name, "loss")));
        g_assert_false(isnan(run_metric(&f, name, "accuracy")));
        g_assert_cmpfloat(run_metric(&f, name, "test_loss"), >, 0);
        double accuracy = run_metric(&f, name, "test_accuracy");
        g_assert_cmpfloat(accuracy, >=, 0);
        g_assert_cmpfloat(accuracy, <=, 1);
        g_free(name);
    }

    /* the Dashboard's HParams tab shows the four runs, read from the database */
    tw_window_show_view(f.window, "dashboard");
    GtkWidget *dashboard = find_of_type(GTK_WIDGET(f.window), TW_TYPE_DASHBOARD_VIEW);
    g_assert_nonnull(dashboard);
    tw_dashboard_view_show_tab(TW_DASHBOARD_VIEW(dashboard), "hparams");
    wait_for(&f, hparams_has_grid, 30, "the HParams view to show the four trials");

    /* the same name again: refused before any trial is queued */
    click(&f, "sweep-start");
    g_assert_nonnull(error_text(&f));
    g_assert_nonnull(strstr(error_text(&f), "'grid-1' exists already"));
    g_assert_cmpint(queue_length(&f), ==, 4);

    /* a second sweep of long trials: cancel a pending one, then all */
    set_field(&f, "sweep-learning-rate", "0.01,0.02,0.03");
    set_field(&f, "sweep-batch-size", LONG_BATCH);
    set_field(&f, "sweep-epochs", LONG_EPOCHS);
    set_field(&f, "sweep-name", "second");
    click(&f, "sweep-start");
    g_assert_null(error_text(&f));
    wait_for(&f, second_running, 60, "the second sweep's first trial to run");
    g_assert_true(g_str_has_prefix(row_status(&f, 5), "pending"));
    g_signal_emit_by_name(named(queue_row(&f, 5), "cancel"), "clicked");
    g_assert_cmpstr(row_status(&f, 5), ==, "cancelled");
    g_assert_false(gtk_widget_get_sensitive(named(queue_row(&f, 5), "cancel")));
    const char *linger = g_getenv("TWB_SWEEP_LINGER");
    if (linger)
        spin(atof(linger));
    click(&f, "sweep-cancel-all");
    wait_for(&f, nothing_open, 60, "Cancel All to stop the running trial");
    g_assert_cmpstr(row_status(&f, 4), ==, "stopped: cancelled");
    g_assert_true(gtk_widget_has_css_class(named(queue_row(&f, 4), "status"), "stopped"));
    g_assert_false(gtk_widget_has_css_class(named(queue_row(&f, 4), "status"), "running"));
    g_assert_cmpstr(row_status(&f, 6), ==, "cancelled");
    g_assert_cmpstr(counts_text(&f), ==, "0 pending · 0 running · 4 finished · 0 failed · 1 stopped · 2 cancelled");
    /* in the database: the stopped trial, tagged; the cancelled ones never ran */
    int stopped;
    g_assert_cmpint(tagged_runs(&f, "second", TW_RUN_STOPPED, &stopped), ==, 1);
    g_assert_cmpint(stopped, ==, 1);
    fixture_close(&f);
}

static gboolean first_running(fixture *f)
{
    return queue_length(f) == 3 && g_str_has_prefix(row_status(f, 0), "running");
}

/* Random search over a range, and the window closed while a trial runs:
 * it stops (its run "stopped", tagged), the others never start. */
static void test_random_then_close(void)
{
    fixture f;
    fixture_open(&f);
    /* a range needs random search */
    set_field(&f, "sweep-learning-rate", "0.001:0.01");
    set_field(&f, "sweep-batch-size", LONG_BATCH);
    set_field(&f, "sweep-epochs", LONG_EPOCHS);
    set_field(&f, "sweep-name", "drawn");
    click(&f, "sweep-start");
    g_assert_nonnull(error_text(&f));
    g_assert_true(g_str_has_prefix(error_text(&f), "--learning-rate: a range (0.001:0.01) needs --random"));
    g_assert_cmpint(queue_length(&f), ==, 0);

    gtk_drop_down_set_selected(GTK_DROP_DOWN(named(GTK_WIDGET(f.dialog), "sweep-search")), 1);
    g_assert_true(gtk_widget_get_sensitive(named(GTK_WIDGET(f.dialog), "sweep-trials")));
    gtk_spin_button_set_value(GTK_SPIN_BUTTON(named(GTK_WIDGET(f.dialog), "sweep-trials")), 3);
    click(&f, "sweep-start");
    g_assert_null(error_text(&f));
    wait_for(&f, first_running, 60, "the first drawn trial to run");
    for (int i = 0; i < 3; i++) {
        /* "learning_rate=0.00347": a draw inside the range */
        GtkListBoxRow *row = GTK_LIST_BOX_ROW(queue_row(&f, i));
        GtkWidget *box = gtk_list_box_row_get_child(row);
        GtkWidget *values = gtk_widget_get_next_sibling(gtk_widget_get_first_child(box));
        const char *text = gtk_label_get_text(GTK_LABEL(values));
        g_assert_true(g_str_has_prefix(text, "learning_rate="));
        double lr = g_ascii_strtod(text + strlen("learning_rate="), NULL);
        g_assert_cmpfloat(lr, >=, 0.001 * (1 - 1e-3));
        g_assert_cmpfloat(lr, <=, 0.01 * (1 + 1e-3));
    }
    gtk_window_destroy(GTK_WINDOW(f.window));
    drain();
    int stopped;
    g_assert_cmpint(tagged_runs(&f, "drawn", TW_RUN_STOPPED, &stopped), ==, 1);
    g_assert_cmpint(stopped, ==, 1);
    scratch_close(NULL, f.dir, f.logdb);
}

static gboolean after_finished(fixture *f)
{
    int finished;
    return tagged_runs(f, "after", TW_RUN_FINISHED, &finished) == 1 && finished == 1;
}

/* A sweep started while the panel's own Train runs waits for it. */
static void test_after_panel_run(void)
{
    fixture f;
    fixture_open(&f);
    gtk_spin_button_set_value(GTK_SPIN_BUTTON(named(GTK_WIDGET(f.panel), "epochs")), 3);
    g_signal_emit_by_name(named(GTK_WIDGET(f.panel), "train"), "clicked");
    g_assert_true(twb_train_controller_busy(f.window));
    set_field(&f, "sweep-learning-rate", "0.01");
    set_field(&f, "sweep-epochs", "1");
    set_field(&f, "sweep-name", "after");
    click(&f, "sweep-start");
    g_assert_cmpstr(error_text(&f), ==, NULL);
    g_assert_cmpstr(row_status(&f, 0), ==, "pending");
    wait_for(&f, after_finished, 120, "the trial to run after the panel's run");
    fixture_close(&f);
}

static gboolean diverged_done(fixture *f)
{
    int finished, failed;
    return tagged_runs(f, "diverge", TW_RUN_FINISHED, &finished) == 2 && finished == 1 &&
           tagged_runs(f, "diverge", TW_RUN_FAILED, &failed) == 2 && failed == 1;
}

/* A trial that fails (learning rate 1000 with Adam: the loss diverges) is
 * "failed" in the queue with the trainer's reason, its run failed with it,
 * and the next trial still runs and finishes. */
static void test_failing_trial(void)
{
    /* logits out (no softmax to saturate): a learning rate of 1000 blows the loss up */
    static const char logits_model[] =
        "{\"class_name\": \"Sequential\", \"config\": {\"name\": \"spiral_logits\", \"layers\": ["
        "{\"class_name\": \"Dense\", \"config\": {\"name\": \"hidden\", \"units\": 64, \"activation\": \"relu\","
        " \"batch_input_shape\": [null, 2]}},"
        "{\"class_name\": \"Dense\", \"config\": {\"name\": \"out\", \"units\": 2}}]}}";
    fixture f;
    fixture_open_model(&f, logits_model);
    set_field(&f, "sweep-learning-rate", "1000,0.01");
    set_field(&f, "sweep-optimizer", "adam");
    set_field(&f, "sweep-seed", "1");
    set_field(&f, "sweep-epochs", "2");
    set_field(&f, "sweep-name", "diverge");
    click(&f, "sweep-start");
    g_assert_cmpstr(error_text(&f), ==, NULL);
    g_assert_cmpint(queue_length(&f), ==, 2);
    wait_for(&f, diverged_done, 120, "the diverging trial to fail and the next to finish");
    g_assert_true(g_str_has_prefix(row_status(&f, 0), "failed: "));
    g_assert_nonnull(strstr(row_status(&f, 0), "the loss diverged"));
    g_assert_cmpstr(row_status(&f, 1), ==, "finished");
    g_assert_cmpstr(counts_text(&f), ==, "0 pending · 0 running · 1 finished · 1 failed");
    double learning_rate;
    gint64 batch_size;
    run_settings(&f, "diverge-1", &learning_rate, &batch_size);
    g_assert_cmpfloat(learning_rate, ==, 1000);
    run_settings(&f, "diverge-2", &learning_rate, &batch_size);
    g_assert_cmpfloat(learning_rate, ==, 0.01);
    fixture_close(&f);
}

static gboolean median_done(fixture *f)
{
    int finished, stopped;
    return tagged_runs(f, "median", TW_RUN_FINISHED, &finished) == 3 &&
           tagged_runs(f, "median", TW_RUN_STOPPED, &stopped) == 3 && finished + stopped == 3 && nothing_open(f);
}

/* The run's notes (never NULL). */
static char *run_notes(fixture *f, const char *run_name)
{
    tw_run_store *store = tw_run_store_open(f->logdb, TW_STORE_READ_ONLY);
    tw_run_info run;
    g_assert_cmpint(tw_run_store_get_run(store, run_name, &run), ==, 0);
    char *notes = g_strdup(run.notes);
    tw_run_info_clear(&run);
    tw_run_store_close(store);
    return notes;
}

/* The dialog's median stopping rule, the CLI's (app/sweep_median.c): two
 * trials that learn, then one that cannot (a tiny rate, the same start):
 * after its first epoch its loss is above the others' running means, and
 * it stops — its row and its run's notes say why, and it is evaluated as a
 * finished trial is. */
static void test_median_stop(void)
{
    fixture f;
    fixture_open(&f);
    /* the rule watches the training loss then (the spirals' last tenth, the
     * validation split, is not a fair sample of them) */
    gtk_spin_button_set_value(GTK_SPIN_BUTTON(named(GTK_WIDGET(f.panel), "validation-split")), 0);
    set_field(&f, "sweep-learning-rate", "0.01,0.02,0.000001");
    set_field(&f, "sweep-epochs", "3");
    set_field(&f, "sweep-name", "median");
    GtkWidget *check = named(GTK_WIDGET(f.dialog), "sweep-median-stop");
    g_assert_false(gtk_check_button_get_active(GTK_CHECK_BUTTON(check)));
    gtk_check_button_set_active(GTK_CHECK_BUTTON(check), TRUE);
    click(&f, "sweep-start");
    g_assert_null(error_text(&f));
    wait_for(&f, median_done, 240, "the three trials of 'median' to end");
    g_assert_cmpstr(row_status(&f, 0), ==, "finished");
    g_assert_cmpstr(row_status(&f, 1), ==, "finished");
    const char *why = "stopped by the median stopping rule after epoch 1: best loss ";
    g_assert_true(g_str_has_prefix(row_status(&f, 2), "stopped: "));
    g_assert_true(g_str_has_prefix(row_status(&f, 2) + strlen("stopped: "), why));
    int stopped;
    g_assert_cmpint(tagged_runs(&f, "median", TW_RUN_STOPPED, &stopped), ==, 3);
    g_assert_cmpint(stopped, ==, 1);
    char *notes = run_notes(&f, "median-3");
    g_assert_true(g_str_has_prefix(notes, why));
    g_free(notes);
    g_assert_false(isnan(run_metric(&f, "median-3", "test_loss"))); /* evaluated all the same */
    fixture_close(&f);
}

static gboolean together_done(fixture *f)
{
    int finished;
    return tagged_runs(f, "together", TW_RUN_FINISHED, &finished) == 4 && finished == 4 && nothing_open(f);
}

/* Both running once their runs are in the database (SIGINT before the
 * run opens would stop a trial with no run to show it). */
static gboolean two_long_running(fixture *f)
{
    int running;
    return queue_length(f) == 7 && g_str_has_prefix(row_status(f, 4), "running") &&
           g_str_has_prefix(row_status(f, 5), "running") && tagged_runs(f, "long", TW_RUN_RUNNING, &running) == 2 &&
           running == 2;
}

/* The layer drop-down's choice by its text. */
static void choose(fixture *f, const char *name, const char *text)
{
    GtkDropDown *down = GTK_DROP_DOWN(named(GTK_WIDGET(f->dialog), name));
    GListModel *choices = gtk_drop_down_get_model(down);
    for (guint i = 0; i < g_list_model_get_n_items(choices); i++)
        if (!g_strcmp0(gtk_string_list_get_string(GTK_STRING_LIST(choices), i), text)) {
            gtk_drop_down_set_selected(down, i);
            return;
        }
    g_error("%s has no choice '%s'", name, text);
}

/* "At once" 2: the grid's four trials two at a time, each in a twb process
 * of its own (its run's pid is neither this process's nor another
 * trial's), tagged and trained with their values, with the result a
 * trial stores; the panel stays free meanwhile. As a trial on the worker,
 * each trains on the panel's device (sim:0: its run's settings say so)
 * with the dialog's layer property (the stored model's), and checkpoints
 * where the worker would (the file the run's menu evaluates from); the
 * trials cancelled while they run leave theirs too. */
static void test_at_once(void)
{
    fixture f;
    fixture_open(&f);
    gtk_drop_down_set_selected(GTK_DROP_DOWN(named(GTK_WIDGET(f.panel), "device")), 1);
    g_assert_cmpstr(tw_train_panel_settings(f.panel)->device, ==, "sim:0");
    set_field(&f, "sweep-learning-rate", "0.01,0.001");
    set_field(&f, "sweep-batch-size", "32,64");
    choose(&f, "sweep-layer", "hidden");
    choose(&f, "sweep-property", "units");
    set_field(&f, "sweep-layer-values", "8");
    set_field(&f, "sweep-name", "together");
    gtk_spin_button_set_value(GTK_SPIN_BUTTON(named(GTK_WIDGET(f.dialog), "sweep-parallel")), 2);
    click(&f, "sweep-start");
    g_assert_null(error_text(&f));
    g_assert_cmpint(queue_length(&f), ==, 4);
    g_assert_false(twb_train_controller_busy(f.window));
    wait_for(&f, together_done, 240, "four finished runs tagged 'together'");
    for (int i = 0; i < 4; i++)
        g_assert_cmpstr(row_status(&f, i), ==, "finished");
    const double rates[] = {0.01, 0.01, 0.001, 0.001};
    const gint64 batches[] = {32, 64, 32, 64};
    tw_run_store *store = tw_run_store_open(f.logdb, TW_STORE_READ_ONLY);
    gint64 pids[4];
    for (int i = 0; i < 4; i++) {
        char *name = g_strdup_printf("together-%d", i + 1);
        double lr;
        gint64 batch;
        run_settings(&f, name, &lr, &batch);
        g_assert_cmpfloat_with_epsilon(lr, rates[i], 1e-9);
        g_assert_cmpint(batch, ==, batches[i]);
        g_assert_cmpfloat(run_metric(&f, name, "test_loss"), >, 0);
        char *hparams, *model;
        run_json(&f, name, &hparams, &model);
        g_assert_nonnull(strstr(hparams, "\"device\":\"sim:0\""));
        g_assert_cmpfloat(json_member(hparams, "hidden.units"), ==, 8);
        g_assert_cmpfloat(hidden_units(model), ==, 8);
        g_free(hparams);
        g_free(model);
        char *checkpoint = twb_train_checkpoint_path(f.logdb, name);
        g_assert_true(g_file_test(checkpoint, G_FILE_TEST_IS_REGULAR));
        g_free(checkpoint);
        tw_run_info run;
        g_assert_cmpint(tw_run_store_get_run(store, name, &run), ==, 0);
        pids[i] = run.pid;
        g_assert_cmpint(pids[i], !=, getpid());
        for (int j = 0; j < i; j++)
            g_assert_cmpint(pids[i], !=, pids[j]);
        tw_run_info_clear(&run);
        g_free(name);
    }
    tw_run_store_close(store);

    /* long trials at once: Cancel All stops the two running (their runs
     * "stopped") and drops the third */
    set_field(&f, "sweep-learning-rate", "0.01,0.02,0.03");
    set_field(&f, "sweep-batch-size", LONG_BATCH);
    set_field(&f, "sweep-layer-values", "");
    set_field(&f, "sweep-epochs", LONG_EPOCHS);
    set_field(&f, "sweep-name", "long");
    click(&f, "sweep-start");
    g_assert_null(error_text(&f));
    wait_for(&f, two_long_running, 60, "two long trials to run");
    g_assert_cmpstr(row_status(&f, 6), ==, "pending");
    click(&f, "sweep-cancel-all");
    wait_for(&f, nothing_open, 60, "Cancel All to stop the running processes");
    g_assert_cmpstr(row_status(&f, 4), ==, "stopped: cancelled");
    g_assert_cmpstr(row_status(&f, 5), ==, "stopped: cancelled");
    g_assert_cmpstr(row_status(&f, 6), ==, "cancelled");
    int stopped;
    g_assert_cmpint(tagged_runs(&f, "long", TW_RUN_STOPPED, &stopped), ==, 2);
    g_assert_cmpint(stopped, ==, 2);
    for (int i = 1; i <= 2; i++) {
        char *name = g_strdup_printf("long-%d", i), *checkpoint = twb_train_checkpoint_path(f.logdb, name);
        g_assert_true(g_file_test(checkpoint, G_FILE_TEST_IS_REGULAR));
        g_free(checkpoint);
        g_free(name);
    }
    fixture_close(&f);
}

static gboolean layer_done(fixture *f)
{
    int finished;
    return tagged_runs(f, "layer", TW_RUN_FINISHED, &finished) == 2 && finished == 2 && nothing_open(f);
}

static gboolean hparams_has_layer_column(fixture *f)
{
    GtkWidget *view = find_of_type(GTK_WIDGET(f->window), TW_TYPE_HPARAMS_VIEW);
    const tw_hp_table *t = view ? tw_hparams_view_table(TW_HPARAMS_VIEW(view)) : NULL;
    return t && tw_hp_table_find_column(t, TW_HP_HPARAM, "hidden.units") >= 0 &&
           tw_hparams_view_n_shown(TW_HPARAMS_VIEW(view)) == 2;
}

/* The dialog's layer property: the designer's layers with numeric
 * properties, each with its own; a value the layer refuses is refused
 * naming it; two trials on the worker, each trained with its units (the
 * stored model) and the value a hyperparameter of the run, a numeric
 * column of the HParams view. */
static void test_layer_property(void)
{
    fixture f;
    fixture_open(&f);
    GtkDropDown *layer = GTK_DROP_DOWN(named(GTK_WIDGET(f.dialog), "sweep-layer"));
    GListModel *layers = gtk_drop_down_get_model(layer);
    g_assert_cmpstr(gtk_string_list_get_string(GTK_STRING_LIST(layers), 0), ==, "None");
    g_assert_false(gtk_widget_get_sensitive(named(GTK_WIDGET(f.dialog), "sweep-layer-values")));
    choose(&f, "sweep-layer", "out");
    choose(&f, "sweep-layer", "hidden");
    g_assert_true(gtk_widget_get_sensitive(named(GTK_WIDGET(f.dialog), "sweep-layer-values")));
    choose(&f, "sweep-property", "units");
    set_field(&f, "sweep-layer-values", "4,0");
    set_field(&f, "sweep-name", "layer");
    click(&f, "sweep-start");
    g_assert_cmpstr(error_text(&f), ==, "--set hidden.units: expected a positive integer, got 0");
    g_assert_cmpint(queue_length(&f), ==, 0);

    set_field(&f, "sweep-layer-values", "4,32");
    click(&f, "sweep-start");
    g_assert_null(error_text(&f));
    g_assert_cmpint(queue_length(&f), ==, 2);
    GtkWidget *box = gtk_list_box_row_get_child(GTK_LIST_BOX_ROW(queue_row(&f, 1)));
    GtkWidget *values = gtk_widget_get_next_sibling(gtk_widget_get_first_child(box));
    g_assert_cmpstr(gtk_label_get_text(GTK_LABEL(values)), ==, "hidden.units=32");
    wait_for(&f, layer_done, 240, "two finished runs tagged 'layer'");
    const double units[] = {4, 32};
    for (int i = 0; i < 2; i++) {
        char *name = g_strdup_printf("layer-%d", i + 1), *hparams, *model;
        run_json(&f, name, &hparams, &model);
        g_assert_cmpfloat(json_member(hparams, "hidden.units"), ==, units[i]);
        g_assert_cmpfloat(hidden_units(model), ==, units[i]);
        g_free(hparams);
        g_free(model);
        g_free(name);
    }
    /* the designer's model keeps its own units */
    tw_layer *hidden = tw_model_find_layer(tw_model_doc_model(tw_window_doc(f.window)), "hidden");
    g_assert_cmpfloat(tw_layer_get(hidden, "units")->number, ==, 16);

    tw_window_show_view(f.window, "dashboard");
    GtkWidget *dashboard = find_of_type(GTK_WIDGET(f.window), TW_TYPE_DASHBOARD_VIEW);
    tw_dashboard_view_show_tab(TW_DASHBOARD_VIEW(dashboard), "hparams");
    wait_for(&f, hparams_has_layer_column, 30, "the HParams view's hidden.units column");
    GtkWidget *view = find_of_type(GTK_WIDGET(f.window), TW_TYPE_HPARAMS_VIEW);
    const tw_hp_table *t = tw_hparams_view_table(TW_HPARAMS_VIEW(view));
    int column = tw_hp_table_find_column(t, TW_HP_HPARAM, "hidden.units");
    g_assert_cmpint(tw_hp_table_column(t, column)->kind, ==, TW_HP_NUMBER);
    g_assert_cmpfloat(tw_hp_table_column(t, column)->lo, ==, 4);
    g_assert_cmpfloat(tw_hp_table_column(t, column)->hi, ==, 32);
    fixture_close(&f);
}

/* A model whose layers sit in nested models: the drop-down lists them by
 * path; rows added and removed; the choices survive a new model that still
 * has them, and the settings they give are ones `twb sweep --set` takes
 * (checked against the model as the queue checks it), their grid every
 * combination. */
static void test_layer_rows(void)
{
    static const char *json =
        "{\"class_name\": \"Sequential\", \"config\": {\"name\": \"outer\", \"layers\": ["
        "{\"class_name\": \"Sequential\", \"config\": {\"name\": \"block\", \"layers\": ["
        "{\"class_name\": \"Dense\", \"config\": {\"name\": \"dense\", \"units\": 16,"
        " \"batch_input_shape\": [null, 2]}},"
        "{\"class_name\": \"Dropout\", \"config\": {\"name\": \"drop\", \"rate\": 0.1}},"
        "{\"class_name\": \"Dense\", \"config\": {\"name\": \"hidden\", \"units\": 8}}]}},"
        "{\"class_name\": \"Flatten\", \"config\": {\"name\": \"flatten\"}},"
        "{\"class_name\": \"Dense\", \"config\": {\"name\": \"dense_1\", \"units\": 3}}]}}";
    GListStore *queue = g_list_store_new(TW_TYPE_SWEEP_TRIAL);
    fixture f = {.dialog = TW_SWEEP_DIALOG(tw_sweep_dialog_new(NULL, G_LIST_MODEL(queue)))};
    tw_model *model = tw_model_from_json(json, strlen(json), "nested");
    g_assert_nonnull(model);
    tw_sweep_dialog_set_model(f.dialog, model);
    GListModel *layers = gtk_drop_down_get_model(GTK_DROP_DOWN(named(GTK_WIDGET(f.dialog), "sweep-layer")));
    GString *listed = g_string_new(NULL);
    for (guint i = 0; i < g_list_model_get_n_items(layers); i++)
        g_string_append_printf(listed, "%s%s", i ? " " : "", gtk_string_list_get_string(GTK_STRING_LIST(layers), i));
    g_assert_cmpstr(listed->str, ==, "None block/dense block/drop block/hidden dense_1"); /* no Flatten: no numbers */
    g_string_free(listed, TRUE);
    choose(&f, "sweep-layer", "block/hidden");
    choose(&f, "sweep-property", "units");
    set_field(&f, "sweep-layer-values", "4,8");
    /* a second row: another layer's property, the grid of both */
    g_assert_null(find_named(GTK_WIDGET(f.dialog), "sweep-layer-2"));
    click(&f, "sweep-add-layer");
    g_assert_false(gtk_widget_get_sensitive(named(GTK_WIDGET(f.dialog), "sweep-layer-values-2")));
    choose(&f, "sweep-layer-2", "block/drop");
    choose(&f, "sweep-property-2", "rate");
    set_field(&f, "sweep-layer-values-2", "0.1,0.5");
    tw_sweep_dialog_set_model(f.dialog, model); /* the designer's "changed": the choices stay */
    char **settings = tw_sweep_dialog_layer_settings(f.dialog);
    g_assert_cmpuint(g_strv_length(settings), ==, 2);
    g_assert_cmpstr(settings[0], ==, "block/hidden.units=4,8");
    g_assert_cmpstr(settings[1], ==, "block/drop.rate=0.1,0.5");
    twb_sweep_spec spec = {0};
    for (char **s = settings; *s; s++)
        g_assert_cmpint(twb_sweep_spec_set_layer(&spec, *s), ==, 0);
    g_assert_cmpint(twb_sweep_spec_check_model(&spec, model), ==, 0);
    g_assert_true(spec.layers[0].whole);
    g_assert_false(spec.layers[1].whole);
    tw_train_settings base = tw_train_settings_defaults(), *trials;
    int n;
    g_assert_cmpint(twb_sweep_spec_trials(&spec, &base, &trials, &n), ==, 0);
    g_assert_cmpint(n, ==, 4);
    g_assert_cmpfloat(trials[3].layer_values[0].value, ==, 8);
    g_assert_cmpfloat(trials[3].layer_values[1].value, ==, 0.5);
    g_free(trials);
    twb_sweep_spec_clear(&spec);
    g_strfreev(settings);
    /* a third row, then the second removed: the third's becomes row 2 */
    click(&f, "sweep-add-layer");
    choose(&f, "sweep-layer-3", "dense_1");
    set_field(&f, "sweep-layer-values-3", "3,5");
    click(&f, "sweep-remove-layer-2");
    g_assert_null(find_named(GTK_WIDGET(f.dialog), "sweep-layer-3"));
    g_assert_cmpstr(gtk_editable_get_text(GTK_EDITABLE(named(GTK_WIDGET(f.dialog), "sweep-layer-values-2"))), ==,
                    "3,5");
    settings = tw_sweep_dialog_layer_settings(f.dialog);
    g_assert_cmpuint(g_strv_length(settings), ==, 2);
    g_assert_cmpstr(settings[1], ==, "dense_1.units=3,5");
    g_strfreev(settings);
    /* a row set back to None gives nothing */
    choose(&f, "sweep-layer", "None");
    settings = tw_sweep_dialog_layer_settings(f.dialog);
    g_assert_cmpuint(g_strv_length(settings), ==, 1);
    g_strfreev(settings);
    gtk_window_destroy(GTK_WINDOW(f.dialog));
    tw_layer_unref(model);
    g_object_unref(queue);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    /* A config folder of the test's own: the panel's remembered run database */
    char *home = g_dir_make_tmp("twb-ui-sweep-home-XXXXXX", NULL);
    g_assert_nonnull(home);
    g_setenv("XDG_CONFIG_HOME", home, TRUE);
    g_setenv("GTK_A11Y", "none", TRUE); /* no accessibility bus under Xvfb */
    /* a device besides the CPU for the panel's Device choice (read at the
     * engine's first question about devices; the trials' processes inherit it) */
    g_setenv("TW_SIM_DEVICES", "1", TRUE);
    if (!gtk_init_check()) {
        g_test_message("no display: run under xvfb-run (meson test --suite gui does)");
        return 77;
    }
    /* the trials' processes run the twb built with this test */
    if (g_getenv("TWB"))
        twb_sweep_processes_set_program(g_getenv("TWB"));
    app = gtk_application_new("io.github.twb.Workbench.TestSweep", G_APPLICATION_NON_UNIQUE);
    g_assert_true(g_application_register(G_APPLICATION(app), NULL, NULL));
    g_test_add_func("/ui/sweep/grid-then-cancel", test_grid_then_cancel);
    g_test_add_func("/ui/sweep/random-then-close", test_random_then_close);
    g_test_add_func("/ui/sweep/after-panel-run", test_after_panel_run);
    g_test_add_func("/ui/sweep/failing-trial", test_failing_trial);
    g_test_add_func("/ui/sweep/median-stop", test_median_stop);
    g_test_add_func("/ui/sweep/at-once", test_at_once);
    g_test_add_func("/ui/sweep/layer-property", test_layer_property);
    g_test_add_func("/ui/sweep/layer-rows", test_layer_rows);
    int rc = g_test_run();
    g_object_unref(app);
    scratch_remove_tree(home);
    g_free(home);
    return rc;
}
