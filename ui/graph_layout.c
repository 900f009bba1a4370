/* The layered layout (see graph_layout.h). The work is on an "extended"
 * graph: the real nodes, then one dummy per layer an edge crosses, joined
 * by segments between adjacent layers. */
#include "graph_layout.h"

#include <glib.h>
#include <stdlib.h>

#define MARGIN 24.0
#define NODE_GAP 24.0      /* between boxes in a layer */
#define LAYER_GAP 48.0     /* between layers, room for edge labels */
#define ORDER_SWEEPS 4     /* down and up barycenter sweeps each */
#define PLACE_SWEEPS 6

/* Compressed adjacency: the neighbours of v are list[start[v] .. start[v+1]). */
typedef struct {
    int *start, *list;
} adjacency;

static adjacency adjacency_new(int n, int m, const int *from, const int *to)
{
    adjacency a = {g_new0(int, n + 1), g_new(int, MAX(m, 1))};
    for (int e = 0; e < m; e++)
        a.start[from[e] + 1]++;
    for (int v = 0; v < n; v++)
        a.start[v + 1] += a.start[v];
    int *fill = g_memdup2(a.start, sizeof(int) * (size_t)n);
    for (int e = 0; e < m; e++)
        a.list[fill[from[e]]++] = to[e]; /* edges in input order: deterministic */
    g_free(fill);
    return a;
}

static void adjacency_free(adjacency *a)
{
    g_free(a->start), g_free(a->list);
}

/* Layers by longest path from the sources; an edge that closes a cycle is
 * reversed (found by Kahn's order, taking the lowest-numbered node left
 * when none is free). */
static int *rank_nodes(int n, int m, const int *edges, bool *reversed)
{
    int *from = g_new(int, MAX(m, 1)), *to = g_new(int, MAX(m, 1)), *ids = g_new(int, MAX(m, 1));
    for (int e = 0; e < m; e++)
        from[e] = edges[2 * e], to[e] = edges[2 * e + 1], ids[e] = e;
    adjacency out = adjacency_new(n, m, from, ids);
    int *indegree = g_new0(int, n), *layer = g_new0(int, n), *queue = g_new(int, n);
    bool *done = g_new0(bool, n);
    for (int e = 0; e < m; e++)
        indegree[to[e]]++;
    int head = 0, tail = 0, lowest = 0;
    for (int v = 0; v < n; v++)
        if (!indegree[v])
            queue[tail++] = v;
    while (head < n) {
        if (head == tail) {
            while (done[lowest] || indegree[lowest] == 0)
                lowest++;
            queue[tail++] = lowest; /* in a cycle: its remaining inputs get reversed */
            indegree[lowest] = 0;
        }
        int v = queue[head++];
        done[v] = true;
        /* An edge to a node already placed closed a cycle: it runs w -> v. */
        for (int k = out.start[v]; k < out.start[v + 1]; k++) {
            int e = out.list[k];
            if (done[to[e]] && (reversed[e] = true))
                layer[v] = MAX(layer[v], layer[to[e]] + 1);
        }
        for (int k = out.start[v]; k < out.start[v + 1]; k++) {
            int w = to[out.list[k]];
            if (done[w])
                continue;
            layer[w] = MAX(layer[w], layer[v] + 1);
            if (--indegree[w] == 0)
                queue[tail++] = w;
        }
    }
    adjacency_free(&out);
    g_free(from), g_free(to), g_free(ids), g_free(indegree), g_free(queue), g_free(done);
    return layer;
}

/* The extended graph: real nodes 0..n-1, then dummies; segments join
 * adjacent layers; chain[e] lists edge e's nodes from top to bottom. */
typedef struct {
    int total;
    int *layer;
    double *width, *height;
    int nsegments;
    int *seg_from, *seg_to;
    int *chain_start, *chain; /* edge e's nodes: chain[chain_start[e] .. chain_start[e+1]) */
    adjacency up, down;       /* predecessors, successors */
} extended;

static void extended_build(extended *x, int n, const double *widths, const double *heights, int m, const int *edges,
                           const bool *reversed, const int *rank)
{
    int total = n, nsegments = 0;
    for (int e = 0; e < m; e++) {
        int span = abs(rank[edges[2 * e + 1]] - rank[edges[2 * e]]);
        total += span - 1;
        nsegments += span;
    }
    x->total = total;
    x->layer = g_new(int, total);
    x->width = g_new(double, total);
    x->height = g_new0(double, total);
    for (int v = 0; v < n; v++)
        x->layer[v] = rank[v], x->width[v] = widths[v], x->height[v] = heights[v];
    x->nsegments = nsegments;
    x->seg_from = g_new(int, MAX(nsegments, 1));
    x->seg_to = g_new(int, MAX(nsegments, 1));
    x->chain_start = g_new(int, m + 1);
    x->chain = g_new(int, nsegments + m);
    int next = n, s = 0, c = 0;
    for (int e = 0; e < m; e++) {
        int top = edges[2 * e + (reversed[e] ? 1 : 0)], bottom = edges[2 * e + (reversed[e] ? 0 : 1)];
        x->chain_start[e] = c;
        x->chain[c++] = top;
        int prev = top;
        for (int l = rank[top] + 1; l <= rank[bottom]; l++) {
            int v = l == rank[bottom] ? bottom : next++;
            if (v != bottom)
                x->layer[v] = l, x->width[v] = 0;
            x->seg_from[s] = prev, x->seg_to[s] = v, s++;
            x->chain[c++] = v;
            prev = v;
        }
    }
    x->chain_start[m] = c;
    x->down = adjacency_new(total, nsegments, x->seg_from, x->seg_to);
    x->up = adjacency_new(total, nsegments, x->seg_to, x->seg_from);
}

