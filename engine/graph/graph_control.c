/* Control flow (tw/function.h): tw_cond and tw_while_loop, eagerly and
 * traced, and the cond and while nodes they leave in a graph.
 *
 * Traced, each branch (or the loop's condition and body) is traced into a
 * sub-graph (tw__trace_sub) whose extra inputs are the outer values it
 * captured; the node's inputs are the fixed ones (cond: the predicate;
 * while: the loop variables' first values) followed by every sub-graph's
 * captures, one input per distinct outer value. The node then runs once,
 * there and then, so the rest of the trace sees real values (except in a
 * shape-only trace, which computes no dynamic values: see trace.c). */
#include <stdlib.h>
#include <string.h>

#include "graph_internal.h"

#define NAME_TRUE "cond's true branch"
#define NAME_FALSE "cond's false branch"
#define NAME_CONDITION "while_loop's condition"
#define NAME_BODY "while_loop's body"

bool tw__truth(const tw_tensor *t)
{
    return tw_tensor_item(t) != 0;
}

void tw__gnode_set_subs(tw_gnode *node, int n, tw_gsub *subs)
{
    node->nsubs = n;
    node->subs = subs;
}

static const char *desc_text(const tw_desc *d, char *buf, size_t size)
{
    char shape[160];
    snprintf(buf, size, "%s %s", tw_dtype_name(d->dtype), tw_shape_str(d->ndim, d->shape, shape, sizeof shape));
    return buf;
}

static bool same_desc(const tw_desc *a, const tw_desc *b)
{
    return a->dtype == b->dtype && a->ndim == b->ndim &&
           memcmp(a->shape, b->shape, sizeof(int64_t) * (size_t)a->ndim) == 0;
}

static const tw_desc *out_desc(const tw_graph *g, tw_gref r)
{
    return &g->nodes[r.node].outputs[r.output].desc;
}

/* ---- running ---------------------------------------------------------------------- */

/* Run one sub-graph; its input i is vars[map[i]] for a loop variable, else ins[map[i]]. */
static int run_sub(const tw_gsub *s, tw_tensor *const *ins, tw_tensor *const *vars, int nvars, tw_tensor **outs)
{
    tw_tensor *stack[TW_MAX_INPUTS] = {0};
    int n = s->g->ninputs;
    tw_tensor **args = n <= TW_MAX_INPUTS ? stack : malloc(sizeof *args * (size_t)n);
    if (!args)
        return tw_error_set("function '%s': out of memory", s->g->function_name);
    for (int i = 0; i < n; i++)
        args[i] = s->map[i] < nvars ? vars[s->map[i]] : ins[s->map[i]];
    int rc = tw__graph_run(s->g, args, outs);
    if (args != stack)
        free(args);
    return rc;
}

static int run_while(const tw_gnode *node, tw_tensor *const *ins, tw_tensor **outs)
{
    int64_t max_iterations = node->attrs.i[0];
    int nvars = (int)node->attrs.i[1], rc = 0;
    tw_tensor **next = calloc((size_t)(nvars ? nvars : 1), sizeof *next);
    if (!next)
        return tw_error_set("%s: out of memory", node->name);
    for (int k = 0; k < nvars; k++)
        outs[k] = tw_tensor_ref(ins[k]);
    for (int64_t it = 0; max_iterations <= 0 || it < max_iterations; it++) {
        tw_tensor *go = NULL;
        if ((rc = run_sub(&node->subs[0], ins, outs, nvars, &go)) < 0)
            break;
        bool more = tw__truth(go);
        tw_tensor_unref(go);
        if (!more || (rc = run_sub(&node->subs[1], ins, outs, nvars, next)) < 0)
            break;
        for (int k = 0; k < nvars; k++) {
            tw_tensor_unref(outs[k]);
            outs[k] = next[k];
        }
    }
    free(next);
    for (int k = 0; rc < 0 && k < nvars; k++) {
        tw_tensor_unref(outs[k]);
        outs[k] = NULL;
    }
    return rc;
}

