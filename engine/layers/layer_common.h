/* Small pieces several layer classes share: the output-equals-input infer,
 * a call's input shape, axes resolved against a rank, a weight by name, and
 * the generator random layers draw from. Not installed. */
#ifndef TW_LAYER_COMMON_H
#define TW_LAYER_COMMON_H

#include "layer_internal.h"

/* infer for layers whose output has the input's shape and no weights. */
int tw__same_shape_infer(const tw_layer *self, const tw_shape *input, tw_shape *output, tw_weight_spec *w,
                         int *nw);

/* The shape of a tensor as a tw_shape. */
tw_shape tw__shape_of(const tw_tensor *x);

/* Axes given as Keras does (negative from the end) resolved against ndim
 * into is_axis[d]; with allow_batch false, axis 0 is refused. -1 with
 * "axis 5 is out of range for input (None, 3)" or "... given twice" naming
 * the layer. */
int tw__layer_axes(const tw_layer *self, const tw_param_value *axes, const tw_shape *input, bool allow_batch,
                   bool *is_axis);

/* The weight the layer's infer named `name`, or NULL. */
tw_tensor *tw__layer_weight_named(const tw_layer *self, const char *name);

/* What a random layer draws from: the call's generator (a model's, seeded by
 * fit from its seed and the step), or for a layer called on its own a
 * generator of its own, seeded from its name and kept in *own, so its draws
 * still repeat from run to run. */
tw_rng *tw__layer_rng(const tw_layer *self, const tw_call_context *ctx, tw_rng **own);

/* Keras' causal mask on attention scores (..., T, S): query step i sees key
 * steps j <= i; the others get -1e9 added, as Keras' masked softmax adds,
 * so their probabilities are 0. */
tw_tensor *tw__causal_mask_scores(tw_tensor *scores);

#endif
