/* The tracer: runs a function once, eagerly, and turns every op dispatch
 * reports into a graph node (tw/function.h).
 *
 * Tensors are told apart by id. The function's inputs get fresh headers
 * (so f(x, x) still has two inputs); each op's outputs are registered as
 * the values of its node. A tensor an op reads that the trace has not seen
 * is captured: a variable by reference, anything else as a constant copied
 * now. Values know whether they depend on an input or a variable
 * ("dynamic"): reading such a value in C would freeze what the C code did
 * with it, so that fails the trace, as do random draws feeding an op and
 * custom gradients. The first reason found is kept and reported when the
 * function returns.
 *
 * A shape-only trace (tw_function_get_graph_shapes) builds the same graph
 * without computing what it does not need: an op on a dynamic value skips
 * its kernel (dispatch asks tw__trace_skips; its outputs are allocated,
 * their shapes its infer's) and a cond or while node is not run. Nothing
 * can tell: C code may not read a dynamic value in either kind of trace,
 * and a shape-only trace refuses the read itself too, so the code sees an
 * error instead of garbage. Values that are not dynamic (computed from
 * constants alone) are computed as always, since C code may read them.
 * Once a shape-only trace has failed it computes and hands out nothing.
 *
 * A sub-trace (a cond branch, a loop body) has the outer trace as parent:
 * a tensor it has not seen is looked up there (captured there when new) and
 * becomes an input of the sub-graph, so sub-graphs hold no constants or
 * variables of their own; a failure inside fails the outer trace too. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/graph_internal.h"
#include "id_map.h"

_Thread_local struct tw_tracer *tw__tracer __attribute__((tls_model("initial-exec")));

typedef struct {
    tw_gref ref;
    bool dynamic;
} traced_value;

struct tw_tracer {
    tw_graph *g;
    tw_tracer *parent; /* tracing a sub-graph (graph_control.c): the outer trace */
    tw_subtrace *sub;  /* ...and where its captures go */
    tw_id_map ids;    /* tensor id -> index into values, plus one */
    tw_id_map random; /* ids of random draws -> the draw's name */
    traced_value *values;
    int nvalues, capacity;
    size_t scope_base; /* the name scope path's length when the trace began */
    bool shape_only;   /* dynamic values are not computed (see the top) */
    bool failed;
    char reason[512];
};

static void fail(tw_tracer *tr, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void fail(tw_tracer *tr, const char *fmt, ...)
{
    if (tr->failed)
        return;
    tr->failed = true;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tr->reason, sizeof tr->reason, fmt, ap);
    va_end(ap);
}

/* The name scope path relative to where the trace began. */
static const char *scope_of(const tw_tracer *tr)
{
    const char *path = tw_name_scope_current();
    size_t n = strlen(path);
    if (n <= tr->scope_base)
        return "";
    path += tr->scope_base;
    return *path == '/' ? path + 1 : path;
}

static bool add_value(tw_tracer *tr, const tw_tensor *t, tw_gref ref, bool dynamic)
{
    if (tr->nvalues == tr->capacity) {
        int cap = tr->capacity ? tr->capacity * 2 : 64;
        traced_value *v = realloc(tr->values, sizeof *v * (size_t)cap);
        if (!v)
            return false;
        tr->values = v;
        tr->capacity = cap;
    }
    tr->values[tr->nvalues++] = (traced_value){ref, dynamic};
    return tw_id_map_put(&tr->ids, t->id, (void *)(uintptr_t)tr->nvalues);
}

static traced_value *find(const tw_tracer *tr, const tw_tensor *t)
{
    void *index = NULL;
    if (!tw_id_map_get(&tr->ids, t->id, &index))
        return NULL;
    return &tr->values[(uintptr_t)index - 1];
}

/* t's value in this trace or an outer one (a sub-trace has not captured
 * every outer value it will use yet), or NULL. */
static traced_value *find_any(const tw_tracer *tr, const tw_tensor *t)
{
    traced_value *v = NULL;
    for (; !v && tr; tr = tr->parent)
        v = find(tr, t);
    return v;
}

