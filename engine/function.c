/* tw_function (tw/function.h): a C function over tensors with a cache of
 * graphs, one per input signature, traced on first use. The cache is
 * shared by threads (a lock around lookups and inserts; each run holds a
 * reference to its graph, so an eviction cannot free it mid-run). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "graph/graph_internal.h"

/* Outputs a traced function may return. */
#define MAX_OUTPUTS 64

struct tw_function {
    char *name;
    tw_function_fn fn;
    void *user_data;
    pthread_mutex_t lock;
    tw_graph *graphs[TW_FUNCTION_MAX_GRAPHS]; /* oldest trace first */
    uint64_t last_used[TW_FUNCTION_MAX_GRAPHS];
    int ngraphs;
    uint64_t clock;
    int traces;
};

tw_function *tw_function_new(const char *name, tw_function_fn fn, void *user_data)
{
    if (!fn) {
        tw_error_set("function_new: fn is NULL");
        return NULL;
    }
    tw_function *f = calloc(1, sizeof *f);
    if (f)
        f->name = strdup(name ? name : "function");
    if (!f || !f->name) {
        free(f);
        tw_error_set("function_new: out of memory");
        return NULL;
    }
    f->fn = fn;
    f->user_data = user_data;
    pthread_mutex_init(&f->lock, NULL);
    return f;
}

void tw_function_free(tw_function *f)
{
    if (!f)
        return;
    for (int i = 0; i < f->ngraphs; i++)
        tw__graph_unref(f->graphs[i]);
    pthread_mutex_destroy(&f->lock);
    free(f->name);
    free(f);
}

const char *tw_function_name(const tw_function *f)
{
    return f ? f->name : NULL;
}

int tw_function_trace_count(const tw_function *f)
{
    return f ? f->traces : 0;
}

int tw_function_graph_count(const tw_function *f)
{
    return f ? f->ngraphs : 0;
}

const tw_graph *tw_function_graph_at(const tw_function *f, int i)
{
    if (!f || i < 0 || i >= f->ngraphs) {
        tw_error_set("function_graph_at: graph %d is out of range", i);
        return NULL;
    }
    return f->graphs[i];
}

/* ---- the cache ------------------------------------------------------------------ */

/* A reference to the cached graph for this signature, or NULL. */
static tw_graph *lookup(tw_function *f, int ninputs, tw_tensor *const *inputs)
{
    tw_graph *g = NULL;
    pthread_mutex_lock(&f->lock);
    for (int i = 0; i < f->ngraphs && !g; i++) {
        if (tw__graph_matches(f->graphs[i], ninputs, inputs)) {
            g = tw__graph_ref(f->graphs[i]);
            f->last_used[i] = ++f->clock;
        }
    }
    pthread_mutex_unlock(&f->lock);
    return g;
}

/* Cache a new graph, evicting the least recently used when full. */
static void insert(tw_function *f, tw_graph *g)
{
    pthread_mutex_lock(&f->lock);
    if (f->ngraphs == TW_FUNCTION_MAX_GRAPHS) {
        int victim = 0;
        for (int i = 1; i < f->ngraphs; i++)
            if (f->last_used[i] < f->last_used[victim])
                victim = i;
        tw__graph_unref(f->graphs[victim]);
        memmove(&f->graphs[victim], &f->graphs[victim + 1], sizeof *f->graphs * (size_t)(f->ngraphs - victim - 1));
        memmove(&f->last_used[victim], &f->last_used[victim + 1],
                sizeof *f->last_used * (size_t)(f->ngraphs - victim - 1));
        f->ngraphs--;
    }
    f->graphs[f->ngraphs] = tw__graph_ref(g);
    f->last_used[f->ngraphs++] = ++f->clock;
    f->traces++;
    pthread_mutex_unlock(&f->lock);
}

static int check_call(const tw_function *f, int ninputs, tw_tensor *const *inputs, const char *what)
{
    if (!f)
        return tw_error_set("%s: function is NULL", what);
    if (ninputs < 0 || (ninputs > 0 && !inputs))
        return tw_error_set("function '%s': %d inputs and %s", f->name, ninputs, inputs ? "an array" : "no array");
    for (int i = 0; i < ninputs; i++) /* keep the message of what produced the NULL */
        if (!inputs[i])
            return tw_error_pending() ? -1 : tw_error_set("function '%s': input %d is NULL", f->name, i);
    return 0;
}

/* The graph for the inputs' signature (a reference), tracing when new
 * (shape_only: a trace that computes no dynamic values, trace.c). */
