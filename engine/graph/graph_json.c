/* Graphs as JSON (docs/graph_json.md): what the run database stores and the
 * graph view reads. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu_kernels.h"
#include "graph_internal.h"

typedef struct {
    char *data;
    size_t length, capacity;
    bool failed;
} text;

static void put(text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void put(text *t, const char *fmt, ...)
{
    if (t->failed)
        return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        size_t room = t->capacity - t->length;
        int n = vsnprintf(t->data ? t->data + t->length : NULL, room, fmt, ap);
        va_end(ap);
        if (n < 0) {
            t->failed = true;
            return;
        }
        if ((size_t)n < room) {
            t->length += (size_t)n;
            return;
        }
        size_t cap = t->capacity ? t->capacity * 2 : 4096;
        while (cap < t->length + (size_t)n + 1)
            cap *= 2;
        char *data = realloc(t->data, cap);
        if (!data) {
            t->failed = true;
            return;
        }
        t->data = data;
        t->capacity = cap;
    }
}

static void put_string(text *t, const char *s)
{
    put(t, "\"");
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            put(t, "\\%c", c);
        else if (c < 0x20)
            put(t, "\\u%04x", c);
        else
            put(t, "%c", c);
    }
    put(t, "\"");
}

/* JSON has no NaN or infinities: those are written as strings. */
static void put_number(text *t, double v, bool single)
{
    char s[32];
    tw__format_number(v, single, s);
    if (v != v || v - v != 0)
        put_string(t, s);
    else
        put(t, "%s", s);
}

/* A weak scalar (tw_scalar) is marked: it takes its partner's dtype in an
 * op, so a reader must know the dtype written is only its default. */
static void put_desc(text *t, const tw_desc *d, bool weak)
{
    put(t, "{\"dtype\": \"%s\", \"shape\": [", tw_dtype_name(d->dtype));
    for (int i = 0; i < d->ndim; i++)
        put(t, "%s%lld", i ? ", " : "", (long long)d->shape[i]);
    put(t, "]%s}", weak ? ", \"weak\": true" : "");
}

static void put_attrs(text *t, const tw_gnode *n)
{
    put(t, "\"attrs\": {\"ints\": [");
    for (int i = 0; i < n->attrs.ni; i++)
        put(t, "%s%lld", i ? ", " : "", (long long)n->attrs.i[i]);
    put(t, "], \"floats\": [");
    for (int i = 0; i < n->attrs.nf; i++) {
        if (i)
            put(t, ", ");
        put_number(t, n->attrs.f[i], false);
    }
    put(t, "]}");
}

#define JSON_CONSTANT_VALUES 16

static void put_constant(text *t, const tw_tensor *c)
{
    tw_tensor *host = c->numel <= JSON_CONSTANT_VALUES ? tw__to_host(c) : NULL; /* a device's through a copy */
    if (!host)
        return;
    put(t, ", \"value\": [");
    size_t item = tw_dtype_size(c->dtype);
    for (int64_t i = 0; i < c->numel; i++) {
        if (i)
            put(t, ", ");
        put_number(t, twk_load(c->dtype, (const char *)tw__data(host) + i * (int64_t)item), c->dtype == TW_FLOAT32);
    }
    put(t, "]");
    tw_tensor_unref(host);
}

static void put_graph(text *t, const tw_graph *g);

/* A cond's branches or a while's condition and body, each with where its
 * inputs come from, nested whole. */
static void put_subgraphs(text *t, const tw_gnode *n)
{
    put(t, ", \"subgraphs\": [");
    for (int s = 0; s < n->nsubs; s++) {
        put(t, "%s\n    {\"inputs_from\": [", s ? "," : "");
        for (int i = 0; i < n->subs[s].g->ninputs; i++)
            put(t, "%s%d", i ? ", " : "", n->subs[s].map[i]);
        put(t, "], \"graph\": ");
        put_graph(t, n->subs[s].g);
        put(t, "}");
    }
    put(t, "]");
}

