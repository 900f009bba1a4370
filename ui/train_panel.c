/* TwTrainPanel (see train_panel.h): a form of training settings, the
 * Train / Pause / Resume / Stop buttons and the progress of the run.
 *
 * Every input carries a widget name ("dataset", "epochs", "train", ...) so
 * tests drive the panel through the same widgets a person uses. */
#include "train_panel.h"

#include <errno.h>
#include <locale.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <glib/gstdio.h>

#include <tw/engine.h>
#include <tw/error.h>
#include <tw/optimizers.h>
#include <tw/run_store.h>

#include "window.h"

/* Where the chosen run database is remembered (g_get_user_config_dir()/twb/). */
#define SETTINGS_FILE "settings.ini"
#define SETTINGS_GROUP "training"
#define SETTINGS_LOGDB "run-database"
#define RUNNING_REASON "Training is running; stop it in the training panel"

/* The dataset choices (twb_data_load's built-in sets); the last one is a
 * file. The two-input sets feed the siamese and seq2seq templates. */
static const struct {
    const char *id, *label;
} datasets[] = {
    {"fashion-mnist", "Fashion-MNIST"},
    {"spirals", "Spirals (synthetic)"},
    {"blobs", "Blobs (synthetic)"},
    {"linear", "Linear (synthetic)"},
    {"fashion-mnist-pairs", "Fashion-MNIST pairs"},
    {"reverse-sequences", "Reversed sequences"},
    {NULL, "A file…"},
};
#define FILE_DATASET (G_N_ELEMENTS(datasets) - 1)

static const struct {
    const char *id, *label;
} optimizers[] = {
    {"sgd", "SGD"}, {"adam", "Adam"}, {"adamw", "AdamW"}, {"rmsprop", "RMSprop"}, {"adagrad", "Adagrad"},
};
#define DEFAULT_OPTIMIZER 1

typedef enum { STATE_IDLE, STATE_RUNNING, STATE_PAUSED } panel_state;

struct _TwTrainPanel {
    GtkWidget parent_instance;
    TwModelDoc *doc;
    panel_state state;
    tw_train_settings settings; /* what tw_train_panel_settings last read */
    char *data_file, *labels_file, *logdb;
    char *auto_base; /* the last automatic run name without its count */
    int auto_count;
    char *running_name;
    guint pulse_source;
    gboolean has_progress; /* the run has reported a step */
    tw_train_progress last;  /* the last step reported */
    TwTrainDataCheck check;
    gpointer check_data;
    char *data_problem; /* the check's last answer */
    char *cannot_train; /* what "cannot-train" last said */
    char *blocked;      /* tw_train_panel_set_blocked's reason, or NULL */

    GtkWidget *root, *form;
    GtkWidget *dataset, *data_file_button, *labels_button, *label_column;
    /* the captions of the rows shown only for a file */
    GtkWidget *data_file_caption, *labels_file_caption, *label_column_caption;
    GtkWidget *validation_split, *optimizer, *learning_rate, *batch_size, *epochs, *seed, *run_name;
    GtkWidget *logdb_name, *logdb_open, *logdb_new;
    GtkWidget *device_caption, *device;
    GPtrArray *device_names; /* the Device choices' names ("cuda:0"); NULL for the CPU */
    GtkWidget *train, *pause, *resume, *stop;
    GtkWidget *progress, *progress_text, *metrics, *status;
};

G_DEFINE_FINAL_TYPE(TwTrainPanel, tw_train_panel, GTK_TYPE_WIDGET)

enum { SIGNAL_TRAIN, SIGNAL_PAUSE, SIGNAL_RESUME, SIGNAL_STOP, N_SIGNALS };
static guint signals[N_SIGNALS];

enum { PROP_0, PROP_LOGDB, PROP_RUNNING, PROP_CANNOT_TRAIN, N_PROPS };
static GParamSpec *props[N_PROPS];

/* ---- settings ------------------------------------------------------------- */
static gboolean is_csv(const char *path)
{
    size_t n = path ? strlen(path) : 0;
    return n >= 4 && !g_ascii_strcasecmp(path + n - 4, ".csv");
}

/* The learning rate as typed, or NAN when it is not a positive number. */
static double typed_learning_rate(TwTrainPanel *self)
{
    const char *text = gtk_editable_get_text(GTK_EDITABLE(self->learning_rate));
    char *end;
    double v = g_ascii_strtod(text, &end);
    while (g_ascii_isspace(*end))
        end++;
    return end != text && !*end && v > 0 && isfinite(v) ? v : NAN;
}

static const char *model_name(TwTrainPanel *self)
{
    tw_model *model = tw_model_doc_model(self->doc);
    const char *name = model ? tw_layer_name(model) : NULL;
    return name && *name ? name : "model";
}

/* The model's name and the local time: "cnn-20261121-141503"; another run
 * started within the same second gets "-2", "-3", ... */
static char *automatic_run_name(TwTrainPanel *self)
{
    GDateTime *now = g_date_time_new_now_local();
    char *stamp = g_date_time_format(now, "%Y%m%d-%H%M%S");
    char *base = g_strdup_printf("%s-%s", model_name(self), stamp);
    g_date_time_unref(now);
    g_free(stamp);
    self->auto_count = g_strcmp0(base, self->auto_base) ? 1 : self->auto_count + 1;
    g_free(self->auto_base);
    self->auto_base = base;
    return self->auto_count > 1 ? g_strdup_printf("%s-%d", base, self->auto_count) : g_strdup(base);
}

