/* The layered layout (see graph_layout.h). The work is on an "extended"
 * graph: the real nodes, then one dummy per layer an edge crosses, joined
 * by segments between adjacent layers. */
#include "graph_layout.h"

#include <glib.h>
#include <math.h>
#include <stdlib.h>

#define MARGIN 24.0
#define NODE_GAP 24.0      /* between boxes in a layer */
#define LAYER_GAP 48.0     /* between layers, room for edge labels */
#define ORDER_SWEEPS 4     /* down and up barycenter sweeps each */
#define PLACE_SWEEPS 6

/* Compressed adjacency: the neighbours of v are list[start[v] .. start[v+1]);
 * bias, when there is one, is added to each neighbour's position when a
 * layer is ordered by them. */
typedef struct {
    int *start, *list;
    double *bias;
} adjacency;

static adjacency adjacency_new(int n, int m, const int *from, const int *to, const double *bias)
{
    adjacency a = {g_new0(int, n + 1), g_new(int, MAX(m, 1)), bias ? g_new(double, MAX(m, 1)) : NULL};
    for (int e = 0; e < m; e++)
        a.start[from[e] + 1]++;
    for (int v = 0; v < n; v++)
        a.start[v + 1] += a.start[v];
    int *fill = g_memdup2(a.start, sizeof(int) * (size_t)n);
    for (int e = 0; e < m; e++) {
        if (bias)
            a.bias[fill[from[e]]] = bias[e];
        a.list[fill[from[e]]++] = to[e]; /* edges in input order: deterministic */
    }
    g_free(fill);
    return a;
}

static void adjacency_free(adjacency *a)
{
    g_free(a->start), g_free(a->list), g_free(a->bias);
}

/* Layers by longest path from the sources; an edge that closes a cycle is
 * reversed (found by Kahn's order, taking the lowest-numbered node left
 * when none is free). */
static int *rank_nodes(int n, int m, const int *edges, bool *reversed)
{
    int *from = g_new(int, MAX(m, 1)), *to = g_new(int, MAX(m, 1)), *ids = g_new(int, MAX(m, 1));
    for (int e = 0; e < m; e++)
        from[e] = edges[2 * e], to[e] = edges[2 * e + 1], ids[e] = e;
    adjacency out = adjacency_new(n, m, from, ids, NULL);
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
    /* A node's inputs are its edges in: the k-th of K in the list lands at
     * (k + 1/2) / K - 1/2 of the node's width in the layer's order, so that
     * the layer above orders its feeders as the ports they feed (left to
     * right) and the last segments into a node do not cross. */
    int *nin = g_new0(int, n), *kth = g_new(int, MAX(m, 1));
    double *bias = g_new0(double, MAX(nsegments, 1));
    for (int e = 0; e < m; e++)
        kth[e] = nin[edges[2 * e + 1]]++;
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
            if (v == bottom && !reversed[e])
                bias[s] = (kth[e] + 0.5) / nin[bottom] - 0.5;
            x->seg_from[s] = prev, x->seg_to[s] = v, s++;
            x->chain[c++] = v;
            prev = v;
        }
    }
    x->chain_start[m] = c;
    x->down = adjacency_new(total, nsegments, x->seg_from, x->seg_to, bias);
    x->up = adjacency_new(total, nsegments, x->seg_to, x->seg_from, NULL);
    g_free(nin), g_free(kth), g_free(bias);
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
            sum += pos[near->list[k]] + (near->bias ? near->bias[k] : 0);
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

/* Each edge from its top node's bottom centre down to the bottom of its
 * layer's band, across the gap to the next layer's band, straight down
 * through each layer it crosses at its dummy's x, and into its bottom
 * node's top centre; a reversed one is then turned round. Slanted parts
 * lie only in the gaps between bands, where there are no boxes, and
 * vertical ones at an x no other box in the band covers (a dummy keeps
 * NODE_GAP from the boxes beside it), so no edge passes through a box. */