const char *tw__trace_scope_of(const tw_tensor *t)
{
    const tw_tracer *tr = tw__tracer;
    const traced_value *v = tr && t ? find(tr, t) : NULL;
    return v ? tr->g->nodes[v->ref.node].scope : NULL;
}

static tw_gout gout_of(const tw_tensor *t)
{
    tw_gout o = {.desc = {.dtype = t->dtype, .ndim = t->ndim}, .weak = t->weak};
    memcpy(o.desc.shape, t->shape, sizeof(int64_t) * (size_t)t->ndim);
    return o;
}

/* A source node (constant or variable) for a tensor first met as an op's
 * input. Constants are copied: the graph must not see later writes. */
static traced_value *capture(tw_tracer *tr, tw_tensor *t)
{
    bool variable = t->variable != NULL;
    tw_tensor *held = t;
    if (!variable) {
        held = tw__tensor_new(t->dtype, t->ndim, t->shape, t->storage->device);
        if (!held)
            return NULL;
        tw__copy_into(held, t);
        held->weak = t->weak;
    }
    tw_gout out = gout_of(t);
    int node = tw__graph_add(tr->g, variable ? TW_NODE_VARIABLE : TW_NODE_CONSTANT, NULL, NULL, t->storage->device, 0,
                             NULL, 1, &out, scope_of(tr), variable ? t->variable->name : "constant", held);
    if (!variable)
        tw_tensor_unref(held);
    if (node < 0 || !add_value(tr, t, (tw_gref){node, 0}, variable))
        return NULL;
    return &tr->values[tr->nvalues - 1];
}

static traced_value *use(tw_tracer *tr, tw_tensor *t, const char *user);

/* A new input of g, as the function's inputs are (the signature grows). */
static int add_graph_input(tw_tracer *tr, const tw_tensor *x, const char *base)
{
    tw_graph *g = tr->g;
    tw_sig *sig = realloc(g->signature, sizeof *sig * (size_t)(g->ninputs + 1));
    if (sig)
        g->signature = sig;
    int *nodes = sig ? realloc(g->input_nodes, sizeof *nodes * (size_t)(g->ninputs + 1)) : NULL;
    if (!nodes)
        return -1;
    g->input_nodes = nodes;
    sig[g->ninputs] = (tw_sig){.dtype = x->dtype, .ndim = x->ndim, .weak = x->weak, .device = x->storage->device};
    memcpy(sig[g->ninputs].shape, x->shape, sizeof(int64_t) * (size_t)x->ndim);
    tw_gout out = gout_of(x);
    int node = tw__graph_add(g, TW_NODE_INPUT, NULL, NULL, x->storage->device, 0, NULL, 1, &out, "", base, NULL);
    if (node >= 0)
        g->input_nodes[g->ninputs++] = node;
    return node;
}

/* In a sub-trace: t's value in the outer trace, fed in as a new input. */
static traced_value *capture_outer(tw_tracer *tr, tw_tensor *t, const char *user)
{
    traced_value *outer = use(tr->parent, t, user);
    if (!outer) {
        fail(tr, "%s", tr->parent->reason);
        return NULL;
    }
    traced_value o = *outer;
    tw_subtrace *st = tr->sub;
    tw_gref *caps = realloc(st->captures, sizeof *caps * (size_t)(st->ncaptures + 1));
    if (caps)
        st->captures = caps;
    tw_tensor **held = caps ? realloc(st->captured_tensors, sizeof *held * (size_t)(st->ncaptures + 1)) : NULL;
    if (!held)
        return NULL;
    st->captured_tensors = held;
    char name[32];
    snprintf(name, sizeof name, "capture_%d", st->ncaptures);
    int node = add_graph_input(tr, t, name);
    if (node < 0 || !add_value(tr, t, (tw_gref){node, 0}, o.dynamic))
        return NULL;
    st->captures[st->ncaptures] = o.ref;
    st->captured_tensors[st->ncaptures++] = tw_tensor_ref(t);
    return &tr->values[tr->nvalues - 1];
}

