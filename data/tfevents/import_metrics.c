/* An imported run's final metrics (its row's metrics_json, the HParams
 * view's metric columns), from the scalars read: the last value of each
 * scalar the hparams plugin's experiment names (metric_infos: a tag in
 * the session's run, or in its subfolder "group"), or, with no experiment
 * in the log directory, the last value of each of a run's scalar tags.
 * Names are Keras's: "epoch_loss" in a "validation" group or run is
 * "val_loss", in "train" (or the run itself) "loss", as twb names its own
 * runs' metrics (an exported twb run's "epoch/loss" and "validation/loss"
 * come back as "loss" and "val_loss"); another group's is "group/tag". */
#include <json-glib/json-glib.h>
#include <math.h>
#include <string.h>

#include "run_store/summary_internal.h"
#include "tfevents_internal.h"

typedef struct {
    int64_t id;
    GHashTable *last; /* tag -> double *: the tag's newest scalar */
    bool session;     /* it holds a session's hyperparameters */
    bool dirty;       /* noted since its metrics were last written */
} metrics_run;

static void run_free(void *p)
{
    metrics_run *r = p;
    g_hash_table_unref(r->last);
    g_free(r);
}

static metrics_run *run_of(tw_tb_metrics *m, const char *name, int64_t id)
{
    if (!m->runs)
        m->runs = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, run_free);
    metrics_run *r = g_hash_table_lookup(m->runs, name);
    if (!r) {
        r = g_new0(metrics_run, 1);
        r->last = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
        g_hash_table_insert(m->runs, g_strdup(name), r);
    }
    r->id = id;
    r->dirty = m->dirty = true;
    return r;
}

void tw__tb_metrics_note(tw_tb_metrics *m, const char *run, int64_t run_id, const tw_tb_item *it)
{
    if (it->kind == TW_TB_SCALAR) {
        metrics_run *r = run_of(m, run, run_id);
        double *v = g_hash_table_lookup(r->last, it->tag); /* a tag's points update its one entry */
        if (!v) {
            v = g_new(double, 1);
            g_hash_table_insert(r->last, g_strdup(it->tag), v);
        }
        *v = it->value;
    } else if (it->kind == TW_TB_HPARAMS_START) {
        run_of(m, run, run_id)->session = true;
    } else if (it->kind == TW_TB_HPARAMS_EXPERIMENT) {
        g_free(m->experiment_json);
        m->experiment_json = g_strndup(it->text, it->text_len);
        m->dirty = m->all_dirty = true;
    }
}

/* The Keras name of a tag's value in a group (or run folder) named where:
 * Keras's "epoch_loss" or twb's own "epoch/loss" is "loss", twb's
 * "validation/loss" (or a "validation" folder's loss) "val_loss". */
static char *metric_name(const char *where, const char *tag)
{
    const char *base = g_str_has_prefix(tag, "epoch_")   ? tag + strlen("epoch_")
                       : g_str_has_prefix(tag, "epoch/") ? tag + strlen("epoch/")
                                                         : tag;
    if (g_str_has_prefix(tag, "validation/") && !where[0])
        return g_strconcat("val_", tag + strlen("validation/"), NULL);
    if (!strcmp(where, "validation"))
        return g_strconcat("val_", base, NULL);
    if (!where[0] || !strcmp(where, "train"))
        return g_strdup(base);
    return g_strconcat(where, "/", tag, NULL);
}

static void add_metric(JsonBuilder *b, const char *name, double value, int *n)
{
    json_builder_set_member_name(b, name);
    if (isfinite(value))
        json_builder_add_double_value(b, value);
    else
        json_builder_add_string_value(b, isnan(value) ? "nan" : value > 0 ? "inf" : "-inf");
    (*n)++;
}

