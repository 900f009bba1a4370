/* What the Keras JSON reader and writer (model_json_read.c,
 * model_json_write.c) share with the Functional part
 * (model_json_functional.c). Not installed. */
#ifndef TW_MODEL_JSON_INTERNAL_H
#define TW_MODEL_JSON_INTERNAL_H

#include <json-glib/json-glib.h>

#include "tw/model_file.h"

/* model_json_read.c: one layer {"class_name": ..., "config": ...} at path
 * ("layers[3]"); first: it may carry the input shape. NULL with a message
 * naming the path. */
tw_layer *tw__json_read_layer(JsonNode *node, bool first, const char *path);
const char *tw__json_describe(JsonNode *node); /* "an object", "a string", ... */

/* model_json_write.c */
void tw__json_put_string(GString *out, const char *s);
void tw__json_put_shape(GString *out, const tw_shape *shape);
/* Any JSON value as Python's json.dumps writes it, floats in their
 * shortest form that reads back the same. */
void tw__json_put_node(GString *out, JsonNode *node);
/* {"class_name": ..., "config": ...} of a layer of a Functional model (a
 * layer of a class the engine does not know: whole, with Keras 3's module
 * and registered_name in that form). */
void tw__json_put_layer(GString *out, const tw_layer *layer, tw_keras_json_format format);

/* model_json_functional.c: a Functional model's config (class_name
 * "Functional" or Keras 2's "Model") at path, Keras 2 or 3 form read
 * alike; and the config written in one form. */
tw_model *tw__json_read_functional(JsonNode *config, const char *path);
/* Keras call arguments the engine keeps as layer parameters, one value for
 * all of a layer's calls (MultiHeadAttention's use_causal_mask, and its
 * attention_mask: whether the last input is the mask): files carry them in
 * each call's kwargs, not in the config. */
bool tw__json_is_call_argument(const char *key);
void tw__json_put_functional_config(GString *out, const tw_model *model, tw_keras_json_format format);

#endif
