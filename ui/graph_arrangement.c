/* Graph arrangements (see graph_arrangement.h). */
#include "graph_arrangement.h"

#include <string.h>

/* The model, freed with the last arrangement that shows it. */
typedef struct {
    tw_graph_model *model;
} shared_model;

typedef struct {
    tw_graph_arrangement public;
    shared_model *shared;
} arrangement;

static void shared_model_clear(gpointer data)
{
    tw_graph_model_free(((shared_model *)data)->model);
}

/* The open scopes as the layout's groups: group_of[s] for each scope shown
 * as a frame (open, and every scope around it open; the root is group 0),
 * -1 for the others; parent[] per group. Returns the number of groups. */
static int scope_groups(const tw_graph_arrangement *a, int *group_of, int *parent)
{
    const tw_graph_model *m = a->model;
    int ngroups = 0;
    for (int s = 0; s < m->nscopes; s++) { /* parents come before children */
        int p = m->scopes[s].parent;
        group_of[s] = -1;
        if (p < 0 || (a->expanded[s] && group_of[p] >= 0)) {
            parent[ngroups] = p < 0 ? -1 : group_of[p];
            group_of[s] = ngroups++;
        }
    }
    return ngroups;
}

/* The innermost group around visible node v: an op's scope, or the scope
 * around a collapsed one, whichever open scope holds it. */
static int node_group(const tw_graph_arrangement *a, const int *group_of, int v)
{
    const tw_visible_node *node = &a->graph->nodes[v];
    if (node->output >= 0)
        return 0; /* the function's outputs: outside every scope */
    int s = node->is_scope ? a->model->scopes[node->index].parent : a->model->nodes[node->index].scope_index;
    while (group_of[s] < 0)
        s = a->model->scopes[s].parent;
    return group_of[s];
}

/* Each open scope's frame: around the boxes inside it and the frames of the
 * open scopes nested in it, with room above for its title (the layout left
 * room for them all, tw_graph_layout_new_nested). */
static void make_frames(tw_graph_arrangement *a, int ngroups, const int *group_of, const int *parent,
                        const int *groups)
{
    const tw_graph_model *m = a->model;
    double *box = g_new(double, 4 * (size_t)ngroups); /* left, top, right, bottom */
    for (int g = 0; g < ngroups; g++)
        box[4 * g] = box[4 * g + 1] = G_MAXDOUBLE, box[4 * g + 2] = box[4 * g + 3] = -G_MAXDOUBLE;
    for (int v = 0; v < a->graph->nnodes; v++) {
        const tw_layout_box *b = &a->layout->nodes[v];
        double *g = &box[4 * groups[v]];
        g[0] = MIN(g[0], b->x), g[1] = MIN(g[1], b->y);
        g[2] = MAX(g[2], b->x + b->width), g[3] = MAX(g[3], b->y + b->height);
    }
    /* Deeper frames first, so an outer one grows around the inner ones. */
    for (int g = ngroups - 1; g > 0; g--) {
        double *b = &box[4 * g];
        if (b[0] > b[2])
            continue;
        b[0] -= TW_GRAPH_FRAME_PAD, b[1] -= TW_GRAPH_FRAME_PAD + TW_GRAPH_FRAME_HEADER, b[2] += TW_GRAPH_FRAME_PAD,
            b[3] += TW_GRAPH_FRAME_PAD;
        double *p = &box[4 * parent[g]];
        p[0] = MIN(p[0], b[0]), p[1] = MIN(p[1], b[1]), p[2] = MAX(p[2], b[2]), p[3] = MAX(p[3], b[3]);
    }
    a->frames = g_new(tw_graph_frame, MAX(ngroups, 1));
    for (int s = 1; s < m->nscopes; s++) {
        int g = group_of[s];
        if (g > 0 && box[4 * g] <= box[4 * g + 2])
            a->frames[a->nframes++] = (tw_graph_frame){s, box[4 * g], box[4 * g + 1], box[4 * g + 2] - box[4 * g],
                                                       box[4 * g + 3] - box[4 * g + 1]};
    }
    g_free(box);
}