static void route_edges(tw_graph_layout *g, const extended *x, const int *edges, const bool *reversed,
                        const double *center, const double *layer_y, const double *layer_height,
                        const double *room_above, const double *room_below)
{
    for (int e = 0; e < g->nedges; e++) {
        tw_layout_edge *edge = &g->edges[e];
        int c0 = x->chain_start[e], c1 = x->chain_start[e + 1];
        edge->from = edges[2 * e], edge->to = edges[2 * e + 1];
        edge->reversed = reversed[e];
        double *p = edge->points = g_new(double, 2 * (4 * (c1 - c0) + 2));
        int n = 0;
#define ADD(px, py) (p[2 * n] = (px), p[2 * n + 1] = (py), n++)
        for (int c = c0; c < c1; c++) {
            int v = x->chain[c], l = x->layer[v];
            double band_top = layer_y[l], band_bottom = layer_y[l] + layer_height[l];
            double mid = band_top + layer_height[l] / 2, h = x->height[v];
            /* Straight through the room kept for frames' edges and titles
             * too: the slants stay between the frames, off their titles. */
            if (c > c0 && room_above[l] > 0)
                ADD(center[v], band_top - room_above[l]);
            if (c == c0) {
                ADD(center[v], mid + h / 2);
                if (mid + h / 2 < band_bottom)
                    ADD(center[v], band_bottom);
            } else if (c == c1 - 1) {
                if (mid - h / 2 > band_top)
                    ADD(center[v], band_top);
                ADD(center[v], mid - h / 2);
            } else {
                ADD(center[v], band_top);
                ADD(center[v], band_bottom);
            }
            if (c < c1 - 1 && room_below[l] > 0)
                ADD(center[v], band_bottom + room_below[l]);
        }
#undef ADD
        edge->npoints = n;
        for (int i = 0; reversed[e] && i < n / 2; i++)
            for (int k = 0; k < 2; k++) {
                double t = p[2 * i + k];
                p[2 * i + k] = p[2 * (n - 1 - i) + k];
                p[2 * (n - 1 - i) + k] = t;
            }
    }
}

/* ---- frames: each group packed as one block, so frames nest and never overlap ---- */

typedef struct {
    int lo, hi;          /* the layers it covers; hi < lo while empty */
    double width;        /* its items' extent and its pad on either side */
    double content_left; /* its items' left end, in its own packing */
    double want;         /* the centre its parent packs it towards */
} group_box;

/* A group's item: an extended node v (v < total) or the group total + g.
 * Items are packed in place_nodes' coordinates, each group on its own; an
 * item's left (left[item]) is then in its group's packing. */
static void item_extent(int it, const extended *x, const group_box *boxes, int *l0, int *l1, double *w)
{
    if (it < x->total)
        *l0 = *l1 = x->layer[it], *w = x->width[it];
    else
        *l0 = boxes[it - x->total].lo, *l1 = boxes[it - x->total].hi, *w = boxes[it - x->total].width;
}

/* One group's items from left to right in the order of the centres they
 * want (want[] for nodes), each as far left as it wants but NODE_GAP clear
 * of the items before it in every layer it covers (right[] holds each
 * layer's right end so far, -inf between groups). Items' lefts go to
 * left[]. */
static void pack_group(const int *items, int nitems, const extended *x, group_box *boxes, const double *want,
                       double *right, double *left, keyed *order)
{
    for (int i = 0; i < nitems; i++) {
        int it = items[i];
        order[i] = (keyed){it, it < x->total ? want[it] : boxes[it - x->total].want};
    }
    qsort(order, (size_t)nitems, sizeof *order, keyed_compare);
    for (int i = 0; i < nitems; i++) {
        int it = order[i].node, l0, l1;
        double w;
        item_extent(it, x, boxes, &l0, &l1, &w);
        double at = order[i].key - w / 2;
        for (int l = l0; l <= l1; l++)
            at = MAX(at, right[l] + NODE_GAP);
        for (int l = l0; l <= l1; l++)
            right[l] = at + w;
        left[it] = at;
    }
    for (int i = 0; i < nitems; i++) {
        int l0, l1;
        double w;
        item_extent(items[i], x, boxes, &l0, &l1, &w);
        for (int l = l0; l <= l1; l++)
            right[l] = -G_MAXDOUBLE;
    }
}

