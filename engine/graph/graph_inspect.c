/* The graph inspection API (tw/function.h): what the graph view and the
 * JSON writer read. A node index out of range is the caller's mistake: the
 * call fails with a message instead of reading past the nodes. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu_kernels.h"
#include "graph_internal.h"

static const tw_gnode *node_at(const tw_graph *g, int node, const char *what)
{
    if (!g) {
        tw_error_set("%s: graph is NULL", what);
        return NULL;
    }
    if (node < 0 || node >= g->nnodes) {
        tw_error_set("%s: node %d is out of range (the graph has %d)", what, node, g->nnodes);
        return NULL;
    }
    return &g->nodes[node];
}

static const tw_gout *output_at(const tw_graph *g, int node, int k, const char *what)
{
    const tw_gnode *n = node_at(g, node, what);
    if (n && (k < 0 || k >= n->noutputs)) {
        tw_error_set("%s: node %d has no output %d (it has %d)", what, node, k, n->noutputs);
        return NULL;
    }
    return n ? &n->outputs[k] : NULL;
}

const char *tw_graph_function_name(const tw_graph *g)
{
    return g ? g->function_name : NULL;
}

int tw_graph_node_count(const tw_graph *g)
{
    return g ? g->nnodes : -1;
}

tw_node_kind tw_graph_node_kind(const tw_graph *g, int node)
{
    const tw_gnode *n = node_at(g, node, "graph_node_kind");
    return n ? n->kind : TW_NODE_OP;
}

const char *tw_graph_node_op(const tw_graph *g, int node)
{
    static const char *const source[] = {[TW_NODE_INPUT] = "input", [TW_NODE_CONSTANT] = "constant",
                                         [TW_NODE_VARIABLE] = "variable"};
    const tw_gnode *n = node_at(g, node, "graph_node_op");
    static const char *const control[] = {[TW_NODE_COND] = "cond", [TW_NODE_WHILE] = "while"};
    if (!n)
        return NULL;
    if (n->kind == TW_NODE_COND || n->kind == TW_NODE_WHILE)
        return control[n->kind];
    return n->kind == TW_NODE_OP ? n->op->name : source[n->kind];
}

const char *tw_graph_node_name(const tw_graph *g, int node)
{
    const tw_gnode *n = node_at(g, node, "graph_node_name");
    return n ? n->name : NULL;
}

const char *tw_graph_node_scope(const tw_graph *g, int node)
{
    const tw_gnode *n = node_at(g, node, "graph_node_scope");
    return n ? n->scope : NULL;
}

int tw_graph_node_ninputs(const tw_graph *g, int node)
{
    const tw_gnode *n = node_at(g, node, "graph_node_ninputs");
    return n ? n->ninputs : -1;
}

int tw_graph_node_input(const tw_graph *g, int node, int k, int *output)
{
    const tw_gnode *n = node_at(g, node, "graph_node_input");
    if (n && (k < 0 || k >= n->ninputs))
        return tw_error_set("graph_node_input: node %d has no input %d (it has %d)", node, k, n->ninputs);
    if (!n)
        return -1;
    if (output)
        *output = n->inputs[k].output;
    return n->inputs[k].node;
}

int tw_graph_node_noutputs(const tw_graph *g, int node)
{
    const tw_gnode *n = node_at(g, node, "graph_node_noutputs");
    return n ? n->noutputs : -1;
}

tw_dtype tw_graph_node_output_dtype(const tw_graph *g, int node, int k)
{
    const tw_gout *o = output_at(g, node, k, "graph_node_output_dtype");
    return o ? o->desc.dtype : TW_DTYPE_COUNT;
}

int tw_graph_node_output_shape(const tw_graph *g, int node, int k, const int64_t **shape)
{
    const tw_gout *o = output_at(g, node, k, "graph_node_output_shape");
    if (!o)
        return -1;
    if (shape)
        *shape = o->desc.shape;
    return o->desc.ndim;
}

const tw_tensor *tw_graph_node_tensor(const tw_graph *g, int node)
{
    const tw_gnode *n = node_at(g, node, "graph_node_tensor");
    return n ? n->tensor : NULL;
}

int tw_graph_ninputs(const tw_graph *g)
{
    return g ? g->ninputs : -1;
}

int tw_graph_input_node(const tw_graph *g, int i)
{
    if (!g || i < 0 || i >= g->ninputs)
        return tw_error_set("graph_input_node: input %d is out of range", i);
    return g->input_nodes[i];
}

int tw_graph_noutputs(const tw_graph *g)
{
    return g ? g->noutputs : -1;
}

int tw_graph_output(const tw_graph *g, int i, int *output)
{
    if (!g || i < 0 || i >= g->noutputs)
        return tw_error_set("graph_output: output %d is out of range", i);
    if (output)
        *output = g->outputs[i].output;
    return g->outputs[i].node;
}

/* ---- attributes as text ------------------------------------------------------ */

