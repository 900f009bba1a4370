/* Trials as processes (sweep_processes.h). */
#include "sweep_processes.h"

#include <math.h>
#include <signal.h>

#include <gio/gio.h>

#include <tw/run_store.h>

typedef enum { PENDING, RUNNING, ENDED, CANCELLED } trial_state;

typedef struct {
    twb_sweep_processes *owner;
    int index;
    trial_state state;
    char **argv;
    GSubprocess *process;
} trial;

struct twb_sweep_processes {
    twb_sweep_processes_options options; /* its strings owned */
    bool freed;
    int running;
    twb_sweep_processes_callbacks callbacks;
    GPtrArray *trials; /* trial * */
};

static char *program;

void twb_sweep_processes_set_program(const char *path)
{
    g_free(program);
    program = g_strdup(path);
}

static const char *program_path(void)
{
    if (!program)
        program = g_file_read_link("/proc/self/exe", NULL);
    return program ? program : "twb";
}

static void trial_free(gpointer data)
{
    trial *t = data;
    g_strfreev(t->argv);
    g_clear_object(&t->process);
    g_free(t);
}

twb_sweep_processes *twb_sweep_processes_new(const twb_sweep_processes_options *o,
                                             const twb_sweep_processes_callbacks *callbacks)
{
    tw_run_store *store = tw_run_store_open(o->logdb, 0);
    if (!store)
        return NULL;
    tw_run_store_close(store);
    twb_sweep_processes *p = g_new0(twb_sweep_processes, 1);
    p->options = *o;
    p->options.model_path = g_strdup(o->model_path);
    p->options.logdb = g_strdup(o->logdb);
    p->options.sweep = g_strdup(o->sweep);
    p->options.checkpoint_dir = g_strdup(o->checkpoint_dir);
    p->options.at_once = o->at_once > 0 ? o->at_once : 1;
    p->callbacks = *callbacks;
    p->trials = g_ptr_array_new_with_free_func(trial_free);
    return p;
}

static void processes_free(twb_sweep_processes *p)
{
    g_ptr_array_unref(p->trials);
    g_free((char *)p->options.model_path);
    g_free((char *)p->options.logdb);
    g_free((char *)p->options.sweep);
    g_free((char *)p->options.checkpoint_dir);
    g_free(p);
}

static void add_option(GPtrArray *a, const char *option, char *value)
{
    g_ptr_array_add(a, g_strdup(option));
    g_ptr_array_add(a, value);
}

/* Every value named, so the spec makes the trial alone. */
char **twb_sweep_trial_argv(const twb_sweep_processes_options *o, const tw_train_settings *s)
{
    GPtrArray *a = g_ptr_array_new();
    g_ptr_array_add(a, g_strdup(program_path()));
    g_ptr_array_add(a, g_strdup("sweep"));
    g_ptr_array_add(a, g_strdup(o->model_path));
    const struct {
        const char *option, *value;
    } strings[] = {{"--data", s->data},       {"--labels", s->labels},     {"--label-column", s->label_column},
                   {"--loss", s->loss},       {"--logdb", s->logdb},       {"--optimizer", s->optimizer},
                   {"--device", s->device},   {"--sweep", o->sweep},       {"--run", s->run_name},
                   {"--checkpoint-dir", o->checkpoint_dir}};
    for (size_t i = 0; i < G_N_ELEMENTS(strings); i++)
        if (strings[i].value)
            add_option(a, strings[i].option, g_strdup(strings[i].value));
    char number[G_ASCII_DTOSTR_BUF_SIZE];
    if (!isnan(s->learning_rate))
        add_option(a, "--learning-rate", g_strdup(g_ascii_dtostr(number, sizeof number, s->learning_rate)));
    add_option(a, "--validation-split", g_strdup(g_ascii_dtostr(number, sizeof number, s->validation_split)));
    add_option(a, "--batch-size", g_strdup_printf("%lld", (long long)s->batch_size));
    add_option(a, "--epochs", g_strdup_printf("%d", s->epochs));
    add_option(a, "--seed", g_strdup_printf("%llu", (unsigned long long)s->seed));
    for (int i = 0; i < s->nlayer_values; i++) {
        const tw_layer_value *v = &s->layer_values[i];
        add_option(a, "--set", g_strdup_printf("%s.%s=%s", v->layer, v->property,
                                               g_ascii_dtostr(number, sizeof number, v->value)));
    }
    if (o->median_stop)
        g_ptr_array_add(a, g_strdup("--median-stop"));
    g_ptr_array_add(a, NULL);
    return (char **)g_ptr_array_free(a, FALSE);
}