static void extended_free(extended *x)
{
    g_free(x->layer), g_free(x->width), g_free(x->height), g_free(x->seg_from), g_free(x->seg_to);
    g_free(x->chain_start), g_free(x->chain);
    adjacency_free(&x->up), adjacency_free(&x->down);
}

typedef struct {
    int node;
    double key;
} keyed;

static int keyed_compare(const void *a, const void *b)
{
    const keyed *p = a, *q = b;
    if (p->key != q->key)
        return p->key < q->key ? -1 : 1;
    return p->node - q->node; /* stable and deterministic */
}

/* Reorder one layer by the mean position of each node's neighbours in the
 * layer swept from; a node without neighbours keeps its place. */
static void order_layer(int *members, int count, const adjacency *near, const double *pos, keyed *scratch)
{
    for (int i = 0; i < count; i++) {
        int v = members[i], k0 = near->start[v], k1 = near->start[v + 1];
        double sum = 0;
        for (int k = k0; k < k1; k++)
            sum += pos[near->list[k]];
        scratch[i] = (keyed){v, k1 > k0 ? sum / (k1 - k0) : i};
    }
    qsort(scratch, (size_t)count, sizeof *scratch, keyed_compare);
    for (int i = 0; i < count; i++)
        members[i] = scratch[i].node;
}

/* Members of each layer: layer l is members[start[l] .. start[l+1]). */
static void order_layers(const extended *x, int nlayers, const int *start, int *members)
{
    double *pos = g_new(double, x->total);
    keyed *scratch = g_new(keyed, x->total);
    for (int i = 0; i < x->total; i++)
        pos[members[i]] = i - start[x->layer[members[i]]];
    for (int sweep = 0; sweep < 2 * ORDER_SWEEPS; sweep++) {
        bool down = sweep % 2 == 0;
        for (int j = 1; j < nlayers; j++) {
            int l = down ? j : nlayers - 1 - j;
            int count = start[l + 1] - start[l];
            order_layer(members + start[l], count, down ? &x->up : &x->down, pos, scratch);
            for (int i = 0; i < count; i++)
                pos[members[start[l] + i]] = i;
        }
    }
    g_free(pos), g_free(scratch);
}

/* The centres nearest (least squares) to target[] that keep the layer's
 * order with NODE_GAP between boxes: pool adjacent violators on the centres
 * less the least offsets the gaps impose. */
static void place_layer(const int *members, int count, const double *width, const double *target, double *center,
                        double *offset, double *block_sum, int *block_count)
{
    int nblocks = 0;
    for (int i = 0; i < count; i++) {
        int v = members[i];
        offset[i] = i == 0 ? 0 : offset[i - 1] + (width[members[i - 1]] + width[v]) / 2 + NODE_GAP;
        block_sum[nblocks] = target[v] - offset[i];
        block_count[nblocks++] = 1;
        while (nblocks > 1 && block_sum[nblocks - 2] / block_count[nblocks - 2] >
                                  block_sum[nblocks - 1] / block_count[nblocks - 1]) {
            block_sum[nblocks - 2] += block_sum[nblocks - 1];
            block_count[nblocks - 2] += block_count[nblocks - 1];
            nblocks--;
        }
    }
    for (int b = 0, i = 0; b < nblocks; b++)
        for (int k = 0; k < block_count[b]; k++, i++)
            center[members[i]] = block_sum[b] / block_count[b] + offset[i];
}

/* A node's target: the mean centre of its neighbours above (dir 1), below
 * (dir 2) or both (3); its own centre when it has none. */
static double neighbour_mean(const extended *x, int v, int dirs, const double *center)
{
    double sum = 0;
    int count = 0;
    for (int dir = 1; dir <= 2; dir++) {
        const adjacency *a = dir == 1 ? &x->up : &x->down;
        for (int k = a->start[v]; (dirs & dir) && k < a->start[v + 1]; k++, count++)
            sum += center[a->list[k]];
    }
    return count ? sum / count : center[v];
}

