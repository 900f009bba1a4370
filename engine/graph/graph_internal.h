/* Graphs of traced functions (tw/function.h): the node layout shared by the
 * tracer (trace.c), the graph's building and inspection (graph.c), its
 * execution (graph_run.c), JSON (graph_json.c) and tw_function (function.c).
 * Not installed. */
#ifndef TW_GRAPH_INTERNAL_H
#define TW_GRAPH_INTERNAL_H

#include "backend.h"
#include "tw/function.h"

/* One output of one node. */
typedef struct {
    int node, output;
} tw_gref;

/* What a node promises for one output; weak marks a weak scalar (tw_scalar),
 * which the eager op flags after dispatch and the graph must flag too. */
typedef struct {
    tw_desc desc;
    bool weak;
} tw_gout;

/* A cond or while node's sub-graph: its input i is the node's input map[i]. */
typedef struct {
    tw_graph *g;
    int *map;
} tw_gsub;

typedef struct {
    tw_node_kind kind;
    const tw_op_def *op; /* TW_NODE_OP */
    tw_attrs attrs;
    tw_device device;
    int ninputs, noutputs;
    tw_gref *inputs;
    tw_gout *outputs;
    char *name, *scope;
    tw_tensor *tensor; /* constants and variables: the graph's reference */
    int nsubs;         /* cond: true, false; while: condition, body (graph_control.c) */
    tw_gsub *subs;
    /* Set by tw__graph_finalize: where the inputs and outputs live while the
     * graph runs, and the values whose last use is this node. */
    int *in_slots;
    int first_slot;
    int *release;
    int nrelease;
    int fuse_group; /* set by tw__graph_fuse: its index in the graph's fused groups, -1 when none */
} tw_gnode;

/* One step of a fused group's program (graph_fuse.c): dst = op(a[, b]).
 * Operands number the group's external values first, then its block
 * buffers; dst -1 is the group's output. */
typedef struct {
    bool binary; /* op is a twk_binary_op, else a twk_unary_op */
    int op;
    int dst, a, b;
    double p0, p1; /* the unary kernels' alpha or clip bounds */
} tw_fstep;

/* Elementwise nodes of one dtype and shape run as one pass over the
 * elements, at the position of the last (root): the others' values never
 * leave the group. */
typedef struct {
    int root, nmembers;
    int *members; /* ascending, root last */
    int nexternal;
    int *external_slots;
    int nsteps, nbuffers;
    tw_fstep *steps;
    int nrelease;
    int *release; /* the members' releases of values made outside the group: all a fused run has to drop */
} tw_fgroup;

/* Whether a node computes its outputs when the graph runs (an op, cond or
 * while), as opposed to a source node. */
static inline bool tw__gnode_computes(const tw_gnode *n)
{
    return n->kind == TW_NODE_OP || n->kind == TW_NODE_COND || n->kind == TW_NODE_WHILE;
}

/* The input signature a graph was traced for. */
typedef struct {
    tw_dtype dtype;
    int ndim;
    bool weak;
    tw_device device; /* a graph's nodes run on the devices it was traced on */
    int64_t shape[TW_MAX_DIMS];
} tw_sig;

/* What profiling a graph gathered (graph_profile.c): runs counted, and
 * each node's summed wall time in nanoseconds (nnodes entries; source
 * nodes stay 0). */
typedef struct {
    int64_t runs;
    double *node_ns;
} tw_gprofile;

/* A name in use, and the suffix to try next when it comes again. */
typedef struct {
    char *name;
    int next;
} tw_gname;

struct tw_graph {
    atomic_int refcount;
    char *function_name;
    int nnodes, capacity;
    tw_gnode *nodes;
    int ninputs;
    tw_sig *signature;
    int *input_nodes;
    int noutputs;
    tw_gref *outputs;
    tw_gname *names; /* open addressing, a power of two */
    size_t names_capacity, names_count;
    /* Set by tw__graph_finalize. */
    int nslots;
    int *output_slots;
    /* Set by tw__graph_fuse (from tw__graph_finalize). */
    int nfused;
    tw_fgroup *fused;
    /* Set by tw__graph_plan_memory (graph_memory.c): each slot's byte
     * offset in the arena, -1 when not planned; the arena's size, and the
     * arena itself between runs. */
    int64_t *slot_offset;
    int64_t arena_bytes;
    _Atomic(tw_storage *) arena;
    /* Per-node times (graph_profile.c): a run times its nodes only while
     * profiling is on; profile stays after a stop, for the JSON. */
    atomic_bool profiling;
    tw_gprofile *profile;
};

tw_graph *tw__graph_new(const char *function_name, int ninputs, tw_tensor *const *inputs);
tw_graph *tw__graph_ref(tw_graph *g);
void tw__graph_unref(tw_graph *g);
/* Append a node (inputs must name earlier nodes); returns its index or -1
 * (error set). Copies inputs, outputs and scope; takes a reference to
 * tensor. The name is made unique within the graph: scope/base, base_1, ...
 * (a variable's node takes the variable's name without the scope). */
int tw__graph_add(tw_graph *g, tw_node_kind kind, const tw_op_def *op, const tw_attrs *attrs, tw_device device,
                  int ninputs, const tw_gref *inputs, int noutputs, const tw_gout *outputs, const char *scope,
                  const char *base_name, tw_tensor *tensor);
