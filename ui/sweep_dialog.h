/* TwSweepDialog: a sweep from the window. Above, the values to try for
 * learning rate, batch size, optimizer, epochs and seed (a list
 * "1e-3,3e-3" or, for random search, a range "1e-4:1e-2"; empty: the
 * training panel's value), and for numeric properties of the model's
 * layers (rows of a layer, its property, and the values; Add Layer
 * Property adds a row, each added row has a Remove), grid or random
 * with N trials, the sweep's name, whether the median stopping rule stops
 * bad trials, and how many trials train at once; Start.
 * Below, the queue: each trial with its values and where it
 * is (pending, running, finished, stopped, failed with the reason,
 * cancelled), a Cancel on each open one, and Cancel All.
 *
 * The dialog neither parses nor trains: "start-requested" asks the
 * application (app/sweep_queue.c), which reads the fields, answers with
 * tw_sweep_dialog_show_error when they are wrong, and fills the queue
 * model (TwSweepTrial items). "cancel-trial" (TwSweepTrial *) and
 * "cancel-all" ask to cancel. Widget names for tests: "sweep-learning-rate",
 * "sweep-batch-size", "sweep-optimizer", "sweep-epochs", "sweep-seed",
 * "sweep-layer", "sweep-property", "sweep-layer-values" (the first row;
 * row k's end in "-k", with its "sweep-remove-layer-k"), "sweep-add-layer",
 * "sweep-search", "sweep-trials", "sweep-name", "sweep-median-stop",
 * "sweep-parallel", "sweep-start",
 * "sweep-error", "sweep-queue", "sweep-counts", "sweep-cancel-all", and
 * "cancel" on each queue row. */
#ifndef TW_UI_SWEEP_DIALOG_H
#define TW_UI_SWEEP_DIALOG_H

#include <gtk/gtk.h>

#include <tw/model.h>

G_BEGIN_DECLS

#define TW_TYPE_SWEEP_DIALOG (tw_sweep_dialog_get_type())
G_DECLARE_FINAL_TYPE(TwSweepDialog, tw_sweep_dialog, TW, SWEEP_DIALOG, GtkWindow)

/* queue: TwSweepTrial items, shown as they change. */
GtkWidget *tw_sweep_dialog_new(GtkWindow *parent, GListModel *queue);
/* The text typed for a swept setting, by its option's name without the
 * dashes ("learning-rate", "batch-size", "optimizer", "epochs", "seed"). */
const char *tw_sweep_dialog_values(TwSweepDialog *dialog, const char *setting);
gboolean tw_sweep_dialog_random(TwSweepDialog *dialog);
int tw_sweep_dialog_trials(TwSweepDialog *dialog);
/* The sweep's name, or NULL when the field is empty. */
const char *tw_sweep_dialog_name(TwSweepDialog *dialog);
/* Whether bad trials stop early (app/sweep_median.h). */
gboolean tw_sweep_dialog_median_stop(TwSweepDialog *dialog);
/* Trials at once (1: one after another on the window's worker). */
int tw_sweep_dialog_parallel(TwSweepDialog *dialog);
/* The layer drop-downs' choices: the model's layers that have numeric
 * properties (INT or FLOAT parameters), each with those, the layers of
 * nested models among them by their paths ("encoder/dense_1",
 * tw_model_foreach_layer); each row's choice stays when the layer is still
 * there. NULL: None only. */
void tw_sweep_dialog_set_model(TwSweepDialog *dialog, const tw_model *model);
/* The layer properties to sweep as `twb sweep --set` takes them, one per
 * row with a layer chosen and values typed: "dense_1.units=32,64",
 * "encoder/dense_1.units=8,16" (g_strfreev; empty when none). */
char **tw_sweep_dialog_layer_settings(TwSweepDialog *dialog);
/* NULL clears the message. */
void tw_sweep_dialog_show_error(TwSweepDialog *dialog, const char *message);

G_END_DECLS

#endif
