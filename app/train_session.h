/* One training session: what `twb train` (train_cmd.c) and the window's
 * worker (train_worker.c) both do around tw_model_fit, so that the two
 * train alike: compile for the settings and the labels, checkpoint next to
 * the run, record the settings and the run in the run database, and log the
 * final metrics.
 *
 *     twb_train_session ts;
 *     if (twb_train_compile(model, settings, y) == 0 &&
 *         twb_train_session_open(&ts, model, &options) == 0) {
 *         tw_fit_options fit = twb_train_session_fit_options(&ts, &my_callback, &stop);
 *         tw_history *h = twb_train_session_fit(&ts, &data, &fit);
 *         ... twb_train_session_log_metrics(&ts, &logs, "test_") ...
 *     }
 *     twb_train_session_close(&ts, TW_RUN_FINISHED, NULL);
 *
 * Reporting (a progress bar and warnings, or reports to the window) stays
 * with the caller, which reads the writer's and the checkpoint's errors. */
#ifndef TWB_TRAIN_SESSION_H
#define TWB_TRAIN_SESSION_H

#include <stdbool.h>

#include <tw/checkpoint.h>
#include <tw/model.h>
#include <tw/summary.h>
#include <tw/train_settings.h>

#include "train_data.h"

/* How often every run twb trains logs to the run database: the batch's
 * values every TWB_LOG_EVERY_STEPS steps, the weight and gradient
 * histograms every TWB_HISTOGRAM_EVERY_STEPS. One cadence for `twb train`
 * (its --log-every / --histogram-every defaults), `twb sweep`'s trials
 * (the window's trials at once among them) and the window's worker, so
 * their runs compare in the dashboard. */
#define TWB_LOG_EVERY_STEPS 10
#define TWB_HISTOGRAM_EVERY_STEPS 100

typedef struct {
    const char *checkpoint_path;    /* NULL: no checkpoints */
    int log_every, histogram_every; /* the run database's logger (tw_summary_logger_new) */
    bool resume;                    /* append to the settings' run instead of creating it */
    const char *tfevents_dir;       /* also a TensorBoard event file there (tw_summary_run_options), or NULL */
} twb_train_session_options;

typedef struct {
    const tw_train_settings *settings; /* borrowed, as the model */
    tw_model *model;
    char *checkpoint_path;
    tw_model_checkpoint *checkpoint; /* NULL without checkpoint_path */
    tw_summary_writer *writer;       /* NULL without settings->logdb */
    tw_summary_logger *logger;
    int histogram_every, log_every;
    tw_callback callbacks[4];
    int checkpoint_failures; /* failed saves already warned about */
    char *checkpoint_warned; /* the last failure's message */
    int64_t run_id; /* under mpirun, every rank: rank 0's run (0 or -1: none), for a rank replacing a dead rank 0 */
} twb_train_session;

/* Compile the model for labels y, after setting the settings' layer
 * values on its layers (a sweep trial's; the model not built yet): the
 * settings' loss, or Keras' usual one for the labels (twb_default_loss);
 * the settings' optimizer at their learning rate (NAN: its default);
 * accuracy when it classifies. 0, or -1 with a message. */
int twb_train_compile(tw_model *model, const tw_train_settings *settings, tw_tensor *y);
/* The settings' layer values (a sweep trial's) on the model's layers,
 * each found by its path (tw_model_find_layer_path: "encoder/dense_1" in a
 * nested model). A value the layer already has is left alone; another is
 * refused on a built layer. 0, or -1 with a message naming the layer. */
int twb_train_set_layer_values(tw_model *model, const tw_train_settings *settings);
/* The model (not built; the caller's reference taken over) with the
 * settings' layer values: the same model, or, when it holds a Functional
 * model (whose graph keeps the shapes its layers had when it was made), the
 * model read again from its JSON so that the graph follows the values. NULL
 * with a message, the reference dropped. Every path that trains a sweep
 * trial calls it before twb_train_compile (which then finds the values
 * set). */
tw_model *twb_model_with_layer_values(tw_model *model, const tw_train_settings *settings);

