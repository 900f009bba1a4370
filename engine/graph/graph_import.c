/* Reading a graph back from its JSON (docs/graph_json.md) into a runnable
 * tw_graph, and running a graph on its own (tw/function.h).
 *
 * Nothing in the text is trusted. Every field is checked for its type and
 * range, every input must name an earlier node's output, and each op node
 * goes through the op's own shape inference on stand-in inputs (headers
 * with the promised dtypes and shapes, no data): the graph that runs is one
 * dispatch would have accepted op by op, and the shapes the JSON promises
 * must be the ones inference gives. Nodes are added with the tracer's own
 * tw__graph_add and laid out with tw__graph_finalize. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph_internal.h"
#include "json_value.h"

/* Largest element count a promised shape may have (its bytes must fit). */
#define MAX_NUMEL (INT64_MAX / 16)

typedef struct {
    tw_graph_tensor_fn lookup;
    void *user;
    const tw_json *nodes;
    tw_graph *g;
    tw_tensor (*stand_ins)[TW_MAX_OUTPUTS]; /* per node: its outputs' dtype and shape */
    bool *listed;                              /* per node: named in "inputs" */
    tw_storage nowhere;                        /* the stand-ins' storage: a device, no data */
} importer;

/* What one node's JSON says, checked for form. */
typedef struct {
    int id;
    const char *op, *name, *scope;
    int ninputs, noutputs;
    tw_gref *inputs;
    tw_gout outputs[TW_MAX_OUTPUTS];
    tw_attrs attrs;
} node_text;

