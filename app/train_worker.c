/* The training worker thread (see train_worker.h).
 *
 * The thread owns everything it trains with: the model copy, the data, the
 * checkpoint writer. The main loop and the thread share only the control
 * fields under `lock` (paused, the latest progress, the reports waiting)
 * and the stop flag, which tw_model_fit reads after every step. Progress is
 * coalesced so that at most one report waits at any time, however fast the
 * steps are.
 *
 * Reports travel through a mailbox: the thread queues them under `lock`
 * and then writes to an eventfd that a source on the main context, made by
 * the main thread, watches. The thread never touches the main context
 * itself: g_source_attach wakes the main thread while it holds the
 * context's lock, the woken main thread often takes the worker's core at
 * once and then waits for that lock until the worker, niced below every
 * other process of a busy machine, gets a core again (the main loop was
 * seen blocked for 985 ms while the CNN trained). */
#include "train_worker.h"

#include <errno.h>
#include <glib-unix.h>
#include <math.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <tw/engine.h>

#include "train_data.h"
#include "train_session.h"

#define PROGRESS_INTERVAL_US 50000 /* at most 20 progress reports a second */
#define WORKER_NICE 10             /* the window and the X server come first */

struct twb_train_worker {
    GSource *mailbox; /* main thread only: watches `wake` on the main context */
    int wake;         /* eventfd: the thread's knock after queueing reports */
    GThread *thread;
    twb_train_worker_callbacks callbacks;
    gboolean disconnected; /* main thread only: no more callbacks */

    /* Set before the thread starts, then the thread's. */
    tw_train_settings *settings;
    tw_model *model;
    char *checkpoint_path;
    twb_train_session session; /* the checkpoints and the run in the run database */
    twb_data data;            /* loaded before the start, or by the thread */
    char *logs_lost_reason;   /* the writer's message once it lost logs */
    int64_t logs_lost_from_step;
    tw_train_progress last;
    gint64 last_report_us;
    double epoch_began, paused_seconds; /* for samples per second without the pauses */
    int epoch_seen;
    int64_t train_examples;

    volatile int stop; /* tw_fit_options.stop_flag */
    GMutex lock;
    GCond resumed;
    gboolean paused;         /* under lock */
    tw_train_progress latest;  /* under lock */
    gboolean report_waiting; /* under lock: a progress report is queued */
    GQueue mail;             /* under lock: reports for the main loop, oldest first */
};

/* ---- lifetime: the thread, the controller and a delivering mailbox each hold a reference */
static void report_free(gpointer data);

static void worker_clear(gpointer data)
{
    twb_train_worker *w = data;
    g_queue_clear_full(&w->mail, report_free); /* reports left when the window went */
    close(w->wake);
    tw_train_settings_free(w->settings);
    tw_layer_unref(w->model);
    g_free(w->checkpoint_path);
    twb_data_clear(&w->data);
    g_free(w->logs_lost_reason);
    g_mutex_clear(&w->lock);
    g_cond_clear(&w->resumed);
}

static twb_train_worker *worker_ref(twb_train_worker *w)
{
    return g_atomic_rc_box_acquire(w);
}

static void worker_unref(gpointer w)
{
    g_atomic_rc_box_release_full(w, worker_clear);
}

/* ---- reports to the main loop --------------------------------------------- */
typedef struct report report;
struct report {
    void (*deliver)(twb_train_worker *w, report *r); /* on the main loop */
    char *message;
    char *checkpoint_path;
    twb_train_end end;
    tw_train_progress last;
};

static void report_free(gpointer data)
{
    report *r = data;
    g_free(r->message);
    g_free(r->checkpoint_path);
    g_free(r);
}

/* Queue the report and knock, outside the lock (the knock may hand the core
 * to the main thread, which must not find the lock taken). */
static void post(twb_train_worker *w, void (*deliver)(twb_train_worker *, report *), report *r)
{
    r->deliver = deliver;
    g_mutex_lock(&w->lock);
    g_queue_push_tail(&w->mail, r);
    g_mutex_unlock(&w->lock);
    uint64_t one = 1;
    ssize_t written = write(w->wake, &one, sizeof one); /* fails only when full: a knock is waiting */
    (void)written;
}

