/* Tensor Workbench — model files with their weights: Keras 3's `.keras`,
 * Keras 2's `.h5`, and the one loader every command uses.
 *
 *     tw_model *model = tw_model_open("model.keras");  // .json, .keras, .h5
 *     if (!model) fprintf(stderr, "%s\n", tw_last_error());
 *     ...
 *     tw_model_write(model, "model.h5", TW_MODEL_FORMAT_AUTO);
 *
 * tw_model_open looks at the file's bytes, not its name: HDF5's signature
 * is a Keras 2 `.h5` model (attribute model_config, weights under
 * model_weights/<layer>/...), a zip is a `.keras` archive (metadata.json,
 * config.json, model.weights.h5 with Keras 3's per-object paths such as
 * layers/dense/vars/0), a safetensors file is one of our checkpoints that
 * carries its model's JSON, and anything else is Keras JSON (tw_model_load,
 * gzip included). The config inside is read by the JSON reader
 * (tw/model_file.h). A file with weights gives a model built from its
 * declared input shape with the file's values in every weight; Keras maps
 * them by order (Keras 2: the n-th layer with weights takes the n-th
 * weight group, positionally; Keras 3: by each object's path), and so does
 * this, with a message on the first mismatch:
 *     model.h5: layer 'dense_1' weight 'kernel': file has (16, 2), model has (16, 4)
 *
 * Bad files are refused with the file's name and what is wrong; libhdf5's
 * and libzip's own messages are added in parentheses. Members of a
 * `.keras` archive are read up to a cap (config.json: 64 MiB; weights:
 * the machine's memory), whatever sizes the archive declares.
 *
 * Errors follow tw/error.h: NULL or -1 and a message.
 */
#ifndef TW_KERAS_FILE_H
#define TW_KERAS_FILE_H

#include <stddef.h>
#include <stdint.h>

#include "tw/model.h"

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

typedef enum {
    TW_MODEL_FORMAT_AUTO,        /* writing: from the extension */
    TW_MODEL_FORMAT_JSON,        /* Keras JSON, architecture only */
    TW_MODEL_FORMAT_KERAS,       /* Keras 3 .keras zip */
    TW_MODEL_FORMAT_H5,          /* Keras 2 .h5 full model */
    TW_MODEL_FORMAT_SAFETENSORS, /* our checkpoint (tw/checkpoint.h) with the model JSON in its metadata */
} tw_model_format;

/* What the bytes hold (never AUTO; JSON when nothing else matches). */
tw_model_format tw_model_format_of_bytes(const uint8_t *bytes, size_t size);
/* The format a path's extension names: .json, .keras, .h5/.hdf5,
 * .safetensors; AUTO (and a message) for any other. */
tw_model_format tw_model_format_for_path(const char *path);
const char *tw_model_format_name(tw_model_format format); /* "Keras 3 .keras", ... */

/* The one loader (see above). */
tw_model *tw_model_open(const char *path);
/* Whether the last model tw_model_open returned on this thread came with
 * weights from its file. */
bool tw_model_open_had_weights(void);

/* Build an unbuilt model from its declared input shape, the shape the
 * weights of a file are placed by (no-op when built). 0, or -1 with a
 * message that names `name`, the file the model came from: it declares no
 * input shape, or cannot be built from it. tw_model_load_weights and
 * tw_model_write call it with the file they read or write; call it first
 * with the model's own file when that is the one at fault (twb convert). */
int tw_model_build_declared(tw_model *model, const char *name);

/* Put the weights of a file into a model, built first from its input
 * shape when it is not: a Keras 2 .h5 (full model or save_weights), a
 * Keras 3 .weights.h5 or .keras, or a safetensors checkpoint. Every weight
 * is read and checked before any is assigned. */
int tw_model_load_weights(tw_model *model, const char *path);

/* Write the model (weights included for .keras, .h5 and .safetensors; an
 * unbuilt model is first built from its declared input shape, so it holds
 * freshly initialised weights, as Keras' model_from_json gives). Atomic,
 * as checkpoints are written. */
int tw_model_write(tw_model *model, const char *path, tw_model_format format);

/* The model config text a file holds, byte for byte: a .keras archive's
 * config.json, a .h5 file's model_config attribute, a JSON file itself
 * (gunzipped). malloc'd, with its length. */
char *tw_model_file_config(const char *path, size_t *length);

/* Every dataset of a weight file as stored (a .h5 file, or a .keras
 * archive's model.weights.h5), named by its HDF5 path without the leading
 * slash ("model_weights/dense/dense/kernel:0", "layers/dense/vars/0"), in
 * HDF5's name order. For inspection and tests. */
typedef struct {
    int n;
    char **names;
    tw_tensor **tensors;
} tw_weight_list;
int tw_model_file_weights(const char *path, tw_weight_list *out);
void tw_weight_list_clear(tw_weight_list *list);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