static int node_error(const importer *im, int id, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int node_error(const importer *im, int id, const char *fmt, ...)
{
    char what[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    const tw_json *name = tw__json_get(&im->nodes->items[id], "name");
    if (name && name->kind == TW_JSON_STRING)
        return tw_error_set("graph JSON: node %d '%s': %s", id, name->string, what);
    return tw_error_set("graph JSON: node %d: %s", id, what);
}

static bool whole(const tw_json *v, int64_t lo, int64_t hi, int64_t *out)
{
    if (!v || v->kind != TW_JSON_NUMBER || !v->integral || v->integer < lo || v->integer > hi)
        return false;
    *out = v->integer;
    return true;
}

static const char *string_member(const tw_json *o, const char *key)
{
    const tw_json *v = tw__json_get(o, key);
    return v && v->kind == TW_JSON_STRING ? v->string : NULL;
}

static const tw_json *array_member(const tw_json *o, const char *key)
{
    const tw_json *v = tw__json_get(o, key);
    return v && v->kind == TW_JSON_ARRAY ? v : NULL;
}

static bool dtype_named(const char *name, tw_dtype *dtype)
{
    for (int d = 0; name && d < TW_DTYPE_COUNT; d++)
        if (strcmp(tw_dtype_name((tw_dtype)d), name) == 0) {
            *dtype = (tw_dtype)d;
            return true;
        }
    return false;
}

static const char *desc_str(const tw_desc *d, char *buf, size_t size)
{
    char shape[160];
    snprintf(buf, size, "%s %s", tw_dtype_name(d->dtype), tw_shape_str(d->ndim, d->shape, shape, sizeof shape));
    return buf;
}

/* {"dtype": "float32", "shape": [5, 4]}; false with *why set. */
static bool read_desc(const tw_json *o, tw_desc *d, const char **why)
{
    const tw_json *shape = array_member(o, "shape");
    *why = "an output needs \"dtype\" (a dtype name such as \"float32\") and \"shape\" (an array)";
    if (!dtype_named(string_member(o, "dtype"), &d->dtype) || !shape)
        return false;
    *why = "a shape has more than 8 dimensions";
    if (shape->count > TW_MAX_DIMS)
        return false;
    d->ndim = shape->count;
    int64_t numel = 1;
    for (int i = 0; i < d->ndim; i++) {
        *why = "a shape's sizes must be whole numbers from 0, with fewer elements than memory can hold";
        if (!whole(&shape->items[i], 0, MAX_NUMEL, &d->shape[i]) || (d->shape[i] && numel > MAX_NUMEL / d->shape[i]))
            return false;
        numel *= d->shape[i];
    }
    return true;
}

static void set_stand_in(importer *im, tw_tensor *t, const tw_desc *d, bool weak)
{
    memset(t, 0, sizeof *t);
    atomic_init(&t->refcount, 1);
    t->dtype = d->dtype;
    t->ndim = d->ndim;
    memcpy(t->shape, d->shape, sizeof(int64_t) * (size_t)d->ndim);
    tw__contiguous_strides(d->ndim, d->shape, t->strides);
    t->numel = tw__numel(d->ndim, d->shape);
    t->storage = &im->nowhere;
    t->weak = weak;
}

/* ---- one node's fields ---------------------------------------------------- */

static int read_inputs(const importer *im, const tw_json *n, node_text *t)
{
    const tw_json *inputs = array_member(n, "inputs");
    if (!inputs)
        return node_error(im, t->id, "\"inputs\" must be an array of [node id, output index]");
    t->ninputs = inputs->count;
    t->inputs = malloc(sizeof *t->inputs * (size_t)(t->ninputs ? t->ninputs : 1));
    if (!t->inputs)
        return node_error(im, t->id, "out of memory");
    for (int i = 0; i < t->ninputs; i++) {
        const tw_json *pair = &inputs->items[i];
        int64_t node, output;
        if (pair->kind != TW_JSON_ARRAY || pair->count != 2 || !whole(&pair->items[0], 0, INT32_MAX, &node) ||
            !whole(&pair->items[1], 0, TW_MAX_OUTPUTS, &output))
            return node_error(im, t->id, "input %d must be [node id, output index]", i);
        if (node >= t->id)
            return node_error(im, t->id, "input %d reads node %lld, which does not come before it", i,
                              (long long)node);
        if (output >= im->g->nodes[node].noutputs)
            return node_error(im, t->id, "input %d reads output %lld of node %lld, which has %d", i,
                              (long long)output, (long long)node, im->g->nodes[node].noutputs);
        t->inputs[i] = (tw_gref){(int)node, (int)output};
    }
    return 0;
}

static int read_outputs(const importer *im, const tw_json *n, node_text *t)
{
    const tw_json *outputs = array_member(n, "outputs");
    if (!outputs || outputs->count > TW_MAX_OUTPUTS)
        return node_error(im, t->id, "\"outputs\" must be an array of at most %d outputs", TW_MAX_OUTPUTS);
    t->noutputs = outputs->count;
    for (int k = 0; k < t->noutputs; k++) {
        const char *why;
        t->outputs[k] = (tw_gout){0};
        if (!read_desc(&outputs->items[k], &t->outputs[k].desc, &why))
            return node_error(im, t->id, "output %d: %s", k, why);
        const tw_json *weak = tw__json_get(&outputs->items[k], "weak");
        if (weak && (weak->kind != TW_JSON_BOOL || t->outputs[k].desc.ndim != 0))
            return node_error(im, t->id, "output %d: \"weak\" marks a scalar (true or false)", k);
        t->outputs[k].weak = weak && weak->boolean;
    }
    return 0;
}

/* JSON has no NaN or infinities: graph_json.c writes them as strings. */
static bool read_float(const tw_json *v, double *out)
{
    if (v->kind == TW_JSON_NUMBER) {
        *out = v->number;
        return true;
    }
    const char *s = v->kind == TW_JSON_STRING ? v->string : "";
    *out = !strcmp(s, "nan") ? NAN : !strcmp(s, "inf") ? INFINITY : -INFINITY;
    return !strcmp(s, "nan") || !strcmp(s, "inf") || !strcmp(s, "-inf");
}

static int read_attrs(const importer *im, const tw_json *n, node_text *t)
{
    const tw_json *attrs = tw__json_get(n, "attrs");
    const tw_json *ints = array_member(attrs, "ints"), *floats = array_member(attrs, "floats");
    if (!ints || !floats)
        return node_error(im, t->id, "\"attrs\" must hold \"ints\" and \"floats\" arrays");
    if (ints->count > TW_MAX_ATTR_INTS || floats->count > TW_MAX_ATTR_FLOATS)
        return node_error(im, t->id, "an op takes at most %d ints and %d floats as attributes", TW_MAX_ATTR_INTS,
                          TW_MAX_ATTR_FLOATS);
    t->attrs = tw__attrs_none();
    t->attrs.ni = ints->count;
    t->attrs.nf = floats->count;
    for (int i = 0; i < ints->count; i++)
        if (!whole(&ints->items[i], INT64_MIN, INT64_MAX, &t->attrs.i[i]))
            return node_error(im, t->id, "attrs.ints[%d] is not a whole number", i);
    for (int i = 0; i < floats->count; i++)
        if (!read_float(&floats->items[i], &t->attrs.f[i]))
            return node_error(im, t->id, "attrs.floats[%d] is not a number", i);
    return 0;
}

static int read_node(const importer *im, int id, node_text *t)
{
    const tw_json *n = &im->nodes->items[id];
    int64_t written_id;
    *t = (node_text){.id = id};
    if (!whole(tw__json_get(n, "id"), id, id, &written_id))
        return node_error(im, id, "\"id\" must be the node's position in \"nodes\" (%d)", id);
    t->op = string_member(n, "op");
    t->name = string_member(n, "name");
    t->scope = string_member(n, "scope");
    if (!t->op || !t->name || !t->scope)
        return node_error(im, id, "a node needs \"op\", \"name\" and \"scope\" strings");
    if (read_inputs(im, n, t) < 0 || read_outputs(im, n, t) < 0 || read_attrs(im, n, t) < 0)
        return -1;
    return 0;
}

/* ---- adding nodes -------------------------------------------------------------- */

static tw_tensor *value_of(importer *im, tw_gref r)
{
    tw_tensor *held = im->g->nodes[r.node].tensor;
    return held ? held : &im->stand_ins[r.node][r.output];
}

/* Add the node under its own name (tw__graph_add rebuilds scope/base), and
 * refuse a name used before. */
static int add_node(importer *im, const node_text *t, tw_node_kind kind, const tw_op_def *op, tw_device device,
                    tw_tensor *tensor)
{
    size_t scope_len = strlen(t->scope);
    const char *base = t->name;
    if (kind != TW_NODE_VARIABLE && scope_len) {
        if (strncmp(t->name, t->scope, scope_len) != 0 || t->name[scope_len] != '/')
            return node_error(im, t->id, "the name does not start with the node's scope '%s'", t->scope);
        base = t->name + scope_len + 1;
    }
    int index = tw__graph_add(im->g, kind, op, &t->attrs, device, t->ninputs, t->inputs, t->noutputs, t->outputs,
                              t->scope, base, tensor);
    if (index < 0)
        return node_error(im, t->id, "%s", tw_last_error());
    if (strcmp(im->g->nodes[index].name, t->name) != 0)
        return node_error(im, t->id, "an earlier node has the same name");
    for (int k = 0; k < t->noutputs; k++)
        set_stand_in(im, &im->stand_ins[index][k], &t->outputs[k].desc, t->outputs[k].weak);
    return 0;
}

static int check_source_form(const importer *im, const node_text *t)
{
    if (t->ninputs != 0 || t->noutputs != 1)
        return node_error(im, t->id, "a '%s' node has no inputs and one output", t->op);
    return 0;
}

static int check_tensor(const importer *im, const node_text *t, const tw_tensor *x)
{
    const tw_desc *d = &t->outputs[0].desc;
    if (x->dtype == d->dtype && x->ndim == d->ndim && !memcmp(x->shape, d->shape, sizeof(int64_t) * (size_t)x->ndim))
        return 0;
    char want[200], got[200];
    tw_desc have = {.dtype = x->dtype, .ndim = x->ndim};
    memcpy(have.shape, x->shape, sizeof(int64_t) * (size_t)x->ndim);
    return node_error(im, t->id, "the graph needs %s but the tensor given for it is %s", desc_str(d, want, sizeof want),
                      desc_str(&have, got, sizeof got));
}

/* The lookup's tensor for a source node; NULL with the error set. Call
 * inside a scope: what the lookup makes belongs to it (tw/function.h). */
static tw_tensor *find_tensor(importer *im, const node_text *t, tw_node_kind kind)
{
    unsigned before = tw__error_count();
    tw_tensor *x = im->lookup ? im->lookup(t->name, kind, im->user) : NULL;
    if (!x) {
        bool said = tw__error_count() != before;
        node_error(im, t->id, "no tensor for this %s%s%s", t->op, said ? ": " : "", said ? tw_last_error() : "");
        return NULL;
    }
    return check_tensor(im, t, x) < 0 ? NULL : x;
}

/* Constants are copied, packed: the graph must not see later writes. */
static int add_constant(importer *im, const node_text *t)
{
    tw_scope_begin();
    tw_tensor *x = find_tensor(im, t, TW_NODE_CONSTANT);
    tw_tensor *packed = x ? tw__tensor_new(x->dtype, x->ndim, x->shape, x->storage->device) : NULL;
    if (packed) {
        tw__copy_into(packed, x);
        packed->weak = t->outputs[0].weak;
    }
    int rc = packed ? add_node(im, t, TW_NODE_CONSTANT, NULL, x->storage->device, packed) : -1;
    tw_tensor_unref(packed);
    tw_scope_end();
    return rc;
}

static int add_variable(importer *im, const node_text *t, const tw_json *n)
{
    const char *name = string_member(n, "variable");
    const tw_json *trainable = tw__json_get(n, "trainable");
    if (!name || !trainable || trainable->kind != TW_JSON_BOOL)
        return node_error(im, t->id, "a variable node needs \"variable\" (its name) and \"trainable\" (true or false)");
    tw_scope_begin(); /* the graph takes its own reference to the variable */
    tw_tensor *x = find_tensor(im, t, TW_NODE_VARIABLE);
    tw_tensor *v = !x || x->variable ? x : tw_variable(x, name, trainable->boolean);
    int rc = v ? add_node(im, t, TW_NODE_VARIABLE, NULL, v->storage->device, v) : -1;
    if (x && !v)
        node_error(im, t->id, "%s", tw_last_error());
    tw_scope_end();
    return rc;
}

static int add_input(importer *im, const node_text *t)
{
    if (!im->listed[t->id])
        return node_error(im, t->id, "an input node that the graph's \"inputs\" does not list");
    return add_node(im, t, TW_NODE_INPUT, NULL, im->nowhere.device, NULL);
}

static int check_devices(importer *im, const node_text *t, tw_tensor *const *ins, tw_device *device)
{
    *device = t->ninputs ? ins[0]->storage->device : im->nowhere.device;
    for (int i = 1; i < t->ninputs; i++)
        if (ins[i]->storage->device.kind != device->kind || ins[i]->storage->device.index != device->index)
            return node_error(im, t->id, "its inputs are on different devices");
    return 0;
}

/* The op's shape inference must accept the inputs and attributes and give
 * exactly the outputs the JSON promises. */
static int check_inference(importer *im, const node_text *t, const tw_op_def *op, tw_tensor *const *ins)
{
    tw_op_call call = {op, t->ninputs, ins, &t->attrs, NULL};
    tw_desc got[TW_MAX_OUTPUTS];
    if (op->infer(&call, got) < 0)
        return node_error(im, t->id, "%s", tw_last_error());
    for (int k = 0; k < t->noutputs; k++) {
        const tw_desc *want = &t->outputs[k].desc;
        if (got[k].dtype == want->dtype && got[k].ndim == want->ndim &&
            !memcmp(got[k].shape, want->shape, sizeof(int64_t) * (size_t)want->ndim))
            continue;
        char a[200], b[200];
        return node_error(im, t->id, "output %d is promised as %s but %s gives %s for these inputs", k,
                          desc_str(want, a, sizeof a), op->name, desc_str(&got[k], b, sizeof b));
    }
    return 0;
}

static int add_op(importer *im, const node_text *t)
{
    const tw_op_def *op = tw_op_lookup(t->op);
    if (!op || op->ctx_ref) /* custom gradients carry C state no file can hold */
        return node_error(im, t->id, "unknown op '%s'", t->op);
    if (t->noutputs != op->noutputs)
        return node_error(im, t->id, "'%s' has %d outputs, the node lists %d", op->name, op->noutputs, t->noutputs);
    /* View ops whose attributes are the output shape read ni of them as dimensions. */
    if ((!strcmp(op->name, "reshape") || !strcmp(op->name, "broadcast_to")) && t->attrs.ni > TW_MAX_DIMS)
        return node_error(im, t->id, "'%s' to more than %d dimensions", op->name, TW_MAX_DIMS);
    bool variadic = op->ninputs == TW_OP_VARIADIC;
    if (variadic ? t->ninputs < 1 : t->ninputs != op->ninputs) {
        char count[16] = "one or more";
        if (!variadic)
            snprintf(count, sizeof count, "%d", op->ninputs);
        return node_error(im, t->id, "'%s' takes %s input%s; the node lists %d", op->name, count,
                          op->ninputs == 1 ? "" : "s", t->ninputs);
    }
    tw_tensor *stack[TW_MAX_INPUTS];
    tw_tensor **ins = t->ninputs <= TW_MAX_INPUTS ? stack : malloc(sizeof *ins * (size_t)t->ninputs);
    if (!ins)
        return node_error(im, t->id, "out of memory");
    for (int i = 0; i < t->ninputs; i++)
        ins[i] = value_of(im, t->inputs[i]);
    tw_device device;
    int rc = check_devices(im, t, ins, &device);
    if (rc == 0 && !op->view && !tw__kernel_for(op, device)) {
        rc = node_error(im, t->id, "%s", tw_last_error());
    }
    if (rc == 0)
        rc = check_inference(im, t, op, ins);
    if (rc == 0)
        rc = add_node(im, t, TW_NODE_OP, op, device, NULL);
    if (ins != stack)
        free(ins);
    return rc;
}

static tw_graph *import_root(const tw_json *root, tw_graph_tensor_fn lookup, void *user_data);

/* One entry of "subgraphs": {"inputs_from": [...], "graph": {...}}. */
static int read_subgraph(const importer *im, const node_text *t, const tw_json *entry, int k, tw_gsub *sub)
{
    const tw_json *from = array_member(entry, "inputs_from"), *graph = tw__json_get(entry, "graph");
    if (!from || !graph || graph->kind != TW_JSON_OBJECT)
        return node_error(im, t->id, "subgraphs[%d] needs \"inputs_from\" (an array) and \"graph\" (a graph)", k);
    sub->g = import_root(graph, im->lookup, im->user);
    if (!sub->g)
        return node_error(im, t->id, "subgraphs[%d]: %s", k, tw_last_error());
    if (from->count != sub->g->ninputs)
        return node_error(im, t->id, "subgraphs[%d] takes %d inputs; \"inputs_from\" lists %d", k, sub->g->ninputs,
                          from->count);
    sub->map = malloc(sizeof *sub->map * (size_t)(from->count ? from->count : 1));
    if (!sub->map)
        return node_error(im, t->id, "out of memory");
    for (int i = 0; i < from->count; i++) {
        int64_t index;
        if (!whole(&from->items[i], 0, t->ninputs - 1, &index))
            return node_error(im, t->id, "subgraphs[%d].inputs_from[%d] is not one of the node's %d inputs", k, i,
                              t->ninputs);
        sub->map[i] = (int)index;
    }
    return 0;
}

/* A cond or while node: its sub-graphs read back whole, then checked
 * against the node's inputs and outputs as a traced one is. */
static int add_control(importer *im, const node_text *t, const tw_json *n, tw_node_kind kind)
{
    const tw_json *subs = array_member(n, "subgraphs");
    /* A traced loop may be unbounded (tw_while_loop with max_iterations 0);
     * one read from a file must not hang the program that runs it. */
    if (kind == TW_NODE_WHILE && t->attrs.ni >= 1 && t->attrs.i[0] <= 0)
        return node_error(im, t->id,
                          "a while node read from a file needs max_iterations of at least 1 (attrs.ints[0] is "
                          "%lld): an unbounded loop could run forever",
                          (long long)t->attrs.i[0]);
    if (!subs || subs->count != 2)
        return node_error(im, t->id, "a '%s' node needs \"subgraphs\", an array of two", t->op);
    tw_gsub *gs = calloc(2, sizeof *gs);
    int rc = gs ? 0 : node_error(im, t->id, "out of memory");
    for (int s = 0; s < 2 && rc == 0; s++)
        rc = read_subgraph(im, t, &subs->items[s], s, &gs[s]);
    tw_device device = t->ninputs ? value_of(im, t->inputs[0])->storage->device : im->nowhere.device;
    if (rc == 0)
        rc = add_node(im, t, kind, NULL, device, NULL);
    if (rc == 0) {
        tw_gnode *node = &im->g->nodes[im->g->nnodes - 1];
        tw__gnode_set_subs(node, 2, gs);
        gs = NULL;
        if (tw__control_check(im->g, node) < 0)
            rc = node_error(im, t->id, "%s", tw_last_error());
    }
    for (int s = 0; gs && s < 2; s++) {
        tw__graph_unref(gs[s].g);
        free(gs[s].map);
    }
    free(gs);
    return rc;
}

static int import_node(importer *im, int id)
{
    node_text t;
    int rc = read_node(im, id, &t);
    const tw_json *n = &im->nodes->items[id];
    bool source = !strcmp(t.op ? t.op : "", "input") || !strcmp(t.op ? t.op : "", "constant") ||
                  !strcmp(t.op ? t.op : "", "variable");
    if (rc == 0 && source)
        rc = check_source_form(im, &t);
    if (rc == 0)
        rc = !strcmp(t.op, "input")      ? add_input(im, &t)
             : !strcmp(t.op, "constant") ? add_constant(im, &t)
             : !strcmp(t.op, "variable") ? add_variable(im, &t, n)
             : !strcmp(t.op, "cond")     ? add_control(im, &t, n, TW_NODE_COND)
             : !strcmp(t.op, "while")    ? add_control(im, &t, n, TW_NODE_WHILE)
                                         : add_op(im, &t);
    free(t.inputs);
    return rc;
}

/* ---- the whole graph ------------------------------------------------------------ */

/* The function's inputs: input nodes, each listed once; their stand_ins
 * give the signature. */
static int read_signature(importer *im, const tw_json *root, tw_tensor ***sig, int *ninputs)
{
    const tw_json *inputs = array_member(root, "inputs");
    if (!inputs)
        return tw_error_set("graph JSON: \"inputs\" must be an array of node ids");
    *ninputs = inputs->count;
    *sig = calloc((size_t)(inputs->count ? inputs->count : 1), sizeof **sig);
    if (!*sig)
        return tw_error_set("graph JSON: out of memory");
    for (int i = 0; i < inputs->count; i++) {
        int64_t id;
        if (!whole(&inputs->items[i], 0, im->nodes->count - 1, &id))
            return tw_error_set("graph JSON: inputs[%d] is not a node id", i);
        const tw_json *node = &im->nodes->items[id];
        const tw_json *outputs = array_member(node, "outputs");
        const char *op = string_member(node, "op"), *why = "an input node has one output";
        tw_desc d = {0};
        if (!op || strcmp(op, "input") != 0)
            return node_error(im, (int)id, "inputs[%d] names it, but it is not an \"input\" node", i);
        if (im->listed[id])
            return node_error(im, (int)id, "\"inputs\" lists it twice");
        if (!outputs || outputs->count != 1 || !read_desc(&outputs->items[0], &d, &why))
            return node_error(im, (int)id, "%s", why);
        im->listed[id] = true;
        set_stand_in(im, &im->stand_ins[id][0], &d, false);
        (*sig)[i] = &im->stand_ins[id][0];
    }
    return 0;
}

static int read_outputs_list(importer *im, const tw_json *root)
{
    const tw_json *outputs = array_member(root, "outputs");
    if (!outputs)
        return tw_error_set("graph JSON: \"outputs\" must be an array of [node id, output index]");
    tw_gref *refs = calloc((size_t)(outputs->count ? outputs->count : 1), sizeof *refs);
    if (!refs)
        return tw_error_set("graph JSON: out of memory");
    int rc = 0;
    for (int i = 0; i < outputs->count && rc == 0; i++) {
        const tw_json *pair = &outputs->items[i];
        int64_t node, output;
        if (pair->kind != TW_JSON_ARRAY || pair->count != 2 || !whole(&pair->items[0], 0, im->g->nnodes - 1, &node) ||
            !whole(&pair->items[1], 0, im->g->nodes[node].noutputs - 1, &output))
            rc = tw_error_set("graph JSON: outputs[%d] is not [node id, output index] of an existing output", i);
        else
            refs[i] = (tw_gref){(int)node, (int)output};
    }
    if (rc == 0)
        rc = tw__graph_set_outputs(im->g, outputs->count, refs);
    free(refs);
    return rc;
}

static int check_header(const tw_json *root)
{
    const char *format = string_member(root, "format");
    int64_t version;
    if (!format || strcmp(format, "twb-graph") != 0)
        return tw_error_set("graph JSON: \"format\" is not \"twb-graph\"");
    if (!whole(tw__json_get(root, "version"), 1, 1, &version))
        return tw_error_set("graph JSON: version is not 1 (the only version this reader knows)");
    if (!string_member(root, "function"))
        return tw_error_set("graph JSON: \"function\" (the function's name) is missing");
    if (!array_member(root, "nodes"))
        return tw_error_set("graph JSON: \"nodes\" must be an array");
    return 0;
}

static tw_graph *import_graph(importer *im, const tw_json *root)
{
    tw_tensor **sig = NULL;
    int ninputs = 0;
    int rc = read_signature(im, root, &sig, &ninputs);
    im->g = rc == 0 ? tw__graph_new(string_member(root, "function"), ninputs, sig) : NULL;
    free(sig);
    if (!im->g)
        return NULL;
    for (int id = 0; id < im->nodes->count && rc == 0; id++)
        rc = import_node(im, id);
    for (int i = 0; i < ninputs && rc == 0; i++)
        im->g->input_nodes[i] = (int)tw__json_get(root, "inputs")->items[i].integer;
    if (rc == 0)
        rc = read_outputs_list(im, root);
    if (rc == 0)
        rc = tw__graph_finalize(im->g);
    if (rc < 0) {
        tw__graph_unref(im->g);
        return NULL;
    }
    return im->g;
}

tw_graph *tw_graph_from_json(const char *json, tw_graph_tensor_fn lookup, void *user_data)
{
    if (!json) {
        tw_error_set("graph_from_json: json is NULL");
        return NULL;
    }
    char why[200];
    tw_json *root = tw__json_parse(json, why, sizeof why);
    if (!root) {
        tw_error_set("graph JSON: %s", why);
        return NULL;
    }
    tw_graph *g = import_root(root, lookup, user_data);
    tw__json_free(root);
    return g;
}

/* A graph from its parsed JSON (the whole text's, or a sub-graph's). */
static tw_graph *import_root(const tw_json *root, tw_graph_tensor_fn lookup, void *user_data)
{
    tw_graph *g = NULL;
    importer im = {.lookup = lookup, .user = user_data, .nodes = array_member(root, "nodes")};
    im.nowhere.device = TW_CPU;
    if (check_header(root) == 0) {
        size_t n = (size_t)(im.nodes->count ? im.nodes->count : 1);
        im.stand_ins = calloc(n, sizeof *im.stand_ins);
        im.listed = calloc(n, sizeof *im.listed);
        g = im.stand_ins && im.listed ? import_graph(&im, root) : NULL;
        if (!im.stand_ins || !im.listed)
            tw_error_set("graph JSON: out of memory");
    }
    free(im.stand_ins);
    free(im.listed);
    return g;
}

/* ---- graphs on their own ------------------------------------------------------------ */

const tw_graph *tw_graph_ref(const tw_graph *g)
{
    return g ? tw__graph_ref((tw_graph *)g) : NULL;
}

void tw_graph_unref(const tw_graph *g)
{
    tw__graph_unref((tw_graph *)g);
}

static int check_input(const tw_graph *g, int i, const tw_tensor *x)
{
    const tw_gnode *node = &g->nodes[g->input_nodes[i]];
    const tw_desc *want = &node->outputs[0].desc;
    char a[200], b[200];
    tw_desc got = {.dtype = x->dtype, .ndim = x->ndim};
    memcpy(got.shape, x->shape, sizeof(int64_t) * (size_t)x->ndim);
    if (x->dtype != want->dtype || x->ndim != want->ndim ||
        memcmp(x->shape, want->shape, sizeof(int64_t) * (size_t)x->ndim) != 0)
        return tw_error_set("graph '%s': input %d is %s; the graph takes %s (it was traced for that shape)",
                            g->function_name, i, desc_str(&got, a, sizeof a), desc_str(want, b, sizeof b));
    tw_device d = x->storage->device;
    if (d.kind != node->device.kind || d.index != node->device.index)
        return tw_error_set("graph '%s': input %d is on %s; the graph runs on %s", g->function_name, i,
                            tw_device_name(d, a, sizeof a), tw_device_name(node->device, b, sizeof b));
    return 0;
}

static int check_run(const tw_graph *g, int ninputs, tw_tensor *const *inputs, tw_tensor **outputs, int max_outputs)
{
    if (!g)
        return tw_error_set("graph_run: graph is NULL");
    if (tw__tracer)
        return tw_error_set("graph '%s': a graph cannot run inside a trace (call its function instead)",
                            g->function_name);
    if (ninputs != g->ninputs || (ninputs && !inputs))
        return tw_error_set("graph '%s' takes %d input%s, got %d", g->function_name, g->ninputs,
                            g->ninputs == 1 ? "" : "s", ninputs);
    if (max_outputs < g->noutputs || (g->noutputs && !outputs))
        return tw_error_set("graph '%s' has %d outputs; the array has room for %d", g->function_name, g->noutputs,
                            max_outputs);
    if (tw__check_inputs("graph_run", ninputs, inputs) < 0)
        return -1;
    for (int i = 0; i < ninputs; i++)
        if (check_input(g, i, inputs[i]) < 0)
            return -1;
    return 0;
}

int tw_graph_run(const tw_graph *g, int ninputs, tw_tensor *const *inputs, tw_tensor **outputs, int max_outputs)
{
    for (int k = 0; outputs && k < max_outputs; k++)
        outputs[k] = NULL;
    if (check_run(g, ninputs, inputs, outputs, max_outputs) < 0)
        return -1;
    tw_tensor **packed = calloc((size_t)(ninputs ? ninputs : 1), sizeof *packed);
    if (!packed)
        return tw_error_set("graph '%s': out of memory", g->function_name);
    int rc = 0;
    for (int i = 0; i < ninputs && rc == 0; i++)
        rc = (packed[i] = tw__contiguous_raw(inputs[i])) ? 0 : -1;
    if (rc == 0)
        rc = tw__graph_run((tw_graph *)g, packed, outputs);
    for (int i = 0; i < ninputs; i++)
        tw_tensor_unref(packed[i]);
    free(packed);
    for (int k = 0; k < g->noutputs && rc == 0; k++)
        tw__track(outputs[k]);
    return rc < 0 ? -1 : g->noutputs;
}