/* The mailbox's source: every report waiting, in order. A callback may
 * free the worker (done does): then the rest are dropped. */
static gboolean deliver_mail(gint fd, GIOCondition condition, gpointer data)
{
    uint64_t knocks;
    if (read(fd, &knocks, sizeof knocks) < 0) /* only EAGAIN: nothing new */
        return G_SOURCE_CONTINUE;
    twb_train_worker *w = worker_ref(data);
    while (!w->disconnected) {
        g_mutex_lock(&w->lock);
        report *r = g_queue_pop_head(&w->mail);
        g_mutex_unlock(&w->lock);
        if (!r)
            break;
        r->deliver(w, r);
        report_free(r);
    }
    worker_unref(w);
    return G_SOURCE_CONTINUE;
}

static void deliver_progress(twb_train_worker *w, report *r)
{
    g_mutex_lock(&w->lock);
    tw_train_progress p = w->latest;
    w->report_waiting = FALSE;
    g_mutex_unlock(&w->lock);
    if (w->callbacks.progress)
        w->callbacks.progress(&p, w->callbacks.user_data);
}

/* Keep the latest state; queue a report only when none is waiting. */
static void report_progress(twb_train_worker *w, const tw_train_progress *p, gboolean now)
{
    gint64 t = g_get_monotonic_time();
    w->last = *p;
    if (!now && t - w->last_report_us < PROGRESS_INTERVAL_US)
        return;
    w->last_report_us = t;
    g_mutex_lock(&w->lock);
    w->latest = *p;
    gboolean queue = !w->report_waiting;
    w->report_waiting = TRUE;
    g_mutex_unlock(&w->lock);
    if (queue) /* deliver_progress reads the latest then */
        post(w, deliver_progress, g_new0(report, 1));
}

static void deliver_problem(twb_train_worker *w, report *r)
{
    if (w->callbacks.problem)
        w->callbacks.problem(r->message, w->callbacks.user_data);
}

static void report_problem(twb_train_worker *w, const char *message)
{
    report *r = g_new0(report, 1);
    r->message = g_strdup(message);
    post(w, deliver_problem, r);
}

static void deliver_done(twb_train_worker *w, report *r)
{
    twb_train_result result = {.end = r->end, .message = r->message, .checkpoint_path = r->checkpoint_path,
                            .last = r->last};
    if (w->callbacks.done)
        w->callbacks.done(&result, w->callbacks.user_data);
}

/* ---- what the panel shows ------------------------------------------------- */
static double seconds_now(void)
{
    return (double)g_get_monotonic_time() / G_USEC_PER_SEC;
}

static tw_train_progress progress_of(twb_train_worker *w, const tw_progress *p, const tw_logs *logs)
{
    if (p->epoch != w->epoch_seen) {
        w->epoch_seen = p->epoch;
        w->epoch_began = seconds_now() - p->elapsed;
        w->paused_seconds = 0;
    }
    int64_t batch = w->settings->batch_size;
    int64_t done = (p->step + 1) * batch < w->train_examples ? (p->step + 1) * batch : w->train_examples;
    double active = seconds_now() - w->epoch_began - w->paused_seconds;
    double rate = active > 0 ? (double)done / active : 0;
    int64_t steps_left = (int64_t)(p->epochs - p->epoch - 1) * p->steps + (p->steps - p->step - 1);
    return (tw_train_progress){
        .epoch = p->epoch, .epochs = p->epochs, .step = p->step, .steps = p->steps,
        .samples_per_second = rate,
        .eta_seconds = rate > 0 ? (double)(steps_left * batch) / rate : NAN,
        .loss = tw_logs_get(logs, "loss"), .accuracy = tw_logs_get(logs, "accuracy"),
        .logs_lost_from_step = w->logs_lost_from_step, .logs_lost_reason = w->logs_lost_reason,
    };
}

/* TRUE the first time the writer says it lost logs. The message is set
 * before the step, so both are read once the step is. */
static gboolean logs_newly_lost(twb_train_worker *w)
{
    int64_t lost = tw_summary_writer_lost_from_step(w->session.writer);
    if (lost < 0 || w->logs_lost_from_step >= 0)
        return FALSE;
    const char *why = tw_summary_writer_error(w->session.writer);
    w->logs_lost_reason = g_strdup(why ? why : "the run database cannot be written");
    w->logs_lost_from_step = lost;
    return TRUE;
}