int tw__control_run(const tw_gnode *node, tw_tensor *const *ins, tw_tensor **outs)
{
    if (node->kind == TW_NODE_COND)
        return run_sub(&node->subs[tw__truth(ins[0]) ? 0 : 1], ins, NULL, 0, outs);
    return run_while(node, ins, outs);
}

/* ---- consistency (traced and imported nodes alike) -------------------------------- */

static int check_map(const tw_graph *g, const tw_gnode *node, const tw_gsub *s, const char *role)
{
    for (int i = 0; i < s->g->ninputs; i++) {
        int from = s->map[i];
        if (from < 0 || from >= node->ninputs)
            return tw_error_set("%s: the %s's input %d comes from input %d of the node, which has %d", node->name,
                                role, i, from, node->ninputs);
        const tw_desc *want = &s->g->nodes[s->g->input_nodes[i]].outputs[0].desc;
        const tw_desc *got = out_desc(g, node->inputs[from]);
        char a[200], b[200];
        if (!same_desc(want, got))
            return tw_error_set("%s: the %s's input %d is %s, fed %s", node->name, role, i,
                                desc_text(want, a, sizeof a), desc_text(got, b, sizeof b));
    }
    return 0;
}

/* The sub-graph's outputs are the node's: each branch's, or the body's. */
static int check_outputs(const tw_gnode *node, const tw_gsub *s, const char *role, const char *what)
{
    if (s->g->noutputs != node->noutputs)
        return tw_error_set("%s: the %s returns %d outputs, %s %d", node->name, role, s->g->noutputs, what,
                            node->noutputs);
    for (int k = 0; k < node->noutputs; k++) {
        const tw_desc *got = out_desc(s->g, s->g->outputs[k]), *want = &node->outputs[k].desc;
        char a[200], b[200];
        if (!same_desc(got, want))
            return node->kind == TW_NODE_WHILE
                       ? tw_error_set("%s: the body's output %d is %s but loop variable %d is %s; loop variables "
                                      "keep their dtype and shape across iterations",
                                      node->name, k, desc_text(got, a, sizeof a), k, desc_text(want, b, sizeof b))
                       : tw_error_set("%s: output %d is %s in the %s and %s in the other branch", node->name, k,
                                      desc_text(got, a, sizeof a), role, desc_text(want, b, sizeof b));
    }
    return 0;
}

static int check_while(const tw_graph *g, const tw_gnode *node)
{
    int64_t nvars = node->attrs.ni == 2 ? node->attrs.i[1] : -1;
    if (nvars < 0 || nvars > node->ninputs || nvars != node->noutputs)
        return tw_error_set("%s: a while node's attrs are [max_iterations, loop variables], and it has as many "
                            "outputs as loop variables and at least as many inputs",
                            node->name);
    for (int k = 0; k < nvars; k++) {
        char a[200], b[200];
        if (!same_desc(out_desc(g, node->inputs[k]), &node->outputs[k].desc))
            return tw_error_set("%s: loop variable %d starts as %s but the loop gives %s", node->name, k,
                                desc_text(out_desc(g, node->inputs[k]), a, sizeof a),
                                desc_text(&node->outputs[k].desc, b, sizeof b));
    }
    const tw_graph *c = node->subs[0].g;
    if (c->noutputs != 1 || tw__numel(out_desc(c, c->outputs[0])->ndim, out_desc(c, c->outputs[0])->shape) != 1)
        return tw_error_set("%s: the loop's condition must return one output of one element", node->name);
    return check_outputs(node, &node->subs[1], "body", "for loop variables:");
}

int tw__control_check(const tw_graph *g, const tw_gnode *node)
{
    static const char *const roles[2][2] = {{"true branch", "false branch"}, {"condition", "body"}};
    bool loop = node->kind == TW_NODE_WHILE;
    if (node->nsubs != 2)
        return tw_error_set("%s: a %s node has two sub-graphs", node->name, loop ? "while" : "cond");
    for (int s = 0; s < 2; s++)
        if (check_map(g, node, &node->subs[s], roles[loop][s]) < 0)
            return -1;
    if (loop)
        return check_while(g, node);
    if (node->ninputs < 1 || tw__numel(out_desc(g, node->inputs[0])->ndim, out_desc(g, node->inputs[0])->shape) != 1)
        return tw_error_set("%s: a cond node's first input is its predicate, one element", node->name);
    for (int s = 0; s < 2; s++)
        if (check_outputs(node, &node->subs[s], roles[0][s], "the node") < 0)
            return -1;
    return 0;
}

