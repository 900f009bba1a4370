/* Logging a fit through a summary writer (tw_summary_logger in
 * tw/summary.h): the batch logs and the learning rate every N steps,
 * weight and gradient histograms every M steps, the epoch and validation
 * logs at each epoch's end. Steps are the optimizer's iteration count, so a
 * resumed fit continues its curves where they stopped. */
#include <glib.h>
#include <string.h>

#include "summary_internal.h"

/* A log's tag, built once: fit reports the same names in the same order
 * every step, so a slot per position holds the name and its tag. */
typedef struct {
    char name[48];
    char tag[80];
} cached_tag;

struct tw_summary_logger {
    tw_summary_writer *w;
    int every, histogram_every;
    GHashTable *path_of; /* variable -> its path (first one, for a shared layer) */
    cached_tag train[TW_MAX_LOGS], epoch[TW_MAX_LOGS];
};

tw_summary_logger *tw_summary_logger_new(tw_summary_writer *w, int every_steps, int histogram_every_steps)
{
    if (!w || every_steps < 1 || histogram_every_steps < 0) {
        tw_error_set("tw_summary_logger_new: needs a writer, every_steps >= 1 and histogram_every_steps >= 0 "
                     "(got %d and %d)",
                     every_steps, histogram_every_steps);
        return NULL;
    }
    tw_summary_logger *l = g_new0(tw_summary_logger, 1);
    l->w = w;
    l->every = every_steps;
    l->histogram_every = histogram_every_steps;
    l->path_of = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
    return l;
}

void tw_summary_logger_free(tw_summary_logger *logger)
{
    if (!logger)
        return;
    g_hash_table_destroy(logger->path_of);
    g_free(logger);
}

/* "train/loss" for train's "loss"; validation's "val_loss" becomes
 * "validation/loss" at epoch end, the rest "epoch/<name>". */
static const char *tag_for(cached_tag *slot, const char *name, bool epoch)
{
    if (strcmp(slot->name, name)) {
        g_strlcpy(slot->name, name, sizeof slot->name);
        if (!epoch)
            snprintf(slot->tag, sizeof slot->tag, "train/%s", name);
        else if (g_str_has_prefix(name, "val_"))
            snprintf(slot->tag, sizeof slot->tag, "validation/%s", name + 4);
        else
            snprintf(slot->tag, sizeof slot->tag, "epoch/%s", name);
    }
    return slot->tag;
}

static int log_scalars(tw_summary_logger *l, cached_tag *slots, const tw_logs *logs, bool epoch, int64_t step)
{
    for (int i = 0; i < logs->n; i++)
        if (tw_summary_scalar(l->w, tag_for(&slots[i], logs->names[i], epoch), logs->values[i], step))
            return -1;
    return 0;
}

/* ---- histograms ------------------------------------------------------------- */
typedef struct {
    tw_summary_logger *logger;
    int64_t step;
} weight_walk;

static int remember_path(const char *path, tw_tensor *weight, bool trainable, void *user_data)
{
    GHashTable *path_of = user_data;
    if (!g_hash_table_contains(path_of, weight))
        g_hash_table_insert(path_of, weight, g_strdup(path));
    return 0;
}

static int log_weight(const char *path, tw_tensor *weight, bool trainable, void *user_data)
{
    weight_walk *walk = user_data;
    char *tag = g_strconcat("weights/", path, NULL);
    int rc = tw_summary_histogram(walk->logger->w, tag, weight, walk->step);
    g_free(tag);
    return rc;
}

static const char *path_of(tw_summary_logger *l, tw_model *model, tw_tensor *variable)
{
    const char *path = g_hash_table_lookup(l->path_of, variable);
    if (!path) { /* a layer added since training began */
        tw_layer_foreach_weight(model, remember_path, l->path_of);
        path = g_hash_table_lookup(l->path_of, variable);
    }
    return path;
}

static int log_histograms(tw_summary_logger *l, tw_model *model, const tw_progress *p, int64_t step)
{
    weight_walk walk = {l, step};
    if (tw_layer_foreach_weight(model, log_weight, &walk))
        return -1;
    for (int i = 0; i < p->ngradients; i++) {
        const char *path = p->gradients[i] ? path_of(l, model, p->variables[i]) : NULL;
        if (!path)
            continue;
        char *tag = g_strconcat("gradients/", path, NULL);
        int rc = tw_summary_histogram(l->w, tag, p->gradients[i], step);
        g_free(tag);
        if (rc)
            return -1;
    }
    return 0;
}

/* ---- the callback -------------------------------------------------------------- */
static int64_t iterations(tw_model *model)
{
    return tw_optimizer_iterations(tw_model_optimizer(model));
}

static int on_train_begin(tw_model *model, void *user_data)
{
    tw_summary_logger *l = user_data;
    g_hash_table_remove_all(l->path_of);
    return tw_layer_foreach_weight(model, remember_path, l->path_of);
}

static int on_batch_end(tw_model *model, const tw_progress *p, const tw_logs *logs, void *user_data)
{
    tw_summary_logger *l = user_data;
    int64_t step = iterations(model);
    if (step % l->every == 0 &&
        (log_scalars(l, l->train, logs, false, step) ||
         tw_summary_scalar(l->w, "train/learning_rate", tw_optimizer_learning_rate(tw_model_optimizer(model)), step)))
        return -1;
    if (l->histogram_every && step % l->histogram_every == 0 && log_histograms(l, model, p, step))
        return -1;
    return 0;
}

static int on_epoch_end(tw_model *model, const tw_progress *p, const tw_logs *logs, void *user_data)
{
    tw_summary_logger *l = user_data;
    return log_scalars(l, l->epoch, logs, true, iterations(model));
}

tw_callback tw_summary_logger_callback(tw_summary_logger *logger)
{
    return (tw_callback){.on_train_begin = on_train_begin,
                         .on_batch_end = on_batch_end,
                         .on_epoch_end = on_epoch_end,
                         .user_data = logger};
}
