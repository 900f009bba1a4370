/* The memory plan (tw__graph_plan_memory, from tw__graph_finalize): the
 * intermediate values of a graph live at fixed offsets in one arena, a
 * slot reused once every reader of its value has run, so a run takes one
 * block (kept by the graph between runs) instead of one per node.
 *
 * A value is planned when an op on the CPU writes it (not a view) and it
 * is neither a graph output nor read by a cond or while node (their
 * sub-graphs may hand an input back as an output). Its lifetime runs from
 * the step that makes it to the last step that reads it, a view of it
 * counting as a reader until the view's own last reader; a value with a
 * view that escapes (an output, a control node's input) is not planned. A
 * step is a node's index, or for a fused group's members their root's
 * (graph_fuse.c: the group runs there). Lifetimes that share a step never
 * share bytes: an op's output never overlaps its inputs. Offsets are
 * first fit in order of the first step, 64-byte aligned, found in a sorted
 * structure of free gaps (near-linear: a 10,000-layer model plans at once). A run on a
 * recording tape allocates as before: the tape keeps the values. */
#include <stdlib.h>
#include <string.h>

#include "graph_internal.h"

#define ALIGN 64

typedef struct {
    int start, end; /* steps, inclusive */
    int base;       /* the planned slot whose storage a view reads, else -1 */
    bool escapes;
    int64_t bytes;
} lifetime;

static int step_of(const tw_graph *g, int node)
{
    int grp = g->nodes[node].fuse_group;
    return grp >= 0 ? g->fused[grp].root : node;
}

static bool plannable(const tw_gnode *n)
{
    return n->kind == TW_NODE_OP && !n->op->view && n->device.kind == TW_DEVICE_CPU;
}

static void find_lifetimes(const tw_graph *g, lifetime *life)
{
    for (int n = 0; n < g->nnodes; n++) {
        const tw_gnode *node = &g->nodes[n];
        for (int k = 0; k < node->noutputs; k++) {
            const tw_desc *d = &node->outputs[k].desc;
            lifetime *l = &life[node->first_slot + k];
            *l = (lifetime){.start = step_of(g, n), .end = step_of(g, n), .base = -1};
            bool planned = plannable(node) && step_of(g, n) == n; /* a fused member makes no value */
            l->bytes = planned ? tw__numel(d->ndim, d->shape) * (int64_t)tw_dtype_size(d->dtype) : -1;
            if (planned)
                l->base = node->first_slot + k;
            else if (node->kind == TW_NODE_OP && node->op->view && node->ninputs > 0)
                l->base = life[node->in_slots[0]].base; /* a view shares its first input's storage */
        }
        for (int i = 0; i < node->ninputs; i++) {
            lifetime *in = &life[node->in_slots[i]];
            in->end = step_of(g, n) > in->end ? step_of(g, n) : in->end;
            in->escapes |= node->kind != TW_NODE_OP; /* a control node's input */
        }
    }
    for (int i = 0; i < g->noutputs; i++)
        life[g->output_slots[i]].escapes = true;
    for (int s = 0; s < g->nslots; s++) { /* views extend (or spoil) their base */
        lifetime *l = &life[s], *base = l->base >= 0 ? &life[l->base] : NULL;
        if (!base || base == l)
            continue;
        base->end = l->end > base->end ? l->end : base->end;
        base->escapes |= l->escapes;
    }
}

/* ---- the arena's free gaps ----------------------------------------------------------
 * Gaps by address in a treap whose nodes also hold the longest gap beneath
 * them, so the lowest gap that fits is found, shrunk or merged with a freed
 * neighbour in O(log n): planning stays near-linear in the graph's size. The
 * last gap runs from the highest value in use to the end of the address
 * space, so every request fits somewhere. */

#define UNBOUNDED (INT64_MAX / 2)

typedef struct {
    int64_t at, len, longest;
    uint32_t priority;
    int left, right;
} gap;

