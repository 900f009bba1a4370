/* What ZeroPadding1D/2D and Cropping1D/2D share: reading Keras' amounts for
 * the two ends of each spatial axis from one parameter, and the input check.
 * Not installed. */
#ifndef TW_EDGES_H
#define TW_EDGES_H

#include "layer_internal.h"

/* The amounts param holds 1 integer (every end), `rank` integers (both ends
 * of each axis) or 2 * rank (before, after for each axis in turn: Keras'
 * ((top, bottom), (left, right))); anything else fails naming the layer
 * and the key. */
int tw__edges(const tw_layer *self, int param, int rank, int64_t edges[2][2]);

/* Input of rank `rank` + 2 (batch, spatial..., channels), or the message
 * "expected input of rank 4 (batch, height, width, channels), got ...". */
int tw__edges_check_input(const tw_layer *self, int rank, const tw_shape *input);

#endif
