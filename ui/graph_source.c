/* The graph view's sources (see graph_source.h). */
#include "graph_source.h"

#include <string.h>

#include <json-glib/json-glib.h>
#include <tw/error.h>
#include <tw/json_check.h>
#include <tw/model_file.h>
#include <tw/run_store.h>

#include "graph_layers.h"
#include "graph_profile.h"

#define SOURCE_ERROR g_quark_from_static_string("tw-graph-source")
#define TRACE_PREFIX "The model cannot be traced: "
#define GRAPH_TAG_PREFIX "graph/"
#define PROFILE_TAG_PREFIX "profile/"

static void stored_graph_clear(gpointer data)
{
    tw_stored_graph *g = data;
    g_free(g->run), g_free(g->tag);
}

static void add_run_graphs(tw_run_store *store, const tw_run_info *run, GArray *out)
{
    tw_tag_info *tags = NULL;
    int n = 0;
    if (tw_run_store_list_tags(store, run->id, &tags, &n) != 0)
        return;
    for (int t = 0; t < n; t++)
        if (tags[t].kind == TW_SERIES_GRAPH && tags[t].count > 0) {
            tw_stored_graph g = {g_strdup(run->name), g_strdup(tags[t].name), run->id, tags[t].id};
            g_array_append_val(out, g);
        }
    tw_tag_info_free(tags, n);
}

GArray *tw_stored_graphs_list(const char *logdb, GError **error)
{
    GArray *out = g_array_new(FALSE, TRUE, sizeof(tw_stored_graph));
    g_array_set_clear_func(out, stored_graph_clear);
    if (!logdb || !g_file_test(logdb, G_FILE_TEST_EXISTS))
        return out;
    tw_run_store *store = tw_run_store_open(logdb, TW_STORE_READ_ONLY);
    tw_run_info *runs = NULL;
    int n = 0;
    if (!store || tw_run_store_list_runs(store, &runs, &n) != 0) {
        g_set_error(error, SOURCE_ERROR, 1, "The run database %s cannot be read: %s", logdb, tw_last_error());
        tw_run_store_close(store);
        g_array_unref(out);
        return NULL;
    }
    for (int r = 0; r < n; r++)
        add_run_graphs(store, &runs[r], out);
    tw_run_info_free(runs, n);
    tw_run_store_close(store);
    return out;
}

char *tw_stored_graph_label(const tw_stored_graph *g)
{
    return g_strdup_printf("%s · %s", g->run, g->tag);
}

tw_graph_arrangement *tw_graph_json_arrange(const char *json, GError **error)
{
    tw_graph_model *model = tw_graph_model_parse(json, -1, error);
    return model ? tw_graph_arrangement_new(model, NULL) : NULL;
}

/* The series' last record's text, or NULL with the store's message. */
static char *last_text(tw_run_store *store, int64_t tag_id)
{
    tw_series_cursor cursor = {0};
    tw_text_record *records = NULL;
    int n = 0;
    char *text = NULL;
    if (tw_run_store_read_texts(store, tag_id, &cursor, &records, &n) == 0) {
        if (n > 0)
            text = g_strdup(records[n - 1].text);
        else
            tw_error_set("the series holds no record");
        tw_text_record_free(records, n);
    }
    return text;
}

/* The profile stored beside graph g in logdb, read into model: none is
 * fine; one that cannot be read is said in model->profile_error. */
static void add_profile(const char *logdb, tw_run_store *store, const tw_stored_graph *g, tw_graph_model *model)
{
    if (!g_str_has_prefix(g->tag, GRAPH_TAG_PREFIX))
        return;
    char *tag = g_strconcat(PROFILE_TAG_PREFIX, g->tag + strlen(GRAPH_TAG_PREFIX), NULL);
    int64_t tag_id = tw_run_store_find_tag(store, g->run_id, tag);
    char *json = tag_id >= 0 ? last_text(store, tag_id) : NULL;
    GError *error = NULL;
    if (tag_id >= 0 && !json)
        model->profile_error = g_strdup_printf("The profile “%s” of run “%s” cannot be read from %s: %s", tag,
                                               g->run, logdb, tw_last_error());
    else if (json && !tw_graph_profile_apply(model, json, &error))
        model->profile_error = g_strdup_printf("The profile “%s” of run “%s” in %s cannot be read: %s", tag,
                                               g->run, logdb, error->message);
    g_clear_error(&error);
    g_free(json), g_free(tag);
}

