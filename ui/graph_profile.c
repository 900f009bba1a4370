/* A traced graph's measured times (see graph_profile.h). */
#include "graph_profile.h"

#include <json-glib/json-glib.h>
#include <tw/json_check.h>

#define PROFILE_ERROR g_quark_from_static_string("tw-graph-profile")

/* The member as a number (integers too), or -1 when absent or not one. */
static double number_member(JsonObject *o, const char *name)
{
    JsonNode *node = json_object_get_member(o, name);
    if (!node || !JSON_NODE_HOLDS_VALUE(node))
        return -1;
    GType type = json_node_get_value_type(node);
    if (type == G_TYPE_DOUBLE)
        return json_node_get_double(node);
    return type == G_TYPE_INT64 ? (double)json_node_get_int(node) : -1;
}

static JsonArray *profile_nodes(JsonNode *root, int *runs, GError **error)
{
    JsonObject *o = root && JSON_NODE_HOLDS_OBJECT(root) ? json_node_get_object(root) : NULL;
    if (!o || g_strcmp0(json_object_get_string_member_with_default(o, "format", ""), "twb-graph-profile") != 0 ||
        json_object_get_int_member_with_default(o, "version", 0) != 1) {
        g_set_error(error, PROFILE_ERROR, 1, "not a twb-graph-profile version 1 document");
        return NULL;
    }
    JsonNode *nodes = json_object_get_member(o, "nodes");
    if (!nodes || !JSON_NODE_HOLDS_ARRAY(nodes)) {
        g_set_error(error, PROFILE_ERROR, 1, "no nodes array");
        return NULL;
    }
    *runs = (int)number_member(o, "runs");
    return json_node_get_array(nodes);
}

/* Each entry's mean into node_us[] by name; the number placed, or -1 with
 * *error naming the bad entry. Entries for nodes the graph lacks are
 * skipped: they say nothing about what is drawn. */
static int read_times(const tw_graph_model *m, JsonArray *nodes, double *node_us, GError **error)
{
    GHashTable *index = g_hash_table_new(g_str_hash, g_str_equal);
    for (int i = 0; i < m->nnodes; i++)
        g_hash_table_insert(index, m->nodes[i].name, GINT_TO_POINTER(i + 1));
    int placed = 0;
    for (guint k = 0; k < json_array_get_length(nodes); k++) {
        JsonNode *entry = json_array_get_element(nodes, k);
        JsonObject *o = JSON_NODE_HOLDS_OBJECT(entry) ? json_node_get_object(entry) : NULL;
        const char *name = o ? json_object_get_string_member_with_default(o, "name", NULL) : NULL;
        double mean = o ? number_member(o, "mean_us") : -1;
        if (!name || !(mean >= 0)) {
            g_set_error(error, PROFILE_ERROR, 1, "node entry %u has no name or no mean_us of 0 or more", k);
            placed = -1;
            break;
        }
        int i = GPOINTER_TO_INT(g_hash_table_lookup(index, name)) - 1;
        if (i >= 0)
            node_us[i] = mean, placed++;
    }
    g_hash_table_unref(index);
    return placed;
}

gboolean tw_graph_profile_apply(tw_graph_model *m, const char *json, GError **error)
{
    if (tw_json_check_text(json, -1, "profile JSON")) {
        g_set_error(error, PROFILE_ERROR, 1, "%s", tw_last_error());
        return FALSE;
    }
    JsonParser *parser = json_parser_new();
    double *node_us = g_new(double, MAX(m->nnodes, 1));
    for (int i = 0; i < m->nnodes; i++)
        node_us[i] = -1;
    int runs = 0, placed = -1;
    if (json_parser_load_from_data(parser, json, -1, error)) {
        JsonArray *nodes = profile_nodes(json_parser_get_root(parser), &runs, error);
        placed = nodes ? read_times(m, nodes, node_us, error) : -1;
        if (placed == 0)
            g_set_error(error, PROFILE_ERROR, 1, "none of its %u nodes is in the graph (another graph's profile?)",
                        json_array_get_length(nodes));
    }
    g_object_unref(parser);
    if (placed <= 0) {
        g_free(node_us);
        return FALSE;
    }
    g_free(m->node_us), g_free(m->scope_us);
    m->node_us = node_us;
    m->scope_us = g_new(double, m->nscopes);
    for (int s = 0; s < m->nscopes; s++)
        m->scope_us[s] = -1;
    m->step_us = 0;
    m->profile_runs = runs;
    for (int i = 0; i < m->nnodes; i++) {
        if (node_us[i] < 0)
            continue;
        m->step_us += node_us[i];
        for (int s = m->nodes[i].scope_index; s >= 0; s = m->scopes[s].parent)
            m->scope_us[s] = MAX(m->scope_us[s], 0) + node_us[i];
    }
    return TRUE;
}

double tw_graph_visible_us(const tw_graph_model *m, const tw_visible_node *v)
{
    if (!m->node_us || v->output >= 0) /* an output box does no work */
        return -1;
    return v->is_scope ? m->scope_us[v->index] : m->node_us[v->index];
}

gboolean tw_graph_time_range(const tw_graph_model *m, const tw_visible_graph *g, double *min_us, double *max_us)
{
    *min_us = G_MAXDOUBLE, *max_us = -1;
    for (int v = 0; v < g->nnodes; v++) {
        double us = tw_graph_visible_us(m, &g->nodes[v]);
        if (us >= 0)
            *min_us = MIN(*min_us, us), *max_us = MAX(*max_us, us);
    }
    return *max_us >= 0;
}

const char *tw_graph_format_us(double us, char *buf, size_t size)
{
    if (us >= 1e6)
        g_snprintf(buf, size, "%.2f s", us / 1e6);
    else if (us >= 1e3)
        g_snprintf(buf, size, "%.2f ms", us / 1e3);
    else
        g_snprintf(buf, size, "%.*f µs", us < 10 ? 2 : 1, us);
    return buf;
}
