/* TwTrainPanel: the training settings (dataset, validation split, optimizer,
 * learning rate, batch size, epochs, seed, run name, run database file),
 * Train / Pause / Resume / Stop, and the progress of the running training
 * (epoch, step, samples per second, ETA, latest loss and accuracy).
 *
 * The panel does not train: "train-requested" hands the settings to the
 * application, which runs the worker (app/train_worker.c) and reports back
 * through tw_train_panel_update / tw_train_panel_finished.
 *
 * Properties: the string "logdb", the run database file (readable,
 * writable, notifies), so the window can follow the panel's choice and
 * --logdb can set it; the boolean "running" (read-only, notifies); the
 * string "cannot-train" (read-only, notifies): why Train is off, NULL when
 * it is on, the one answer for the panel's Train and the window's. Its
 * inputs carry widget names ("dataset", "epochs", "learning-rate", "train",
 * "status", ...) that tests use to drive it as a person would.
 *
 * The run database is chosen with Open… (an existing one) or New… (a file
 * to create); the choice is remembered for the next start in
 * g_get_user_config_dir()/twb/settings.ini. Setting "logdb" (--logdb) uses
 * a file for this window without remembering it. */
#ifndef TW_UI_TRAIN_PANEL_H
#define TW_UI_TRAIN_PANEL_H

#include <gtk/gtk.h>

#include <tw/train_settings.h>

#include "model_doc.h"

G_BEGIN_DECLS

#define TW_TYPE_TRAIN_PANEL (tw_train_panel_get_type())
G_DECLARE_FINAL_TYPE(TwTrainPanel, tw_train_panel, TW, TRAIN_PANEL, GtkWidget)

/* Signals: "train-requested" (const tw_train_settings *), "pause-requested",
 * "resume-requested", "stop-requested". Train is insensitive while the doc
 * is invalid, the model has nothing to train, the data check says no, or
 * the panel is blocked (tw_train_panel_set_blocked), with the reason as its
 * tooltip. */
GtkWidget *tw_train_panel_new(TwModelDoc *doc);

/* The application's check of the model against the data the settings
 * name: why they cannot train together, or NULL (a g_free'd string; also
 * "still loading"). The panel asks whenever the model or the data choice
 * changes; tw_train_panel_recheck when the answer may have changed (the
 * data finished loading). NULL check: none. */
typedef char *(*TwTrainDataCheck)(const tw_train_settings *settings, tw_model *model, gpointer user_data);
void tw_train_panel_set_data_check(TwTrainPanel *panel, TwTrainDataCheck check, gpointer user_data);
void tw_train_panel_recheck(TwTrainPanel *panel);
/* A reason from outside the panel that Train is off (the designer shows
 * a nested model: designer_view.h), NULL for none; Train says it before
 * the model's own problems. */
void tw_train_panel_set_blocked(TwTrainPanel *panel, const char *reason);
/* Why Train is off now, or NULL: the "cannot-train" property. */
const char *tw_train_panel_cannot_train(TwTrainPanel *panel);
const tw_train_settings *tw_train_panel_settings(TwTrainPanel *panel);
/* Ask to train (what Ctrl+Return does): emits "train-requested" if the
 * model is valid and nothing is running; FALSE otherwise. */
gboolean tw_train_panel_request_train(TwTrainPanel *panel);
/* State changes from the application. */
void tw_train_panel_started(TwTrainPanel *panel);
/* Started, a run of other settings than the panel's (a sweep's trial). */
void tw_train_panel_started_as(TwTrainPanel *panel, const char *run_name);
void tw_train_panel_update(TwTrainPanel *panel, const tw_train_progress *progress);
void tw_train_panel_paused(TwTrainPanel *panel, gboolean paused);
/* The run ended; summary is the status line ("Finished: ...", "Failed ...";
 * a failure's message is shown by the window's banner, not here). */
void tw_train_panel_finished(TwTrainPanel *panel, const char *summary);

G_END_DECLS

#endif
