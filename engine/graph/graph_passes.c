/* Graph passes, run on every traced graph (tw__graph_optimize), in this
 * order:
 *
 * - constant folding: an op node whose inputs are all constants (not
 *   variables, not inputs) runs once, here, and becomes a constant node
 *   holding its result under the same name and scope. Assignments are never
 *   folded; every other op is deterministic (a trace refuses random draws).
 * - common-subexpression elimination: an op node with the same op, attrs,
 *   device and inputs as an earlier one reuses the earlier one's outputs;
 *   constants with equal dtype, shape and bytes are one constant. Stateful
 *   nodes (assignments) are never merged, and an op node is merged only
 *   with one that has as many assignments before it, so a value read after
 *   an assignment is never replaced by one read before.
 * - dead-node pruning: nodes that neither lead to an output nor to a
 *   stateful node go; the function's input nodes always stay (they are its
 *   signature).
 *
 * All keep the nodes' order; pruning renumbers them densely. Finalizing
 * then plans the run, fusing elementwise chains into one pass each
 * (graph_fuse.c): an execution plan, the nodes stay as traced. */
#include <stdlib.h>
#include <string.h>

#include "graph_internal.h"

/* ---- constant folding ------------------------------------------------------------ */

static bool foldable(const tw_graph *g, const tw_gnode *n)
{
    if (n->kind != TW_NODE_OP || (n->op->flags & TW_OP_STATEFUL) || n->noutputs != 1 || n->ninputs == 0 ||
        (!n->op->view && (n->device.kind != TW_DEVICE_CPU || !tw__cpu_kernel(n->op))))
        return false;
    for (int i = 0; i < n->ninputs; i++)
        if (g->nodes[n->inputs[i].node].kind != TW_NODE_CONSTANT)
            return false;
    return true;
}

/* The node's value from its constant inputs, packed; NULL with an error. */
static tw_tensor *evaluate(const tw_graph *g, const tw_gnode *n)
{
    tw_tensor *inputs[TW_MAX_INPUTS];
    if (n->ninputs > TW_MAX_INPUTS) {
        tw_error_set("%s: too many inputs to fold", n->name);
        return NULL;
    }
    for (int i = 0; i < n->ninputs; i++)
        inputs[i] = g->nodes[n->inputs[i].node].tensor;
    tw_op_call call = {n->op, n->ninputs, inputs, &n->attrs, NULL};
    const tw_desc *d = &n->outputs[0].desc;
    tw_tensor *t;
    if (n->op->view) {
        tw_tensor *view = n->op->view(&call, d);
        t = view ? tw__contiguous_raw(view) : NULL;
        tw_tensor_unref(view);
    } else {
        t = tw__tensor_new(d->dtype, d->ndim, d->shape, n->device);
        tw_kernel_fn kernel = t ? tw__kernel_for(n->op, n->device) : NULL;
        if (t && (!kernel || kernel(&call, &t) < 0)) {
            tw_tensor_unref(t);
            t = NULL;
        }
    }
    if (t)
        t->weak = n->outputs[0].weak;
    return t;
}

int tw__graph_fold(tw_graph *g, int *folded)
{
    *folded = 0;
    for (int n = 0; n < g->nnodes; n++) {
        tw_gnode *node = &g->nodes[n];
        if (!foldable(g, node))
            continue;
        tw_tensor *t = evaluate(g, node);
        if (!t)
            return -1;
        free(node->inputs);
        node->inputs = NULL;
        node->ninputs = 0;
        node->kind = TW_NODE_CONSTANT;
        node->op = NULL;
        node->attrs = tw__attrs_none();
        node->tensor = t;
        (*folded)++;
    }
    return 0;
}

/* ---- common subexpressions ---------------------------------------------------- */

typedef struct {
    const tw_graph *g;
    const int *epoch;
    int *table; /* node ids, -1 when empty; open addressing */
    size_t capacity;
} cse_table;

static uint64_t mix(uint64_t h, uint64_t v)
{
    return (h ^ v) * 1099511628211u;
}