static void fill_settings(TwTrainPanel *self, tw_train_settings *s)
{
    tw_train_settings_clear(s);
    guint d = gtk_drop_down_get_selected(GTK_DROP_DOWN(self->dataset));
    gboolean file = d == FILE_DATASET;
    s->data = g_strdup(file ? self->data_file : datasets[d].id);
    s->labels = file && !is_csv(self->data_file) ? g_strdup(self->labels_file) : NULL;
    const char *column = gtk_editable_get_text(GTK_EDITABLE(self->label_column));
    s->label_column = file && is_csv(self->data_file) && *column ? g_strdup(column) : NULL;
    s->validation_split = gtk_spin_button_get_value(GTK_SPIN_BUTTON(self->validation_split));
    s->optimizer = g_strdup(optimizers[gtk_drop_down_get_selected(GTK_DROP_DOWN(self->optimizer))].id);
    s->learning_rate = typed_learning_rate(self);
    s->batch_size = gtk_spin_button_get_value_as_int(GTK_SPIN_BUTTON(self->batch_size));
    s->epochs = gtk_spin_button_get_value_as_int(GTK_SPIN_BUTTON(self->epochs));
    s->seed = (uint64_t)gtk_spin_button_get_value(GTK_SPIN_BUTTON(self->seed));
    const char *name = gtk_editable_get_text(GTK_EDITABLE(self->run_name));
    s->run_name = *name ? g_strdup(name) : NULL;
    s->logdb = g_strdup(self->logdb);
    guint chosen = gtk_drop_down_get_selected(GTK_DROP_DOWN(self->device));
    s->device = chosen < self->device_names->len ? g_strdup(g_ptr_array_index(self->device_names, chosen)) : NULL;
}

static void read_settings(TwTrainPanel *self)
{
    fill_settings(self, &self->settings);
}

const tw_train_settings *tw_train_panel_settings(TwTrainPanel *self)
{
    g_return_val_if_fail(TW_IS_TRAIN_PANEL(self), NULL);
    read_settings(self);
    return &self->settings;
}

/* ---- sensitivity ---------------------------------------------------------- */
/* The application's answer for the model and the data chosen now. */
static const char *check_data(TwTrainPanel *self)
{
    g_clear_pointer(&self->data_problem, g_free);
    if (!self->check || !tw_model_doc_model(self->doc)) /* not a model yet: the doc's error says why */
        return NULL;
    tw_train_settings s = {0};
    fill_settings(self, &s);
    self->data_problem = self->check(&s, tw_model_doc_model(self->doc), self->check_data);
    tw_train_settings_clear(&s);
    return self->data_problem;
}

/* Why Train cannot start now, or NULL. */
static const char *cannot_train(TwTrainPanel *self)
{
    if (!self->doc)
        return "No model";
    if (self->state != STATE_IDLE)
        return RUNNING_REASON;
    if (self->blocked)
        return self->blocked;
    const char *error = tw_model_doc_error(self->doc);
    if (error)
        return error;
    if (gtk_drop_down_get_selected(GTK_DROP_DOWN(self->dataset)) == FILE_DATASET && !self->data_file)
        return "Choose a data file";
    if (isnan(typed_learning_rate(self)))
        return "The learning rate must be a positive number";
    return check_data(self);
}

static void update_sensitivity(TwTrainPanel *self)
{
    const char *why = cannot_train(self);
    gtk_widget_set_sensitive(self->train, why == NULL);
    gtk_widget_set_tooltip_text(self->train, why ? why : "Train the model (Ctrl+Return)");
    if (g_strcmp0(why, self->cannot_train)) {
        g_free(self->cannot_train);
        self->cannot_train = g_strdup(why);
        g_object_notify_by_pspec(G_OBJECT(self), props[PROP_CANNOT_TRAIN]);
    }
    gtk_widget_set_sensitive(self->form, self->state == STATE_IDLE);
    gtk_widget_set_visible(self->pause, self->state != STATE_PAUSED);
    gtk_widget_set_visible(self->resume, self->state == STATE_PAUSED);
    gtk_widget_set_sensitive(self->pause, self->state == STATE_RUNNING);
    gtk_widget_set_sensitive(self->stop, self->state != STATE_IDLE);
    if (isnan(typed_learning_rate(self)))
        gtk_widget_add_css_class(self->learning_rate, "error");
    else
        gtk_widget_remove_css_class(self->learning_rate, "error");
}

const char *tw_train_panel_cannot_train(TwTrainPanel *self)
{
    g_return_val_if_fail(TW_IS_TRAIN_PANEL(self), NULL);
    return self->cannot_train;
}

void tw_train_panel_set_blocked(TwTrainPanel *self, const char *reason)
{
    g_return_if_fail(TW_IS_TRAIN_PANEL(self));
    if (!g_strcmp0(reason, self->blocked))
        return;
    g_free(self->blocked);
    self->blocked = g_strdup(reason);
    update_sensitivity(self);
}

void tw_train_panel_set_data_check(TwTrainPanel *self, TwTrainDataCheck check, gpointer user_data)
{
    g_return_if_fail(TW_IS_TRAIN_PANEL(self));
    self->check = check;
    self->check_data = user_data;
}

