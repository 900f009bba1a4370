/* Tensor Workbench — traced functions (TensorFlow 2's tf.function) and their
 * graphs.
 *
 * A tw_function wraps a C function over tensors. The first call with a given
 * input signature (each input's dtype and shape) traces it: the function runs
 * once through the same dispatch the eager ops use, and every op it runs
 * becomes a node of a graph. Later calls with that signature run the graph:
 * each node's kernel directly, with no per-op checks, scopes or bookkeeping;
 * intermediates live in one arena the graph keeps, at offsets planned from
 * their lifetimes (a slot reused once its last reader ran), and chains of
 * elementwise ops run fused, one pass over the elements. A new
 * signature traces again; a function keeps the graphs of its last
 * TW_FUNCTION_MAX_GRAPHS signatures. Each new graph is optimized first:
 * repeated computations are merged and nodes nothing uses are dropped.
 *
 *     static int step(tw_tensor *const *in, int n, tw_tensor **out, int max, void *user)
 *     {
 *         out[0] = tw_relu(tw_add(tw_matmul(in[0], W), B));  // W, B variables
 *         return 1;
 *     }
 *     tw_function *f = tw_function_new("step", step, NULL);
 *     tw_tensor *y = tw_function_call1(f, TW_TENSORS(x));
 *
 * What a trace captures:
 *   - inputs: the call's tensors, matched by signature (non-contiguous
 *     inputs are packed first, so a graph always sees packed inputs);
 *   - variables (tw_variable) by reference: the graph reads their value when
 *     it runs, so an assignment between calls is seen; tw_assign and friends
 *     inside the function become graph nodes and run with the graph (during
 *     the trace itself they are recorded, not performed);
 *   - any other tensor the function did not compute (tw_scalar, tw_full,
 *     tw_tensor_from_data inside it, or tensors it reaches through
 *     user_data) by value: a copy taken at trace time;
 *   - C-side logic (loops, shapes, branches on shapes) is unrolled into the
 *     graph: it runs once per trace, like Python code in tf.function;
 *     branches and loops on computed values go through tw_cond and
 *     tw_while_loop (below), which become graph nodes.
 *
 * What cannot be traced fails the call (returns -1) with a message naming
 * the function and the reason, and no graph is kept: a random draw
 * (tw_random_*, tw_dropout) feeding an op, a custom gradient, and reading
 * the value of a tensor computed from the inputs or of a variable
 * (tw_tensor_data, tw_tensor_item, tw_tensor_get, tw_tensor_copy_to), since a
 * branch taken on that value would be frozen into the graph. Printing runs
 * once, at trace time. Calling another tw_function while tracing inlines
 * its ops into the trace.
 *
 * Gradients: when a gradient tape is recording, a graph run records each of
 * its nodes on the tape as the eager op would, so tw_tape_gradient works
 * through traced calls (tapes active when a trace starts do not see the
 * trace itself; tapes the function begins do).
 *
 * Ownership: outputs are new references, handed to the open scope like any
 * op's result (tw/tensor.h). Graph pointers belong to their function and
 * stay valid until it is freed or the graph is evicted by a newer signature.
 */
#ifndef TW_FUNCTION_H
#define TW_FUNCTION_H

#include "tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

#define TW_FUNCTION_MAX_GRAPHS 8

typedef struct tw_function tw_function;
typedef struct tw_graph tw_graph;

/* Compute outputs from ninputs inputs with engine ops: write at most
 * max_outputs tensors (results of ops, as any code returns them) and return
 * how many, or -1 with an error set. */
typedef int (*tw_function_fn)(tw_tensor *const *inputs, int ninputs, tw_tensor **outputs, int max_outputs,
                              void *user_data);

/* name appears in messages and graphs ("function" when NULL). */
tw_function *tw_function_new(const char *name, tw_function_fn fn, void *user_data);
void tw_function_free(tw_function *f);
const char *tw_function_name(const tw_function *f);

