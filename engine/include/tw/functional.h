/* Tensor Workbench — Functional models (Keras' functional API).
 *
 * A Functional model is a directed acyclic graph of layer calls: several
 * inputs and outputs, branches and merges, one layer called at several
 * places (shared weights), whole models called as layers. It is built the
 * way Keras builds one, from symbolic tensors (tw_node) that carry shapes:
 *
 *     tw_node *in = tw_input("image", TW_SHAPE(32, 32, 16));
 *     tw_node *x = tw_apply(tw_conv2d_layer(16, 3, "relu"), in);
 *     x = tw_apply(tw_conv2d_layer(16, 3, NULL), x);
 *     x = tw_apply_n(tw_layer_new("Add", NULL), 2, (tw_node *[]){x, in});
 *     tw_model *block = tw_functional_new("block", 1, &in, 1, &x);
 *     tw_nodes_clear();
 *
 * Shapes are inferred at every tw_apply, so a mistake is reported where it
 * is made ("Add 'add': inputs (None, 32) and (None, 16) cannot be added"),
 * and a failed call returns NULL that the next tw_apply passes on, as ops
 * pass on NULL tensors. tw_apply takes over the caller's reference to the
 * layer (as tw_model_add does): call a shared layer again with
 * tw_apply(tw_layer_ref(shared), y).
 *
 * Nodes belong to the calling thread's graph of symbolic calls (Keras'
 * session graph) until tw_nodes_clear (Keras' clear_session), which also
 * restarts the automatic names ("dense", "dense_1", ...). Models keep what
 * they need: tw_nodes_clear never changes a model, and two models may be
 * made from one graph (an autoencoder and its encoder).
 *
 * The model is a layer (class "Functional"), so it nests in Sequential and
 * Functional models, trains with tw_model_compile / tw_model_fit, and
 * checkpoints as Sequential models do. For several inputs and outputs see
 * tw_model_call_n, tw_model_compile_n and tw_model_fit_n in tw/model.h.
 */
#ifndef TW_FUNCTIONAL_H
#define TW_FUNCTIONAL_H

#include "layers.h"

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

typedef struct tw_node tw_node; /* one output of one layer call */

/* A model input (an InputLayer of batch shape (None, dims...)): the shape
 * without its batch axis, as keras.Input(shape=...) takes it, e.g.
 * tw_input("image", TW_SHAPE(28, 28, 1)); -1 is an unknown size. name NULL
 * names it "input_layer", "input_layer_1", ... as Keras 3 does. */
tw_node *tw_input(const char *name, int ndim, const int64_t *dims);
/* The input an InputLayer made elsewhere declares (a model file's), with
 * its batch_input_shape; takes over the reference. */
tw_node *tw_input_from_layer(tw_layer *input_layer);
/* The layer called on one input, several, or giving several outputs. They
 * take over the reference to layer (even on failure). */
tw_node *tw_apply(tw_layer *layer, tw_node *x);
tw_node *tw_apply_n(tw_layer *layer, int ninputs, tw_node *const *inputs);
/* Fills outputs (room for TW_MAX_LAYER_IO) and returns their count, or -1. */
int tw_apply_multi(tw_layer *layer, int ninputs, tw_node *const *inputs, tw_node **outputs);

const tw_shape *tw_node_shape(const tw_node *node); /* (None, ...) */
tw_layer *tw_node_layer(const tw_node *node);      /* borrowed */
/* Forget the thread's symbolic graph; nodes made so far become invalid. */
void tw_nodes_clear(void);
/* The graph's size now, and forgetting only the calls made after such a
 * mark (a model file's reader works inside whatever graph the program is
 * building). */
int64_t tw_nodes_mark(void);
void tw_nodes_release(int64_t mark);

/* The model from the graph between inputs and outputs. Every output must
 * be computed from the inputs alone, and every input must be used; layer
 * names must be unique. The model holds its own references to the layers.
 * name NULL: "functional". */
tw_layer *tw_functional_new(const char *name, int ninputs, tw_node *const *inputs, int noutputs,
                            tw_node *const *outputs);
bool tw_layer_is_functional(const tw_layer *layer);

/* ---- the graph of a Functional model (writers, summaries, views) ---------
 * Layers are the model's (tw_model_layer_at); a layer's calls within the
 * model are its nodes 0, 1, ... (Keras' node_index); a call's outputs are
 * its tensors 0, 1, ... */
typedef struct {
    int layer;        /* index of the layer in the model */
    int node_index;   /* which of its calls */
    int tensor_index; /* which output of that call */
} tw_keras_history;
int tw_functional_ninputs(const tw_layer *model);
int tw_functional_noutputs(const tw_layer *model);
/* The model's inputs and outputs; -1 when out of range. */
int tw_functional_input(const tw_layer *model, int index, tw_keras_history *out);
int tw_functional_output(const tw_layer *model, int index, tw_keras_history *out);
/* Calls of layer `layer` in the model (0 for a layer never called, which
 * cannot happen in a model made by tw_functional_new; InputLayers have 1). */
int tw_functional_layer_ncalls(const tw_layer *model, int layer);
/* Inputs of one call (room for TW_MAX_LAYER_IO); returns their count (0 for
 * an InputLayer's), -1 when out of range. */
int tw_functional_call_inputs(const tw_layer *model, int layer, int node_index, tw_keras_history *inputs);
/* Output shapes of one call; returns their count, -1 when out of range. */
int tw_functional_call_outputs(const tw_layer *model, int layer, int node_index, tw_shape *outputs);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