/* Paused after a step: the panel shows exactly that step while it waits. */
static void wait_while_paused(twb_train_worker *w)
{
    g_mutex_lock(&w->lock);
    gboolean paused = w->paused && !g_atomic_int_get(&w->stop);
    g_mutex_unlock(&w->lock);
    if (!paused)
        return;
    report_progress(w, &w->last, TRUE);
    g_mutex_lock(&w->lock);
    double began = seconds_now();
    while (w->paused && !g_atomic_int_get(&w->stop))
        g_cond_wait(&w->resumed, &w->lock);
    w->paused_seconds += seconds_now() - began;
    g_mutex_unlock(&w->lock);
}

static int on_batch_end(tw_model *model, const tw_progress *p, const tw_logs *logs, void *user_data)
{
    twb_train_worker *w = user_data;
    const char *checkpoint_failed = twb_train_session_checkpoint_warning(&w->session);
    if (checkpoint_failed) /* the previous checkpoint stays; training goes on */
        report_problem(w, checkpoint_failed);
    gboolean lost = logs_newly_lost(w); /* the writer goes on dropping what it cannot write */
    tw_train_progress tp = progress_of(w, p, logs);
    report_progress(w, &tp, lost || p->step + 1 == p->steps);
    wait_while_paused(w);
    return 0;
}

/* The caller's epoch-end callback (train_worker.h), on this thread. */
static int on_epoch_end(tw_model *model, const tw_progress *p, const tw_logs *logs, void *user_data)
{
    twb_train_worker *w = user_data;
    const tw_callback *c = &w->callbacks.epoch_end;
    return c->on_epoch_end ? c->on_epoch_end(model, p, logs, c->user_data) : 0;
}

/* ---- training --------------------------------------------------------------- */
/* Close the run with how it ended; a writer that failed is reported once
 * (lost logs were reported as they happened). */
static void close_session(twb_train_worker *w, twb_train_end end)
{
    static const tw_run_status status[] = {
        [TWB_TRAIN_FINISHED] = TW_RUN_FINISHED, [TWB_TRAIN_STOPPED] = TW_RUN_STOPPED, [TWB_TRAIN_FAILED] = TW_RUN_FAILED};
    char *lost = NULL;
    const char *checkpoint_failed = twb_train_session_checkpoint_warning(&w->session);
    if (checkpoint_failed) /* the last epoch's save */
        report_problem(w, checkpoint_failed);
    if (w->session.writer) {
        logs_newly_lost(w); /* the last steps' logs are in the done report's progress */
        w->last.logs_lost_from_step = w->logs_lost_from_step;
        w->last.logs_lost_reason = w->logs_lost_reason;
        lost = g_strdup(tw_summary_writer_error(w->session.writer));
    }
    if (twb_train_session_close(&w->session, status[end], tw_last_error()) && w->logs_lost_from_step < 0)
        report_problem(w, lost ? lost : tw_last_error());
    g_free(lost);
}

/* "2 epochs · loss 0.3120 · accuracy 88.4% · validation accuracy 87.0%" */
static char *describe_history(const tw_history *h)
{
    GString *s = g_string_new(NULL);
    g_string_append_printf(s, "%d epoch%s", h->epochs, h->epochs == 1 ? "" : "s");
    const tw_logs *logs = h->epochs ? &h->epoch_logs[h->epochs - 1] : NULL;
    static const struct {
        const char *key, *label;
        gboolean percent;
    } shown[] = {{"loss", "loss", FALSE}, {"accuracy", "accuracy", TRUE},
                 {"val_loss", "validation loss", FALSE}, {"val_accuracy", "validation accuracy", TRUE}};
    for (size_t i = 0; logs && i < G_N_ELEMENTS(shown); i++) {
        double v = tw_logs_get(logs, shown[i].key);
        if (isnan(v))
            continue;
        if (shown[i].percent)
            g_string_append_printf(s, " · %s %.1f%%", shown[i].label, 100 * v);
        else
            g_string_append_printf(s, " · %s %.4f", shown[i].label, v);
    }
    return g_string_free(s, FALSE);
}

