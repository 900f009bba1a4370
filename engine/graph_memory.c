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
 * first fit in order of the first step, 64-byte aligned. A run on a
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

/* First fit: the lowest offset whose bytes no live planned value holds. */
static int64_t place(const tw_graph *g, const lifetime *life, const int64_t *offset, int s)
{
    int64_t at = 0, size = (life[s].bytes + ALIGN - 1) / ALIGN * ALIGN;
    for (bool moved = true; moved;) {
        moved = false;
        for (int o = 0; o < g->nslots; o++) {
            if (offset[o] < 0 || o == s || life[o].end < life[s].start || life[o].start > life[s].end)
                continue;
            int64_t osize = (life[o].bytes + ALIGN - 1) / ALIGN * ALIGN;
            if (offset[o] < at + size && at < offset[o] + osize) {
                at = offset[o] + osize;
                moved = true;
            }
        }
    }
    return at;
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
    for (int s = 0; s < g->nslots; s++) { /* slots are numbered in node order: by first step */
        if (life[s].base != s || life[s].escapes || life[s].bytes <= 0)
            continue;
        g->slot_offset[s] = place(g, life, g->slot_offset, s);
        int64_t top = g->slot_offset[s] + (life[s].bytes + ALIGN - 1) / ALIGN * ALIGN;
        g->arena_bytes = top > g->arena_bytes ? top : g->arena_bytes;
    }
    free(life);
    return 0;
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
    return tw__storage_new((size_t)g->arena_bytes, TW_CPU);
}

void tw__graph_give_arena(tw_graph *g, tw_storage *arena)
{
    tw_storage *none = NULL;
    if (arena && !atomic_compare_exchange_strong(&g->arena, &none, arena))
        tw__storage_unref(arena); /* another run kept its own */
}

tw_tensor *tw__graph_value(const tw_graph *g, tw_storage *arena, int slot, const tw_desc *d, tw_device device)
{
    if (!arena || g->slot_offset[slot] < 0) {
        atomic_fetch_add(&buffers_made, 1);
        return tw__tensor_new(d->dtype, d->ndim, d->shape, device);
    }
    tw_tensor base = {.dtype = d->dtype, .storage = arena};
    int64_t strides[TW_MAX_DIMS];
    tw__contiguous_strides(d->ndim, d->shape, strides);
    return tw__tensor_view(&base, d->ndim, d->shape, strides, g->slot_offset[slot] / (int64_t)tw_dtype_size(d->dtype));
}