void tw__format_number(double v, bool single, char out[static 32])
{
    char text[32];
    for (int digits = single ? 6 : 15; digits <= 17; digits++) {
        snprintf(text, sizeof text, "%.*g", digits, v);
        double back = strtod(text, NULL);
        if (single ? (float)back == (float)v : back == v)
            break;
    }
    memcpy(out, text, sizeof text);
}

#define CONSTANT_VALUES_SHOWN 16

static void append(char *buf, size_t size, size_t *used, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static void append(char *buf, size_t size, size_t *used, const char *fmt, ...)
{
    if (*used >= size)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf + *used, size - *used, fmt, ap);
    va_end(ap);
    *used += n > 0 ? (size_t)n : 0;
}

static void op_attrs(const tw_attrs *a, char *buf, size_t size, size_t *used)
{
    if (a->ni > 0) {
        append(buf, size, used, "ints=[");
        for (int i = 0; i < a->ni; i++)
            append(buf, size, used, "%s%lld", i ? ", " : "", (long long)a->i[i]);
        append(buf, size, used, "]");
    }
    if (a->nf > 0) {
        append(buf, size, used, "%sfloats=[", a->ni > 0 ? " " : "");
        for (int i = 0; i < a->nf; i++) {
            char v[32];
            tw__format_number(a->f[i], false, v);
            append(buf, size, used, "%s%s", i ? ", " : "", v);
        }
        append(buf, size, used, "]");
    }
}

/* The values of a small constant, else its shape and dtype. */
static void constant_value(const tw_tensor *t, char *buf, size_t size, size_t *used)
{
    char shape[160];
    tw_shape_str(t->ndim, t->shape, shape, sizeof shape);
    if (t->numel > CONSTANT_VALUES_SHOWN) {
        append(buf, size, used, "value=<%s %s>", tw_dtype_name(t->dtype), shape);
        return;
    }
    tw_tensor *host = tw__to_host(t); /* a device's constants are read through a copy */
    if (!host) {
        append(buf, size, used, "value=<%s %s, unreadable>", tw_dtype_name(t->dtype), shape);
        return;
    }
    append(buf, size, used, "value=%s", t->ndim > 0 ? "[" : "");
    size_t item = tw_dtype_size(t->dtype);
    for (int64_t i = 0; i < t->numel; i++) {
        char v[32];
        tw__format_number(twk_load(t->dtype, (const char *)tw__data(host) + i * (int64_t)item), t->dtype == TW_FLOAT32,
                          v);
        append(buf, size, used, "%s%s", i ? ", " : "", v);
    }
    tw_tensor_unref(host);
    append(buf, size, used, "%s", t->ndim > 0 ? "]" : "");
    if (t->ndim > 1)
        append(buf, size, used, " shape=%s", shape);
}

char *tw_graph_node_attrs(const tw_graph *g, int node)
{
    const tw_gnode *n = node_at(g, node, "graph_node_attrs");
    if (!n)
        return NULL;
    size_t size = 2048, used = 0;
    char *buf = malloc(size);
    if (!buf) {
        tw_error_set("graph_node_attrs: out of memory");
        return NULL;
    }
    buf[0] = '\0';
    switch (n->kind) {
    case TW_NODE_OP:
    case TW_NODE_COND:
    case TW_NODE_WHILE: op_attrs(&n->attrs, buf, size, &used); break;
    case TW_NODE_CONSTANT: constant_value(n->tensor, buf, size, &used); break;
    case TW_NODE_VARIABLE:
        append(buf, size, &used, "trainable=%s", n->tensor->variable->trainable ? "true" : "false");
        break;
    case TW_NODE_INPUT:
        for (int i = 0; i < g->ninputs; i++)
            if (g->input_nodes[i] == node)
                append(buf, size, &used, "index=%d", i);
        break;
    }
    return buf;
}

int tw_graph_node_nsubgraphs(const tw_graph *g, int node)
{
    const tw_gnode *n = node_at(g, node, "graph_node_nsubgraphs");
    return n ? n->nsubs : -1;
}

const tw_graph *tw_graph_node_subgraph(const tw_graph *g, int node, int k, const int **inputs_from)
{
    const tw_gnode *n = node_at(g, node, "graph_node_subgraph");
    if (n && (k < 0 || k >= n->nsubs)) {
        tw_error_set("graph_node_subgraph: node %d has %d sub-graphs, not %d", node, n->nsubs, k + 1);
        n = NULL;
    }
    if (inputs_from)
        *inputs_from = n ? n->subs[k].map : NULL;
    return n ? n->subs[k].g : NULL;
}