tw_graph_arrangement *tw_stored_graph_load(const char *logdb, const tw_stored_graph *g, GError **error)
{
    tw_error_clear();
    tw_run_store *store = tw_run_store_open(logdb, TW_STORE_READ_ONLY);
    char *json = store ? last_text(store, g->tag_id) : NULL;
    if (!json) {
        g_set_error(error, SOURCE_ERROR, 1, "The graph “%s” of run “%s” cannot be read from %s: %s", g->tag, g->run,
                    logdb, tw_last_error());
        tw_run_store_close(store);
        return NULL;
    }
    GError *parse_error = NULL;
    tw_graph_model *model = tw_graph_model_parse(json, -1, &parse_error);
    g_free(json);
    if (!model) {
        g_set_error(error, SOURCE_ERROR, 1, "The graph “%s” of run “%s” in %s is not a graph the view can read: %s",
                    g->tag, g->run, logdb, parse_error->message);
        g_error_free(parse_error);
        tw_run_store_close(store);
        return NULL;
    }
    add_profile(logdb, store, g, model);
    tw_run_store_close(store);
    return tw_graph_arrangement_new(model, NULL);
}

/* Every "..._initializer" of the configs in node made Zeros. */
static void zero_initializers(JsonNode *node)
{
    if (JSON_NODE_HOLDS_ARRAY(node)) {
        JsonArray *a = json_node_get_array(node);
        for (guint i = 0; i < json_array_get_length(a); i++)
            zero_initializers(json_array_get_element(a, i));
    } else if (JSON_NODE_HOLDS_OBJECT(node)) {
        JsonObject *o = json_node_get_object(node);
        GList *members = json_object_get_members(o);
        for (GList *m = members; m; m = m->next) {
            JsonNode *value = json_object_get_member(o, m->data);
            if (g_str_has_suffix(m->data, "_initializer") && JSON_NODE_HOLDS_OBJECT(value)) {
                JsonObject *zeros = json_object_new();
                json_object_set_string_member(zeros, "class_name", "Zeros");
                json_object_set_object_member(zeros, "config", json_object_new());
                json_object_set_object_member(o, m->data, zeros);
            } else {
                zero_initializers(value);
            }
        }
        g_list_free(members);
    }
}

/* The model with its weights made zeros: the graph needs their shapes
 * alone, and drawing ResNet50's 25.6 million random numbers (or an LSTM's
 * orthogonal matrices) took longer than the rest of the trace. The JSON
 * as it is where it does not parse (tw_model_from_json says why). */
static tw_model *model_for_graph(const char *keras_json)
{
    JsonParser *parser = json_parser_new();
    tw_model *model = NULL;
    if (tw_json_check_text(keras_json, -1, "the designer's model") == 0 &&
        json_parser_load_from_data(parser, keras_json, -1, NULL) && json_parser_get_root(parser)) {
        JsonNode *root = json_parser_get_root(parser);
        zero_initializers(root);
        char *zeroed = json_to_string(root, FALSE);
        model = tw_model_from_json(zeroed, strlen(zeroed), NULL);
        g_free(zeroed);
    } else {
        model = tw_model_from_json(keras_json, strlen(keras_json), NULL);
    }
    g_object_unref(parser);
    return model;
}

tw_graph_arrangement *tw_designer_graph_load(const char *keras_json, GError **error)
{
    tw_error_clear();
    tw_model *model = model_for_graph(keras_json);
    if (!model) {
        g_set_error(error, SOURCE_ERROR, 1, "The designer's model cannot be traced: %s", tw_last_error());
        return NULL;
    }
    GError *trace_error = NULL;
    char *json;
    /* A layer that cannot run (a Lambda's Python code, a StringLookup) has
     * no ops to trace: the model is drawn layer by layer, as Netron draws
     * any model, those layers marked with their reason. */
    if (tw_layer_check_runnable(model)) {
        /* "Lambda 'f': runs Python code ...": the layer in the note, its
         * reason on its box and in the side panel. */
        const char *why = tw_last_error(), *end = strstr(why, "': ");
        char *note = end ? g_strdup_printf("Drawn layer by layer, not traced into ops: %.*s' cannot run here",
                                           (int)(end - why), why)
                         : g_strdup_printf("Drawn layer by layer, not traced into ops: %s", why);
        tw_error_clear();
        json = tw_graph_layers_json(model, note, &trace_error);
        g_free(note);
    } else {
        json = tw_graph_trace_model(model, &trace_error);
    }
    tw_layer_unref(model);
    if (!json) {
        const char *message = trace_error->message;
        if (g_str_has_prefix(message, TRACE_PREFIX))
            message += strlen(TRACE_PREFIX);
        g_set_error(error, SOURCE_ERROR, 1, "The designer's model cannot be traced: %s", message);
        g_error_free(trace_error);
        return NULL;
    }
    /* Traced for a batch of one, which the model does not fix: None. */
    tw_graph_model *m = tw_graph_model_parse(json, -1, error);
    g_free(json);
    if (!m)
        return NULL;
    tw_graph_model_mark_batch(m, 1);
    tw_graph_model_add_layers(m, keras_json);
    return tw_graph_arrangement_new(m, NULL);
}