/* ---- tracing ------------------------------------------------------------------------ */

typedef struct {
    int n, capacity;
    tw_gref *refs;
    tw_tensor **tensors; /* borrowed */
} node_inputs;

/* Index of the outer value among the node's inputs from start on (a while
 * node's loop variables change: a capture is never one of them), added
 * when new. */
static int input_index(node_inputs *in, int start, tw_gref r, tw_tensor *t)
{
    for (int j = start; j < in->n; j++)
        if (in->refs[j].node == r.node && in->refs[j].output == r.output)
            return j;
    in->refs[in->n] = r;
    in->tensors[in->n] = t;
    return in->n++;
}

/* The subs' maps: fresh input i is node input i, captures follow. */
static tw_gsub *make_subs(node_inputs *in, tw_subtrace *st, int nsubs, int nfresh)
{
    tw_gsub *subs = calloc((size_t)nsubs, sizeof *subs);
    for (int s = 0; subs && s < nsubs; s++) {
        subs[s].map = malloc(sizeof *subs[s].map * (size_t)(st[s].g->ninputs ? st[s].g->ninputs : 1));
        if (!subs[s].map) {
            for (int k = 0; k < s; k++)
                free(subs[k].map);
            free(subs);
            return NULL;
        }
        subs[s].g = tw__graph_ref(st[s].g);
        for (int i = 0; i < nfresh; i++)
            subs[s].map[i] = i;
        for (int k = 0; k < st[s].ncaptures; k++)
            subs[s].map[nfresh + k] = input_index(in, nfresh, st[s].captures[k], st[s].captured_tensors[k]);
    }
    return subs;
}

/* Fresh headers over the node's values, so the trace tells them apart from
 * the tensors they may share storage with; handed to the open scope. */
static int trace_results(int node, int n, tw_tensor **vals, tw_tensor **outputs)
{
    int rc = 0;
    for (int k = 0; k < n; k++) {
        tw_tensor *v = vals[k];
        outputs[k] = rc == 0 ? tw__tensor_view(v, v->ndim, v->shape, v->strides, v->offset) : NULL;
        if (outputs[k])
            outputs[k]->weak = v->weak;
        rc = outputs[k] ? rc : -1;
        tw_tensor_unref(v);
    }
    if (rc == 0)
        rc = tw__trace_node_outputs(node, n, outputs);
    for (int k = 0; k < n; k++)
        tw__track(outputs[k]);
    return rc;
}

/* The values of a new node's outputs: the node run once on the trace's
 * values, or, in a shape-only trace, tensors left uncomputed (the outputs
 * are dynamic, which no C code may read) of the shapes the trace fixed: a
 * cond's branches agree on them and a loop keeps its variables' (checked). */
static int control_values(const tw_gnode *node, tw_tensor *const *ins, tw_device device, tw_tensor **vals)
{
    if (!tw__trace_is_shape_only()) {
        tw_tracer *tracer = tw__trace_suspend();
        int rc = tw__control_run(node, ins, vals);
        tw__trace_resume(tracer);
        return rc;
    }
    for (int k = 0; k < node->noutputs; k++) {
        const tw_gout *o = &node->outputs[k];
        vals[k] = tw__tensor_new(o->desc.dtype, o->desc.ndim, o->desc.shape, device);
        if (!vals[k]) {
            for (int j = 0; j < k; j++)
                tw_tensor_unref(vals[j]);
            return -1;
        }
        vals[k]->weak = o->weak;
    }
    return 0;
}

/* Add the node (inputs: the fixed ones, then the subs' captures), check it
 * and give it values (control_values). */