/* The value of a tensor an op (or the function's result) uses; NULL when
 * the trace cannot go on (the reason is set). */
static traced_value *use(tw_tracer *tr, tw_tensor *t, const char *user)
{
    traced_value *v = find(tr, t);
    if (v) {
        tw_gnode *node = &tr->g->nodes[v->ref.node];
        if (node->kind == TW_NODE_OP)
            node->outputs[v->ref.output].weak = t->weak; /* flagged after its op returned */
        return v;
    }
    void *draw = NULL;
    if (tw_id_map_get(&tr->random, t->id, &draw)) {
        fail(tr, "a random draw (%s) feeds %s; random draws are not graph ops yet: draw outside the function and "
                 "pass the values in as an input",
             (const char *)draw, user);
        return NULL;
    }
    v = tr->parent ? capture_outer(tr, t, user) : capture(tr, t);
    if (!v && !tr->failed)
        fail(tr, "out of memory capturing a tensor used by %s (%s)", user, tw_last_error());
    return v;
}

void tw__trace_op(const tw_op_call *call, tw_tensor *const *outs, int noutputs)
{
    tw_tracer *tr = tw__tracer;
    if (tr->failed)
        return;
    if (call->ctx) {
        fail(tr, "op '%s' is a custom gradient (tw_custom_gradient), which cannot be traced yet", call->op->name);
        return;
    }
    if (tr->parent && (call->op->flags & TW_OP_STATEFUL)) {
        fail(tr, "op '%s' assigns a variable inside a cond branch or while_loop body, which cannot be traced yet "
                 "(return the new value and assign it outside)",
             call->op->name);
        return;
    }
    char user[96];
    snprintf(user, sizeof user, "op '%s'", call->op->name);
    tw_gref local[TW_MAX_INPUTS];
    tw_gref *inputs = call->ninputs <= TW_MAX_INPUTS ? local : malloc(sizeof *inputs * (size_t)call->ninputs);
    bool dynamic = false, ok = inputs != NULL;
    for (int i = 0; ok && i < call->ninputs; i++) {
        traced_value *v = use(tr, call->inputs[i], user);
        ok = v != NULL;
        if (ok) {
            inputs[i] = v->ref;
            dynamic |= v->dynamic;
        }
    }
    tw_gout gouts[TW_MAX_OUTPUTS];
    for (int k = 0; k < noutputs; k++)
        gouts[k] = gout_of(outs[k]);
    tw_device device = call->ninputs > 0 ? call->inputs[0]->storage->device : tw_default_device();
    int node = ok ? tw__graph_add(tr->g, TW_NODE_OP, call->op, call->attrs, device, call->ninputs, inputs, noutputs,
                                  gouts, scope_of(tr), call->op->name, NULL)
                  : -1;
    for (int k = 0; node >= 0 && k < noutputs; k++)
        if (!add_value(tr, outs[k], (tw_gref){node, k}, dynamic))
            node = -1;
    if (node < 0 && !tr->failed)
        fail(tr, "out of memory recording op '%s'", call->op->name);
    if (inputs != local)
        free(inputs);
}

/* Whether a shape-only trace left t's values uncomputed: t is dynamic
 * (a variable's own values are there), or the trace failed before. */
static bool uncomputed(const tw_tracer *tr, const tw_tensor *t)
{
    if (!tr->shape_only)
        return false;
    if (tr->failed)
        return true;
    const traced_value *v = find_any(tr, t);
    return v && v->dynamic && !t->variable;
}

bool tw__trace_skips(const tw_op_call *call)
{
    const tw_tracer *tr = tw__tracer;
    if (!tr->shape_only)
        return false;
    if (tr->failed)
        return true;
    for (int i = 0; i < call->ninputs; i++) {
        const traced_value *v = find_any(tr, call->inputs[i]);
        if (call->inputs[i]->variable || (v && v->dynamic))
            return true;
    }
    return false;
}