static void fail(report *r)
{
    r->end = TWB_TRAIN_FAILED;
    r->message = g_strdup(tw_last_error());
}

/* A run that trained on a device says so: " · on cuda:0", read from where
 * its variables live. */
static void append_device(tw_model *model, char **message)
{
    tw_variables vars = tw_model_trainable_variables(model);
    if (vars.n == 0 || tw_tensor_device(vars.items[0]).kind == TW_DEVICE_CPU)
        return;
    char name[32];
    char *with = g_strdup_printf("%s · on %s", *message, tw_device_name(tw_tensor_device(vars.items[0]), name, sizeof name));
    g_free(*message);
    *message = with;
}

/* Fit with the progress reports and the checkpoints; the end goes into r. */
static void fit(twb_train_worker *w, const twb_data *data, report *r)
{
    const tw_train_settings *s = w->settings;
    tw_callback progress = {.on_batch_end = on_batch_end, .on_epoch_end = on_epoch_end, .user_data = w};
    tw_fit_options options = twb_train_session_fit_options(&w->session, &progress, &w->stop);
    int64_t n = tw_tensor_dim(data->x[0], 0);
    w->train_examples = s->validation_split > 0 ? (int64_t)((double)n * (1 - s->validation_split)) : n;
    w->epoch_seen = -1;
    tw_history *h = twb_train_session_fit(&w->session, data, &options);
    if (!h) {
        fail(r);
        return;
    }
    r->end = h->stopped_early ? TWB_TRAIN_STOPPED : TWB_TRAIN_FINISHED;
    /* The final metrics and the evaluation, as the CLI sweep's trials
     * store theirs; an evaluation not stored is a problem, not a failure. */
    int stored = twb_train_session_store_result(&w->session, h, data, g_atomic_int_get(&w->stop), NULL);
    if (stored)
        report_problem(w, tw_last_error());
    if (h->stopped_early) {
        r->message = w->last.steps ? g_strdup_printf("after step %lld of epoch %d", (long long)w->last.step + 1,
                                                     w->last.epoch + 1)
                                   : g_strdup("before the first step");
        if (twb_train_session_save_stop(&w->session, h))
            report_problem(w, tw_last_error());
    } else {
        r->message = describe_history(h);
        append_device(w->model, &r->message);
    }
    tw_history_free(h);
}

/* When the model and the data do not fit each other, the message says what
 * the data is: "... (the data: linear (1000 examples), shape (1000,))",
 * the shape of each input's examples as the model gets them. */
static void fail_naming_data(report *r, const twb_data *data, tw_model *model)
{
    GString *shape = g_string_new(NULL);
    for (int k = 0; k < data->ninputs; k++) {
        tw_tensor *x = twb_fit_input(model, k, data->x[k]);
        g_string_append(shape, k ? " and (" : "(");
        for (int i = 0; i < tw_tensor_ndim(x); i++)
            g_string_append_printf(shape, "%s%lld", i ? ", " : "", (long long)tw_tensor_dim(x, i));
        g_string_append(shape, tw_tensor_ndim(x) == 1 ? ",)" : ")");
        tw_tensor_unref(x);
    }
    r->end = TWB_TRAIN_FAILED;
    g_free(r->message);
    r->message = g_strdup_printf("%s (the data: %s, shape %s)", tw_last_error(), data->description, shape->str);
    g_string_free(shape, TRUE);
}

/* Load, compile, fit. */
static void train(twb_train_worker *w, report *r)
{
    const tw_train_settings *s = w->settings;
    twb_data_spec spec = twb_data_spec_of(s);
    if (!w->data.x[0] && twb_data_load(&spec, &w->data)) {
        fail(r);
        return;
    }
    const twb_data *data = &w->data;
    /* a sweep trial's layer values (a Functional model read again for them) */
    if (!(w->model = twb_model_with_layer_values(w->model, s))) {
        fail(r);
        return;
    }
    twb_train_session_options options = {.checkpoint_path = w->checkpoint_path,
                                         .log_every = TWB_LOG_EVERY_STEPS,
                                         .histogram_every = TWB_HISTOGRAM_EVERY_STEPS};
    if (twb_train_compile(w->model, s, data->y)) {
        fail_naming_data(r, data, w->model);
    } else if (twb_train_session_open(&w->session, w->model, s, &options)) {
        fail(r);
    } else if (g_atomic_int_get(&w->stop)) {
        r->end = TWB_TRAIN_STOPPED;
        r->message = g_strdup("before the first step");
    } else {
        fit(w, data, r);
        if (r->end == TWB_TRAIN_FAILED && !w->last.steps)
            fail_naming_data(r, data, w->model);
    }
    if (w->session.checkpoint && tw_model_checkpoint_saves(w->session.checkpoint) > 0)
        r->checkpoint_path = g_strdup(w->checkpoint_path);
    close_session(w, r->end);
}