/* Run f on the inputs, tracing first when the signature is new. outputs
 * receives up to max_outputs new references; returns their number, or -1
 * (error set, outputs all NULL). */
int tw_function_call(tw_function *f, int ninputs, tw_tensor *const *inputs, tw_tensor **outputs, int max_outputs);
/* The first output alone; NULL on failure. */
tw_tensor *tw_function_call1(tw_function *f, int ninputs, tw_tensor *const *inputs);

/* Traces so far (each new signature, and each retrace after an eviction). */
int tw_function_trace_count(const tw_function *f);

/* The graph for these inputs' signature, traced now if needed without
 * running it (TensorFlow's get_concrete_function); NULL on failure. */
const tw_graph *tw_function_get_graph(tw_function *f, int ninputs, tw_tensor *const *inputs);
/* The same graph from a shape-only trace, which computes no value that
 * depends on the inputs or on a variable: such ops get their outputs'
 * shapes from the op's shape rule and skip their kernel, and cond and
 * while nodes are not run (their outputs' shapes are fixed when traced).
 * Values computed from constants alone are computed, as C code may read
 * them. Nothing else can tell the difference, since a trace fails on C
 * code reading a value computed from the inputs or a variable either way;
 * here the read itself also fails (tw_tensor_data returns NULL,
 * tw_tensor_item NAN, ...) instead of handing out values never computed,
 * and printing one shows "<not computed by a shape-only trace>". Much
 * cheaper when only the graph is wanted (the graph view of a model). The
 * graph is cached as a traced one is: a later call runs it. A layer that
 * builds its weights during the trace from the values of its input would
 * see uncomputed values: build the model first. */
const tw_graph *tw_function_get_graph_shapes(tw_function *f, int ninputs, tw_tensor *const *inputs);
/* The cached graphs, oldest trace first. */
int tw_function_graph_count(const tw_function *f);
const tw_graph *tw_function_graph_at(const tw_function *f, int i);

/* ---- control flow (tf.cond, tf.while_loop) ------------------------------------
 * Branches on values computed in the graph. Eagerly these run the chosen
 * branch, or the loop, as plain C calls. While tracing, each branch, the
 * loop's condition and its body are traced into sub-graphs of their own and
 * the graph gets one "cond" or "while" node, so the branch taken and the
 * number of iterations follow the values at run time (where tw_tensor_item
 * on a computed value cannot be traced). The functions are tw_function_fn:
 * whatever tensors they use that they did not compute (the inputs, outer
 * values, variables, constants) become inputs of their sub-graph, fed by
 * the outer graph. Sub-graphs cannot assign variables (tw_assign inside a
 * branch or body fails the trace: assign the result outside). Gradients: a
 * tape recording a graph run sees the ops of the branch taken and of every
 * iteration run, as it sees eager code, so tw_tape_gradient works through
 * both.
 *
 *     static int halve(tw_tensor *const *v, int n, tw_tensor **out, int max, void *u)
 *     { out[0] = tw_mul_scalar(v[0], 0.5); return 1; }
 *     static int big(tw_tensor *const *v, int n, tw_tensor **out, int max, void *u)
 *     { out[0] = tw_greater(tw_sum_all(tw_abs(v[0])), tw_scalar(1)); return 1; }
 *     tw_tensor *y;
 *     tw_while_loop(big, halve, NULL, 1, &x, &y, 100); // halve x until sum|x| <= 1
 */

/* Run true_fn when pred (one element, any dtype; nonzero is true) holds,
 * else false_fn, on the inputs; outputs receives what the branch returns
 * (at most max_outputs, as tw_function_fn writes them). Returns the number
 * of outputs, or -1 (error set). Traced, both branches are traced and must
 * return as many outputs with equal dtypes and shapes. */
int tw_cond(tw_tensor *pred, tw_function_fn true_fn, tw_function_fn false_fn, void *user_data, int ninputs,
            tw_tensor *const *inputs, tw_tensor **outputs, int max_outputs);

