/* Running a graph: each node's view function or kernel, called directly.
 * What dispatch does per op is settled at trace time (inputs checked,
 * devices matched, output shapes inferred), so a run only allocates the
 * outputs, computes, and releases each intermediate after its last reader
 * (the plan tw__graph_finalize made). Intermediates live in the graph's
 * arena at the offsets of its memory plan (graph_memory.c), outputs in
 * buffers of their own from the caching pools. When a gradient
 * tape is recording, each node is recorded on it exactly as dispatch would
 * record the eager op. Otherwise each fused group of elementwise nodes
 * (graph_fuse.c) runs as one pass at its root, and its members' releases
 * follow. While the graph is profiled (graph_profile.c), each node's wall
 * time is added to the profile; a fused group's time is split evenly among
 * its members. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "graph_internal.h"

#define STACK_SLOTS 256

/* What one run carries from node to node. */
typedef struct {
    const tw_graph *g;
    tw_tensor **slots;
    tw_storage *arena; /* NULL: every value its own buffer */
    bool record;
} run_state;

static int run_node(const run_state *r, const tw_gnode *node)
{
    tw_tensor **slots = r->slots;
    tw_tensor *stack_inputs[TW_MAX_INPUTS];
    tw_tensor **inputs = node->ninputs <= TW_MAX_INPUTS ? stack_inputs : malloc(sizeof *inputs * (size_t)node->ninputs);
    if (!inputs)
        return tw_error_set("%s: out of memory running the graph", node->name);
    for (int i = 0; i < node->ninputs; i++)
        inputs[i] = slots[node->in_slots[i]];
    tw_op_call call = {node->op, node->ninputs, inputs, &node->attrs, NULL};
    tw_tensor **outs = &slots[node->first_slot];
    int rc = 0;
    if (node->op->view) {
        outs[0] = node->op->view(&call, &node->outputs[0].desc);
        rc = outs[0] ? 0 : -1;
    } else {
        for (int k = 0; k < node->noutputs && rc == 0; k++) {
            const tw_desc *d = &node->outputs[k].desc;
            outs[k] = tw__graph_value(r->g, r->arena, node->first_slot + k, d, node->device);
            rc = outs[k] ? 0 : -1;
        }
        if (rc == 0)
            {
            tw_kernel_fn kernel = tw__kernel_for(node->op, node->device);
            rc = kernel ? kernel(&call, outs) : -1;
        }
    }
    for (int k = 0; rc == 0 && k < node->noutputs; k++)
        outs[k]->weak = node->outputs[k].weak;
    if (rc == 0 && r->record && !(node->op->flags & TW_OP_NOT_DIFFERENTIABLE))
        tw__record(&call, outs, node->noutputs);
    if (inputs != stack_inputs)
        free(inputs);
    return rc;
}

/* A cond or while node (graph_control.c): its sub-graphs run as graphs do,
 * so a recording tape sees their nodes. */
static int run_control(const tw_gnode *node, tw_tensor **slots)
{
    tw_tensor *stack_inputs[TW_MAX_INPUTS] = {0}; /* zeroed only to quiet gcc's maybe-uninitialized */
    tw_tensor **inputs = node->ninputs <= TW_MAX_INPUTS ? stack_inputs : malloc(sizeof *inputs * (size_t)node->ninputs);
    if (!inputs)
        return tw_error_set("%s: out of memory running the graph", node->name);
    for (int i = 0; i < node->ninputs; i++)
        inputs[i] = slots[node->in_slots[i]];
    int rc = tw__control_run(node, inputs, &slots[node->first_slot]);
    if (inputs != stack_inputs)
        free(inputs);
    return rc;
}

/* Drop what the run still holds of the op nodes' outputs. */
static void release_all(const tw_graph *g, tw_tensor **slots)
{
    for (int n = 0; n < g->nnodes; n++) {
        const tw_gnode *node = &g->nodes[n];
        if (!tw__gnode_computes(node))
            continue;
        for (int k = 0; k < node->noutputs; k++) {
            tw_tensor_unref(slots[node->first_slot + k]);
            slots[node->first_slot + k] = NULL;
        }
    }
}