void tw_train_panel_recheck(TwTrainPanel *self)
{
    g_return_if_fail(TW_IS_TRAIN_PANEL(self));
    update_sensitivity(self);
}

static void on_doc_changed(TwTrainPanel *self)
{
    char *hint = g_strdup_printf("Automatic: %s + time", model_name(self));
    gtk_entry_set_placeholder_text(GTK_ENTRY(self->run_name), hint);
    g_free(hint);
    update_sensitivity(self);
}

/* ---- requests --------------------------------------------------------------- */
gboolean tw_train_panel_request_train(TwTrainPanel *self)
{
    g_return_val_if_fail(TW_IS_TRAIN_PANEL(self), FALSE);
    if (cannot_train(self))
        return FALSE;
    read_settings(self);
    if (!self->settings.run_name)
        self->settings.run_name = automatic_run_name(self);
    g_signal_emit(self, signals[SIGNAL_TRAIN], 0, &self->settings);
    return TRUE;
}

static void on_train_clicked(TwTrainPanel *self)
{
    tw_train_panel_request_train(self);
}

static void on_pause_clicked(TwTrainPanel *self)
{
    g_signal_emit(self, signals[SIGNAL_PAUSE], 0);
}

static void on_resume_clicked(TwTrainPanel *self)
{
    g_signal_emit(self, signals[SIGNAL_RESUME], 0);
}

static void on_stop_clicked(TwTrainPanel *self)
{
    g_signal_emit(self, signals[SIGNAL_STOP], 0);
}

/* ---- progress --------------------------------------------------------------- */
/* An empty line takes no room. */
static void show_text(GtkWidget *label, const char *text)
{
    gtk_label_set_text(GTK_LABEL(label), text);
    gtk_widget_set_visible(label, *text != '\0');
}

/* 8900 -> "8,900" with the locale's thousands separator (a comma when it has none). */
static char *group_thousands(double value)
{
    char digits[32];
    g_snprintf(digits, sizeof digits, "%.0f", value < 0 || isnan(value) ? 0 : value);
    const char *sep = localeconv()->thousands_sep;
    if (!sep || !*sep)
        sep = ",";
    GString *s = g_string_new(NULL);
    size_t n = strlen(digits);
    for (size_t i = 0; i < n; i++) {
        if (i && (n - i) % 3 == 0)
            g_string_append(s, sep);
        g_string_append_c(s, digits[i]);
    }
    return g_string_free(s, FALSE);
}

/* 41 -> "0:41", 3725 -> "1:02:05" */
static char *format_duration(double seconds)
{
    long s = lround(seconds);
    if (s >= 3600)
        return g_strdup_printf("%ld:%02ld:%02ld", s / 3600, s / 60 % 60, s % 60);
    return g_strdup_printf("%ld:%02ld", s / 60, s % 60);
}

/* The bar's text goes in a label above it, which wraps in a narrow panel
 * where the bar's own text would be cut; the bar keeps it for
 * accessibility. */
static void set_progress_text(TwTrainPanel *self, const char *text)
{
    gtk_progress_bar_set_text(GTK_PROGRESS_BAR(self->progress), text);
    gtk_inscription_set_text(GTK_INSCRIPTION(self->progress_text), text);
}

static void stop_pulse(TwTrainPanel *self)
{
    g_clear_handle_id(&self->pulse_source, g_source_remove);
}

static gboolean pulse(gpointer data)
{
    gtk_progress_bar_pulse(GTK_PROGRESS_BAR(((TwTrainPanel *)data)->progress));
    return G_SOURCE_CONTINUE;
}

/* "Epoch 2/5 · step 412/938 · 8,900 samples/s · ETA 0:41": the ETA only
 * while the run is going, not paused or ended. */
static void show_progress(TwTrainPanel *self)
{
    const tw_train_progress *p = &self->last;
    double total = (double)p->epochs * (double)p->steps;
    double done = (double)p->epoch * (double)p->steps + (double)(p->step + 1);
    gtk_progress_bar_set_fraction(GTK_PROGRESS_BAR(self->progress), total > 0 ? CLAMP(done / total, 0, 1) : 0);
    char *rate = group_thousands(p->samples_per_second);
    GString *text = g_string_new(NULL);
    g_string_printf(text, "Epoch %d/%d · step %lld/%lld · %s samples/s", p->epoch + 1, p->epochs,
                    (long long)p->step + 1, (long long)p->steps, rate);
    if (self->state == STATE_RUNNING) {
        char *eta = isnan(p->eta_seconds) ? g_strdup("–") : format_duration(p->eta_seconds);
        g_string_append_printf(text, " · ETA %s", eta);
        g_free(eta);
    }
    set_progress_text(self, text->str);
    g_string_free(text, TRUE);
    g_free(rate);
}

/* "Training cnn-1", "Paused cnn-1", with the step the run database lost
 * logs from when it did. */
static void show_run_status(TwTrainPanel *self)
{
    GString *status = g_string_new(self->state == STATE_PAUSED ? "Paused " : "Training ");
    g_string_append(status, self->running_name ? self->running_name : "");
    if (self->has_progress && self->last.logs_lost_from_step >= 0)
        g_string_append_printf(status, "\nLogs lost from step %lld on (see the message above)",
                               (long long)self->last.logs_lost_from_step);
    show_text(self->status, status->str);
    g_string_free(status, TRUE);
}

