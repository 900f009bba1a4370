/* What the wrapper classes (Bidirectional, TimeDistributed) share: the
 * layers they wrap are their children (layer_internal.h), so weights by
 * path, clones, freezing and dtypes reach them as they reach a model's. */
#ifndef TW_WRAPPER_H
#define TW_WRAPPER_H

#include "layer_internal.h"

/* Whether the layer's class wraps layers (gives infer_wrapped or
 * infer_wrapped_n). */
bool wrapper_is_wrapper(const tw_layer *layer);

/* Whether a layer can take an inner layer now: a wrapper class, not built,
 * and `layer` not NULL. Messages name the wrapper. */
int wrapper_check_wrap(const tw_layer *wrapper, const tw_layer *layer);

/* `layer` named "<prefix><name>" (its class in snake_case when unnamed;
 * a name already starting with prefix keeps it once), and given the
 * wrapper's dtype and, when the wrapper is frozen, frozen too. */
int wrapper_adopt(const tw_layer *wrapper, tw_layer *layer, const char *prefix);

/* Puts layer (a reference it takes) at children[index], replacing the one
 * there or appending it at the end. */
void wrapper_set_child(tw_layer *wrapper, int index, tw_layer *layer);

/* A new wrapper's configure wraps a layer of class_name at its defaults,
 * so every wrapper holds a layer (the palette's entries work as they come);
 * tw_layer_wrap replaces it. No-op once the wrapper holds one. */
int wrapper_default_layer(tw_layer *wrapper, const char *class_name);

/* The class-specific halves of tw_layer_wrap (bidirectional.c,
 * time_distributed.c); they take the reference to layer. */
int tw__bidirectional_wrap(tw_layer *self, tw_layer *layer);
int tw__time_distributed_wrap(tw_layer *self, tw_layer *layer);

#endif