static uint64_t hash_node(const tw_gnode *n, int epoch)
{
    uint64_t h = mix(1469598103934665603u, (uint64_t)n->kind);
    h = mix(h, (uint64_t)(uintptr_t)n->op);
    h = mix(h, (uint64_t)epoch);
    for (int i = 0; i < n->ninputs; i++)
        h = mix(mix(h, (uint64_t)n->inputs[i].node), (uint64_t)n->inputs[i].output);
    for (int i = 0; i < n->attrs.ni; i++)
        h = mix(h, (uint64_t)n->attrs.i[i]);
    if (n->kind == TW_NODE_CONSTANT) {
        tw_tensor *t = tw__to_host(n->tensor); /* a device's constants are read through a copy */
        const unsigned char *bytes = t ? tw__data(t) : NULL;
        size_t size = t ? (size_t)t->numel * tw_dtype_size(t->dtype) : 0;
        for (size_t b = 0; b < size; b++)
            h = mix(h, bytes[b]);
        tw_tensor_unref(t);
    }
    return h;
}

static bool same_constant(const tw_tensor *a, const tw_tensor *b)
{
    tw_device da = a->storage->device, db = b->storage->device;
    if (a->dtype != b->dtype || a->ndim != b->ndim || a->weak != b->weak || da.kind != db.kind ||
        da.index != db.index || memcmp(a->shape, b->shape, sizeof(int64_t) * (size_t)a->ndim) != 0)
        return false;
    tw_tensor *ha = tw__to_host(a), *hb = tw__to_host(b);
    bool same = ha && hb && memcmp(tw__data(ha), tw__data(hb), (size_t)a->numel * tw_dtype_size(a->dtype)) == 0;
    tw_tensor_unref(ha);
    tw_tensor_unref(hb);
    return same;
}

static bool same_node(const cse_table *t, int a, int b)
{
    const tw_gnode *x = &t->g->nodes[a], *y = &t->g->nodes[b];
    if (x->kind != y->kind || t->epoch[a] != t->epoch[b])
        return false;
    if (x->kind == TW_NODE_CONSTANT)
        return same_constant(x->tensor, y->tensor);
    return x->op == y->op && x->device.kind == y->device.kind && x->device.index == y->device.index &&
           x->ninputs == y->ninputs && memcmp(x->inputs, y->inputs, sizeof *x->inputs * (size_t)x->ninputs) == 0 &&
           x->attrs.ni == y->attrs.ni && x->attrs.nf == y->attrs.nf &&
           memcmp(x->attrs.i, y->attrs.i, sizeof(int64_t) * (size_t)x->attrs.ni) == 0 &&
           memcmp(x->attrs.f, y->attrs.f, sizeof(double) * (size_t)x->attrs.nf) == 0;
}

/* The earlier node equal to n, or n itself after noting it. */
static int find_or_add(cse_table *t, int n)
{
    size_t mask = t->capacity - 1;
    for (size_t i = hash_node(&t->g->nodes[n], t->epoch[n]) & mask;; i = (i + 1) & mask) {
        if (t->table[i] < 0) {
            t->table[i] = n;
            return n;
        }
        if (same_node(t, t->table[i], n))
            return t->table[i];
    }
}

static bool mergeable(const tw_gnode *n)
{
    if (n->kind == TW_NODE_CONSTANT)
        return true;
    return n->kind == TW_NODE_OP && !(n->op->flags & TW_OP_STATEFUL) && n->noutputs > 0;
}

/* How many stateful nodes precede each op node (constants never change:
 * theirs is 0). */
static int *epochs(const tw_graph *g)
{
    int *epoch = calloc((size_t)(g->nnodes ? g->nnodes : 1), sizeof *epoch);
    for (int n = 0, seen = 0; epoch && n < g->nnodes; n++) {
        const tw_gnode *node = &g->nodes[n];
        epoch[n] = node->kind == TW_NODE_OP ? seen : 0;
        seen += node->kind == TW_NODE_OP && (node->op->flags & TW_OP_STATEFUL);
    }
    return epoch;
}