/* Nothing of a run: a new model was opened. */
static void show_no_run(TwTrainPanel *self)
{
    self->has_progress = FALSE;
    gtk_progress_bar_set_fraction(GTK_PROGRESS_BAR(self->progress), 0);
    set_progress_text(self, "Not started");
    gtk_inscription_set_text(GTK_INSCRIPTION(self->metrics), NULL);
    show_text(self->status, "");
}

/* Opening another model (a load clears the undo history; Save As keeps
 * it) clears what the panel says about the last model's run. */
static void on_doc_path(TwTrainPanel *self)
{
    if (self->state == STATE_IDLE && !tw_model_doc_can_undo(self->doc) && !tw_model_doc_can_redo(self->doc))
        show_no_run(self);
}

void tw_train_panel_started(TwTrainPanel *self)
{
    g_return_if_fail(TW_IS_TRAIN_PANEL(self));
    self->state = STATE_RUNNING;
    g_free(self->running_name);
    self->running_name = g_strdup(self->settings.run_name);
    g_object_notify_by_pspec(G_OBJECT(self), props[PROP_RUNNING]);
    gtk_progress_bar_set_fraction(GTK_PROGRESS_BAR(self->progress), 0);
    set_progress_text(self, "Loading the data…");
    self->has_progress = FALSE;
    gtk_inscription_set_text(GTK_INSCRIPTION(self->metrics), NULL);
    show_run_status(self);
    stop_pulse(self);
    self->pulse_source = g_timeout_add(100, pulse, self);
    update_sensitivity(self);
}

void tw_train_panel_started_as(TwTrainPanel *self, const char *run_name)
{
    tw_train_panel_started(self);
    g_free(self->running_name);
    self->running_name = g_strdup(run_name);
    show_run_status(self);
}

static void show_metrics(TwTrainPanel *self, const tw_train_progress *p)
{
    GString *s = g_string_new(NULL);
    if (!isnan(p->loss))
        g_string_append_printf(s, "Loss %.4f", p->loss);
    if (!isnan(p->accuracy))
        g_string_append_printf(s, "%sAccuracy %.1f%%", s->len ? " · " : "", 100 * p->accuracy);
    gtk_inscription_set_text(GTK_INSCRIPTION(self->metrics), s->str);
    g_string_free(s, TRUE);
}

void tw_train_panel_update(TwTrainPanel *self, const tw_train_progress *p)
{
    g_return_if_fail(TW_IS_TRAIN_PANEL(self));
    stop_pulse(self);
    gboolean newly_lost = p->logs_lost_from_step >= 0 && (!self->has_progress || self->last.logs_lost_from_step < 0);
    self->last = *p;
    self->last.logs_lost_reason = NULL; /* borrowed for the call only */
    self->has_progress = TRUE;
    show_progress(self);
    show_metrics(self, p);
    if (newly_lost && self->state != STATE_IDLE)
        show_run_status(self);
}

void tw_train_panel_paused(TwTrainPanel *self, gboolean paused)
{
    g_return_if_fail(TW_IS_TRAIN_PANEL(self));
    if (self->state == STATE_IDLE)
        return;
    self->state = paused ? STATE_PAUSED : STATE_RUNNING;
    show_run_status(self);
    if (self->has_progress)
        show_progress(self);
    update_sensitivity(self);
}

void tw_train_panel_finished(TwTrainPanel *self, const char *summary)
{
    g_return_if_fail(TW_IS_TRAIN_PANEL(self));
    stop_pulse(self);
    self->state = STATE_IDLE;
    if (self->has_progress) {
        show_progress(self);
    } else { /* the status says how it ended: "Not started" would contradict a failure */
        gtk_progress_bar_set_fraction(GTK_PROGRESS_BAR(self->progress), 0);
        set_progress_text(self, "");
    }
    g_object_notify_by_pspec(G_OBJECT(self), props[PROP_RUNNING]);
    show_text(self->status, summary ? summary : "Finished");
    update_sensitivity(self);
}

/* ---- file choosers ---------------------------------------------------------- */
/* A message in the window's banner. */
static void tell(TwTrainPanel *self, const char *message)
{
    GtkRoot *root = gtk_widget_get_root(GTK_WIDGET(self));
    if (root && TW_IS_WINDOW(root))
        tw_window_show_banner(TW_WINDOW(root), message, TRUE);
    else
        g_warning("%s", message);
}

typedef void (*file_chosen)(TwTrainPanel *self, GFile *file);

static void weak_ref_free(gpointer ref)
{
    g_weak_ref_clear(ref);
    g_free(ref);
}

/* The panel may be gone when the dialog answers: it holds only a weak reference. */
static void on_chooser_response(GtkNativeDialog *dialog, int response, gpointer data)
{
    TwTrainPanel *self = g_weak_ref_get(g_object_get_data(G_OBJECT(dialog), "panel"));
    GFile *file = response == GTK_RESPONSE_ACCEPT ? gtk_file_chooser_get_file(GTK_FILE_CHOOSER(dialog)) : NULL;
    if (self)
        ((file_chosen)data)(self, file);
    g_clear_object(&file);
    g_clear_object(&self);
    g_object_unref(dialog);
}