static tw_graph *graph_for(tw_function *f, int ninputs, tw_tensor *const *inputs, bool shape_only)
{
    tw_graph *g = lookup(f, ninputs, inputs);
    if (g)
        return g;
    g = shape_only ? tw__trace_shapes(f->name, f->fn, f->user_data, ninputs, inputs, MAX_OUTPUTS)
                   : tw__trace(f->name, f->fn, f->user_data, ninputs, inputs, MAX_OUTPUTS);
    if (g && tw__graph_optimize(g) < 0) {
        tw__graph_unref(g);
        return NULL;
    }
    if (g)
        insert(f, g);
    return g;
}

static const tw_graph *get_graph(tw_function *f, int ninputs, tw_tensor *const *inputs, bool shape_only)
{
    if (check_call(f, ninputs, inputs, shape_only ? "function_get_graph_shapes" : "function_get_graph") < 0)
        return NULL;
    tw_graph *g = graph_for(f, ninputs, inputs, shape_only);
    tw__graph_unref(g); /* the cache keeps it */
    return g;
}

const tw_graph *tw_function_get_graph(tw_function *f, int ninputs, tw_tensor *const *inputs)
{
    return get_graph(f, ninputs, inputs, false);
}

const tw_graph *tw_function_get_graph_shapes(tw_function *f, int ninputs, tw_tensor *const *inputs)
{
    return get_graph(f, ninputs, inputs, true);
}

/* ---- calls ---------------------------------------------------------------------- */

/* Pack the inputs into new references: a graph is traced and run on packed
 * tensors. The copy goes through dispatch so a tape sees it. */
static int pack_inputs(int ninputs, tw_tensor *const *inputs, tw_tensor **packed)
{
    tw_scope_begin();
    int failed = 0;
    for (int i = 0; i < ninputs; i++) {
        tw_tensor *x = inputs[i];
        packed[i] = tw_tensor_ref(tw_tensor_is_contiguous(x) ? x : tw_contiguous(x));
        failed |= !packed[i];
    }
    tw_scope_end();
    return failed ? -1 : 0;
}

static int run(tw_function *f, tw_tensor *const *inputs, int ninputs, tw_tensor **outputs, int max_outputs)
{
    tw_graph *g = graph_for(f, ninputs, inputs, false);
    if (!g)
        return -1;
    int n = g->noutputs;
    int rc = n <= max_outputs ? tw__graph_run(g, inputs, outputs)
                              : tw_error_set("function '%s' returns %d outputs; the array has room for %d", f->name,
                                             n, max_outputs);
    tw__graph_unref(g);
    for (int k = 0; k < n && rc == 0; k++)
        tw__track(outputs[k]);
    return rc < 0 ? -1 : n;
}

int tw_function_call(tw_function *f, int ninputs, tw_tensor *const *inputs, tw_tensor **outputs, int max_outputs)
{
    for (int k = 0; outputs && k < max_outputs; k++)
        outputs[k] = NULL;
    if (check_call(f, ninputs, inputs, "function_call") < 0)
        return -1;
    if (max_outputs < 0 || (max_outputs > 0 && !outputs))
        return tw_error_set("function '%s': outputs must hold max_outputs (%d) tensors", f->name, max_outputs);
    if (tw__tracer) /* inside another trace: this function's ops join it */
        return f->fn(inputs, ninputs, outputs, max_outputs, f->user_data);
    tw_tensor *stack_packed[TW_MAX_INPUTS];
    tw_tensor **packed = ninputs <= TW_MAX_INPUTS ? stack_packed : calloc((size_t)ninputs, sizeof *packed);
    if (!packed)
        return tw_error_set("function '%s': out of memory", f->name);
    int n = pack_inputs(ninputs, inputs, packed) == 0 ? run(f, packed, ninputs, outputs, max_outputs) : -1;
    for (int i = 0; i < ninputs; i++)
        tw_tensor_unref(packed[i]);
    if (packed != stack_packed)
        free(packed);
    return n;
}

tw_tensor *tw_function_call1(tw_function *f, int ninputs, tw_tensor *const *inputs)
{
    tw_tensor *out[MAX_OUTPUTS];
    tw_scope_begin(); /* releases any further outputs */
    int n = tw_function_call(f, ninputs, inputs, out, MAX_OUTPUTS);
    if (n == 0)
        tw_error_set("function '%s' returned no outputs", f->name);
    return tw__scope_return(n >= 1 ? out[0] : NULL);
}
