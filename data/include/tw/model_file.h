/* Tensor Workbench — model files: Keras' Sequential and Functional JSON
 * (model.to_json()).
 *
 *     tw_model *model = tw_model_load("model.json");
 *     if (!model) fprintf(stderr, "%s\n", tw_last_error());
 *     ...
 *     tw_model_save(model, "model.json");
 *
 * Reading takes what Keras 2.x writes, including the bare list of layers of
 * Keras before 2.2.3 and the "module"/"registered_name"/"build_config"
 * entries of Keras 2.13+; nested Sequential layers become nested models.
 * Functional models ("Functional", or Keras 2's "Model") are read in Keras
 * 2's and Keras 3's forms, nested and shared layers included, and so are
 * files holding the JSON as one JSON string (json.dump(model.to_json())).
 * Each layer's config keys that its class has as parameters are set with
 * tw_layer_set; keys that do not change the computation (dtype outside
 * InputLayer, batch_size, seeds) are ignored. Messages name the place in
 * the file: "model.json: layers[3].config.units: expected a positive
 * integer, got \"abc\"", or the line and column of malformed JSON.
 *
 * Writing produces Keras 2.x JSON that Keras itself can read back
 * (keras.models.model_from_json) and that this reader reads to the same
 * config. The file holds the architecture only; weights go to checkpoints.
 *
 * Errors follow tw/error.h: NULL or -1 and a message.
 */
#ifndef TW_MODEL_FILE_H
#define TW_MODEL_FILE_H

#include <stddef.h>

#include "tw/model.h"

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

/* A model from JSON text of `length` bytes. source_name (a file name, or
 * NULL) goes in front of messages. */
tw_model *tw_model_from_json(const char *json, size_t length, const char *source_name);
/* A model from a file (gzip-compressed files are read too). */
tw_model *tw_model_load(const char *path);

/* The model as Keras JSON (malloc'd; free()). */
char *tw_model_to_json(const tw_model *model);

/* Functional models (and Sequential ones holding them) can be written in
 * Keras 2's form ("inbound_nodes": [[["dense", 0, 0, {}]]]) or in Keras 3's
 * ("module", "registered_name", "build_config", inbound nodes of
 * "__keras_tensor__" with "keras_history", InputLayers' "batch_shape").
 * Layer configs inside keep Keras 2's serialization, which Keras 3 reads.
 * tw_model_to_json writes Keras 2's. */
typedef enum { TW_KERAS_JSON_2, TW_KERAS_JSON_3 } tw_keras_json_format;
char *tw_model_to_json_format(const tw_model *model, tw_keras_json_format format);

/* A parsed JSON value (json-glib's JsonNode) laid out as tw_model_to_json
 * lays out a model (", " and ": ", floats in their shortest text, 1.0
 * kept apart from 1), so that a model's JSON parsed, given keys of a
 * program's own and written again, keeps the engine's text everywhere
 * else (malloc'd; free()). */
struct _JsonNode;
char *tw_json_node_to_text(struct _JsonNode *node);
int tw_model_save_format(const tw_model *model, const char *path, tw_keras_json_format format);
/* Write the JSON atomically, as checkpoints are written: a temporary file
 * in the same directory, flushed to disk, renamed over path, then the
 * directory flushed; a failure never leaves a half-written file and keeps
 * the old one. */
int tw_model_save(const tw_model *model, const char *path);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