/* The metric infos' (group, tag) pairs of the experiment, NULL without one. */
static JsonArray *experiment_metrics(JsonParser *parser, const char *experiment_json)
{
    if (!experiment_json || !json_parser_load_from_data(parser, experiment_json, -1, NULL))
        return NULL;
    JsonNode *root = json_parser_get_root(parser);
    if (!JSON_NODE_HOLDS_OBJECT(root))
        return NULL;
    JsonNode *metrics = json_object_get_member(json_node_get_object(root), "metrics");
    return metrics && JSON_NODE_HOLDS_ARRAY(metrics) ? json_node_get_array(metrics) : NULL;
}

/* One run's metrics as a JSON object, NULL when it has none. */
static char *run_metrics(tw_tb_metrics *m, const char *name, const metrics_run *r, JsonArray *infos)
{
    JsonBuilder *b = json_builder_new();
    json_builder_begin_object(b);
    int n = 0;
    if (infos) {
        for (guint i = 0; r->session && i < json_array_get_length(infos); i++) {
            JsonObject *info = json_array_get_object_element(infos, i);
            const char *group = info ? json_object_get_string_member_with_default(info, "group", "") : "";
            const char *tag = info ? json_object_get_string_member_with_default(info, "tag", "") : "";
            char *path = !group[0] ? g_strdup(name) : strcmp(name, ".") ? g_build_filename(name, group, NULL)
                                                                        : g_strdup(group);
            const metrics_run *from = g_hash_table_lookup(m->runs, path);
            const double *v = from ? g_hash_table_lookup(from->last, tag) : NULL;
            g_free(path);
            if (!v)
                continue;
            char *metric = metric_name(group, tag);
            add_metric(b, metric, *v, &n);
            g_free(metric);
        }
    } else {
        const char *leaf = strrchr(name, '/') ? strrchr(name, '/') + 1 : name;
        GList *tags = g_list_sort(g_hash_table_get_keys(r->last), (GCompareFunc)strcmp);
        for (GList *l = tags; l; l = l->next) {
            char *metric = metric_name(strcmp(leaf, "validation") ? "" : "validation", l->data);
            add_metric(b, metric, *(double *)g_hash_table_lookup(r->last, l->data), &n);
            g_free(metric);
        }
        g_list_free(tags);
    }
    json_builder_end_object(b);
    JsonNode *root = json_builder_get_root(b);
    char *json = n ? json_to_string(root, false) : NULL;
    json_node_unref(root);
    g_object_unref(b);
    return json;
}

int tw__tb_metrics_write(tw_tb_metrics *m, sqlite3 *db, const char *db_path)
{
    if (!m->dirty || !m->runs)
        return 0;
    JsonParser *parser = json_parser_new();
    JsonArray *infos = experiment_metrics(parser, m->experiment_json);
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(db, "UPDATE runs SET metrics_json = ?2 WHERE id = ?1", -1, &st, NULL);
    GHashTableIter iter;
    void *name, *value;
    g_hash_table_iter_init(&iter, m->runs);
    while (rc == SQLITE_OK && g_hash_table_iter_next(&iter, &name, &value)) {
        metrics_run *r = value;
        /* a session's metrics may come from its group folders' runs */
        if (!r->dirty && !m->all_dirty && !(infos && r->session))
            continue;
        r->dirty = false;
        char *json = run_metrics(m, name, r, infos);
        if (json) {
            sqlite3_bind_int64(st, 1, ((metrics_run *)value)->id);
            sqlite3_bind_text(st, 2, json, -1, g_free);
            rc = sqlite3_step(st) == SQLITE_DONE ? SQLITE_OK : SQLITE_ERROR;
            sqlite3_reset(st);
        }
    }
    sqlite3_finalize(st);
    g_object_unref(parser);
    m->dirty = m->all_dirty = false;
    return rc == SQLITE_OK ? 0 : tw__store_sqlite_error(db, db_path, "cannot set the imported runs' metrics");
}

void tw__tb_metrics_clear(tw_tb_metrics *m)
{
    g_clear_pointer(&m->runs, g_hash_table_unref);
    g_clear_pointer(&m->experiment_json, g_free);
}