/* Moves center[] so that each group of the nesting is one block in its
 * parent's packing, and fills per layer the deepest frame starting there
 * (start_depth) and ending there (end_depth). */
static void pack_nesting(const tw_layout_nesting *nest, int n, int m, const int *edges, const extended *x,
                         int nlayers, double *center, int *start_depth, int *end_depth)
{
    int ng = nest->ngroups, total = x->total;
    int *depth = g_new0(int, ng), *group = g_new(int, MAX(total, 1));
    for (int g = 1; g < ng; g++)
        depth[g] = depth[nest->parent[g]] + 1;
    for (int v = 0; v < n; v++)
        group[v] = nest->node_group[v];
    /* An edge's bends lie in the innermost group holding both its ends. */
    for (int e = 0; e < m; e++) {
        int a = group[edges[2 * e]], b = group[edges[2 * e + 1]];
        while (a != b)
            if (depth[a] >= depth[b])
                a = nest->parent[a];
            else
                b = nest->parent[b];
        for (int c = x->chain_start[e] + 1; c < x->chain_start[e + 1] - 1; c++)
            group[x->chain[c]] = a;
    }
    group_box *boxes = g_new0(group_box, ng);
    for (int g = 0; g < ng; g++)
        boxes[g].lo = G_MAXINT, boxes[g].hi = -1;
    /* Items per group: its nodes, then its children (counted first). */
    int *count = g_new0(int, ng + 1);
    for (int v = 0; v < total; v++)
        count[group[v] + 1]++;
    for (int g = 1; g < ng; g++)
        count[nest->parent[g] + 1]++;
    for (int g = 0; g < ng; g++)
        count[g + 1] += count[g];
    int *items = g_new(int, MAX(total + ng, 1)), *fill = g_memdup2(count, sizeof(int) * (size_t)(ng + 1));
    for (int v = 0; v < total; v++) {
        items[fill[group[v]]++] = v;
        for (int g = group[v]; g >= 0; g = nest->parent[g])
            boxes[g].lo = MIN(boxes[g].lo, x->layer[v]), boxes[g].hi = MAX(boxes[g].hi, x->layer[v]);
    }
    for (int g = 1; g < ng; g++)
        if (boxes[g].hi >= boxes[g].lo) /* an empty group takes no room */
            items[fill[nest->parent[g]]++] = total + g;
    /* A long edge's dummies all want the mean of their centres: each is
     * packed on the same side of every frame beside it, so the edge runs
     * straight past a frame instead of crossing it from side to side
     * wherever the smoothed centres pass the frame's own. */
    double *want = g_memdup2(center, sizeof(double) * (size_t)MAX(total, 1));
    for (int e = 0; e < m; e++) {
        int c0 = x->chain_start[e] + 1, c1 = x->chain_start[e + 1] - 1;
        double sum = 0;
        for (int c = c0; c < c1; c++)
            sum += center[x->chain[c]];
        for (int c = c0; c < c1; c++)
            want[x->chain[c]] = sum / (c1 - c0);
    }
    double *right = g_new(double, MAX(nlayers, 1)), *left = g_new(double, total + ng);
    keyed *order = g_new(keyed, MAX(total + ng, 1));
    for (int l = 0; l < nlayers; l++)
        right[l] = -G_MAXDOUBLE;
    /* Children come after their parents in the nesting: pack from the last. */
    for (int g = ng - 1; g >= 0; g--) {
        group_box *b = &boxes[g];
        int k0 = count[g], k1 = fill[g];
        if (b->hi < b->lo)
            continue;
        pack_group(items + k0, k1 - k0, x, boxes, want, right, left, order);
        double lo = G_MAXDOUBLE, hi = -G_MAXDOUBLE;
        for (int k = k0; k < k1; k++) {
            int l0, l1;
            double w;
            item_extent(items[k], x, boxes, &l0, &l1, &w);
            lo = MIN(lo, left[items[k]]), hi = MAX(hi, left[items[k]] + w);
        }
        b->content_left = lo;
        b->width = hi - lo + (g > 0 ? 2 * nest->pad : 0);
        b->want = (lo + hi) / 2; /* its parent packs it where its items went */
    }
    /* From the top group down: each block where its parent put it. */
    double *offset = g_new0(double, ng); /* place_nodes' coordinates to the final ones, per group */
    for (int g = 1; g < ng; g++) {
        group_box *b = &boxes[g];
        if (b->hi < b->lo)
            continue;
        double placed = left[total + g] + offset[nest->parent[g]] + nest->pad;
        offset[g] = placed - b->content_left;
    }
    for (int v = 0; v < total; v++)
        center[v] = left[v] + offset[group[v]] + x->width[v] / 2;
    for (int g = 1; g < ng; g++)
        if (boxes[g].hi >= boxes[g].lo) {
            start_depth[boxes[g].lo] = MAX(start_depth[boxes[g].lo], depth[g]);
            end_depth[boxes[g].hi] = MAX(end_depth[boxes[g].hi], depth[g]);
        }
    g_free(order), g_free(right), g_free(left), g_free(offset), g_free(items), g_free(fill), g_free(count);
    g_free(want);
    g_free(boxes), g_free(depth), g_free(group);
}

