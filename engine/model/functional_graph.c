/* The calling thread's symbolic graph: tw_input and tw_apply record layer
 * calls on symbolic tensors (tw_node) with their inferred shapes, as Keras'
 * KerasTensors record them, until tw_nodes_clear. Layers without a name are
 * named here, when first called, as Keras names them at creation:
 * "dense", "dense_1", ... counted per thread since the last clear. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "functional_internal.h"

typedef struct {
    char base[64];
    int next;
} name_count;

static __thread struct {
    tw_symbolic_call **calls;
    int64_t n, capacity;
    name_count *names;
    int nnames;
} graph;

int64_t tw_nodes_mark(void)
{
    return graph.n;
}

void tw_nodes_release(int64_t mark)
{
    for (int64_t i = mark < 0 ? 0 : mark; i < graph.n; i++) {
        tw_symbolic_call *c = graph.calls[i];
        tw_layer_unref(c->layer);
        free(c->inputs);
        free(c->outputs);
        free(c);
    }
    if (mark >= 0 && mark < graph.n)
        graph.n = mark;
}

void tw_nodes_clear(void)
{
    tw_nodes_release(0);
    free(graph.calls);
    free(graph.names);
    memset(&graph, 0, sizeof graph);
}

/* A thread that recorded calls frees its graph when it exits: readers of
 * model files mark and release, which keeps the arrays (and the name
 * counts) for the thread's next model, and the window reads models on
 * threads that end (10,000 monkey actions under ASan leaked them). */
static pthread_key_t graph_key;
static pthread_once_t graph_key_once = PTHREAD_ONCE_INIT;

static void graph_thread_exit(void *unused)
{
    (void)unused;
    tw_nodes_clear();
}

static void graph_key_create(void)
{
    pthread_key_create(&graph_key, graph_thread_exit);
}

/* Called before the thread's first allocation: the key's value must be
 * non-NULL for its destructor to run. */
static void graph_freed_at_thread_exit(void)
{
    pthread_once(&graph_key_once, graph_key_create);
    pthread_setspecific(graph_key, &graph);
}

static void auto_name(tw_layer *layer)
{
    if (layer->name[0])
        return;
    char base[64];
    if (!strcmp(layer->klass->name, "InputLayer"))
        snprintf(base, sizeof base, "input_layer");
    else
        tw__snake_case(layer->klass->name, base, sizeof base);
    int i = 0;
    while (i < graph.nnames && strcmp(graph.names[i].base, base))
        i++;
    if (i == graph.nnames) {
        if (!graph.names)
            graph_freed_at_thread_exit();
        graph.names = realloc(graph.names, sizeof *graph.names * (size_t)(graph.nnames + 1));
        snprintf(graph.names[i].base, sizeof graph.names[i].base, "%s", base);
        graph.names[i].next = 0;
        graph.nnames++;
    }
    int k = graph.names[i].next++;
    if (k)
        snprintf(layer->name, sizeof layer->name, "%.50s_%d", base, k);
    else
        snprintf(layer->name, sizeof layer->name, "%s", base);
}

/* The weights of a call must be those of the layer's earlier calls (or of
 * its build): a shared Dense called on 16 features after 32 cannot be. */
static int check_shared(tw_layer *layer, const tw_shape *inputs, const tw_weight_spec *specs, int nspecs)
{
    const tw_weight_spec *had = NULL;
    int nhad = 0;
    tw_weight_spec earlier[TW_MAX_LAYER_WEIGHTS];
    tw_shape first[TW_MAX_LAYER_IO];
    int nfirst = 0;
    if (layer->built) {
        had = layer->specs;
        nhad = layer->nweights;
    } else {
        for (int64_t i = 0; i < graph.n && !had; i++) {
            tw_symbolic_call *c = graph.calls[i];
            if (c->layer != layer)
                continue;
            tw_shape outs[TW_MAX_LAYER_IO];
            int nouts;
            nfirst = c->ninputs;
            for (int k = 0; k < nfirst; k++)
                first[k] = c->inputs[k]->shape;
            if (tw__shapes_unknown_to(layer, first, nfirst))
                continue; /* a call on an unknown shape fixes no weights */
            if (tw__layer_class_infer(layer, first, nfirst, outs, &nouts, earlier, &nhad))
                return -1;
            had = earlier;
        }
        if (!had)
            return 0;
    }
    char a[96], b[96], in[96];
    for (int i = 0; i < nspecs && i < nhad; i++)
        if (specs[i].shape.ndim != had[i].shape.ndim ||
            memcmp(specs[i].shape.dims, had[i].shape.dims, sizeof(int64_t) * (size_t)specs[i].shape.ndim))
            return TW_LAYER_ERROR(layer, "is shared, and input %s needs its weight %s to be %s, but it is %s",
                                  tw_shape_format(&inputs[0], in, sizeof in), specs[i].name,
                                  tw_shape_format(&specs[i].shape, a, sizeof a),
                                  tw_shape_format(&had[i].shape, b, sizeof b));
    if (nspecs != nhad)
        return TW_LAYER_ERROR(layer, "is shared, and input %s needs %d weights where it has %d",
                              tw_shape_format(&inputs[0], in, sizeof in), nspecs, nhad);
    return 0;
}