int tw__graph_cse(tw_graph *g, int *merged)
{
    *merged = 0;
    cse_table t = {.g = g, .capacity = 64};
    while (t.capacity < 2 * (size_t)g->nnodes)
        t.capacity *= 2;
    t.table = malloc(sizeof *t.table * t.capacity);
    int *same = malloc(sizeof *same * (size_t)(g->nnodes ? g->nnodes : 1)); /* node -> its representative */
    t.epoch = epochs(g);
    int rc = t.table && same && t.epoch ? 0 : tw_error_set("function '%s': out of memory optimizing its graph",
                                                            g->function_name);
    if (rc == 0)
        memset(t.table, 0xff, sizeof *t.table * t.capacity);
    for (int n = 0; rc == 0 && n < g->nnodes; n++) {
        tw_gnode *node = &g->nodes[n];
        for (int i = 0; i < node->ninputs; i++)
            node->inputs[i].node = same[node->inputs[i].node];
        same[n] = mergeable(node) ? find_or_add(&t, n) : n;
        *merged += same[n] != n;
    }
    for (int i = 0; rc == 0 && i < g->noutputs; i++)
        g->outputs[i].node = same[g->outputs[i].node];
    free(t.table);
    free((int *)t.epoch);
    free(same);
    return rc;
}

/* ---- dead nodes ------------------------------------------------------------------ */

/* Whether each node leads to an output, a stateful node or is an input. */
static bool *live_nodes(const tw_graph *g)
{
    bool *live = calloc((size_t)(g->nnodes ? g->nnodes : 1), sizeof *live);
    if (!live)
        return NULL;
    for (int i = 0; i < g->noutputs; i++)
        live[g->outputs[i].node] = true;
    for (int i = 0; i < g->ninputs; i++)
        live[g->input_nodes[i]] = true;
    for (int n = g->nnodes - 1; n >= 0; n--) { /* inputs always precede their readers */
        const tw_gnode *node = &g->nodes[n];
        if (node->kind == TW_NODE_OP && (node->op->flags & TW_OP_STATEFUL))
            live[n] = true;
        for (int i = 0; live[n] && i < node->ninputs; i++)
            live[node->inputs[i].node] = true;
    }
    return live;
}

/* Drop the nodes not kept; renumber the rest in order. */
static void compact(tw_graph *g, const bool *keep, int *renumber)
{
    int kept = 0;
    for (int n = 0; n < g->nnodes; n++) {
        if (!keep[n]) {
            tw__gnode_clear(&g->nodes[n]);
            continue;
        }
        renumber[n] = kept;
        g->nodes[kept++] = g->nodes[n];
    }
    g->nnodes = kept;
    for (int n = 0; n < g->nnodes; n++)
        for (int i = 0; i < g->nodes[n].ninputs; i++)
            g->nodes[n].inputs[i].node = renumber[g->nodes[n].inputs[i].node];
    for (int i = 0; i < g->noutputs; i++)
        g->outputs[i].node = renumber[g->outputs[i].node];
    for (int i = 0; i < g->ninputs; i++)
        g->input_nodes[i] = renumber[g->input_nodes[i]];
}

int tw__graph_prune(tw_graph *g, int *removed)
{
    *removed = 0;
    bool *live = live_nodes(g);
    int *renumber = malloc(sizeof *renumber * (size_t)(g->nnodes ? g->nnodes : 1));
    if (!live || !renumber) {
        free(live);
        free(renumber);
        return tw_error_set("function '%s': out of memory optimizing its graph", g->function_name);
    }
    for (int n = 0; n < g->nnodes; n++)
        *removed += !live[n];
    if (*removed > 0)
        compact(g, live, renumber);
    free(live);
    free(renumber);
    return 0;
}

int tw__graph_optimize(tw_graph *g)
{
    int folded, merged, removed;
    if (tw__graph_fold(g, &folded) < 0 || tw__graph_cse(g, &merged) < 0 || tw__graph_prune(g, &removed) < 0)
        return -1;
    return tw__graph_finalize(g);
}