static void release(const tw_gnode *node, tw_tensor **slots)
{
    for (int r = 0; r < node->nrelease; r++) {
        tw_tensor_unref(slots[node->release[r]]);
        slots[node->release[r]] = NULL;
    }
}

/* A group at its root: fused, or node by node when an input does not suit
 * it. Members only read values made before the root, and were the last
 * readers of what they release, so running them late changes nothing. */
static int run_group(const run_state *r, const tw_fgroup *grp)
{
    const tw_graph *g = r->g;
    int rc = tw__fgroup_run(g, grp, r->slots, r->arena);
    if (rc == 1) {
        for (int i = 0; i < grp->nrelease; i++) {
            tw_tensor_unref(r->slots[grp->release[i]]);
            r->slots[grp->release[i]] = NULL;
        }
        return 0;
    }
    for (int i = 0; rc == 0 && i < grp->nmembers; i++)
        rc = run_node(r, &g->nodes[grp->members[i]]);
    if (rc < 0)
        return -1;
    for (int i = 0; i < grp->nmembers; i++)
        release(&g->nodes[grp->members[i]], r->slots);
    return 0;
}

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* A node's time, or a fused group's split evenly among its members. */
static void add_time(double *node_ns, int node, const tw_fgroup *grp, int64_t ns)
{
    if (!grp) {
        node_ns[node] += (double)ns;
        return;
    }
    for (int i = 0; i < grp->nmembers; i++)
        node_ns[grp->members[i]] += (double)ns / grp->nmembers;
}

/* Inlined twice, with node_ns a profile's times and with NULL, so a run
 * that is not profiled has no timing branch per node. */
static inline __attribute__((always_inline)) int run_nodes(const run_state *r, tw_tensor *const *inputs,
                                                           double *node_ns)
{
    const tw_graph *g = r->g;
    tw_tensor **slots = r->slots;
    for (int i = 0; i < g->ninputs; i++)
        slots[g->nodes[g->input_nodes[i]].first_slot] = inputs[i];
    for (int n = 0; n < g->nnodes; n++) {
        const tw_gnode *node = &g->nodes[n];
        if (node->kind == TW_NODE_CONSTANT || node->kind == TW_NODE_VARIABLE) {
            slots[node->first_slot] = node->tensor; /* borrowed: the graph holds it */
            continue;
        }
        if (!tw__gnode_computes(node))
            continue;
        const tw_fgroup *grp = node->fuse_group >= 0 && !r->record ? &g->fused[node->fuse_group] : NULL;
        if (grp && grp->root != n)
            continue; /* runs with its group, at the root */
        int64_t start = node_ns ? now_ns() : 0;
        int rc = node->kind != TW_NODE_OP ? run_control(node, slots) : grp ? run_group(r, grp) : run_node(r, node);
        if (rc < 0)
            return -1;
        if (node_ns)
            add_time(node_ns, n, grp, now_ns() - start);
        if (!grp)
            release(node, slots);
    }
    return 0;
}

int tw__graph_run(tw_graph *g, tw_tensor *const *inputs, tw_tensor **outputs)
{
    tw_tensor *stack_slots[STACK_SLOTS];
    tw_tensor **slots = g->nslots <= STACK_SLOTS ? stack_slots : malloc(sizeof *slots * (size_t)g->nslots);
    if (!slots)
        return tw_error_set("function '%s': out of memory running its graph", g->function_name);
    memset(slots, 0, sizeof *slots * (size_t)g->nslots);
    tw__threads_adapt();
    run_state r = {.g = g, .slots = slots, .record = tw__recording()};
    r.arena = r.record ? NULL : tw__graph_take_arena(g); /* a tape keeps the values: no reuse then */
    int rc = -1;
    if (r.record || r.arena || g->arena_bytes == 0) {
        if (atomic_load_explicit(&g->profiling, memory_order_relaxed)) {
            rc = run_nodes(&r, inputs, g->profile->node_ns);
            g->profile->runs += rc == 0;
        } else {
            rc = run_nodes(&r, inputs, NULL);
        }
    }
    for (int i = 0; i < g->noutputs; i++)
        outputs[i] = rc == 0 ? tw_tensor_ref(slots[g->output_slots[i]]) : NULL;
    release_all(g, slots);
    tw__graph_give_arena(g, r.arena);
    if (slots != stack_slots)
        free(slots);
    return rc;
}