tw_graph_layout *tw_graph_layout_new_nested(int n, const double *widths, const double *heights, int m, const int *edges,
                                            const tw_layout_nesting *nest)
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
    /* Frame edges per layer (0 without nesting), and the frames' reach
     * beyond the boxes at the sides. */
    int *start_depth = g_new0(int, nlayers + 1), *end_depth = g_new0(int, nlayers + 1), max_depth = 0;
    double pad = nest ? nest->pad : 0, header = nest ? nest->header : 0;
    if (nest && nest->ngroups > 1) {
        pack_nesting(nest, n, m, edges, &x, nlayers, center, start_depth, end_depth);
        for (int l = 0; l < nlayers; l++)
            max_depth = MAX(max_depth, start_depth[l]);
    }

    double *layer_y = g_new0(double, nlayers + 1), *layer_height = g_new0(double, MAX(nlayers, 1));
    double left = G_MAXDOUBLE, right = -G_MAXDOUBLE;
    for (int v = 0; v < x.total; v++) {
        layer_height[x.layer[v]] = MAX(layer_height[x.layer[v]], x.height[v]);
        left = MIN(left, center[v] - x.width[v] / 2);
        right = MAX(right, center[v] + x.width[v] / 2);
    }
    left -= max_depth * pad, right += max_depth * pad;
    layer_y[0] = MARGIN + start_depth[0] * (pad + header);
    for (int l = 0; l < nlayers; l++)
        layer_y[l + 1] =
            layer_y[l] + layer_height[l] + LAYER_GAP + end_depth[l] * pad + start_depth[l + 1] * (pad + header);
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
    double *room_above = g_new(double, MAX(nlayers, 1)), *room_below = g_new(double, MAX(nlayers, 1));
    for (int l = 0; l < nlayers; l++)
        room_above[l] = start_depth[l] * (pad + header), room_below[l] = end_depth[l] * pad;
    route_edges(g, &x, edges, reversed, center, layer_y, layer_height, room_above, room_below);
    g_free(room_above), g_free(room_below);
    g->nlayers = nlayers;
    g->width = n ? right - left + 2 * MARGIN : 2 * MARGIN;
    g->height = n ? layer_y[nlayers] - LAYER_GAP + MARGIN : 2 * MARGIN;

    g_free(layer_y), g_free(layer_height), g_free(center), g_free(start), g_free(members);
    g_free(rank), g_free(reversed), g_free(start_depth), g_free(end_depth);
    extended_free(&x);
    return g;
}