static tw_graph_arrangement *arrange(shared_model *shared, const bool *expanded)
{
    arrangement *self = g_atomic_rc_box_new0(arrangement);
    self->shared = g_atomic_rc_box_acquire(shared);
    tw_graph_arrangement *a = &self->public;
    const tw_graph_model *m = a->model = shared->model;
    a->expanded = g_new(bool, MAX(m->nscopes, 1));
    if (expanded)
        memcpy(a->expanded, expanded, sizeof(bool) * (size_t)m->nscopes);
    else
        tw_graph_model_default_expansion(m, a->expanded);
    a->expanded[0] = true;
    a->graph = tw_visible_graph_new(m, a->expanded);
    int n = a->graph->nnodes;
    double *widths = g_new(double, MAX(n, 1)), *heights = g_new(double, MAX(n, 1));
    for (int v = 0; v < n; v++)
        tw_graph_node_size(m, &a->graph->nodes[v], &widths[v], &heights[v]);
    int *edges = g_new(int, 2 * (size_t)MAX(a->graph->nedges, 1));
    for (int e = 0; e < a->graph->nedges; e++)
        edges[2 * e] = a->graph->edges[e].from, edges[2 * e + 1] = a->graph->edges[e].to;
    int *group_of = g_new(int, MAX(m->nscopes, 1)), *parent = g_new(int, MAX(m->nscopes, 1));
    int *groups = g_new(int, MAX(n, 1));
    int ngroups = scope_groups(a, group_of, parent);
    for (int v = 0; v < n; v++)
        groups[v] = node_group(a, group_of, v);
    tw_layout_nesting nesting = {ngroups, parent, groups, TW_GRAPH_FRAME_PAD, TW_GRAPH_FRAME_HEADER};
    a->layout = tw_graph_layout_new_nested(n, widths, heights, a->graph->nedges, edges, &nesting);
    g_free(widths), g_free(heights), g_free(edges);
    make_frames(a, ngroups, group_of, parent, groups);
    g_free(group_of), g_free(parent), g_free(groups);
    a->labels = tw_graph_place_edge_labels(m, a->graph, a->layout, a->nframes, a->frames);
    return a;
}

tw_graph_arrangement *tw_graph_arrangement_new(tw_graph_model *model, const bool *expanded)
{
    shared_model *shared = g_atomic_rc_box_new(shared_model);
    shared->model = model;
    tw_graph_arrangement *a = arrange(shared, expanded);
    g_atomic_rc_box_release_full(shared, shared_model_clear);
    return a;
}

tw_graph_arrangement *tw_graph_arrangement_rearrange(const tw_graph_arrangement *from, const bool *expanded)
{
    return arrange(((const arrangement *)from)->shared, expanded);
}

tw_graph_arrangement *tw_graph_arrangement_ref(tw_graph_arrangement *a)
{
    return g_atomic_rc_box_acquire(a);
}

static void arrangement_clear(gpointer data)
{
    arrangement *self = data;
    tw_graph_arrangement *a = &self->public;
    g_free(a->expanded), g_free(a->frames), g_free(a->labels);
    tw_visible_graph_free(a->graph);
    tw_graph_layout_free(a->layout);
    g_atomic_rc_box_release_full(self->shared, shared_model_clear);
}

void tw_graph_arrangement_unref(tw_graph_arrangement *a)
{
    if (a)
        g_atomic_rc_box_release_full(a, arrangement_clear);
}

int tw_graph_arrangement_visible_of(const tw_graph_arrangement *a, int node)
{
    if (node < 0 || node >= a->model->nnodes)
        return -1;
    int v = a->graph->of_node[node];
    if (v >= 0)
        return v;
    /* Tucked into the op it feeds alone. */
    for (int i = node + 1; i < a->model->nnodes; i++)
        for (int k = 0; k < a->model->nodes[i].ninputs; k++)
            if (a->model->nodes[i].input_node[k] == node)
                return a->graph->of_node[i];
    return -1;
}

int tw_graph_arrangement_expander_at(const tw_graph_arrangement *a, double x, double y)
{
    int v = tw_graph_node_at(a->layout, x, y);
    if (v >= 0 && a->graph->nodes[v].is_scope)
        return x <= a->layout->nodes[v].x + TW_GRAPH_EXPANDER_WIDTH ? a->graph->nodes[v].index : -1;
    for (int f = a->nframes - 1; f >= 0; f--) { /* the innermost first */
        const tw_graph_frame *fr = &a->frames[f];
        if (x >= fr->x && x <= fr->x + fr->width && y >= fr->y && y <= fr->y + TW_GRAPH_FRAME_HEADER)
            return fr->scope;
    }
    return -1;
}

tw_graph_scene tw_graph_arrangement_scene(const tw_graph_arrangement *a, int selected, const bool *highlighted)
{
    return (tw_graph_scene){.model = a->model, .graph = a->graph, .layout = a->layout, .selected = selected,
                            .highlighted = highlighted, .nframes = a->nframes, .frames = a->frames,
                            .labels = a->labels};
}
