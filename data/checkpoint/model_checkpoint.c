/* Keras' ModelCheckpoint as a fit callback, and reading back where a
 * checkpoint says training should resume. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <glib.h>
#include <json-glib/json-glib.h>

#include "tw/checkpoint.h"
#include "tw/json_depth.h"

struct tw_model_checkpoint {
    char *path, *monitor, *model_json, *settings_json;
    bool maximize;
    double best;
    int saves;
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
    return tw_model_checkpoint_save_now(mc, model, p->epoch + 1, 0);
}

tw_callback tw_model_checkpoint_callback(tw_model_checkpoint *mc)
{
    return (tw_callback){.on_epoch_end = on_epoch_end, .user_data = mc};
}

int tw_model_checkpoint_saves(const tw_model_checkpoint *mc)
{
    return mc->saves;
}

void tw_model_checkpoint_free(tw_model_checkpoint *mc)
{
    if (!mc)
        return;
    g_free(mc->path);
    g_free(mc->monitor);
    g_free(mc->model_json);
    g_free(mc->settings_json);
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
    int rc = tw_json_check_depth(config, -1, name);
    g_free(name);
    if (rc) {
        free(config);
        return rc;
    }
    JsonParser *parser = json_parser_new();
    if (json_parser_load_from_data(parser, config, -1, NULL) && JSON_NODE_HOLDS_OBJECT(json_parser_get_root(parser))) {
        JsonObject *o = json_node_get_object(json_parser_get_root(parser));
        *epoch = (int)json_object_get_int_member_with_default(o, "epoch", 0);
        *step = json_object_get_int_member_with_default(o, "step", 0);
    }
    if (*epoch < 0 || *step < 0)
        rc = tw_error_set("%s: the training config says epoch %d, step %lld", path, *epoch, (long long)*step);
    g_object_unref(parser);
    free(config);
    return rc;
}