/* Free what a node owns. */
void tw__gnode_clear(tw_gnode *n);
/* Set the outputs (copied); 0 or -1. */
int tw__graph_set_outputs(tw_graph *g, int n, const tw_gref *outputs);
/* Lay out the values and the release plan; run after any change. 0 or -1. */
int tw__graph_finalize(tw_graph *g);
/* Whether inputs match the signature g was traced for. */
bool tw__graph_matches(const tw_graph *g, int ninputs, tw_tensor *const *inputs);

/* The passes (graph_passes.c), each counting what it changed; they leave
 * the graph to be finalized. tw__graph_optimize runs them in this order
 * (folding, CSE, pruning), then finalizes. */
int tw__graph_fold(tw_graph *g, int *folded);
int tw__graph_cse(tw_graph *g, int *merged);
int tw__graph_prune(tw_graph *g, int *removed);
int tw__graph_optimize(tw_graph *g);

/* Plan the fused groups of elementwise chains (graph_fuse.c); called by
 * tw__graph_finalize. 0 or -1. */
int tw__graph_fuse(tw_graph *g);
void tw__graph_fuse_clear(tw_graph *g);
/* Run one group, its output into its root's slot: 1 when done, 0 when an
 * input does not suit it (a strided view: run its nodes one by one), -1 on
 * error. */
int tw__fgroup_run(const tw_graph *g, const tw_fgroup *grp, tw_tensor **slots, tw_storage *arena);

/* The memory plan (graph_memory.c); called by tw__graph_finalize. 0 or -1. */
int tw__graph_plan_memory(tw_graph *g);
/* The arena for one run (the graph's when free, else a new one; NULL when
 * nothing is planned or memory ran out), and giving it back. */
tw_storage *tw__graph_take_arena(tw_graph *g);
void tw__graph_give_arena(tw_graph *g, tw_storage *arena);
/* A new tensor for a node's output: in the arena where planned (arena not
 * NULL), else its own buffer. */
tw_tensor *tw__graph_value(const tw_graph *g, tw_storage *arena, int slot, const tw_desc *d, tw_device device);
/* Buffers graph runs have allocated so far (arenas and unplanned values). */
uint64_t tw__graph_buffers_made(void);

/* Run g: inputs must match its signature and be contiguous; outputs gets
 * g->noutputs new references (not handed to any scope). 0 or -1. */
int tw__graph_run(tw_graph *g, tw_tensor *const *inputs, tw_tensor **outputs);

/* Free g's profile (graph_profile.c); called when g goes. */
void tw__graph_profile_free(tw_graph *g);

/* The shortest text that reads back as v (as a float when single), for
 * attributes and JSON; NaN and infinities come out as "nan", "inf". */
void tw__format_number(double v, bool single, char out[static 32]);

/* ---- control flow (graph_control.c) ------------------------------------------- */
/* Run a cond or while node on its inputs; outs gets its noutputs new
 * references. 0 or -1. */
int tw__control_run(const tw_gnode *node, tw_tensor *const *ins, tw_tensor **outs);
/* The node's sub-graphs are consistent with its inputs and outputs (what
 * the importer checks); 0 or -1 with a message naming the node. */
int tw__control_check(const tw_graph *g, const tw_gnode *node);
/* Add n subs to a node (taken, on success and failure alike). */
void tw__gnode_set_subs(tw_gnode *node, int n, tw_gsub *subs);
/* Read one element's value as a truth value. */
bool tw__truth(const tw_tensor *t);

/* ---- the tracer (trace.c) ---------------------------------------------------- */
typedef struct tw_tracer tw_tracer;
/* Trace fn on inputs into a new graph; NULL with an error naming the
 * function and what could not be traced. */
tw_graph *tw__trace(const char *function_name, tw_function_fn fn, void *user_data, int ninputs,
                    tw_tensor *const *inputs, int max_outputs);
/* The same graph from a trace that computes no dynamic values (trace.c). */
tw_graph *tw__trace_shapes(const char *function_name, tw_function_fn fn, void *user_data, int ninputs,
                           tw_tensor *const *inputs, int max_outputs);

/* A function traced into a sub-graph of the current trace (cond branches,
 * loop bodies). Its first nfresh inputs become the sub-graph's own inputs
 * (fresh headers, as a function's); every other tensor it uses that it did
 * not compute is a capture: a further sub-graph input, fed by the outer
 * value captures[k] (whose tensor is captured_tensors[k], a reference). */
typedef struct {
    tw_graph *g; /* optimized and finalized */
    int noutputs;
    int ncaptures;
    tw_gref *captures;
    tw_tensor **captured_tensors;
} tw_subtrace;
int tw__trace_sub(tw_subtrace *st, const char *name, tw_function_fn fn, void *user_data, int nfresh, int ninputs,
                  tw_tensor *const *inputs, int max_outputs);
void tw__subtrace_clear(tw_subtrace *st);
/* The current trace's value of t (capturing it when new); -1 when the trace
 * cannot go on. */
int tw__trace_ref(tw_tensor *t, const char *user, tw_gref *ref);
/* Fail the current trace with this reason (the first one is kept). */
void tw__trace_fail(const char *reason);
/* Add a node without an op (cond, while) to the current trace, in its
 * current name scope; its index or -1. */
int tw__trace_add_node(tw_node_kind kind, const tw_attrs *attrs, tw_device device, int ninputs, const tw_gref *inputs,
                       int noutputs, const tw_gout *outputs, const char *base_name);
/* Register outs[k] (fresh headers) as output k of node in the current trace. */
int tw__trace_node_outputs(int node, int n, tw_tensor *const *outs);
/* The graph the current trace builds. */
tw_graph *tw__trace_graph(void);
/* Whether the current trace is shape-only (computes no dynamic values). */
bool tw__trace_is_shape_only(void);

#endif
