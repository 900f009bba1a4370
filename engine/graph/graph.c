/* Graphs: building one node at a time (the tracer), unique node names, and
 * the layout a run uses (tw__graph_finalize): every output of every node
 * gets a slot, and each node lists the slots whose last reader it is, so a
 * run releases intermediates as early as possible. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph_internal.h"

tw_graph *tw__graph_new(const char *function_name, int ninputs, tw_tensor *const *inputs)
{
    tw_graph *g = calloc(1, sizeof *g);
    if (!g)
        goto oom;
    atomic_init(&g->refcount, 1);
    g->function_name = strdup(function_name);
    g->ninputs = ninputs;
    g->signature = calloc((size_t)(ninputs ? ninputs : 1), sizeof *g->signature);
    g->input_nodes = calloc((size_t)(ninputs ? ninputs : 1), sizeof *g->input_nodes);
    if (!g->function_name || !g->signature || !g->input_nodes)
        goto oom;
    for (int i = 0; i < ninputs; i++) {
        tw_sig *s = &g->signature[i];
        s->dtype = inputs[i]->dtype;
        s->ndim = inputs[i]->ndim;
        s->weak = inputs[i]->weak;
        s->device = inputs[i]->storage->device;
        memcpy(s->shape, inputs[i]->shape, sizeof(int64_t) * (size_t)s->ndim);
    }
    return g;
oom:
    tw__graph_unref(g);
    tw_error_set("function '%s': out of memory creating its graph", function_name);
    return NULL;
}

tw_graph *tw__graph_ref(tw_graph *g)
{
    atomic_fetch_add(&g->refcount, 1);
    return g;
}

void tw__gnode_clear(tw_gnode *n)
{
    free(n->inputs);
    free(n->outputs);
    free(n->name);
    free(n->scope);
    free(n->in_slots);
    free(n->release);
    tw_tensor_unref(n->tensor);
    for (int s = 0; s < n->nsubs; s++) {
        tw__graph_unref(n->subs[s].g);
        free(n->subs[s].map);
    }
    free(n->subs);
}

void tw__graph_unref(tw_graph *g)
{
    if (!g || atomic_fetch_sub(&g->refcount, 1) != 1)
        return;
    for (int i = 0; i < g->nnodes; i++)
        tw__gnode_clear(&g->nodes[i]);
    for (size_t i = 0; i < g->names_capacity; i++)
        free(g->names[i].name);
    free(g->names);
    free(g->nodes);
    free(g->function_name);
    free(g->signature);
    free(g->input_nodes);
    free(g->outputs);
    free(g->output_slots);
    tw__graph_fuse_clear(g);
    free(g->slot_offset);
    tw__storage_unref(atomic_load(&g->arena));
    tw__graph_profile_free(g);
    free(g);
}

bool tw__graph_matches(const tw_graph *g, int ninputs, tw_tensor *const *inputs)
{
    if (ninputs != g->ninputs)
        return false;
    for (int i = 0; i < ninputs; i++) {
        const tw_sig *s = &g->signature[i];
        const tw_tensor *x = inputs[i];
        if (x->dtype != s->dtype || x->ndim != s->ndim || x->weak != s->weak ||
            x->storage->device.kind != s->device.kind || x->storage->device.index != s->device.index ||
            memcmp(x->shape, s->shape, sizeof(int64_t) * (size_t)s->ndim) != 0)
            return false;
    }
    return true;
}

/* ---- unique names ------------------------------------------------------------- */

static size_t hash_name(const char *s)
{
    size_t h = 1469598103934665603u; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211u;
    return h;
}

static tw_gname *name_slot(const tw_graph *g, const char *name)
{
    size_t mask = g->names_capacity - 1;
    for (size_t i = hash_name(name) & mask;; i = (i + 1) & mask)
        if (!g->names[i].name || strcmp(g->names[i].name, name) == 0)
            return &g->names[i];
}

