/* Keras' ModelCheckpoint as a fit callback, and reading back where a
 * checkpoint says training should resume. */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <glib.h>
#include <json-glib/json-glib.h>

#include "tw/checkpoint.h"
#include "tw/json_check.h"

struct tw_model_checkpoint {
    char *path, *monitor, *model_json, *settings_json;
    bool maximize;
    double best;
    int saves, failures;
    char *error; /* the last failed save's message */
};

tw_model_checkpoint *tw_model_checkpoint_new(const char *path, const char *monitor, const char *model_json,
                                             const char *settings_json)
{
    tw_model_checkpoint *mc = g_new0(tw_model_checkpoint, 1);
    mc->path = g_strdup(path);
    mc->monitor = monitor ? g_strdup(monitor) : NULL;
    mc->model_json = model_json ? g_strdup(model_json) : NULL;
    mc->settings_json = g_strdup(settings_json ? settings_json : "null");
    mc->maximize = monitor && (strstr(monitor, "acc") || strstr(monitor, "precision") || strstr(monitor, "recall"));
    mc->best = mc->maximize ? -INFINITY : INFINITY;
    return mc;
}

int tw_model_checkpoint_save_now(tw_model_checkpoint *mc, tw_model *model, int epoch, int64_t step)
{
    char best[64] = "null";
    if (mc->monitor && isfinite(mc->best))
        g_ascii_formatd(best, sizeof best, "%.17g", mc->best);
    char *config = g_strdup_printf("{\"epoch\": %d, \"step\": %" G_GINT64_FORMAT
                                   ", \"monitor\": %s%s%s, \"best\": %s, \"settings\": %s}",
                                   epoch, (gint64)step, mc->monitor ? "\"" : "", mc->monitor ? mc->monitor : "null",
                                   mc->monitor ? "\"" : "", best, mc->settings_json);
    int rc = tw_checkpoint_save(mc->path, model, tw_model_optimizer(model), mc->model_json, config);
    g_free(config);
    mc->saves += rc == 0;
    if (rc) {
        mc->failures++;
        g_free(mc->error);
        mc->error = g_strdup(tw_last_error());
    }
    return rc;
}

static int on_epoch_end(tw_model *model, const tw_progress *p, const tw_logs *logs, void *user_data)
{
    tw_model_checkpoint *mc = user_data;
    if (mc->monitor) {
        double v = tw_logs_get(logs, mc->monitor);
        if (isnan(v))
            return tw_error_set("ModelCheckpoint: the logs have no \"%s\" (is there validation data?)", mc->monitor);
        if (mc->maximize ? v <= mc->best : v >= mc->best)
            return 0;
        mc->best = v;
    }
    /* A save that fails (a full disk) left the previous checkpoint as it
     * was; training goes on and the caller reports mc->error. */
    tw_model_checkpoint_save_now(mc, model, p->epoch + 1, 0);
    return 0;
}

tw_callback tw_model_checkpoint_callback(tw_model_checkpoint *mc)
{
    return (tw_callback){.on_epoch_end = on_epoch_end, .user_data = mc};
}

int tw_model_checkpoint_saves(const tw_model_checkpoint *mc)
{
    return mc->saves;
}

int tw_model_checkpoint_failures(const tw_model_checkpoint *mc)
{
    return mc->failures;
}

const char *tw_model_checkpoint_error(const tw_model_checkpoint *mc)
{
    return mc->error;
}

void tw_model_checkpoint_free(tw_model_checkpoint *mc)
{
    if (!mc)
        return;
    g_free(mc->path);
    g_free(mc->monitor);
    g_free(mc->model_json);
    g_free(mc->settings_json);
    g_free(mc->error);
    g_free(mc);
}

int tw_checkpoint_resume_position(const char *path, int *epoch, int64_t *step)
{
    *epoch = 0;
    *step = 0;
    char *config = tw_checkpoint_read_metadata(path, "training_config");
    if (!config)
        return -1;
    char *name = g_strdup_printf("%s: the training config", path);
    int rc = tw_json_check_text(config, -1, name);
    g_free(name);
    if (rc) {
        free(config);
        return rc;
    }
    JsonParser *parser = json_parser_new();
    gint64 e = 0;
    if (json_parser_load_from_data(parser, config, -1, NULL) && JSON_NODE_HOLDS_OBJECT(json_parser_get_root(parser))) {
        JsonObject *o = json_node_get_object(json_parser_get_root(parser));
        e = json_object_get_int_member_with_default(o, "epoch", 0);
        *step = json_object_get_int_member_with_default(o, "step", 0);
    }
    /* The caller checks the step against its data's batches. */
    if (e < 0 || e > INT_MAX || *step < 0) {
        rc = tw_error_set("%s: the training config says epoch %lld, step %lld: not a position to resume at", path,
                          (long long)e, (long long)*step);
        e = 0;
        *step = 0;
    }
    *epoch = (int)e;
    g_object_unref(parser);
    free(config);
    return rc;
}