static int add_control(tw_node_kind kind, const tw_attrs *attrs, node_inputs *in, tw_subtrace *st, int nfresh,
                       int noutputs, const tw_gout *gouts, tw_tensor **outputs)
{
    tw_gsub *subs = make_subs(in, st, 2, nfresh);
    if (!subs)
        return tw_error_set("%s: out of memory tracing", kind == TW_NODE_COND ? "cond" : "while_loop");
    tw_device device = in->n ? in->tensors[0]->storage->device : tw_default_device();
    int node = tw__trace_add_node(kind, attrs, device, in->n, in->refs, noutputs, gouts,
                                  kind == TW_NODE_COND ? "cond" : "while");
    tw_graph *g = tw__trace_graph();
    if (node < 0) {
        for (int s = 0; s < 2; s++) {
            tw__graph_unref(subs[s].g);
            free(subs[s].map);
        }
        free(subs);
        return -1;
    }
    tw__gnode_set_subs(&g->nodes[node], 2, subs);
    if (tw__control_check(g, &g->nodes[node]) < 0)
        return -1;
    tw_tensor *vals[TW_MAX_OUTPUTS];
    return control_values(&g->nodes[node], in->tensors, device, vals) < 0 ? -1
                                                                         : trace_results(node, noutputs, vals, outputs);
}

static int alloc_inputs(node_inputs *in, int nfixed, const tw_subtrace *st)
{
    in->capacity = nfixed + st[0].ncaptures + st[1].ncaptures;
    in->refs = malloc(sizeof *in->refs * (size_t)(in->capacity ? in->capacity : 1));
    in->tensors = malloc(sizeof *in->tensors * (size_t)(in->capacity ? in->capacity : 1));
    return in->refs && in->tensors ? 0 : tw_error_set("out of memory tracing");
}

/* The outputs of a sub-graph as node outputs. */
static void sub_gouts(const tw_graph *g, tw_gout *gouts)
{
    for (int k = 0; k < g->noutputs; k++)
        gouts[k] = g->nodes[g->outputs[k].node].outputs[g->outputs[k].output];
}

/* The end of a traced cond or while: a failure fails the whole trace; the
 * two sub-traces and the node's inputs are freed either way. */
static int traced_end(int rc, tw_subtrace *st, node_inputs *in, int noutputs)
{
    if (rc < 0 && tw_error_pending())
        tw__trace_fail(tw_last_error());
    tw__subtrace_clear(&st[0]);
    tw__subtrace_clear(&st[1]);
    free(in->refs);
    free(in->tensors);
    return rc < 0 ? -1 : noutputs;
}

static int traced_cond(tw_tensor *pred, tw_function_fn true_fn, tw_function_fn false_fn, void *user_data, int ninputs,
                       tw_tensor *const *inputs, tw_tensor **outputs, int max_outputs)
{
    tw_gref pred_ref;
    if (max_outputs > TW_MAX_OUTPUTS)
        max_outputs = TW_MAX_OUTPUTS;
    if (tw__trace_ref(pred, "cond's predicate", &pred_ref) < 0)
        return -1;
    tw_subtrace st[2] = {0};
    node_inputs in = {0};
    int rc = tw__trace_sub(&st[0], NAME_TRUE, true_fn, user_data, 0, ninputs, inputs, max_outputs) < 0 ||
                     tw__trace_sub(&st[1], NAME_FALSE, false_fn, user_data, 0, ninputs, inputs, max_outputs) < 0
                 ? -1
                 : alloc_inputs(&in, 1, st);
    tw_gout gouts[TW_MAX_OUTPUTS];
    int n = st[0].noutputs;
    if (rc == 0) {
        input_index(&in, 0, pred_ref, pred);
        sub_gouts(st[0].g, gouts);
        rc = add_control(TW_NODE_COND, NULL, &in, st, 0, n, gouts, outputs);
    }
    return traced_end(rc, st, &in, n);
}