static void put_node(text *t, const tw_graph *g, int id)
{
    const tw_gnode *n = &g->nodes[id];
    put(t, "    {\"id\": %d, \"op\": ", id);
    put_string(t, tw_graph_node_op(g, id));
    put(t, ", \"name\": ");
    put_string(t, n->name);
    put(t, ", \"scope\": ");
    put_string(t, n->scope);
    put(t, ", \"inputs\": [");
    for (int i = 0; i < n->ninputs; i++)
        put(t, "%s[%d, %d]", i ? ", " : "", n->inputs[i].node, n->inputs[i].output);
    put(t, "], \"outputs\": [");
    for (int k = 0; k < n->noutputs; k++) {
        if (k)
            put(t, ", ");
        put_desc(t, &n->outputs[k].desc, n->outputs[k].weak);
    }
    put(t, "], ");
    put_attrs(t, n);
    if (n->kind == TW_NODE_VARIABLE) {
        put(t, ", \"variable\": ");
        put_string(t, n->tensor->variable->name);
        put(t, ", \"trainable\": %s", n->tensor->variable->trainable ? "true" : "false");
    } else if (n->kind == TW_NODE_CONSTANT) {
        put_constant(t, n->tensor);
    } else if (n->nsubs) {
        put_subgraphs(t, n);
    }
    put(t, "}");
}

static void put_graph(text *t, const tw_graph *g)
{
    put(t, "{\"format\": \"twb-graph\", \"version\": 1, \"function\": ");
    put_string(t, g->function_name);
    put(t, ",\n  \"inputs\": [");
    for (int i = 0; i < g->ninputs; i++)
        put(t, "%s%d", i ? ", " : "", g->input_nodes[i]);
    put(t, "],\n  \"outputs\": [");
    for (int i = 0; i < g->noutputs; i++)
        put(t, "%s[%d, %d]", i ? ", " : "", g->outputs[i].node, g->outputs[i].output);
    put(t, "],\n  \"variables\": [");
    bool first = true;
    for (int id = 0; id < g->nnodes; id++) {
        const tw_gnode *n = &g->nodes[id];
        if (n->kind != TW_NODE_VARIABLE)
            continue;
        put(t, "%s{\"node\": %d, \"name\": ", first ? "" : ", ", id);
        put_string(t, n->tensor->variable->name);
        put(t, ", \"trainable\": %s, \"output\": ", n->tensor->variable->trainable ? "true" : "false");
        put_desc(t, &n->outputs[0].desc, false);
        put(t, "}");
        first = false;
    }
    put(t, "],\n  \"nodes\": [\n");
    for (int id = 0; id < g->nnodes; id++) {
        put_node(t, g, id);
        put(t, "%s\n", id + 1 < g->nnodes ? "," : "");
    }
    put(t, "  ]}");
}

static char *finish(text *t, const char *what)
{
    if (!t->failed && t->data)
        return t->data;
    free(t->data);
    tw_error_set("%s: out of memory writing JSON", what);
    return NULL;
}

char *tw_graph_json(const tw_graph *g)
{
    if (!g) {
        tw_error_set("graph_json: graph is NULL");
        return NULL;
    }
    text t = {0};
    put_graph(&t, g);
    return finish(&t, "graph_json");
}

char *tw_function_graph_json(const tw_function *f)
{
    if (!f) {
        tw_error_set("function_graph_json: function is NULL");
        return NULL;
    }
    text t = {0};
    put(&t, "{\"function\": ");
    put_string(&t, tw_function_name(f));
    put(&t, ", \"graphs\": [\n");
    int n = tw_function_graph_count(f);
    for (int i = 0; i < n; i++) {
        put_graph(&t, tw_function_graph_at(f, i));
        put(&t, "%s\n", i + 1 < n ? "," : "");
    }
    put(&t, "]}\n");
    return finish(&t, "function_graph_json");
}
