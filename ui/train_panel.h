/* TwTrainPanel: the training settings (dataset, validation split, optimizer,
 * learning rate, batch size, epochs, seed, run name, run database file),
 * Train / Pause / Resume / Stop, and the progress of the running training
 * (epoch, step, samples per second, ETA, latest loss and accuracy).
 *
 * The panel does not train: "train-requested" hands the settings to the
 * application, which runs the worker (app/train_worker.c) and reports back
 * through tw_train_panel_update / tw_train_panel_finished.
 *
 * Added to the contract (compatible): the string property "logdb", the run
 * database file (readable, writable, notifies), so the window can follow
 * the panel's choice and --logdb can set it; the boolean property "running"
 * (read-only, notifies) for the window's own Train. Its inputs carry widget names
 * ("dataset", "epochs", "learning-rate", "train", "status", ...) that tests
 * use to drive it as a person would. */
#ifndef TW_UI_TRAIN_PANEL_H
#define TW_UI_TRAIN_PANEL_H

#include <gtk/gtk.h>

#include "model_doc.h"

G_BEGIN_DECLS

typedef struct {
    char *dataset;          /* "fashion-mnist", "spirals", "blobs", "linear", or a file path */
    char *labels;           /* labels file for IDX/NPY, or NULL */
    char *label_column;     /* CSV, or NULL */
    double validation_split;
    char *optimizer;        /* "adam", ... */
    double learning_rate;
    int64_t batch_size;
    int epochs;
    uint64_t seed;
    char *run_name;
    char *logdb;            /* run database file */
} TwTrainSettings;

TwTrainSettings *tw_train_settings_copy(const TwTrainSettings *s);
void tw_train_settings_free(TwTrainSettings *s);

/* What the worker reports; the panel formats it. */
typedef struct {
    int epoch, epochs;        /* 0-based epoch */
    int64_t step, steps;
    double samples_per_second;
    double eta_seconds;
    double loss, accuracy;    /* NAN when not known */
} TwTrainProgress;

#define TW_TYPE_TRAIN_PANEL (tw_train_panel_get_type())
G_DECLARE_FINAL_TYPE(TwTrainPanel, tw_train_panel, TW, TRAIN_PANEL, GtkWidget)

/* Signals: "train-requested" (const TwTrainSettings *), "pause-requested",
 * "resume-requested", "stop-requested". Train is insensitive while the doc
 * is invalid, with the doc's error as its tooltip. */
GtkWidget *tw_train_panel_new(TwModelDoc *doc);
const TwTrainSettings *tw_train_panel_settings(TwTrainPanel *panel);
/* Ask to train (what Ctrl+Return does): emits "train-requested" if the
 * model is valid and nothing is running; FALSE otherwise. */
gboolean tw_train_panel_request_train(TwTrainPanel *panel);
/* State changes from the application. */
void tw_train_panel_started(TwTrainPanel *panel);
void tw_train_panel_update(TwTrainPanel *panel, const TwTrainProgress *progress);
void tw_train_panel_paused(TwTrainPanel *panel, gboolean paused);
/* message NULL on success; else shown by the window's banner, not here. */
void tw_train_panel_finished(TwTrainPanel *panel, const char *summary);

G_END_DECLS

#endif