static void start_more(twb_sweep_processes *p);

/* The last non-empty line of the process's messages, without the program's
 * "twb sweep: " prefix. */
static char *last_line(const char *err)
{
    char **lines = g_strsplit(err ? err : "", "\n", -1);
    char *found = NULL;
    for (int i = (int)g_strv_length(lines) - 1; i >= 0 && !found; i--)
        if (*g_strstrip(lines[i]))
            found = g_strdup(g_str_has_prefix(lines[i], "twb sweep: ") ? lines[i] + 11 : lines[i]);
    g_strfreev(lines);
    return found;
}

static void on_exited(GObject *source, GAsyncResult *result, gpointer data)
{
    trial *t = data;
    twb_sweep_processes *p = t->owner;
    char *err = NULL;
    GError *error = NULL;
    g_subprocess_communicate_utf8_finish(G_SUBPROCESS(source), result, NULL, &err, &error);
    char *why = NULL;
    if (error)
        why = g_strdup(error->message);
    else if (g_subprocess_get_if_signaled(t->process))
        why = g_strdup_printf("the trial's process was killed by signal %d", g_subprocess_get_term_sig(t->process));
    else if (g_subprocess_get_exit_status(t->process) != 0) {
        why = last_line(err);
        if (!why)
            why = g_strdup_printf("the trial's process exited with status %d", g_subprocess_get_exit_status(t->process));
    }
    g_clear_error(&error);
    g_free(err);
    t->state = ENDED;
    p->running--;
    if (!p->freed) {
        if (p->callbacks.ended)
            p->callbacks.ended(t->index, why, p->callbacks.user_data);
        start_more(p);
    }
    g_free(why);
    if (p->freed && p->running == 0) /* the last one after the free */
        processes_free(p);
}

static void start_trial(twb_sweep_processes *p, trial *t)
{
    GError *error = NULL;
    GSubprocessLauncher *launcher =
        g_subprocess_launcher_new(G_SUBPROCESS_FLAGS_STDOUT_SILENCE | G_SUBPROCESS_FLAGS_STDERR_PIPE);
    /* the cores shared out between the trials running at once */
    char *threads = g_strdup_printf("%u", MAX(1u, g_get_num_processors() / (guint)p->options.at_once));
    g_subprocess_launcher_setenv(launcher, "OMP_NUM_THREADS", threads, TRUE);
    g_free(threads);
    t->process = g_subprocess_launcher_spawnv(launcher, (const char *const *)t->argv, &error);
    g_object_unref(launcher);
    t->state = RUNNING;
    p->running++;
    if (p->callbacks.started)
        p->callbacks.started(t->index, p->callbacks.user_data);
    if (!t->process) {
        t->state = ENDED;
        p->running--;
        if (p->callbacks.ended)
            p->callbacks.ended(t->index, error->message, p->callbacks.user_data);
        g_error_free(error);
        return;
    }
    g_subprocess_communicate_utf8_async(t->process, NULL, NULL, on_exited, t);
}

static void start_more(twb_sweep_processes *p)
{
    for (guint i = 0; i < p->trials->len && p->running < p->options.at_once; i++) {
        trial *t = g_ptr_array_index(p->trials, i);
        if (t->state == PENDING)
            start_trial(p, t);
    }
}

int twb_sweep_processes_add(twb_sweep_processes *p, const tw_train_settings *s)
{
    trial *t = g_new0(trial, 1);
    t->owner = p;
    t->index = (int)p->trials->len;
    t->argv = twb_sweep_trial_argv(&p->options, s);
    g_ptr_array_add(p->trials, t);
    start_more(p);
    return t->index;
}

void twb_sweep_processes_cancel(twb_sweep_processes *p, int index)
{
    g_return_if_fail(index >= 0 && (guint)index < p->trials->len);
    trial *t = g_ptr_array_index(p->trials, index);
    if (t->state == PENDING)
        t->state = CANCELLED;
    else if (t->state == RUNNING && t->process)
        g_subprocess_send_signal(t->process, SIGINT);
}

bool twb_sweep_processes_idle(const twb_sweep_processes *p)
{
    for (guint i = 0; i < p->trials->len; i++) {
        const trial *t = g_ptr_array_index(p->trials, i);
        if (t->state == PENDING || t->state == RUNNING)
            return false;
    }
    return true;
}

void twb_sweep_processes_free(twb_sweep_processes *p)
{
    if (!p)
        return;
    for (guint i = 0; i < p->trials->len; i++)
        twb_sweep_processes_cancel(p, (int)i);
    p->freed = true;
    if (p->running > 0)
        return; /* freed by the last process's end */
    processes_free(p);
}