static void place_nodes(const extended *x, int nlayers, const int *start, const int *members, double *center)
{
    double *target = g_new0(double, x->total), *offset = g_new(double, x->total);
    double *block_sum = g_new(double, x->total);
    int *block_count = g_new(int, x->total);
    for (int l = 0; l < nlayers; l++) /* packed around 0 to begin with */
        place_layer(members + start[l], start[l + 1] - start[l], x->width, target, center, offset, block_sum,
                    block_count);
    /* Down (towards the inputs), up (towards the readers), then both. */
    static const int dirs[PLACE_SWEEPS] = {1, 2, 1, 2, 3, 3};
    for (int sweep = 0; sweep < PLACE_SWEEPS; sweep++)
        for (int j = 0; j < nlayers; j++) {
            int l = dirs[sweep] == 2 ? nlayers - 1 - j : j;
            for (int i = start[l]; i < start[l + 1]; i++)
                target[members[i]] = neighbour_mean(x, members[i], dirs[sweep], center);
            place_layer(members + start[l], start[l + 1] - start[l], x->width, target, center, offset, block_sum,
                        block_count);
        }
    g_free(target), g_free(offset), g_free(block_sum), g_free(block_count);
}

/* Each edge from its top node's bottom centre through its dummies to its
 * bottom node's top centre; a reversed one is then turned round. */
static void route_edges(tw_graph_layout *g, const extended *x, const int *edges, const bool *reversed,
                        const double *center, const double *layer_y, const double *layer_height)
{
    for (int e = 0; e < g->nedges; e++) {
        tw_layout_edge *edge = &g->edges[e];
        int c0 = x->chain_start[e], c1 = x->chain_start[e + 1];
        edge->from = edges[2 * e], edge->to = edges[2 * e + 1];
        edge->reversed = reversed[e];
        edge->npoints = c1 - c0;
        edge->points = g_new(double, 2 * edge->npoints);
        for (int c = c0; c < c1; c++) {
            int v = x->chain[c], l = x->layer[v], p = reversed[e] ? c1 - 1 - c : c - c0;
            double mid = layer_y[l] + layer_height[l] / 2;
            edge->points[2 * p] = center[v];
            edge->points[2 * p + 1] = c == c0 ? mid + x->height[v] / 2 : c == c1 - 1 ? mid - x->height[v] / 2 : mid;
        }
    }
}

tw_graph_layout *tw_graph_layout_new(int n, const double *widths, const double *heights, int m, const int *edges)
{
    bool *reversed = g_new0(bool, MAX(m, 1));
    int *rank = rank_nodes(n, m, edges, reversed);
    extended x;
    extended_build(&x, n, widths, heights, m, edges, reversed, rank);
    int nlayers = 0;
    for (int v = 0; v < x.total; v++)
        nlayers = MAX(nlayers, x.layer[v] + 1);
    /* Layers' members, in node order to begin with. */
    int *start = g_new0(int, nlayers + 1), *members = g_new(int, MAX(x.total, 1));
    for (int v = 0; v < x.total; v++)
        start[x.layer[v] + 1]++;
    for (int l = 0; l < nlayers; l++)
        start[l + 1] += start[l];
    int *fill = g_memdup2(start, sizeof(int) * (size_t)(nlayers + 1));
    for (int v = 0; v < x.total; v++)
        members[fill[x.layer[v]]++] = v;
    g_free(fill);
    order_layers(&x, nlayers, start, members);
    double *center = g_new0(double, MAX(x.total, 1));
    place_nodes(&x, nlayers, start, members, center);

    double *layer_y = g_new0(double, nlayers + 1), *layer_height = g_new0(double, MAX(nlayers, 1));
    double left = G_MAXDOUBLE, right = -G_MAXDOUBLE;
    for (int v = 0; v < x.total; v++) {
        layer_height[x.layer[v]] = MAX(layer_height[x.layer[v]], x.height[v]);
        left = MIN(left, center[v] - x.width[v] / 2);
        right = MAX(right, center[v] + x.width[v] / 2);
    }
    layer_y[0] = MARGIN;
    for (int l = 0; l < nlayers; l++)
        layer_y[l + 1] = layer_y[l] + layer_height[l] + LAYER_GAP;
    for (int v = 0; v < x.total; v++)
        center[v] += MARGIN - left;

    tw_graph_layout *g = g_new0(tw_graph_layout, 1);
    g->nnodes = n;
    g->nodes = g_new(tw_layout_box, MAX(n, 1));
    for (int v = 0; v < n; v++) {
        double top = layer_y[rank[v]] + (layer_height[rank[v]] - heights[v]) / 2;
        g->nodes[v] = (tw_layout_box){center[v] - widths[v] / 2, top, widths[v], heights[v], rank[v]};
    }
    g->nedges = m;
    g->edges = g_new0(tw_layout_edge, MAX(m, 1));
    route_edges(g, &x, edges, reversed, center, layer_y, layer_height);
    g->nlayers = nlayers;
    g->width = n ? right - left + 2 * MARGIN : 2 * MARGIN;
    g->height = n ? layer_y[nlayers] - LAYER_GAP + MARGIN : 2 * MARGIN;

    g_free(layer_y), g_free(layer_height), g_free(center), g_free(start), g_free(members);
    g_free(rank), g_free(reversed);
    extended_free(&x);
    return g;
}

void tw_graph_layout_free(tw_graph_layout *g)
{
    if (!g)
        return;
    for (int e = 0; e < g->nedges; e++)
        g_free(g->edges[e].points);
    g_free(g->nodes), g_free(g->edges);
    g_free(g);
}