static void choose_file(TwTrainPanel *self, const char *title, GtkFileChooserAction action, GtkFileFilter *filter,
                        const char *current, file_chosen chosen)
{
    GtkRoot *root = gtk_widget_get_root(GTK_WIDGET(self));
    GtkFileChooserNative *dialog = gtk_file_chooser_native_new(
        title, GTK_IS_WINDOW(root) ? GTK_WINDOW(root) : NULL, action,
        action == GTK_FILE_CHOOSER_ACTION_SAVE ? "_Create" : "_Open", "_Cancel");
    gtk_native_dialog_set_modal(GTK_NATIVE_DIALOG(dialog), TRUE);
    if (filter)
        gtk_file_chooser_add_filter(GTK_FILE_CHOOSER(dialog), filter);
    if (current && action == GTK_FILE_CHOOSER_ACTION_SAVE) {
        /* A new file beside the current one, under a name not taken there. */
        char *dir = g_path_get_dirname(current), *taken = g_build_filename(dir, "runs.db", NULL);
        GFile *folder = g_file_new_for_path(dir);
        if (g_file_test(dir, G_FILE_TEST_IS_DIR))
            gtk_file_chooser_set_current_folder(GTK_FILE_CHOOSER(dialog), folder, NULL);
        gtk_file_chooser_set_current_name(GTK_FILE_CHOOSER(dialog),
                                          g_file_test(taken, G_FILE_TEST_EXISTS) ? "new-runs.db" : "runs.db");
        g_object_unref(folder);
        g_free(taken);
        g_free(dir);
    } else if (current) {
        GFile *file = g_file_new_for_path(current);
        gtk_file_chooser_set_file(GTK_FILE_CHOOSER(dialog), file, NULL);
        g_object_unref(file);
    }
    GWeakRef *ref = g_new(GWeakRef, 1);
    g_weak_ref_init(ref, self);
    g_object_set_data_full(G_OBJECT(dialog), "panel", ref, weak_ref_free);
    g_signal_connect(dialog, "response", G_CALLBACK(on_chooser_response), (gpointer)chosen);
    gtk_native_dialog_show(GTK_NATIVE_DIALOG(dialog));
}

/* A file button shows the file's name, and its path as the tooltip. */
static void show_file(GtkWidget *button, const char *path, const char *none)
{
    char *name = path ? g_path_get_basename(path) : NULL;
    gtk_button_set_label(GTK_BUTTON(button), name ? name : none);
    gtk_widget_set_tooltip_text(button, path);
    g_free(name);
}

static void update_file_rows(TwTrainPanel *self)
{
    gboolean file = gtk_drop_down_get_selected(GTK_DROP_DOWN(self->dataset)) == FILE_DATASET;
    gboolean csv = is_csv(self->data_file);
    gtk_widget_set_visible(self->data_file_button, file);
    gtk_widget_set_visible(self->data_file_caption, file);
    gtk_widget_set_visible(self->labels_button, file && !csv);
    gtk_widget_set_visible(self->labels_file_caption, file && !csv);
    gtk_widget_set_visible(self->label_column, file && csv);
    gtk_widget_set_visible(self->label_column_caption, file && csv);
    show_file(self->data_file_button, self->data_file, "Choose…");
    show_file(self->labels_button, self->labels_file, "Choose…");
    update_sensitivity(self);
}

static void set_path(char **field, GFile *file)
{
    if (!file)
        return;
    g_free(*field);
    *field = g_file_get_path(file);
}

static void data_file_chosen(TwTrainPanel *self, GFile *file)
{
    set_path(&self->data_file, file);
    update_file_rows(self);
}

static void labels_file_chosen(TwTrainPanel *self, GFile *file)
{
    set_path(&self->labels_file, file);
    update_file_rows(self);
}

static GtkFileFilter *data_filter(void)
{
    GtkFileFilter *filter = gtk_file_filter_new();
    gtk_file_filter_set_name(filter, "IDX, NPY and CSV files");
    static const char *const patterns[] = {"*.csv", "*.npy", "*.npz", "*-ubyte", "*-ubyte.gz", "*.idx*", "*.gz"};
    for (size_t i = 0; i < G_N_ELEMENTS(patterns); i++)
        gtk_file_filter_add_pattern(filter, patterns[i]);
    return filter;
}

static void on_choose_data_file(TwTrainPanel *self)
{
    choose_file(self, "Training data", GTK_FILE_CHOOSER_ACTION_OPEN, data_filter(), self->data_file,
                data_file_chosen);
}

static void on_choose_labels_file(TwTrainPanel *self)
{
    choose_file(self, "Labels for the training data", GTK_FILE_CHOOSER_ACTION_OPEN, data_filter(),
                self->labels_file, labels_file_chosen);
}

/* ---- the run database ------------------------------------------------------- */
static void set_logdb(TwTrainPanel *self, const char *path)
{
    if (!path || !g_strcmp0(path, self->logdb))
        return;
    g_free(self->logdb);
    self->logdb = g_strdup(path);
    char *name = g_path_get_basename(path);
    gtk_label_set_text(GTK_LABEL(self->logdb_name), name);
    gtk_widget_set_tooltip_text(self->logdb_name, path);
    g_free(name);
    g_object_notify_by_pspec(G_OBJECT(self), props[PROP_LOGDB]);
}

static char *settings_path(void)
{
    return g_build_filename(g_get_user_config_dir(), "twb", SETTINGS_FILE, NULL);
}