bool tw__trace_computed(const tw_tensor *t)
{
    return !tw__tracer || !t || !uncomputed(tw__tracer, t);
}

int tw__trace_read(const tw_tensor *t, const char *what)
{
    tw_tracer *tr = tw__tracer;
    if (!t)
        return 0;
    bool refused = uncomputed(tr, t);
    if (tr->failed) {
        /* the first reason is kept */
    } else if (t->variable) {
        fail(tr, "%s reads variable '%s'; a graph cannot depend on values read in C (compute with ops instead, and "
                 "tw_cond or tw_while_loop to branch on them)",
             what, t->variable->name);
    } else {
        const traced_value *v = find_any(tr, t);
        if (v && v->dynamic)
            fail(tr, "%s reads a tensor computed from the inputs; a graph cannot depend on values read in C "
                     "(compute with ops instead, and tw_cond or tw_while_loop to branch on them)",
                 what);
    }
    if (!refused)
        return 0;
    return tw_error_set("%s: a shape-only trace (tw_function_get_graph_shapes) did not compute this value: %s", what,
                        tr->reason);
}

void tw__trace_random(const tw_tensor *t, const char *what)
{
    tw_tracer *tr = tw__tracer;
    if (!tw_id_map_put(&tr->random, t->id, (void *)what))
        fail(tr, "out of memory noting a random draw");
}

void tw__trace_unsupported(const char *what)
{
    fail(tw__tracer, "%s cannot be traced", what);
}

tw_tracer *tw__trace_suspend(void)
{
    tw_tracer *tr = tw__tracer;
    tw__tracer = NULL;
    return tr;
}

void tw__trace_resume(tw_tracer *tracer)
{
    tw__tracer = tracer;
}

/* ---- a whole trace ----------------------------------------------------------- */

/* Fresh headers over the inputs, registered as the graph's input nodes. */
static int add_input(tw_tracer *tr, int i, tw_tensor *x, tw_tensor **header)
{
    *header = tw__tensor_view(x, x->ndim, x->shape, x->strides, x->offset);
    if (!*header)
        return -1;
    (*header)->weak = x->weak;
    char name[32];
    snprintf(name, sizeof name, "input_%d", i);
    tw_gout out = gout_of(x);
    int node = tw__graph_add(tr->g, TW_NODE_INPUT, NULL, NULL, x->storage->device, 0, NULL, 1, &out, "", name, NULL);
    if (node < 0 || !add_value(tr, *header, (tw_gref){node, 0}, true))
        return -1;
    tr->g->input_nodes[i] = node;
    return 0;
}

static tw_tensor **trace_inputs(tw_tracer *tr, int ninputs, tw_tensor *const *inputs)
{
    tw_tensor **headers = calloc((size_t)(ninputs ? ninputs : 1), sizeof *headers);
    for (int i = 0; headers && i < ninputs; i++) {
        if (add_input(tr, i, inputs[i], &headers[i]) == 0)
            continue;
        for (int k = 0; k <= i; k++)
            tw_tensor_unref(headers[k]);
        free(headers);
        headers = NULL;
    }
    return headers;
}