static int traced_while(tw_function_fn cond_fn, tw_function_fn body_fn, void *user_data, int nvars,
                        tw_tensor *const *vars, tw_tensor **outputs, int64_t max_iterations)
{
    tw_subtrace st[2] = {0};
    node_inputs in = {0};
    int rc = tw__trace_sub(&st[0], NAME_CONDITION, cond_fn, user_data, nvars, nvars, vars, 1) < 0 ||
                     tw__trace_sub(&st[1], NAME_BODY, body_fn, user_data, nvars, nvars, vars, nvars) < 0
                 ? -1
                 : alloc_inputs(&in, nvars, st);
    tw_gout gouts[TW_MAX_OUTPUTS];
    for (int k = 0; rc == 0 && k < nvars; k++) {
        tw_gref r;
        rc = tw__trace_ref(vars[k], "a loop variable", &r);
        in.refs[in.n] = r; /* each variable its own input, even when two are one tensor */
        in.tensors[in.n++] = vars[k];
        gouts[k] = (tw_gout){.desc = {.dtype = vars[k]->dtype, .ndim = vars[k]->ndim}, .weak = vars[k]->weak};
        memcpy(gouts[k].desc.shape, vars[k]->shape, sizeof(int64_t) * (size_t)vars[k]->ndim);
    }
    tw_attrs attrs = tw__attrs_none();
    attrs.ni = 2;
    attrs.i[0] = max_iterations > 0 ? max_iterations : 0;
    attrs.i[1] = nvars;
    if (rc == 0)
        rc = add_control(TW_NODE_WHILE, &attrs, &in, st, nvars, nvars, gouts, outputs);
    return traced_end(rc, st, &in, nvars);
}

/* ---- eagerly ------------------------------------------------------------------------ */

static int check_pred(const tw_tensor *pred, const char *what)
{
    if (!pred)
        return tw_error_pending() ? -1 : tw_error_set("%s: the predicate is NULL", what);
    if (pred->numel != 1)
        return tw_error_set("%s: the predicate has %lld elements; it must have one", what, (long long)pred->numel);
    return 0;
}

static int check_tensors(const char *what, int n, tw_tensor *const *ts, const char *which)
{
    if (n < 0 || (n > 0 && !ts))
        return tw_error_set("%s: %d %s and %s", what, n, which, ts ? "an array" : "no array");
    for (int i = 0; i < n; i++)
        if (!ts[i])
            return tw_error_pending() ? -1 : tw_error_set("%s: %s %d is NULL", what, which, i);
    return 0;
}

/* A branch's or body's result: n outputs, none NULL. */
static int check_result(const char *name, int n, int max_outputs, tw_tensor *const *outs)
{
    if (n < 0)
        return tw_error_set("%s: %s", name, tw_error_pending() ? tw_last_error() : "failed");
    if (n > max_outputs)
        return tw_error_set("%s returned %d outputs; at most %d fit", name, n, max_outputs);
    for (int k = 0; k < n; k++)
        if (!outs[k])
            return tw_error_set("%s: output %d is NULL: %s", name, k,
                                tw_error_pending() ? tw_last_error() : "no error was set");
    return 0;
}

int tw_cond(tw_tensor *pred, tw_function_fn true_fn, tw_function_fn false_fn, void *user_data, int ninputs,
            tw_tensor *const *inputs, tw_tensor **outputs, int max_outputs)
{
    for (int k = 0; outputs && k < max_outputs; k++)
        outputs[k] = NULL;
    if (check_pred(pred, "cond") < 0 || check_tensors("cond", ninputs, inputs, "inputs") < 0)
        return -1;
    if (!true_fn || !false_fn)
        return tw_error_set("cond: the %s branch is NULL", true_fn ? "false" : "true");
    if (max_outputs < 0 || (max_outputs > 0 && !outputs))
        return tw_error_set("cond: outputs must hold max_outputs (%d) tensors", max_outputs);
    if (tw__tracer)
        return traced_cond(pred, true_fn, false_fn, user_data, ninputs, inputs, outputs, max_outputs);
    bool taken = tw__truth(pred);
    int n = (taken ? true_fn : false_fn)(inputs, ninputs, outputs, max_outputs, user_data);
    return check_result(taken ? NAME_TRUE : NAME_FALSE, n, max_outputs, outputs) < 0 ? -1 : n;
}

