/* Functional models: the thread's symbolic graph (functional_graph.c) and
 * the model class made from it (functional.c). Not installed. */
#ifndef TW_FUNCTIONAL_INTERNAL_H
#define TW_FUNCTIONAL_INTERNAL_H

#include "model_internal.h"
#include "tw/functional.h"

/* One call of a layer in the symbolic graph. */
typedef struct tw_symbolic_call {
    tw_layer *layer; /* a reference */
    int64_t seq;     /* its place in the thread's graph: calls are made after their inputs */
    int ninputs, noutputs;
    tw_node **inputs;
    tw_node *outputs;
} tw_symbolic_call;

struct tw_node {
    tw_symbolic_call *call;
    int index;
    tw_shape shape;
};

/* One call in a Functional model, in the order the model runs them. */
typedef struct {
    int layer;      /* index into the model's children */
    int node_index; /* its place among the layer's calls in the model */
    int ninputs, noutputs;
    int first_input; /* its inputs' value indices start at input_values[first_input] */
    int first_value; /* its outputs are values first_value ... + noutputs - 1 */
} tw_fn_call;

typedef struct {
    tw_model_state model; /* first: compile and training read it as any model's */
    int ncalls, nvalues;
    tw_fn_call *calls;
    int *input_values;  /* every call's inputs, concatenated */
    tw_shape *shapes;   /* per value */
    int *value_call;    /* per value: the call that computes it */
    int ninputs, noutputs;
    int *inputs;        /* the call of each model input (an InputLayer's) */
    int *outputs;       /* the value of each model output */
    int *layer_calls;   /* per layer: its calls, in node order, from layer_first[layer] */
    int *layer_first;   /* nchildren + 1 offsets into layer_calls */
} tw_functional_state;

extern const tw_layer_class tw__functional_class;

/* functional.c */
/* Builds from the declared inputs; input (or NULL) replaces the first. */
int tw__functional_build(tw_layer *model, const tw_shape *input, uint64_t seed);
const tw_shape *tw__functional_input_shape(const tw_layer *model, int index);
int tw__functional_layer_info(const tw_layer *model, tw_layer_info *info);
/* The parameters of the layers whose counts are known; *unknown is the
 * first layer whose count depends on an unknown shape, or -1. */
int tw__functional_count(const tw_layer *model, int64_t *trainable, int64_t *non_trainable, int *unknown);

#endif