static bool names_grow(tw_graph *g)
{
    if ((g->names_count + 1) * 2 <= g->names_capacity)
        return true;
    size_t cap = g->names_capacity ? g->names_capacity * 2 : 64;
    tw_gname *old = g->names;
    size_t old_cap = g->names_capacity;
    g->names = calloc(cap, sizeof *g->names);
    if (!g->names) {
        g->names = old;
        return false;
    }
    g->names_capacity = cap;
    for (size_t i = 0; i < old_cap; i++)
        if (old[i].name)
            *name_slot(g, old[i].name) = old[i];
    free(old);
    return true;
}

/* Claim name if free; false when taken (or out of memory: *oom). */
static bool claim(tw_graph *g, const char *name, bool *oom)
{
    if (!names_grow(g)) {
        *oom = true;
        return false;
    }
    tw_gname *slot = name_slot(g, name);
    if (slot->name)
        return false;
    slot->name = strdup(name);
    slot->next = 1;
    if (!slot->name)
        *oom = true;
    else
        g->names_count++;
    return slot->name != NULL;
}

/* scope/base, or scope/base_N for the first N free (TensorFlow's rule). */
static char *unique_name(tw_graph *g, const char *scope, const char *base)
{
    size_t size = strlen(scope) + strlen(base) + 24;
    char *name = malloc(size);
    if (!name)
        return NULL;
    snprintf(name, size, "%s%s%s", scope, scope[0] ? "/" : "", base);
    bool oom = false;
    if (claim(g, name, &oom))
        return name;
    size_t stem = strlen(name);
    char *first = strdup(name);
    while (!oom && first) {
        tw_gname *taken = name_slot(g, first);
        snprintf(name + stem, size - stem, "_%d", taken->next++);
        if (claim(g, name, &oom))
            break;
    }
    free(first);
    if (oom || !first) {
        free(name);
        return NULL;
    }
    return name;
}

/* ---- nodes --------------------------------------------------------------------- */

static bool check_refs(const tw_graph *g, int n, const tw_gref *refs)
{
    for (int i = 0; i < n; i++)
        if (refs[i].node < 0 || refs[i].node >= g->nnodes || refs[i].output < 0 ||
            refs[i].output >= g->nodes[refs[i].node].noutputs)
            return false;
    return true;
}

int tw__graph_add(tw_graph *g, tw_node_kind kind, const tw_op_def *op, const tw_attrs *attrs, tw_device device,
                  int ninputs, const tw_gref *inputs, int noutputs, const tw_gout *outputs, const char *scope,
                  const char *base_name, tw_tensor *tensor)
{
    if (!check_refs(g, ninputs, inputs))
        return tw_error_set("function '%s': a graph node reads a node that does not precede it", g->function_name);
    if (g->nnodes == g->capacity) {
        int cap = g->capacity ? g->capacity * 2 : 32;
        tw_gnode *nodes = realloc(g->nodes, sizeof *nodes * (size_t)cap);
        if (!nodes)
            return tw_error_set("function '%s': out of memory adding a graph node", g->function_name);
        g->nodes = nodes;
        g->capacity = cap;
    }
    tw_gnode *n = &g->nodes[g->nnodes];
    *n = (tw_gnode){.kind = kind, .op = op, .device = device, .ninputs = ninputs, .noutputs = noutputs};
    if (attrs)
        n->attrs = *attrs;
    n->inputs = malloc(sizeof *n->inputs * (size_t)(ninputs ? ninputs : 1));
    n->outputs = malloc(sizeof *n->outputs * (size_t)(noutputs ? noutputs : 1));
    n->scope = strdup(scope);
    n->name = unique_name(g, kind == TW_NODE_VARIABLE ? "" : scope, base_name); /* already "layer/kernel" */
    if (!n->inputs || !n->outputs || !n->scope || !n->name) {
        tw__gnode_clear(n);
        return tw_error_set("function '%s': out of memory adding a graph node", g->function_name);
    }
    if (ninputs)
        memcpy(n->inputs, inputs, sizeof *inputs * (size_t)ninputs);
    if (noutputs)
        memcpy(n->outputs, outputs, sizeof *outputs * (size_t)noutputs);
    n->tensor = tw_tensor_ref(tensor);
    return g->nnodes++;
}