typedef struct {
    gap *g;
    int root, spare, used; /* spare: a list of freed nodes through .left */
    uint32_t seed;
} gaps;

static int64_t longest(const gaps *t, int n)
{
    return n < 0 ? 0 : t->g[n].longest;
}

static void update(gaps *t, int n)
{
    gap *x = &t->g[n];
    int64_t l = longest(t, x->left), r = longest(t, x->right);
    x->longest = x->len > l ? (x->len > r ? x->len : r) : (l > r ? l : r);
}

static int gap_new(gaps *t, int64_t at, int64_t len)
{
    int n = t->spare >= 0 ? t->spare : t->used++;
    if (n == t->spare)
        t->spare = t->g[n].left;
    t->seed = t->seed * 1664525u + 1013904223u;
    t->g[n] = (gap){.at = at, .len = len, .longest = len, .priority = t->seed, .left = -1, .right = -1};
    return n;
}

static void gap_free(gaps *t, int n)
{
    t->g[n].left = t->spare;
    t->spare = n;
}

static int merge(gaps *t, int a, int b)
{
    if (a < 0 || b < 0)
        return a < 0 ? b : a;
    if (t->g[a].priority > t->g[b].priority) {
        t->g[a].right = merge(t, t->g[a].right, b);
        update(t, a);
        return a;
    }
    t->g[b].left = merge(t, a, t->g[b].left);
    update(t, b);
    return b;
}

/* Gaps starting below at go to *lo, the rest to *hi. */
static void split(gaps *t, int n, int64_t at, int *lo, int *hi)
{
    if (n < 0) {
        *lo = *hi = -1;
    } else if (t->g[n].at < at) {
        split(t, t->g[n].right, at, &t->g[n].right, hi);
        update(t, n);
        *lo = n;
    } else {
        split(t, t->g[n].left, at, lo, &t->g[n].left);
        update(t, n);
        *hi = n;
    }
}

/* Take size bytes from the start of the lowest gap that holds them. */
static int take(gaps *t, int n, int64_t size, int64_t *at)
{
    gap *x = &t->g[n];
    if (longest(t, x->left) >= size) {
        x->left = take(t, x->left, size, at);
    } else if (x->len >= size) {
        *at = x->at;
        x->at += size;
        x->len -= size;
        if (x->len == 0) {
            int rest = merge(t, x->left, x->right);
            gap_free(t, n);
            return rest;
        }
    } else {
        x->right = take(t, x->right, size, at);
    }
    update(t, n);
    return n;
}

/* Give [at, at + size) back, joined with the gaps it touches. */
static void give(gaps *t, int64_t at, int64_t size)
{
    int below, above, before, touching, after;
    split(t, t->root, at, &below, &above);
    int last = below;
    while (last >= 0 && t->g[last].right >= 0)
        last = t->g[last].right;
    if (last >= 0 && t->g[last].at + t->g[last].len == at) { /* the gap ending where this starts */
        split(t, below, t->g[last].at, &before, &touching);
        below = before;
        at = t->g[touching].at;
        size += t->g[touching].len;
        gap_free(t, touching);
    }
    split(t, above, at + size + 1, &touching, &after);
    if (touching >= 0) { /* the gap starting where this ends: only one can */
        size += t->g[touching].len;
        gap_free(t, touching);
    }
    t->root = merge(t, merge(t, below, gap_new(t, at, size)), after);
}

/* ---- the plan ---------------------------------------------------------------------- */

static int64_t aligned(int64_t bytes)
{
    return (bytes + ALIGN - 1) / ALIGN * ALIGN;
}

/* Slots are numbered in node order, so planned ones come by first step.
 * Before placing one, every planned value whose last step came before its
 * first is given back (by_end lists them by last step); placing takes the
 * lowest gap that fits: first fit among the values live at that step. */
