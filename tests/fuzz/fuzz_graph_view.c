/* libFuzzer target for the graph view's reader of graph JSON (the text of a
 * run database's graph series, ui/graph_model.c): tw_graph_model_parse on
 * the fuzzer's bytes, then what the view does with a graph that parses —
 * the None batch marks, each node's named attributes, the visible graph
 * with the default scopes open and with every scope open, and its layout
 * with the open scopes as nested frames (ui/graph_layout.c). A graph that
 * parses keeps its edges between earlier and later nodes, and the layout
 * places every box. Built as fuzz_graph_view (make fuzz) and, renamed, into
 * the fuzz_replay test (tests/fuzz/corpus/graph_view/). */
#include <glib.h>
#include <math.h>

#include "fuzz_check.h"
#include "graph_layout.h"
#include "graph_model.h"

static void lay_out(const tw_graph_model *m, const bool *expanded)
{
    tw_visible_graph *g = tw_visible_graph_new(m, expanded);
    /* The groups as the arrangement makes them: open scopes whose parents
     * are open, the root first. */
    int *group_of = g_new(int, m->nscopes), *parent = g_new(int, m->nscopes), ngroups = 0;
    for (int s = 0; s < m->nscopes; s++) {
        int p = m->scopes[s].parent;
        group_of[s] = -1;
        if (p < 0 || ((!expanded || expanded[s]) && group_of[p] >= 0)) {
            parent[ngroups] = p < 0 ? -1 : group_of[p];
            group_of[s] = ngroups++;
        }
    }
    int n = g->nnodes;
    int *node_group = g_new(int, MAX(n, 1)), *edges = g_new(int, 2 * (size_t)MAX(g->nedges, 1));
    double *widths = g_new(double, MAX(n, 1)), *heights = g_new(double, MAX(n, 1));
    for (int v = 0; v < n; v++) {
        const tw_visible_node *node = &g->nodes[v];
        int s = node->output >= 0 ? 0
                : node->is_scope  ? m->scopes[node->index].parent
                                  : m->nodes[node->index].scope_index;
        while (group_of[s] < 0)
            s = m->scopes[s].parent;
        node_group[v] = group_of[s];
        widths[v] = 40 + v % 7 * 10, heights[v] = v % 2 ? 28 : 36;
        char *title = tw_visible_node_title(m, node), *detail = tw_visible_node_detail(m, node);
        FUZZ_ASSERT(title && detail);
        g_free(title), g_free(detail);
    }
    for (int e = 0; e < g->nedges; e++) {
        FUZZ_ASSERT(g->edges[e].from >= 0 && g->edges[e].from < n && g->edges[e].to >= 0 && g->edges[e].to < n);
        edges[2 * e] = g->edges[e].from, edges[2 * e + 1] = g->edges[e].to;
    }
    tw_layout_nesting nesting = {ngroups, parent, node_group, 8, 18};
    tw_graph_layout *layout = tw_graph_layout_new_nested(n, widths, heights, g->nedges, edges, &nesting);
    for (int v = 0; v < n; v++)
        FUZZ_ASSERT(isfinite(layout->nodes[v].x) && isfinite(layout->nodes[v].y));
    tw_graph_layout_free(layout);
    g_free(group_of), g_free(parent), g_free(node_group), g_free(edges), g_free(widths), g_free(heights);
    tw_visible_graph_free(g);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    GError *error = NULL;
    tw_graph_model *m = tw_graph_model_parse((const char *)data, (gssize)size, &error);
    if (!m) {
        /* The view names the run and the tag around it (graph_source.c). */
        FUZZ_ASSERT(error && error->message[0]);
        g_error_free(error);
        tw_error_clear();
        return 0;
    }
    for (int i = 0; i < m->nnodes; i++)
        for (int k = 0; k < m->nodes[i].ninputs; k++)
            FUZZ_ASSERT(m->nodes[i].input_node[k] >= 0 && m->nodes[i].input_node[k] < i);
    tw_graph_model_mark_batch(m, 1);
    for (int i = 0; i < m->nnodes; i++) {
        GPtrArray *fields = tw_graph_node_attr_fields(&m->nodes[i]);
        FUZZ_ASSERT(fields->len % 2 == 0);
        g_ptr_array_unref(fields);
        char shape[160];
        for (int k = 0; k < m->nodes[i].noutputs; k++)
            tw_graph_tensor_format(&m->nodes[i].outputs[k], shape, sizeof shape);
    }
    bool *expanded = g_new(bool, m->nscopes);
    tw_graph_model_default_expansion(m, expanded);
    lay_out(m, expanded);
    lay_out(m, NULL);
    g_free(expanded);
    tw_graph_model_free(m);
    return 0;
}