/* This thread's priority only (Linux's nice is per thread). */
static void lower_priority(void)
{
    setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), WORKER_NICE);
}

static gpointer worker_main(gpointer data)
{
    twb_train_worker *w = data;
    /* Every core, as `twb train` uses: the engine's adaptive thread count
     * (engine/threads) gives way by itself to the main loop, the renderer
     * and other programs when they keep cores busy, and this thread's
     * lower priority lets the window draw first. */
    lower_priority();
    report *r = g_new0(report, 1);
    /* The model builds its variables on this thread's default device, as
     * `twb train --device` does (fit copies each batch to them). */
    tw_device device;
    if (w->settings->device &&
        (tw_device_parse(w->settings->device, &device) < 0 || tw_set_default_device(device) < 0))
        fail(r);
    else
        train(w, r);
    r->last = w->last;
    post(w, deliver_done, r);
    worker_unref(w);
    return NULL;
}

/* ---- the controller's side -------------------------------------------------- */
twb_train_worker *twb_train_worker_start(TwModelDoc *doc, const tw_train_settings *settings, const twb_data *data,
                                         const twb_train_worker_callbacks *callbacks, GError **error)
{
    tw_device device;
    if (settings->device && tw_device_parse(settings->device, &device) < 0) {
        g_set_error_literal(error, g_quark_from_static_string("twb-train-worker"), 0, tw_last_error());
        tw_error_clear();
        return NULL;
    }
    tw_model *model = tw_model_doc_copy_model(doc, error);
    if (!model)
        return NULL;
    int wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (wake < 0) {
        g_set_error(error, g_quark_from_static_string("twb-train-worker"), 0, "cannot start the training thread: %s",
                    g_strerror(errno));
        tw_layer_unref(model);
        return NULL;
    }
    twb_train_worker *w = g_atomic_rc_box_new0(twb_train_worker);
    w->wake = wake;
    w->mailbox = g_unix_fd_source_new(wake, G_IO_IN);
    g_source_set_callback(w->mailbox, G_SOURCE_FUNC(deliver_mail), w, NULL); /* destroyed before w goes */
    g_source_set_static_name(w->mailbox, "twb-train-reports");
    g_source_attach(w->mailbox, g_main_context_get_thread_default());
    w->callbacks = *callbacks;
    w->settings = tw_train_settings_copy(settings);
    w->model = model;
    w->checkpoint_path = twb_train_checkpoint_path(settings->logdb, settings->run_name);
    w->logs_lost_from_step = -1;
    w->last.logs_lost_from_step = -1;
    if (data)
        twb_data_copy(data, &w->data);
    g_mutex_init(&w->lock);
    g_cond_init(&w->resumed);
    g_queue_init(&w->mail);
    w->thread = g_thread_new("twb-train", worker_main, worker_ref(w));
    return w;
}

void twb_train_worker_set_paused(twb_train_worker *w, gboolean paused)
{
    g_mutex_lock(&w->lock);
    w->paused = paused;
    g_cond_broadcast(&w->resumed);
    g_mutex_unlock(&w->lock);
}

void twb_train_worker_stop(twb_train_worker *w)
{
    g_mutex_lock(&w->lock);
    g_atomic_int_set(&w->stop, 1);
    g_cond_broadcast(&w->resumed);
    g_mutex_unlock(&w->lock);
}

void twb_train_worker_free(twb_train_worker *w)
{
    if (!w)
        return;
    w->disconnected = TRUE;
    twb_train_worker_stop(w);
    g_thread_join(w->thread);
    g_source_destroy(w->mailbox);
    g_source_unref(w->mailbox);
    worker_unref(w);
}