tw_graph_layout *tw_graph_layout_new(int n, const double *widths, const double *heights, int m, const int *edges)
{
    return tw_graph_layout_new_nested(n, widths, heights, m, edges, NULL);
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

/* ---- edge labels ---------------------------------------------------------------- */

#define LABEL_CELL 128.0   /* the grid that finds what a spot might overlap */
#define LABEL_OFFSET 5.0   /* from the edge to its label */
#define LABEL_SEGMENTS 4   /* segments tried, from the producer's end */

/* Rectangles, and edge segments by their bounding rectangles, in a uniform
 * grid of cells over the layout: each is listed in every cell it touches
 * (cells at the border also take what lies beyond), so a query looks at
 * the few near it, whatever the graph's size. */
typedef struct {
    tw_layout_rect r;
    int owner; /* the edge a segment belongs to; -1 for a box, label or obstacle */
} grid_item;

typedef struct {
    int cols, rows;
    GArray **cells; /* cols x rows of grid_item (NULL: empty), copies kept together for the scans */
} rect_grid;

static rect_grid grid_new(const tw_graph_layout *layout)
{
    rect_grid g = {MAX(1, (int)ceil(layout->width / LABEL_CELL)), MAX(1, (int)ceil(layout->height / LABEL_CELL))};
    g.cells = g_new0(GArray *, (size_t)g.cols * (size_t)g.rows);
    return g;
}

static void grid_free(rect_grid *g)
{
    for (size_t i = 0; i < (size_t)g->cols * (size_t)g->rows; i++)
        if (g->cells[i])
            g_array_unref(g->cells[i]);
    g_free(g->cells);
}

static int cell_of(double v, int n)
{
    double c = floor(v / LABEL_CELL);
    return c < 0 ? 0 : c >= n ? n - 1 : (int)c;
}

static void cell_range(const rect_grid *g, const tw_layout_rect *r, int *x0, int *y0, int *x1, int *y1)
{
    *x0 = cell_of(r->x, g->cols), *x1 = cell_of(r->x + r->width, g->cols);
    *y0 = cell_of(r->y, g->rows), *y1 = cell_of(r->y + r->height, g->rows);
}

/* stored (a rectangle, or a segment as in grid_hits) listed in the cells
 * that bounds touches. */
static void grid_insert(rect_grid *g, const tw_layout_rect *stored, int owner, const tw_layout_rect *bounds)
{
    grid_item item = {*stored, owner};
    int x0, y0, x1, y1;
    cell_range(g, bounds, &x0, &y0, &x1, &y1);
    for (int cy = y0; cy <= y1; cy++)
        for (int cx = x0; cx <= x1; cx++) {
            GArray **list = &g->cells[(size_t)cy * g->cols + cx];
            if (!*list)
                *list = g_array_new(FALSE, FALSE, sizeof(grid_item));
            g_array_append_val(*list, item);
        }
}

static void grid_add(rect_grid *g, const tw_layout_rect *r)
{
    grid_insert(g, r, -1, r);
}

static bool rects_overlap(const tw_layout_rect *a, const tw_layout_rect *b)
{
    return a->x < b->x + b->width && b->x < a->x + a->width && a->y < b->y + b->height && b->y < a->y + a->height;
}

/* Whether the segment from (x0, y0) to (x1, y1) passes through r
 * (Liang-Barsky clipping). */
static bool segment_hits(double x0, double y0, double x1, double y1, const tw_layout_rect *r)
{
    double lo = 0, hi = 1, p[4] = {x0 - x1, x1 - x0, y0 - y1, y1 - y0};
    double q[4] = {x0 - r->x, r->x + r->width - x0, y0 - r->y, r->y + r->height - y0};
    for (int i = 0; i < 4; i++) {
        if (p[i] == 0) {
            if (q[i] < 0)
                return false;
            continue;
        }
        double t = q[i] / p[i];
        if (p[i] < 0)
            lo = MAX(lo, t);
        else
            hi = MIN(hi, t);
    }
    return lo <= hi;
}

/* Whether r overlaps a rectangle in the grid, or (with segments) crosses
 * a segment of an edge other than `own`. A segment from (x, y) to
 * (x + width, y + height) is stored as that rectangle (width may be
 * negative) with its edge as owner. */
static bool grid_hits(const rect_grid *g, const tw_layout_rect *r, bool segments, int own)
{
    int x0, y0, x1, y1;
    cell_range(g, r, &x0, &y0, &x1, &y1);
    for (int cy = y0; cy <= y1; cy++)
        for (int cx = x0; cx <= x1; cx++) {
            const GArray *list = g->cells[(size_t)cy * g->cols + cx];
            for (guint i = 0; list && i < list->len; i++) {
                const grid_item *it = &g_array_index(list, grid_item, i);
                const tw_layout_rect *o = &it->r;
                if (it->owner < 0 ? rects_overlap(r, o)
                                  : segments && it->owner != own &&
                                        segment_hits(o->x, o->y, o->x + o->width, o->y + o->height, r))
                    return true;
            }
        }
    return false;
}

static void grid_add_segments(rect_grid *g, const tw_layout_edge *e, int edge)
{
    for (int p = 1; p < e->npoints; p++) {
        double ax = e->points[2 * p - 2], ay = e->points[2 * p - 1], bx = e->points[2 * p], by = e->points[2 * p + 1];
        tw_layout_rect segment = {ax, ay, bx - ax, by - ay};
        tw_layout_rect bounds = {MIN(ax, bx), MIN(ay, by), fabs(bx - ax), fabs(by - ay)};
        grid_insert(g, &segment, edge, &bounds);
    }
}

/* A spot at fraction t along segment s of the edge (its points run from
 * the producer), its label left (side -1) or right (1) of the edge,
 * centred on it vertically. */
static tw_layout_rect label_spot(const tw_layout_edge *e, int s, double t, int side, double w, double h)
{
    int a = s, b = s + 1;
    double x = e->points[2 * a] + t * (e->points[2 * b] - e->points[2 * a]);
    double y = e->points[2 * a + 1] + t * (e->points[2 * b + 1] - e->points[2 * a + 1]);
    return (tw_layout_rect){side > 0 ? x + LABEL_OFFSET : x - LABEL_OFFSET - w, y - h / 2, w, h};
}

void tw_graph_layout_place_labels(const tw_graph_layout *layout, const double *widths, const double *heights,
                                  int nobstacles, const tw_layout_rect *obstacles, tw_layout_rect *out)
{
    rect_grid taken = grid_new(layout);
    for (int v = 0; v < layout->nnodes; v++) {
        const tw_layout_box *b = &layout->nodes[v];
        grid_add(&taken, &(tw_layout_rect){b->x, b->y, b->width, b->height});
    }
    for (int i = 0; i < nobstacles; i++)
        grid_add(&taken, &obstacles[i]);
    for (int e = 0; e < layout->nedges; e++)
        grid_add_segments(&taken, &layout->edges[e], e);
    static const double fractions[] = {0.5, 0.3, 0.7, 0.15, 0.85};
    for (int e = 0; e < layout->nedges; e++) {
        const tw_layout_edge *edge = &layout->edges[e];
        out[e] = (tw_layout_rect){0, 0, 0, 0};
        if (!(widths[e] > 0 && heights[e] > 0) || edge->npoints < 2)
            continue;
        int nsegments = MIN(edge->npoints - 1, LABEL_SEGMENTS);
        bool found = false;
        /* Clear of other edges' lines if there is such a spot, else only
         * of boxes, labels and obstacles. */
        for (int pass = 0; pass < 2 && !found; pass++)
            for (int s = 0; s < nsegments && !found; s++) {
                /* First on the side the edge leaves towards, so labels of
                 * edges fanning out of one box part like the edges do. */
                tw_layout_rect start = label_spot(edge, s, 0, 1, 0, 0), end = label_spot(edge, s, 1, 1, 0, 0);
                int preferred = end.x < start.x - 1 ? -1 : 1;
                for (size_t f = 0; f < G_N_ELEMENTS(fractions) && !found; f++)
                    for (int k = 0; k < 2 && !found; k++) {
                        tw_layout_rect r =
                            label_spot(edge, s, fractions[f], k ? -preferred : preferred, widths[e], heights[e]);
                        if (!grid_hits(&taken, &r, pass == 0, e)) {
                            out[e] = r;
                            grid_add(&taken, &r);
                            found = true;
                        }
                    }
            }
    }
    grid_free(&taken);
}