/* The run database chosen with Open… or New… before, or NULL. */
static char *remembered_logdb(void)
{
    char *path = settings_path();
    GKeyFile *keys = g_key_file_new();
    char *logdb = g_key_file_load_from_file(keys, path, G_KEY_FILE_NONE, NULL)
                      ? g_key_file_get_string(keys, SETTINGS_GROUP, SETTINGS_LOGDB, NULL)
                      : NULL;
    g_key_file_free(keys);
    g_free(path);
    if (logdb && !g_path_is_absolute(logdb))
        g_clear_pointer(&logdb, g_free);
    return logdb;
}

/* Keeps the file's other keys; g_key_file_save_to_file writes a new file and
 * renames it over the old one, so a crash leaves one or the other. */
static void remember_logdb(TwTrainPanel *self, const char *logdb)
{
    char *path = settings_path(), *dir = g_path_get_dirname(path);
    GKeyFile *keys = g_key_file_new();
    GError *error = NULL;
    g_key_file_load_from_file(keys, path, G_KEY_FILE_KEEP_COMMENTS, NULL);
    g_key_file_set_string(keys, SETTINGS_GROUP, SETTINGS_LOGDB, logdb);
    if (g_mkdir_with_parents(dir, 0700))
        g_set_error(&error, G_FILE_ERROR, g_file_error_from_errno(errno), "cannot create %s: %s", dir,
                    g_strerror(errno));
    else
        g_key_file_save_to_file(keys, path, &error);
    if (error) {
        char *text = g_strdup_printf("The run database will not be remembered for the next start: %s",
                                     error->message);
        tell(self, text);
        g_free(text);
        g_error_free(error);
    }
    g_key_file_free(keys);
    g_free(dir);
    g_free(path);
}

/* Open…: an existing file, which must be a run database. */
static void existing_logdb_chosen(TwTrainPanel *self, GFile *file)
{
    char *path = file ? g_file_get_path(file) : NULL;
    if (!path)
        return;
    tw_run_store *store = tw_run_store_open(path, TW_STORE_READ_ONLY);
    if (!store) {
        char *text = g_strdup_printf("Could not open the run database: %s", tw_last_error()); /* names the file */
        tell(self, text);
        g_free(text);
    } else {
        tw_run_store_close(store);
        set_logdb(self, path);
        remember_logdb(self, path);
    }
    g_free(path);
}

/* Move path and SQLite's files beside it to the trash; FALSE with a message. */
static gboolean trash_database(const char *path, GError **error)
{
    static const char *const suffixes[] = {"", "-wal", "-shm", "-journal"};
    for (size_t i = 0; i < G_N_ELEMENTS(suffixes); i++) {
        char *name = g_strconcat(path, suffixes[i], NULL);
        GFile *file = g_file_new_for_path(name);
        gboolean ok = !g_file_test(name, G_FILE_TEST_EXISTS) || g_file_trash(file, NULL, error);
        g_object_unref(file);
        g_free(name);
        if (!ok)
            return FALSE;
    }
    return TRUE;
}

/* New…: a database created now, so a folder that cannot take it says so at
 * once. A file of that name, which the dialog asked about replacing, goes
 * to the trash first (its runs can be restored from there). */
static void new_logdb_chosen(TwTrainPanel *self, GFile *file)
{
    char *path = file ? g_file_get_path(file) : NULL;
    if (!path)
        return;
    GError *error = NULL;
    char *text = NULL;
    if (!trash_database(path, &error)) {
        text = g_strdup_printf("Could not replace %s: %s", path, error->message);
        g_error_free(error);
    } else {
        tw_run_store *store = tw_run_store_open(path, 0);
        if (!store)
            text = g_strdup_printf("Could not create the run database: %s", tw_last_error());
        tw_run_store_close(store);
    }
    if (text) {
        tell(self, text);
        g_free(text);
    } else {
        set_logdb(self, path);
        remember_logdb(self, path);
    }
    g_free(path);
}

static GtkFileFilter *logdb_filter(void)
{
    GtkFileFilter *filter = gtk_file_filter_new();
    gtk_file_filter_set_name(filter, "Run databases");
    gtk_file_filter_add_pattern(filter, "*.db");
    return filter;
}

static void on_open_logdb(TwTrainPanel *self)
{
    choose_file(self, "Open a run database", GTK_FILE_CHOOSER_ACTION_OPEN, logdb_filter(), self->logdb,
                existing_logdb_chosen);
}

static void on_new_logdb(TwTrainPanel *self)
{
    choose_file(self, "New run database", GTK_FILE_CHOOSER_ACTION_SAVE, logdb_filter(), self->logdb,
                new_logdb_chosen);
}

static void on_dataset_selected(TwTrainPanel *self)
{
    update_file_rows(self);
    if (gtk_drop_down_get_selected(GTK_DROP_DOWN(self->dataset)) == FILE_DATASET && !self->data_file &&
        gtk_widget_get_mapped(GTK_WIDGET(self)))
        on_choose_data_file(self);
}