/* The body's outputs keep the loop variables' dtypes and shapes. */
static int check_body(int n, tw_tensor *const *next, tw_tensor *const *vars, int nvars)
{
    if (check_result(NAME_BODY, n, nvars, next) < 0)
        return -1;
    if (n != nvars)
        return tw_error_set("%s returned %d outputs for %d loop variables", NAME_BODY, n, nvars);
    for (int k = 0; k < nvars; k++) {
        const tw_tensor *a = next[k], *b = vars[k];
        if (a->dtype == b->dtype && a->ndim == b->ndim && !memcmp(a->shape, b->shape, sizeof(int64_t) * (size_t)a->ndim))
            continue;
        char sa[160], sb[160];
        return tw_error_set("while_loop: the body's output %d is %s %s but loop variable %d is %s %s; loop variables "
                            "keep their dtype and shape across iterations",
                            k, tw_dtype_name(a->dtype), tw_shape_str(a->ndim, a->shape, sa, sizeof sa), k,
                            tw_dtype_name(b->dtype), tw_shape_str(b->ndim, b->shape, sb, sizeof sb));
    }
    return 0;
}

/* One iteration in a scope of its own: *more says whether the body ran;
 * vars then hold the new values (references). */
static int eager_step(tw_function_fn cond_fn, tw_function_fn body_fn, void *user_data, int nvars, tw_tensor **vars,
                      tw_tensor **next, bool *more)
{
    tw_scope_begin();
    tw_tensor *go = NULL;
    int n = cond_fn(vars, nvars, &go, 1, user_data);
    int rc = check_result(NAME_CONDITION, n, 1, &go) < 0 ? -1
             : n != 1                                    ? tw_error_set("%s returned no output", NAME_CONDITION)
                                                         : check_pred(go, NAME_CONDITION);
    *more = rc == 0 && tw__truth(go);
    if (*more) {
        for (int k = 0; k < nvars; k++)
            next[k] = NULL;
        rc = check_body(body_fn(vars, nvars, next, nvars, user_data), next, vars, nvars);
    }
    for (int k = 0; rc == 0 && *more && k < nvars; k++) {
        tw_tensor_unref(vars[k]);
        vars[k] = tw_tensor_ref(next[k]);
    }
    tw_scope_end();
    return rc;
}

int tw_while_loop(tw_function_fn cond_fn, tw_function_fn body_fn, void *user_data, int nvars,
                  tw_tensor *const *loop_vars, tw_tensor **outputs, int64_t max_iterations)
{
    for (int k = 0; outputs && k < nvars; k++)
        outputs[k] = NULL;
    if (check_tensors("while_loop", nvars, loop_vars, "loop variables") < 0)
        return -1;
    if (!cond_fn || !body_fn)
        return tw_error_set("while_loop: the %s is NULL", cond_fn ? "body" : "condition");
    if (nvars > 0 && !outputs)
        return tw_error_set("while_loop: outputs must hold the %d loop variables", nvars);
    if (nvars > TW_MAX_OUTPUTS)
        return tw_error_set("while_loop: %d loop variables; at most %d", nvars, TW_MAX_OUTPUTS);
    if (tw__tracer)
        return traced_while(cond_fn, body_fn, user_data, nvars, loop_vars, outputs, max_iterations);
    tw_tensor *vars[TW_MAX_OUTPUTS], *next[TW_MAX_OUTPUTS];
    for (int k = 0; k < nvars; k++)
        vars[k] = tw_tensor_ref(loop_vars[k]);
    bool more = true;
    int rc = 0;
    for (int64_t it = 0; rc == 0 && more && (max_iterations <= 0 || it < max_iterations); it++)
        rc = eager_step(cond_fn, body_fn, user_data, nvars, vars, next, &more);
    for (int k = 0; k < nvars; k++) {
        if (rc == 0)
            outputs[k] = tw__track(vars[k]);
        else
            tw_tensor_unref(vars[k]);
    }
    return rc < 0 ? -1 : nvars;
}
