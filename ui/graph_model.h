/* A traced graph as the graph view shows it: the nodes, edges and name
 * scopes of a graph JSON document (docs/graph_json.md), and the "visible
 * graph" for a set of expanded scopes: each collapsed scope is one box,
 * parameters that feed one op (and constants several ops share) are tucked
 * into it. Pure C (GLib, json-glib), usable from any thread; nothing here
 * is shared once built. */
#ifndef TW_UI_GRAPH_MODEL_H
#define TW_UI_GRAPH_MODEL_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>
#include <tw/engine.h>
#include <tw/model.h>

G_BEGIN_DECLS

#define TW_GRAPH_MAX_DIMS 8

/* What a box's colour says. */
typedef enum {
    TW_OP_KIND_LINEAR,      /* matmul, conv2d: the weights' work */
    TW_OP_KIND_ELEMENTWISE, /* add, relu, ... (the default) */
    TW_OP_KIND_REDUCTION,   /* sum, mean, pooling, softmax */
    TW_OP_KIND_SHAPE,       /* reshape, permute, slices: views and copies */
    TW_OP_KIND_SOURCE,      /* input, constant, variable */
    TW_OP_KIND_SCOPE,       /* a collapsed name scope */
    TW_OP_KIND_OUTPUT,      /* one of the function's outputs */
} tw_op_kind;

typedef struct {
    char dtype[16];
    int ndim;               /* -1: rank unknown (a TensorFlow graph's); a size of -1: unknown */
    int64_t shape[TW_GRAPH_MAX_DIMS];
    bool batch_none;        /* axis 0 is the batch, of no fixed size: shown as None */
} tw_graph_tensor;

typedef struct {
    char *op, *name, *scope;
    int scope_index;        /* into tw_graph_model.scopes */
    tw_op_kind kind;
    int ninputs;
    int *input_node, *input_output;
    int noutputs;
    tw_graph_tensor *outputs;
    int nints, nfloats;     /* the op's attributes (the attrs object's ints and floats) */
    int64_t *ints;
    double *floats;
    char *cannot_run;       /* a layer graph's layer that cannot run here: why; else NULL */
} tw_graph_node;

typedef struct {
    char *path;             /* "cnn/conv2d"; "" for the root (index 0) */
    const char *name;       /* the last part of the path */
    int parent;             /* -1 for the root */
    int depth;              /* 0 for the root */
    int nops;               /* nodes inside, nested scopes included */
    int nchildren;          /* direct child scopes */
    /* The Keras layer this scope traces (tw_graph_model_add_layers), or NULL:
     * its class and its config as "name: value" lines, NULL-terminated. */
    char *layer_class;
    char **layer_fields;
} tw_graph_scope;

typedef struct {
    char *function;
    int nnodes;
    tw_graph_node *nodes;
    int nscopes;
    tw_graph_scope *scopes;
    int noutputs;           /* the function's outputs: node output_node[k]'s output_output[k] */
    int *output_node, *output_output;
    /* The measured times when the run stored a profile (graph_profile.h),
     * NULL otherwise: per node the mean µs per run (-1: not measured), per
     * scope the sum of its nodes'; step_us is the sum over every node. */
    double *node_us, *scope_us;
    double step_us;
    int profile_runs;
    char *profile_error;    /* why a stored profile could not be read, or NULL */
    /* A layer graph (graph_layers.h): nodes are layer calls, ops their
     * classes; note says why the model was drawn so (or NULL). */
    bool layer_level;
    char *note;
} tw_graph_model;

/* Trace the model's forward pass (inference) for a batch of one zero input
 * of its input shape (one per input of a Functional model, in its input
 * order) and return the graph's JSON (g_free it); NULL with *error set when
 * the model cannot be built or called. Builds the model. The trace is
 * shape-only (tw_function_get_graph_shapes): no kernel runs on the batch
 * or the weights, and the graph is the one a full trace gives. */
char *tw_graph_trace_model(tw_model *model, GError **error);
/* The same traced with every kernel run (tw_function_get_graph): what the
 * shape-only trace is checked against. */
char *tw_graph_trace_model_with_values(tw_model *model, GError **error);
/* Parse one graph ({"format": "twb-graph", ...}); NULL with *error set. */
tw_graph_model *tw_graph_model_parse(const char *json, gssize length, GError **error);
void tw_graph_model_free(tw_graph_model *model);
tw_op_kind tw_op_kind_of(const char *op);
/* The scope with this path, or -1. */
int tw_graph_model_find_scope(const tw_graph_model *model, const char *path);
/* The default expansion into expanded[nscopes]: open the root and any chain
 * of lone wrapper scopes (a model around its layers), collapse the rest. */
void tw_graph_model_default_expansion(const tw_graph_model *model, bool *expanded);
/* Mark the batch axis of a graph traced for a batch of `batch` (a model's
 * forward pass, whose batch size is not the model's): every tensor computed
 * from an input whose axis 0 is `batch` long shows it as None. */
void tw_graph_model_mark_batch(tw_graph_model *model, int64_t batch);
/* Give each scope named after a layer of the Keras model file text the
 * layer's class and config (the designer's model: a scope per layer call).
 * Text that does not parse adds nothing. */
void tw_graph_model_add_layers(tw_graph_model *model, const char *keras_json);
/* The op's attributes by name ("strides", "(1, 1)"), alternating name and
 * value; the attributes the table does not know are listed as "integers"
 * and "floats". Free with g_ptr_array_unref. */
GPtrArray *tw_graph_node_attr_fields(const tw_graph_node *node);
/* "(None, 28, 28, 1)" into buf. */
const char *tw_graph_tensor_format(const tw_graph_tensor *t, char *buf, size_t size);
int64_t tw_graph_tensor_numel(const tw_graph_tensor *t);

typedef struct {
    bool is_scope;
    int index;              /* graph node, or scope, or the node an output box reads */
    int output;             /* an output box: which of the function's outputs; -1 for other boxes */
    tw_op_kind kind;
    int nparams;
    int *params;            /* graph nodes tucked into this op (sources feeding it alone, constants it shares) */
} tw_visible_node;

typedef struct {
    int from, to;           /* visible nodes */
    int node, output;       /* the tensor it carries (the largest when merged) */
    int ntensors;           /* tensors merged into it */
} tw_visible_edge;

typedef struct {
    int nnodes;
    tw_visible_node *nodes;
    int nedges;
    tw_visible_edge *edges;
    int *of_node;           /* per graph node: its visible node, -1 when tucked */
} tw_visible_graph;

/* The graph with the scopes not in expanded[] (NULL: all expanded) shown as
 * boxes; the root is always open. */
tw_visible_graph *tw_visible_graph_new(const tw_graph_model *model, const bool *expanded);
void tw_visible_graph_free(tw_visible_graph *graph);
/* The box's title ("conv2d" for an op's name's last part or a scope's name)
 * and detail ("conv2d", "7 ops"); g_free both. */
char *tw_visible_node_title(const tw_graph_model *model, const tw_visible_node *node);
char *tw_visible_node_detail(const tw_graph_model *model, const tw_visible_node *node);

G_END_DECLS

#endif