static tw_symbolic_call *record(tw_layer *layer, int ninputs, tw_node *const *inputs, const tw_shape *outs,
                                int nouts)
{
    tw_symbolic_call *c = calloc(1, sizeof *c);
    c->layer = layer;
    c->seq = graph.n;
    c->ninputs = ninputs;
    c->noutputs = nouts;
    c->inputs = malloc(sizeof *c->inputs * (size_t)(ninputs ? ninputs : 1));
    if (ninputs)
        memcpy(c->inputs, inputs, sizeof *inputs * (size_t)ninputs);
    c->outputs = calloc((size_t)nouts, sizeof *c->outputs);
    for (int i = 0; i < nouts; i++)
        c->outputs[i] = (tw_node){c, i, outs[i]};
    if (graph.n == graph.capacity) {
        if (!graph.calls)
            graph_freed_at_thread_exit();
        graph.capacity = graph.capacity ? 2 * graph.capacity : 64;
        graph.calls = realloc(graph.calls, sizeof *graph.calls * (size_t)graph.capacity);
    }
    graph.calls[graph.n++] = c;
    return c;
}

tw_node *tw_input(const char *name, int ndim, const int64_t *dims)
{
    if (ndim < 0 || ndim >= TW_MAX_DIMS) {
        tw_error_set("Input: a shape has 0 to %d axes besides the batch, got %d", TW_MAX_DIMS - 1, ndim);
        return NULL;
    }
    tw_shape shape = {ndim + 1, {-1}};
    memcpy(shape.dims + 1, dims, sizeof(int64_t) * (size_t)ndim);
    tw_layer *layer = tw_layer_new("InputLayer", name);
    if (!layer)
        return NULL;
    if (tw_layer_set_input_shape(layer, &shape)) {
        tw_layer_unref(layer);
        return NULL;
    }
    return tw_input_from_layer(layer);
}

tw_node *tw_input_from_layer(tw_layer *layer)
{
    if (!layer)
        return NULL;
    const tw_shape *shape = tw_layer_input_shape(layer);
    if (strcmp(layer->klass->name, "InputLayer") || !shape) {
        TW_LAYER_ERROR(layer, "%s", shape ? "is not an InputLayer" : "has no input shape (batch_input_shape)");
        tw_layer_unref(layer);
        return NULL;
    }
    auto_name(layer);
    return &record(layer, 0, NULL, shape, 1)->outputs[0];
}

int tw_apply_multi(tw_layer *layer, int ninputs, tw_node *const *inputs, tw_node **outputs)
{
    if (!layer)
        return -1;
    int rc = 0;
    if (ninputs < 1 || ninputs > TW_MAX_LAYER_IO)
        rc = TW_LAYER_ERROR(layer, "takes 1 to %d inputs, got %d", TW_MAX_LAYER_IO, ninputs);
    for (int i = 0; !rc && i < ninputs; i++)
        if (!inputs[i])
            rc = -1; /* an earlier call failed: its message stays */
    if (!rc && !strcmp(layer->klass->name, "InputLayer"))
        rc = TW_LAYER_ERROR(layer, "an InputLayer is made with tw_input, not called");
    if (rc) {
        tw_layer_unref(layer);
        return -1;
    }
    auto_name(layer);
    tw_shape in[TW_MAX_LAYER_IO], out[TW_MAX_LAYER_IO];
    for (int i = 0; i < ninputs; i++)
        in[i] = inputs[i]->shape;
    int nout = 0;
    tw_weight_spec specs[TW_MAX_LAYER_WEIGHTS];
    int nspecs = 0;
    /* On an unknown shape the weights are unknown too: nothing to check. */
    if (tw_layer_infer_n(layer, in, ninputs, out, &nout, NULL, NULL) ||
        (!layer->nchildren && !tw__shapes_unknown_to(layer, in, ninputs) && (tw__layer_class_infer(layer, in, ninputs, out, &nout, specs, &nspecs) ||
                               check_shared(layer, in, specs, nspecs)))) {
        tw_layer_unref(layer);
        return -1;
    }
    /* A layer called again is held once per call: each record owns one. */
    tw_symbolic_call *c = record(layer, ninputs, inputs, out, nout);
    for (int i = 0; i < nout; i++)
        outputs[i] = &c->outputs[i];
    return nout;
}

tw_node *tw_apply_n(tw_layer *layer, int ninputs, tw_node *const *inputs)
{
    tw_node *outs[TW_MAX_LAYER_IO];
    int n = tw_apply_multi(layer, ninputs, inputs, outs);
    return n > 0 ? outs[0] : NULL;
}

tw_node *tw_apply(tw_layer *layer, tw_node *x)
{
    return tw_apply_n(layer, 1, &x);
}

const tw_shape *tw_node_shape(const tw_node *node)
{
    return node ? &node->shape : NULL;
}

tw_layer *tw_node_layer(const tw_node *node)
{
    return node ? node->call->layer : NULL;
}