/* while (cond_fn(vars) and fewer than max_iterations iterations ran)
 *     vars = body_fn(vars)
 * cond_fn returns one output of one element (nonzero: go on); body_fn
 * returns nvars outputs, output k the new value of variable k with its
 * dtype and shape (checked every iteration eagerly, once when traced: a
 * loop variable whose shape changes is refused with a message naming it).
 * max_iterations <= 0: no limit (a traced graph holding such a loop can be
 * saved, but tw_graph_from_json refuses it: a file must not hang the reader's
 * program). outputs receives the nvars final values
 * (new references handed to the open scope); returns nvars or -1. */
int tw_while_loop(tw_function_fn cond_fn, tw_function_fn body_fn, void *user_data, int nvars,
                  tw_tensor *const *loop_vars, tw_tensor **outputs, int64_t max_iterations);

/* ---- name scopes -----------------------------------------------------------
 * A per-thread stack of names; nodes traced while names are pushed carry
 * the path ("sequential/dense_1"). tw_layer_call_ex pushes the layer's
 * name around its call. Names are copied; pushes and pops must pair. */
void tw_name_scope_push(const char *name);
void tw_name_scope_pop(void);
/* The current path, "" at the top. */
const char *tw_name_scope_current(void);

/* ---- graph inspection --------------------------------------------------------
 * Nodes are numbered in execution order, 0..count-1; every node's inputs
 * come from earlier nodes. Besides op nodes, a graph has source nodes: the
 * function's inputs, captured constants and captured variables. */
typedef enum { TW_NODE_OP, TW_NODE_INPUT, TW_NODE_CONSTANT, TW_NODE_VARIABLE, TW_NODE_COND, TW_NODE_WHILE } tw_node_kind;

const char *tw_graph_function_name(const tw_graph *g);
int tw_graph_node_count(const tw_graph *g);
tw_node_kind tw_graph_node_kind(const tw_graph *g, int node);
/* The op's registry name ("matmul"); "input", "constant" or "variable" for
 * source nodes, "cond" or "while" for control flow. */
const char *tw_graph_node_op(const tw_graph *g, int node);
/* Unique within the graph: the scope path, then the op name or the
 * variable's name, "_1", "_2", ... added on repeats ("sequential/dense_1/matmul"). */
const char *tw_graph_node_name(const tw_graph *g, int node);
/* The name scope path the node was traced in ("" at the top). */
const char *tw_graph_node_scope(const tw_graph *g, int node);
int tw_graph_node_ninputs(const tw_graph *g, int node);
/* The node feeding input k; *output (may be NULL) receives which of its outputs. */
int tw_graph_node_input(const tw_graph *g, int node, int k, int *output);
int tw_graph_node_noutputs(const tw_graph *g, int node);
tw_dtype tw_graph_node_output_dtype(const tw_graph *g, int node, int k);
/* The rank of output k; *shape receives its dimensions. */
int tw_graph_node_output_shape(const tw_graph *g, int node, int k, const int64_t **shape);
/* The op's attributes as text, "ints=[0, 1] floats=[0.5]" ("" when none);
 * for constants a short form of the value. malloc'd. */
char *tw_graph_node_attrs(const tw_graph *g, int node);
/* The captured tensor of a constant or variable node, else NULL. */
const tw_tensor *tw_graph_node_tensor(const tw_graph *g, int node);

/* The sub-graphs of a cond node (0: the true branch, 1: the false one) or a
 * while node (0: the loop condition, 1: the body); 0 for other nodes. A
 * sub-graph's input i receives the node's input (*inputs_from)[i] (may be
 * NULL); a while loop's first nvars inputs are the loop variables, whose
 * values the body's outputs replace after each iteration. */
int tw_graph_node_nsubgraphs(const tw_graph *g, int node);
const tw_graph *tw_graph_node_subgraph(const tw_graph *g, int node, int k, const int **inputs_from);

