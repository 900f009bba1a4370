/* A built model's layers and weights as Keras lists, orders and names them
 * in its weight files, for the .h5 (Keras 2) and .keras (Keras 3) readers
 * and writers. Only the engine's public API is used (tw_model_layer_at,
 * tw_layer_foreach_weight, tw_layer_restore_weight), so any model that
 * lists its layers in Keras' order works, Functional ones included.
 * Not installed. */
#ifndef TW_HDF5_KERAS_LAYERS_H
#define TW_HDF5_KERAS_LAYERS_H

#include <glib.h>

#include "tw/model.h"

/* One weight: where it is restored (tw_layer_restore_weight(owner, path)),
 * its variable and whether it counts as trainable now. */
typedef struct {
    tw_layer *owner; /* borrowed */
    char *path;      /* relative to owner, as tw_layer_foreach_weight names it */
    tw_tensor *variable;
    bool trainable;
} tw_keras_weight;

/* A top-level layer of the model as Keras' model.layers lists it (a
 * Sequential's leading InputLayer is not listed) with its weights in
 * Keras 2's order: layer.weights = trainable_weights + non_trainable_weights,
 * gathered through nested models. */
typedef struct {
    tw_layer *layer; /* borrowed */
    GArray *weights; /* of tw_keras_weight */
} tw_keras_layer;

/* The top-level layers (a GPtrArray of tw_keras_layer*, freed with
 * g_ptr_array_unref); NULL with a message when foreach fails. */
GPtrArray *tw__keras2_layers(tw_model *model);
/* The layers of a model as Keras' model.layers lists them. */
int tw__keras_nlayers(const tw_model *model);
tw_layer *tw__keras_layer_at(const tw_model *model, int index);

/* Keras 3's per-object weight paths: every object gets a group
 * ("layers/dense", "layers/sequential/layers/dense_1") named after its
 * class in snake case, numbered within its container in order; its
 * variables are "<group>/vars/0", "/1", ... in creation order, trainable
 * ones first. Recurrent layers keep theirs in their cell
 * ("layers/lstm/cell/vars/0"). `groups` gets every "<group>/vars" (also
 * the empty ones Keras writes), `vars` every variable with its dataset path. */
typedef struct {
    char *dataset; /* "layers/dense/vars/0" */
    tw_keras_weight weight;
} tw_keras3_var;
int tw__keras3_vars(tw_model *model, GPtrArray *groups, GArray *vars);
/* The layers of a class the engine does not know (UserLayer), at any
 * depth of nested models, and the group Keras 3 saves each one's
 * variables under ("layers/my_layer"; the caller frees the strings). */
void tw__keras3_user_groups(tw_model *model, GPtrArray *layers, GPtrArray *groups);

void tw__keras_weight_clear(tw_keras_weight *w);

/* "Conv2D" -> "conv2d", "MaxPooling2D" -> "max_pooling2d" (Keras'
 * naming.to_snake_case); malloc'd. */
char *tw__keras_snake_case(const char *class_name);

/* Assign value to the weight, or fail with "<where>: layer 'dense_1' weight
 * 'kernel': file has (16, 2), model has (16, 4)" (or the dtypes). */
int tw__keras_check(const tw_keras_weight *w, const tw_tensor *value, const char *where);
int tw__keras_assign(const tw_keras_weight *w, tw_tensor *value, const char *where);

#endif