/* Run fn with the tracer on; its results become the graph's outputs. */
static int run_traced(tw_tracer *tr, const char *name, tw_function_fn fn, void *user_data, int ninputs,
                      tw_tensor *const *headers, int max_outputs)
{
    tw_tensor **outs = calloc((size_t)max_outputs, sizeof *outs);
    tw_gref *refs = calloc((size_t)max_outputs, sizeof *refs);
    if (!outs || !refs) {
        free(outs);
        free(refs);
        return tw_error_set("function '%s': out of memory tracing", name);
    }
    tw_tapes_hidden hidden = tw__tapes_hide();
    tw__tracer = tr;
    tw_scope_begin();
    int n = fn(headers, ninputs, outs, max_outputs, user_data);
    int rc = 0;
    if (n < 0 || n > max_outputs) {
        rc = n < 0 ? tw_error_set("function '%s': %s", name, tw_error_pending() ? tw_last_error() : "failed")
                   : tw_error_set("function '%s' returned %d outputs; at most %d fit", name, n, max_outputs);
    }
    for (int k = 0; rc == 0 && k < n; k++) {
        if (!outs[k]) {
            rc = tw_error_set("function '%s': output %d is NULL: %s", name, k,
                              tw_error_pending() ? tw_last_error() : "no error was set");
            break;
        }
        char user[48];
        snprintf(user, sizeof user, "output %d", k);
        traced_value *v = use(tr, outs[k], user);
        if (v)
            refs[k] = v->ref;
    }
    tw__tracer = NULL;
    tw_scope_end();
    tw__tapes_unhide(hidden);
    if (rc == 0 && tr->failed)
        rc = tw_error_set("function '%s': cannot trace: %s", name, tr->reason);
    if (rc == 0 && (tw__graph_set_outputs(tr->g, n, refs) < 0 || tw__graph_finalize(tr->g) < 0))
        rc = -1;
    free(outs);
    free(refs);
    return rc;
}

static tw_graph *trace(const char *function_name, tw_function_fn fn, void *user_data, int ninputs,
                       tw_tensor *const *inputs, int max_outputs, bool shape_only)
{
    tw_tracer tr = {.scope_base = strlen(tw_name_scope_current()), .shape_only = shape_only};
    tr.g = tw__graph_new(function_name, ninputs, inputs);
    tw_tensor **headers = tr.g ? trace_inputs(&tr, ninputs, inputs) : NULL;
    int rc = headers ? run_traced(&tr, function_name, fn, user_data, ninputs, headers, max_outputs)
                     : tw_error_set("function '%s': out of memory tracing", function_name);
    for (int i = 0; headers && i < ninputs; i++)
        tw_tensor_unref(headers[i]);
    free(headers);
    free(tr.values);
    tw_id_map_clear(&tr.ids);
    tw_id_map_clear(&tr.random);
    if (rc < 0) {
        tw__graph_unref(tr.g);
        return NULL;
    }
    return tr.g;
}

tw_graph *tw__trace(const char *function_name, tw_function_fn fn, void *user_data, int ninputs,
                    tw_tensor *const *inputs, int max_outputs)
{
    return trace(function_name, fn, user_data, ninputs, inputs, max_outputs, false);
}

tw_graph *tw__trace_shapes(const char *function_name, tw_function_fn fn, void *user_data, int ninputs,
                           tw_tensor *const *inputs, int max_outputs)
{
    return trace(function_name, fn, user_data, ninputs, inputs, max_outputs, true);
}

/* ---- sub-traces (graph_control.c) ------------------------------------------------ */

void tw__subtrace_clear(tw_subtrace *st)
{
    tw__graph_unref(st->g);
    for (int k = 0; k < st->ncaptures; k++)
        tw_tensor_unref(st->captured_tensors[k]);
    free(st->captures);
    free(st->captured_tensors);
    *st = (tw_subtrace){0};
}

/* fn's outputs as the sub-graph's; 0 or -1 (error set). */
static int sub_outputs(tw_tracer *tr, const char *name, int n, tw_tensor **outs, int max_outputs, tw_gref *refs)
{
    if (n < 0)
        return tw_error_set("%s: %s", name, tw_error_pending() ? tw_last_error() : "failed");
    if (n > max_outputs)
        return tw_error_set("%s returned %d outputs; at most %d fit", name, n, max_outputs);
    for (int k = 0; k < n; k++) {
        if (!outs[k])
            return tw_error_set("%s: output %d is NULL: %s", name, k,
                                tw_error_pending() ? tw_last_error() : "no error was set");
        char user[64];
        snprintf(user, sizeof user, "%s's output %d", name, k);
        traced_value *v = use(tr, outs[k], user);
        if (v)
            refs[k] = v->ref;
    }
    return 0;
}