/* Choosing an optimizer sets its Keras default learning rate. */
static void on_optimizer_selected(TwTrainPanel *self)
{
    tw_optimizer_kind kind;
    if (tw_optimizer_kind_from_name(optimizers[gtk_drop_down_get_selected(GTK_DROP_DOWN(self->optimizer))].id,
                                    &kind))
        return;
    char text[G_ASCII_DTOSTR_BUF_SIZE];
    g_ascii_formatd(text, sizeof text, "%g", tw_optimizer_defaults(kind).learning_rate.initial_learning_rate);
    gtk_editable_set_text(GTK_EDITABLE(self->learning_rate), text);
}

/* ---- construction ----------------------------------------------------------- */
/* The form is resources/train_panel.ui; the drop-downs' choices come from
 * the tables above, which hold their ids too. */
static void set_choices(GtkWidget *drop_down, const char *const *labels)
{
    GtkStringList *list = gtk_string_list_new(labels);
    gtk_drop_down_set_model(GTK_DROP_DOWN(drop_down), G_LIST_MODEL(list));
    g_object_unref(list);
}

/* The CPU, then every device the engine has (GPUs, or the simulated
 * devices of TW_SIM_DEVICES); the row shows only when there is a choice. */
static void fill_devices(TwTrainPanel *self)
{
    static const tw_device_kind kinds[] = {TW_DEVICE_CUDA, TW_DEVICE_SIM};
    GtkStringList *labels = gtk_string_list_new((const char *const[]){"CPU", NULL});
    self->device_names = g_ptr_array_new_with_free_func(g_free);
    g_ptr_array_add(self->device_names, NULL);
    for (size_t k = 0; k < G_N_ELEMENTS(kinds); k++)
        for (int i = 0; i < tw_device_count(kinds[k]); i++) {
            tw_device device = {kinds[k], i};
            char name[32], line[256];
            tw_device_name(device, name, sizeof name);
            char *label = g_strdup_printf("%s — %s", name, tw_device_describe(device, line, sizeof line));
            gtk_string_list_append(labels, label);
            g_free(label);
            g_ptr_array_add(self->device_names, g_strdup(name));
        }
    gtk_drop_down_set_model(GTK_DROP_DOWN(self->device), G_LIST_MODEL(labels));
    g_object_unref(labels);
    gboolean choice = self->device_names->len > 1;
    gtk_widget_set_visible(self->device_caption, choice);
    gtk_widget_set_visible(self->device, choice);
}

static void tw_train_panel_init(TwTrainPanel *self)
{
    gtk_widget_init_template(GTK_WIDGET(self));
    fill_devices(self);
    const char *dataset_labels[G_N_ELEMENTS(datasets) + 1] = {0};
    for (size_t i = 0; i < G_N_ELEMENTS(datasets); i++)
        dataset_labels[i] = datasets[i].label;
    set_choices(self->dataset, dataset_labels);
    const char *optimizer_labels[G_N_ELEMENTS(optimizers) + 1] = {0};
    for (size_t i = 0; i < G_N_ELEMENTS(optimizers); i++)
        optimizer_labels[i] = optimizers[i].label;
    set_choices(self->optimizer, optimizer_labels);
    gtk_drop_down_set_selected(GTK_DROP_DOWN(self->optimizer), DEFAULT_OPTIMIZER);
    set_progress_text(self, "Not started");
    show_text(self->status, "");
    /* Connected once the choices are in place, so that filling them in
     * reacts to nothing. */
    g_signal_connect_swapped(self->dataset, "notify::selected", G_CALLBACK(on_dataset_selected), self);
    g_signal_connect_swapped(self->optimizer, "notify::selected", G_CALLBACK(on_optimizer_selected), self);
    g_signal_connect_swapped(self->learning_rate, "changed", G_CALLBACK(update_sensitivity), self);
    /* The data check: the label column and the synthetic sets' seed choose the data too. */
    g_signal_connect_swapped(self->label_column, "changed", G_CALLBACK(update_sensitivity), self);
    g_signal_connect_swapped(self->seed, "value-changed", G_CALLBACK(update_sensitivity), self);
    on_optimizer_selected(self);
    update_file_rows(self);
}

/* The one chosen before, else $XDG_DATA_HOME/twb/runs.db. */
static void default_logdb(TwTrainPanel *self)
{
    char *remembered = remembered_logdb();
    if (remembered) {
        set_logdb(self, remembered);
        g_free(remembered);
        return;
    }
    char *path = tw_run_store_default_path();
    set_logdb(self, path);
    free(path);
}

GtkWidget *tw_train_panel_new(TwModelDoc *doc)
{
    g_return_val_if_fail(TW_IS_MODEL_DOC(doc), NULL);
    TwTrainPanel *self = g_object_new(TW_TYPE_TRAIN_PANEL, NULL);
    self->doc = g_object_ref(doc);
    g_signal_connect_object(doc, "changed", G_CALLBACK(on_doc_changed), self, G_CONNECT_SWAPPED);
    g_signal_connect_object(doc, "notify::path", G_CALLBACK(on_doc_path), self, G_CONNECT_SWAPPED);
    if (!self->logdb)
        default_logdb(self);
    on_doc_changed(self);
    return GTK_WIDGET(self);
}

static void tw_train_panel_get_property(GObject *object, guint id, GValue *value, GParamSpec *pspec)
{
    TwTrainPanel *self = TW_TRAIN_PANEL(object);
    if (id == PROP_LOGDB)
        g_value_set_string(value, self->logdb);
    else if (id == PROP_RUNNING)
        g_value_set_boolean(value, self->state != STATE_IDLE);
    else if (id == PROP_CANNOT_TRAIN)
        g_value_set_string(value, self->cannot_train);
    else
        G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec);
}