/* Under mpirun (tw/distributed.h, after tw_distributed_init) the session
 * trains data-parallel: settings->ranks says how many ranks, fit is
 * distributed, and only rank 0 writes the checkpoints and the run, which
 * also gets every rank's step and allreduce times as dist/rank_N/step_ms
 * and dist/rank_N/allreduce_ms. The other ranks still read the checkpoint
 * to resume. Every rank learns the run's id; when rank 0 dies, the lowest
 * surviving rank of its machine (tw_distributed_replaces_rank0) marks the
 * run failed at close, with the reason naming rank 0. */

/* After compiling: the checkpoint writer (creating its folder) and the run
 * (named settings->run_name, else the model's name and the time), both
 * recording the settings with the optimizer's actual learning rate. 0, or
 * -1 with a message; either way twb_train_session_close frees what was
 * opened. */
int twb_train_session_open(twb_train_session *ts, tw_model *model, const tw_train_settings *settings,
                           const twb_train_session_options *options);

/* Fit options for the settings (epochs, batch size, seed, validation
 * split), stopping when *stop is set, with the callbacks: the checkpoint's
 * first (so own's epoch end can tell whether it failed), then own (may be
 * NULL), then the run database's logger. Valid while ts is. */
tw_fit_options twb_train_session_fit_options(twb_train_session *ts, const tw_callback *own, volatile int *stop);

/* Fit the model on data's training arrays, one per input, each fitted to
 * its input (twb_fit_inputs): tw_model_fit_n, as Keras' fit([x1, x2], y).
 * The history, or NULL with a message. */
tw_history *twb_train_session_fit(twb_train_session *ts, const twb_data *data, const tw_fit_options *fit);

/* A stopped fit's checkpoint at h's resume position, so a resumed run goes
 * on from the step it stopped after. 0 without checkpoints; -1 with a
 * message. */
int twb_train_session_save_stop(twb_train_session *ts, const tw_history *h);

/* logs as the run's metrics, each name prefixed ("test_" + "loss"). Nothing
 * without a run database. */
void twb_train_session_log_metrics(twb_train_session *ts, const tw_logs *logs, const char *prefix);

/* The run's result once fit returned h, decided here for `twb train`,
 * the CLI sweep's trials (sweep_cmd.c) and every run the window trains
 * (train_worker.c), its sweep trials included: the final metrics are h's last epoch's logs
 * and, unless a person stopped the run (stopped_by_person: Ctrl+C, Stop,
 * Cancel, the window closing; nothing more is computed then), the
 * model's metrics on data's test split (the training data without one)
 * as "test_loss", "test_accuracy", ..., and for a classifier its
 * evaluation (evaluate_run.h) at the step the model reached. metrics (may
 * be NULL) gets what was stored. 0; 1 when the evaluation could not be
 * stored (a warning: the metrics are, message in tw_last_error); -1 with
 * a message when the test metrics could not be computed (the epoch's logs
 * are stored all the same). */
int twb_train_session_store_result(twb_train_session *ts, const tw_history *h, const twb_data *data,
                                   bool stopped_by_person, tw_logs *metrics);

/* A checkpoint that could not be saved (a full disk) keeps the previous
 * one and training goes on: the failure's message once, the first time
 * it is seen (not at every epoch), else NULL. Borrowed until the next
 * call or the close. */
const char *twb_train_session_checkpoint_warning(twb_train_session *ts);

/* Ends the run with its status and, for a failure, the reason; frees the
 * writer, the logger and the checkpoint writer. 0, or -1 (message in
 * tw_last_error) when the run's end could not be written. */
int twb_train_session_close(twb_train_session *ts, tw_run_status status, const char *reason);

/* Where the window's runs checkpoint: <folder of logdb>/checkpoints/<run>.safetensors,
 * with characters a file name cannot hold replaced. g_free it. Its two
 * halves: the folder (g_free), and a run's file in a folder (g_free), as
 * `twb sweep --checkpoint-dir DIR` names its trials' (the window's trials
 * at once pass its folder, so theirs are where its worker's are). */
char *twb_train_checkpoint_path(const char *logdb, const char *run_name);
char *twb_train_checkpoint_dir(const char *logdb);
char *twb_train_checkpoint_in(const char *dir, const char *run_name);

#endif