/* The nodes of the function's inputs (kind TW_NODE_INPUT), in order. */
int tw_graph_ninputs(const tw_graph *g);
int tw_graph_input_node(const tw_graph *g, int i);
/* The function's outputs: the node and its output index. */
int tw_graph_noutputs(const tw_graph *g);
int tw_graph_output(const tw_graph *g, int i, int *output);

/* The graph as JSON (docs/graph_json.md), malloc'd; NULL on failure. */
char *tw_graph_json(const tw_graph *g);
/* Every cached graph of f: {"function": name, "graphs": [...]}. */
char *tw_function_graph_json(const tw_function *f);

/* ---- graphs on their own (export and import) ---------------------------------
 * A graph outlives its function when referenced, and a graph read back from
 * its JSON (docs/graph_json.md) runs without the C code that traced it
 * (TensorFlow's SavedModel: data/include/tw/graph_file.h keeps one in a
 * file with its tensors). */
const tw_graph *tw_graph_ref(const tw_graph *g);
void tw_graph_unref(const tw_graph *g); /* NULL is accepted */

/* The tensor of a constant or variable node, looked up by the node's name
 * (tw_graph_node_name) when a graph is read back, or NULL when there is none
 * (an error may be set to say why). The importer calls it inside a scope of
 * its own and takes what it keeps: return a tensor made in the call (it
 * belongs to that scope, as any op's result does) or one the caller keeps
 * alive (borrowed, not a new reference). A variable node takes
 * a variable tensor (tw_variable) by reference, so the graph reads and
 * assigns it; any other tensor becomes a new variable with the node's
 * variable name and trainable flag. */
typedef tw_tensor *(*tw_graph_tensor_fn)(const char *node_name, tw_node_kind kind, void *user_data);

/* A runnable graph from its JSON: ops by registry name, every node's inputs,
 * attributes, dtypes and shapes checked (each op's shape inference must
 * give what the JSON promises), constants and variables from lookup, which
 * must match their nodes' dtype and shape. NULL with a message naming the
 * node and what is wrong. The new graph has one reference. */
tw_graph *tw_graph_from_json(const char *json, tw_graph_tensor_fn lookup, void *user_data);

/* Run g on inputs of exactly its input signature (dtype and shape of each:
 * a graph is traced for one shape). outputs receives the graph's
 * tw_graph_noutputs() new references (max_outputs must have room), handed
 * to the open scope like any op's result; returns their number, or -1 with
 * a message saying which input differs from what the graph takes. On a
 * recording tape, the run is recorded as a function call's is. */
int tw_graph_run(const tw_graph *g, int ninputs, tw_tensor *const *inputs, tw_tensor **outputs, int max_outputs);

/* ---- profiles ------------------------------------------------------------------
 * Per-node wall time of a graph's runs, for finding where a traced step
 * spends its time (the graph view colours nodes by it). Between start and
 * stop, every run of g (tw_graph_run, tw_function_call running g, fit's
 * traced step) counts one run and adds each op node's time, measured with
 * CLOCK_MONOTONIC around its kernel; a fused group of elementwise nodes
 * runs as one pass, so its time is split evenly among its members. A cond
 * or while node's time includes its sub-graphs (whose nodes are not
 * profiled separately). Off, a run pays one predictable branch.
 * Thread-safety: profile a graph from one thread at a time (start, the
 * runs, stop and the JSON on one thread, or ordered by the caller). */

/* Turn timing on for g, counts reset to zero; 0 or -1 (out of memory). */
int tw_graph_profile_start(const tw_graph *g);
/* Turn it off; what was gathered stays for tw_graph_profile_json. */
void tw_graph_profile_stop(const tw_graph *g);
/* The profile as JSON (docs/graph_json.md, "Profiles"): the run count and,
 * for each op node in order, its name (tw_graph_node_name), op, total and
 * mean time in microseconds. All zero when g was never profiled. malloc'd;
 * NULL on failure. */
char *tw_graph_profile_json(const tw_graph *g);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
