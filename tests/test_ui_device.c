/* The training panel's Device choice: hidden when the CPU is the only
 * device, shown with every device when there are others (here the
 * simulated one of TW_SIM_DEVICES=1, which stands in for a GPU), and a run
 * started on one trains there: the run's stored settings name it and the
 * panel's status says where the variables were. Runs under Xvfb. */
#include <string.h>

#include <gtk/gtk.h>

#include <tw/engine.h>
#include <tw/run_store.h>

#include "gui_helpers.h"
#include "train_controller.h"
#include "window.h"

static GtkApplication *app;

enum { DATA_SPIRALS = 1 };

typedef struct {
    TwWindow *window;
    TwTrainPanel *panel;
    char *dir, *logdb;
} fixture;

static GtkWidget *widget(fixture *f, const char *name)
{
    GtkWidget *w = find_named(GTK_WIDGET(f->panel), name);
    g_assert_nonnull(w);
    return w;
}

static const char *status_text(fixture *f)
{
    return gtk_label_get_text(GTK_LABEL(widget(f, "status")));
}

static void fixture_open(fixture *f)
{
    f->logdb = scratch_logdb("twb-ui-device-XXXXXX", &f->dir);
    f->window = train_window_open(app, spirals_model, NULL, twb_train_controller_attach, f->logdb);
    f->panel = tw_window_train_panel(f->window);
}

static void fixture_close(fixture *f)
{
    scratch_close(GTK_WIDGET(f->window), f->dir, f->logdb); /* the database and the checkpoints */
}

static gboolean ready(gpointer data)
{
    return gtk_widget_is_sensitive(widget(data, "train"));
}

static gboolean ended(gpointer data)
{
    fixture *f = data;
    return g_str_has_prefix(status_text(f), "Finished") || g_str_has_prefix(status_text(f), "Failed");
}

/* The choices: the CPU first, then sim:0 with its description. */
static void test_choices_listed(void)
{
    fixture f;
    fixture_open(&f);
    GtkWidget *device = widget(&f, "device");
    g_assert_true(gtk_widget_get_visible(device));
    GListModel *choices = G_LIST_MODEL(gtk_drop_down_get_model(GTK_DROP_DOWN(device)));
    g_assert_cmpuint(g_list_model_get_n_items(choices), ==, 2);
    g_assert_cmpstr(gtk_string_list_get_string(GTK_STRING_LIST(choices), 0), ==, "CPU");
    g_assert_true(g_str_has_prefix(gtk_string_list_get_string(GTK_STRING_LIST(choices), 1), "sim:0 — simulated"));
    g_assert_cmpuint(gtk_drop_down_get_selected(GTK_DROP_DOWN(device)), ==, 0);
    g_assert_null(tw_train_panel_settings(f.panel)->device);
    fixture_close(&f);
}

static char *stored_settings(fixture *f, const char *run_name)
{
    tw_run_info run;
    stored_run(f->logdb, run_name, &run);
    char *json = g_strdup(run.hparams_json);
    tw_run_info_clear(&run);
    g_assert_nonnull(json);
    return json;
}

/* Trained on sim:0 and on the CPU, one epoch each: where each ran shows in
 * the status and in the run's settings. */
static void test_run_trains_on_chosen_device(void)
{
    fixture f;
    fixture_open(&f);
    gtk_drop_down_set_selected(GTK_DROP_DOWN(widget(&f, "dataset")), DATA_SPIRALS);
    gtk_spin_button_set_value(GTK_SPIN_BUTTON(widget(&f, "epochs")), 1);
    const struct {
        guint choice;
        const char *run, *where;
    } runs[] = {{1, "on-sim", "on sim:0"}, {0, "on-cpu", NULL}};
    for (size_t i = 0; i < G_N_ELEMENTS(runs); i++) {
        gtk_drop_down_set_selected(GTK_DROP_DOWN(widget(&f, "device")), runs[i].choice);
        gtk_editable_set_text(GTK_EDITABLE(widget(&f, "run-name")), runs[i].run);
        wait_until(ready, &f, 120, "Train to turn on");
        g_signal_emit_by_name(widget(&f, "train"), "clicked");
        wait_until(ended, &f, 300, "the run to end");
        g_assert_true(g_str_has_prefix(status_text(&f), "Finished"));
        char *json = stored_settings(&f, runs[i].run);
        if (runs[i].where) {
            g_assert_nonnull(strstr(status_text(&f), runs[i].where));
            g_assert_nonnull(strstr(json, "\"device\":\"sim:0\""));
        } else {
            g_assert_null(strstr(status_text(&f), " · on "));
            g_assert_null(strstr(json, "\"device\""));
        }
        g_free(json);
    }
    fixture_close(&f);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    /* Read at the engine's first question about devices, which the panel asks. */
    g_setenv("TW_SIM_DEVICES", "1", TRUE);
    char *home;
    app = train_suite_start("twb-ui-device-home-XXXXXX", "io.github.twb.Workbench.TestDevice", &home);
    if (!app)
        return 77;
    g_test_add_func("/ui/device/choices-listed", test_choices_listed);
    g_test_add_func("/ui/device/run-trains-on-chosen-device", test_run_trains_on_chosen_device);
    return train_suite_finish(g_test_run(), app, home);
}