static void tw_train_panel_set_property(GObject *object, guint id, const GValue *value, GParamSpec *pspec)
{
    TwTrainPanel *self = TW_TRAIN_PANEL(object);
    if (id == PROP_LOGDB)
        set_logdb(self, g_value_get_string(value));
    else
        G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec);
}

static void tw_train_panel_dispose(GObject *object)
{
    TwTrainPanel *self = TW_TRAIN_PANEL(object);
    stop_pulse(self);
    g_clear_pointer(&self->root, gtk_widget_unparent);
    gtk_widget_dispose_template(GTK_WIDGET(self), TW_TYPE_TRAIN_PANEL);
    g_clear_object(&self->doc);
    G_OBJECT_CLASS(tw_train_panel_parent_class)->dispose(object);
}

static void tw_train_panel_finalize(GObject *object)
{
    TwTrainPanel *self = TW_TRAIN_PANEL(object);
    tw_train_settings_clear(&self->settings);
    g_free(self->data_file);
    g_free(self->labels_file);
    g_free(self->logdb);
    g_free(self->auto_base);
    g_free(self->running_name);
    g_free(self->data_problem);
    g_free(self->cannot_train);
    g_free(self->blocked);
    g_clear_pointer(&self->device_names, g_ptr_array_unref);
    G_OBJECT_CLASS(tw_train_panel_parent_class)->finalize(object);
}

static void tw_train_panel_class_init(TwTrainPanelClass *klass)
{
    GObjectClass *object_class = G_OBJECT_CLASS(klass);
    object_class->get_property = tw_train_panel_get_property;
    object_class->set_property = tw_train_panel_set_property;
    object_class->dispose = tw_train_panel_dispose;
    object_class->finalize = tw_train_panel_finalize;
    gtk_widget_class_set_layout_manager_type(GTK_WIDGET_CLASS(klass), GTK_TYPE_BIN_LAYOUT);
    gtk_widget_class_set_css_name(GTK_WIDGET_CLASS(klass), "trainpanel");

    GtkWidgetClass *widget_class = GTK_WIDGET_CLASS(klass);
    gtk_widget_class_set_template_from_resource(widget_class, "/io/github/twb/Workbench/train_panel.ui");
#define BIND(field) gtk_widget_class_bind_template_child(widget_class, TwTrainPanel, field)
    BIND(root);
    BIND(form);
    BIND(dataset);
    BIND(data_file_caption);
    BIND(data_file_button);
    BIND(labels_file_caption);
    BIND(labels_button);
    BIND(label_column_caption);
    BIND(label_column);
    BIND(validation_split);
    BIND(optimizer);
    BIND(learning_rate);
    BIND(batch_size);
    BIND(epochs);
    BIND(seed);
    BIND(run_name);
    BIND(logdb_name);
    BIND(logdb_open);
    BIND(logdb_new);
    BIND(device_caption);
    BIND(device);
    BIND(train);
    BIND(pause);
    BIND(resume);
    BIND(stop);
    BIND(progress);
    BIND(progress_text);
    BIND(metrics);
    BIND(status);
#undef BIND
    gtk_widget_class_bind_template_callback(widget_class, on_choose_data_file);
    gtk_widget_class_bind_template_callback(widget_class, on_choose_labels_file);
    gtk_widget_class_bind_template_callback(widget_class, on_open_logdb);
    gtk_widget_class_bind_template_callback(widget_class, on_new_logdb);
    gtk_widget_class_bind_template_callback(widget_class, on_train_clicked);
    gtk_widget_class_bind_template_callback(widget_class, on_pause_clicked);
    gtk_widget_class_bind_template_callback(widget_class, on_resume_clicked);
    gtk_widget_class_bind_template_callback(widget_class, on_stop_clicked);

    /* The run database file; the Train panel starts with the default one. */
    props[PROP_LOGDB] = g_param_spec_string("logdb", NULL, NULL, NULL, G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
                                                                           G_PARAM_EXPLICIT_NOTIFY);
    /* Whether a run is going (from tw_train_panel_started to _finished). */
    props[PROP_RUNNING] = g_param_spec_boolean("running", NULL, NULL, FALSE,
                                               G_PARAM_READABLE | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY);
    /* Why Train is off (NULL: it is on): the panel's Train and the window's follow it. */
    props[PROP_CANNOT_TRAIN] = g_param_spec_string("cannot-train", NULL, NULL, NULL,
                                                   G_PARAM_READABLE | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY);
    g_object_class_install_properties(object_class, N_PROPS, props);

    signals[SIGNAL_TRAIN] = g_signal_new("train-requested", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL,
                                         NULL, NULL, G_TYPE_NONE, 1, G_TYPE_POINTER);
    signals[SIGNAL_PAUSE] = g_signal_new("pause-requested", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL,
                                         NULL, NULL, G_TYPE_NONE, 0);
    signals[SIGNAL_RESUME] = g_signal_new("resume-requested", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL,
                                          NULL, NULL, G_TYPE_NONE, 0);
    signals[SIGNAL_STOP] = g_signal_new("stop-requested", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL,
                                        NULL, G_TYPE_NONE, 0);
}