static int place_all(tw_graph *g, const lifetime *life)
{
    int nsteps = g->nnodes ? g->nnodes : 1;
    int *by_end = malloc(sizeof *by_end * (size_t)nsteps);
    int *next = malloc(sizeof *next * (size_t)(g->nslots ? g->nslots : 1));
    gaps t = {.g = malloc(sizeof *t.g * (size_t)(2 * g->nslots + 2)), .spare = -1, .seed = 12345};
    if (!by_end || !next || !t.g) {
        free(by_end);
        free(next);
        free(t.g);
        return -1;
    }
    for (int e = 0; e < nsteps; e++)
        by_end[e] = -1;
    t.root = gap_new(&t, 0, UNBOUNDED);
    int freed = 0; /* steps whose ending values were given back */
    for (int s = 0; s < g->nslots; s++) {
        if (life[s].base != s || life[s].escapes || life[s].bytes <= 0)
            continue;
        for (; freed < life[s].start; freed++)
            for (int o = by_end[freed]; o >= 0; o = next[o])
                give(&t, g->slot_offset[o], aligned(life[o].bytes));
        int64_t size = aligned(life[s].bytes);
        t.root = take(&t, t.root, size, &g->slot_offset[s]);
        int64_t top = g->slot_offset[s] + size;
        g->arena_bytes = top > g->arena_bytes ? top : g->arena_bytes;
        next[s] = by_end[life[s].end];
        by_end[life[s].end] = s;
    }
    free(by_end);
    free(next);
    free(t.g);
    return 0;
}

int tw__graph_plan_memory(tw_graph *g)
{
    free(g->slot_offset);
    g->slot_offset = NULL;
    g->arena_bytes = 0;
    tw__storage_unref(atomic_exchange(&g->arena, NULL)); /* sized for the old plan */
    size_t n = (size_t)(g->nslots ? g->nslots : 1);
    lifetime *life = calloc(n, sizeof *life);
    g->slot_offset = malloc(sizeof *g->slot_offset * n);
    if (!life || !g->slot_offset) {
        free(life);
        return -1;
    }
    find_lifetimes(g, life);
    for (int s = 0; s < g->nslots; s++)
        g->slot_offset[s] = -1;
    int rc = place_all(g, life);
    free(life);
    return rc;
}

static atomic_uint_fast64_t buffers_made;

uint64_t tw__graph_buffers_made(void)
{
    return atomic_load(&buffers_made);
}

tw_storage *tw__graph_take_arena(tw_graph *g)
{
    tw_storage *arena = atomic_exchange(&g->arena, NULL);
    if (arena || g->arena_bytes == 0)
        return arena;
    atomic_fetch_add(&buffers_made, 1);
    /* On the device of the graph's first op; nodes on others take their
     * own buffers (tw__graph_value). */
    tw_device device = TW_CPU;
    for (int i = 0; i < g->nnodes; i++)
        if (g->nodes[i].kind == TW_NODE_OP) {
            device = g->nodes[i].device;
            break;
        }
    return tw__storage_new((size_t)g->arena_bytes, device);
}

void tw__graph_give_arena(tw_graph *g, tw_storage *arena)
{
    tw_storage *none = NULL;
    if (arena && !atomic_compare_exchange_strong(&g->arena, &none, arena))
        tw__storage_unref(arena); /* another run kept its own */
}

tw_tensor *tw__graph_value(const tw_graph *g, tw_storage *arena, int slot, const tw_desc *d, tw_device device)
{
    if (!arena || g->slot_offset[slot] < 0 || arena->device.kind != device.kind ||
        arena->device.index != device.index) {
        atomic_fetch_add(&buffers_made, 1);
        return tw__tensor_new(d->dtype, d->ndim, d->shape, device);
    }
    tw_tensor base = {.dtype = d->dtype, .storage = arena};
    int64_t strides[TW_MAX_DIMS];
    tw__contiguous_strides(d->ndim, d->shape, strides);
    return tw__tensor_view(&base, d->ndim, d->shape, strides, g->slot_offset[slot] / (int64_t)tw_dtype_size(d->dtype));
}