static int run_sub(tw_tracer *tr, const char *name, tw_function_fn fn, void *user_data, int ninputs,
                   tw_tensor *const *args, int max_outputs)
{
    tw_tensor **outs = calloc((size_t)(max_outputs ? max_outputs : 1), sizeof *outs);
    tw_gref *refs = calloc((size_t)(max_outputs ? max_outputs : 1), sizeof *refs);
    int rc = outs && refs ? 0 : tw_error_set("%s: out of memory tracing", name), n = 0;
    tw_tracer *parent = tw__tracer;
    if (rc == 0) {
        tw__tracer = tr;
        tw_scope_begin();
        n = fn(args, ninputs, outs, max_outputs, user_data);
        rc = sub_outputs(tr, name, n, outs, max_outputs, refs);
        tw__tracer = parent;
        tw_scope_end();
    }
    if (rc == 0 && tr->failed)
        rc = tw_error_set("%s: cannot trace: %s", name, tr->reason);
    if (rc == 0)
        rc = tw__graph_set_outputs(tr->g, n, refs) < 0 || tw__graph_optimize(tr->g) < 0 ? -1 : 0;
    free(outs);
    free(refs);
    return rc < 0 ? -1 : n;
}

int tw__trace_sub(tw_subtrace *st, const char *name, tw_function_fn fn, void *user_data, int nfresh, int ninputs,
                  tw_tensor *const *inputs, int max_outputs)
{
    tw_tracer *parent = tw__tracer;
    *st = (tw_subtrace){0};
    tw_tracer tr = {.parent = parent,
                    .sub = st,
                    .scope_base = strlen(tw_name_scope_current()),
                    .shape_only = parent->shape_only};
    tr.g = tw__graph_new(name, nfresh, inputs);
    tw_tensor **fresh = tr.g ? trace_inputs(&tr, nfresh, inputs) : NULL;
    tw_tensor **args = fresh ? calloc((size_t)(ninputs ? ninputs : 1), sizeof *args) : NULL;
    int n = args ? 0 : tw_error_set("%s: out of memory tracing", name);
    for (int i = 0; args && i < ninputs; i++)
        args[i] = i < nfresh ? fresh[i] : inputs[i];
    if (n == 0)
        n = run_sub(&tr, name, fn, user_data, ninputs, args, max_outputs);
    for (int i = 0; fresh && i < nfresh; i++)
        tw_tensor_unref(fresh[i]);
    free(fresh);
    free(args);
    free(tr.values);
    tw_id_map_clear(&tr.ids);
    tw_id_map_clear(&tr.random);
    st->g = tr.g;
    st->noutputs = n;
    if (n < 0) {
        fail(parent, "%s", tw_last_error()); /* the outer function may not look at what tw_cond returned */
        tw__subtrace_clear(st);
        return -1;
    }
    return n;
}

int tw__trace_ref(tw_tensor *t, const char *user, tw_gref *ref)
{
    traced_value *v = use(tw__tracer, t, user);
    if (!v)
        return tw_error_set("%s: cannot trace: %s", user, tw__tracer->reason);
    *ref = v->ref;
    return 0;
}

void tw__trace_fail(const char *reason)
{
    fail(tw__tracer, "%s", reason);
}

int tw__trace_add_node(tw_node_kind kind, const tw_attrs *attrs, tw_device device, int ninputs, const tw_gref *inputs,
                       int noutputs, const tw_gout *outputs, const char *base_name)
{
    return tw__graph_add(tw__tracer->g, kind, NULL, attrs, device, ninputs, inputs, noutputs, outputs,
                         scope_of(tw__tracer), base_name, NULL);
}

int tw__trace_node_outputs(int node, int n, tw_tensor *const *outs)
{
    for (int k = 0; k < n; k++)
        if (!add_value(tw__tracer, outs[k], (tw_gref){node, k}, true))
            return tw_error_set("out of memory tracing");
    return 0;
}

tw_graph *tw__trace_graph(void)
{
    return tw__tracer->g;
}

bool tw__trace_is_shape_only(void)
{
    return tw__tracer->shape_only;
}