int tw__graph_set_outputs(tw_graph *g, int n, const tw_gref *outputs)
{
    if (!check_refs(g, n, outputs))
        return tw_error_set("function '%s': a graph output names no node", g->function_name);
    tw_gref *copy = malloc(sizeof *copy * (size_t)(n ? n : 1));
    if (!copy)
        return tw_error_set("function '%s': out of memory", g->function_name);
    if (n)
        memcpy(copy, outputs, sizeof *copy * (size_t)n);
    free(g->outputs);
    g->outputs = copy;
    g->noutputs = n;
    return 0;
}

/* ---- the run layout ---------------------------------------------------------------- */

static int slot_of(const tw_graph *g, tw_gref r)
{
    return g->nodes[r.node].first_slot + r.output;
}

/* For each slot an op produced: the node that reads it last (its producer
 * when nothing does), or -1 when a graph output keeps it. */
static int *last_uses(const tw_graph *g)
{
    int *last = malloc(sizeof *last * (size_t)(g->nslots ? g->nslots : 1));
    if (!last)
        return NULL;
    for (int n = 0; n < g->nnodes; n++)
        for (int k = 0; k < g->nodes[n].noutputs; k++)
            last[g->nodes[n].first_slot + k] = tw__gnode_computes(&g->nodes[n]) ? n : -1;
    for (int n = 0; n < g->nnodes; n++)
        for (int i = 0; i < g->nodes[n].ninputs; i++) {
            int s = g->nodes[n].in_slots[i];
            if (last[s] >= 0)
                last[s] = n;
        }
    for (int i = 0; i < g->noutputs; i++)
        last[g->output_slots[i]] = -1;
    return last;
}

static int plan_releases(tw_graph *g)
{
    int *last = last_uses(g);
    if (!last)
        return -1;
    for (int n = 0; n < g->nnodes; n++)
        g->nodes[n].nrelease = 0;
    for (int s = 0; s < g->nslots; s++)
        if (last[s] >= 0)
            g->nodes[last[s]].nrelease++;
    int rc = 0;
    for (int n = 0; n < g->nnodes && rc == 0; n++) {
        tw_gnode *node = &g->nodes[n];
        free(node->release);
        node->release = malloc(sizeof *node->release * (size_t)(node->nrelease ? node->nrelease : 1));
        rc = node->release ? 0 : -1;
        node->nrelease = 0;
    }
    for (int s = 0; s < g->nslots && rc == 0; s++)
        if (last[s] >= 0) {
            tw_gnode *node = &g->nodes[last[s]];
            node->release[node->nrelease++] = s;
        }
    free(last);
    return rc;
}

int tw__graph_finalize(tw_graph *g)
{
    g->nslots = 0;
    for (int n = 0; n < g->nnodes; n++) {
        g->nodes[n].first_slot = g->nslots;
        g->nslots += g->nodes[n].noutputs;
    }
    int rc = 0;
    for (int n = 0; n < g->nnodes && rc == 0; n++) {
        tw_gnode *node = &g->nodes[n];
        free(node->in_slots);
        node->in_slots = malloc(sizeof *node->in_slots * (size_t)(node->ninputs ? node->ninputs : 1));
        if (!node->in_slots)
            rc = -1;
        for (int i = 0; rc == 0 && i < node->ninputs; i++)
            node->in_slots[i] = slot_of(g, node->inputs[i]);
    }
    free(g->output_slots);
    g->output_slots = rc == 0 ? malloc(sizeof *g->output_slots * (size_t)(g->noutputs ? g->noutputs : 1)) : NULL;
    if (!g->output_slots)
        rc = -1;
    for (int i = 0; rc == 0 && i < g->noutputs; i++)
        g->output_slots[i] = slot_of(g, g->outputs[i]);
    if (rc == 0)
        rc = plan_releases(g);
    if (rc == 0)
        rc = tw__graph_fuse(g);
    if (rc == 0)
        rc = tw__graph_plan_memory(g);
    return rc < 0 ? tw_error_set("function '%s': out of memory laying out its graph", g->function_name) : 0;
}
