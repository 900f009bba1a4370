/* The training worker: one training run on its own thread.
 *
 * It trains a copy of the designer's model on the data the settings name
 * in a training session, as `twb train` does (train_session.c: the run in
 * the run database, checkpoints next to it), and reports back on the main
 * context it was started from: progress at most 20 times a second (the latest state
 * only; at once when the run database starts losing logs), problems that do
 * not stop training (a checkpoint or the run's end not written), and the
 * end. It never touches a widget; the controller (train_controller.c) turns
 * its reports into what the window shows.
 *
 *     w = twb_train_worker_start(doc, settings, data, &callbacks, &error);
 *     twb_train_worker_set_paused(w, TRUE);   // waits after the current step
 *     twb_train_worker_stop(w);               // stops after the current step, checkpoints
 *     ... callbacks.done ...
 *     twb_train_worker_free(w);               // joins the thread
 */
#ifndef TWB_TRAIN_WORKER_H
#define TWB_TRAIN_WORKER_H

#include <glib.h>

#include <tw/model.h>
#include <tw/train_settings.h>

#include "model_doc.h"
#include "train_data.h"

G_BEGIN_DECLS

typedef enum {
    TWB_TRAIN_FINISHED, /* every epoch ran */
    TWB_TRAIN_STOPPED,  /* Stop (or the window closing) ended it */
    TWB_TRAIN_FAILED,   /* an error: NaN loss, a bad data file, out of memory, ... */
} twb_train_end;

typedef struct {
    twb_train_end end;
    /* FAILED: the error's message; otherwise one line for the panel
     * ("2 epochs · loss 0.3120 · accuracy 88.4%"). */
    const char *message;
    const char *checkpoint_path; /* the last checkpoint written, or NULL */
    tw_train_progress last;        /* the last progress (epoch, step, loss, ...) */
} twb_train_result;

/* Called on the main context twb_train_worker_start ran on; never after
 * twb_train_worker_free. */
typedef struct {
    void (*progress)(const tw_train_progress *progress, gpointer user_data);
    /* Something went wrong that does not end training (a checkpoint or the
     * run's end could not be written). Lost logs come in the progress. */
    void (*problem)(const char *message, gpointer user_data);
    void (*done)(const twb_train_result *result, gpointer user_data);
    gpointer user_data;
    /* Called on the worker's thread at each epoch's end during fit, after
     * the checkpoint (a sweep's median rule, sweep_median.h); returning 1
     * stops the run after that epoch (TWB_TRAIN_STOPPED, yet evaluated as
     * a finished run is: no person stopped it). Zeroed: none. */
    tw_callback epoch_end;
} twb_train_worker_callbacks;

typedef struct twb_train_worker twb_train_worker;

/* Copies the doc's model and starts the thread; NULL with an error when the
 * model cannot be copied (everything else is reported through done). data:
 * the settings' data, already loaded (the worker shares its tensors), or
 * NULL for the worker to load it. */
twb_train_worker *twb_train_worker_start(TwModelDoc *doc, const tw_train_settings *settings, const twb_data *data,
                                         const twb_train_worker_callbacks *callbacks, GError **error);
/* Paused, the worker waits after the step it is in until resumed or stopped. */
void twb_train_worker_set_paused(twb_train_worker *worker, gboolean paused);
/* Stop after the current step (also while paused), save a checkpoint, and
 * report done with TWB_TRAIN_STOPPED. */
void twb_train_worker_stop(twb_train_worker *worker);
/* No more callbacks; stops the run if it is still going and waits for the
 * thread (at most a step, a checkpoint and the last database writes, or the
 * data loading when it is still loading). NULL is accepted. */
void twb_train_worker_free(twb_train_worker *worker);

G_END_DECLS

#endif
