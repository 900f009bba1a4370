/* Tensor Workbench — checkpoints: a model's weights and its optimizer's
 * state in one safetensors file (the format of Hugging Face's safetensors,
 * readable by its Python and Rust libraries).
 *
 *     tw_checkpoint_save("run/ckpt.safetensors", model, opt, NULL, NULL);
 *     ...
 *     tw_checkpoint_restore("run/ckpt.safetensors", model, opt);
 *
 * The file: an 8-byte little-endian length N, N bytes of JSON
 *     {"__metadata__":{"format":"twb-checkpoint",...},
 *      "dense/kernel":{"dtype":"F32","shape":[4,8],"data_offsets":[0,128]}, ...}
 * padded with spaces so the data starts at a multiple of 8, then the
 * tensors' little-endian bytes, packed in order without gaps.
 *
 * Saving is atomic: the file is written next to its target under a
 * temporary name, flushed to disk and renamed over the target, so a crash
 * or a full disk never leaves a half-written checkpoint in its place.
 * Reading checks every field against the file before trusting it.
 *
 * Errors follow tw/error.h: NULL or -1 and a message naming the file and
 * what is wrong, with the byte offset where it helps.
 */
#ifndef TW_CHECKPOINT_H
#define TW_CHECKPOINT_H

#include "tw/engine.h"
#include "tw/model.h"

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

/* ---- safetensors files ---------------------------------------------------- */
/* Write n tensors (float32, float64, int32, int64, uint8, bool: safetensors'
 * F32, F64, I32, I64, U8, BOOL) under unique names, with nmeta string pairs
 * of metadata (either count may be 0). Atomic, as above. */
int tw_safetensors_write(const char *path, int n, const char *const *names, tw_tensor *const *tensors, int nmeta,
                         const char *const *meta_keys, const char *const *meta_values);

/* An open file: its header is read and checked; tensors are read on demand. */
typedef struct tw_safetensors tw_safetensors;
tw_safetensors *tw_safetensors_open(const char *path);
void tw_safetensors_close(tw_safetensors *st); /* NULL is accepted */

/* Tensors in the order of their data in the file. */
int tw_safetensors_count(const tw_safetensors *st);
const char *tw_safetensors_name(const tw_safetensors *st, int index);
bool tw_safetensors_has(const tw_safetensors *st, const char *name);
/* A tensor's dtype and shape without reading it (shape: TW_MAX_DIMS entries). */
int tw_safetensors_info(const tw_safetensors *st, const char *name, tw_dtype *dtype, int *ndim, int64_t *shape);
/* A new tensor with the values (a new reference, as ops return). */
tw_tensor *tw_safetensors_get(tw_safetensors *st, const char *name);
/* The metadata value (owned by st), or NULL when the key is absent (no error). */
const char *tw_safetensors_metadata(const tw_safetensors *st, const char *key);

/* ---- checkpoints ---------------------------------------------------------- */
/* Save a built model's weights under their tw_layer_foreach_weight paths
 * ("dense_1/kernel"); with an optimizer, also its slots as
 * "optimizer/<weight path>/<slot>" ("optimizer/dense_1/kernel/m") and its
 * iteration count as the int64 scalar "optimizer/iterations". Metadata:
 * "format" = "twb-checkpoint", "version" = "1", and, when given,
 * "model_json" and "training_config". */
int tw_checkpoint_save(const char *path, tw_model *model, tw_optimizer *optimizer, const char *model_json,
                       const char *training_config_json);

/* Put a checkpoint's values back.
 * - A built model: every weight of the model must be in the file with its
 *   shape and dtype, every weight in the file must be the model's and, with
 *   an optimizer, every slot in the file must be one of its slots with the
 *   same shape. All of it is checked before anything is assigned, so a
 *   checkpoint that does not fit leaves the model and optimizer as they were.
 * - An unbuilt model: the values wait in their layers and are assigned when
 *   the model is built (TF2's deferred restore). Paths naming layers the
 *   model lacks fail now; a weight name or shape a layer turns out not to
 *   have fails when the model is built.
 * - With an optimizer: its slots and iteration count are set from the file
 *   (the file must hold optimizer state). Slots belong to weights, so the
 *   model must be built first: restoring an optimizer into an unbuilt model
 *   fails and changes nothing (build, then restore again). Without one, the
 *   file's optimizer state is ignored. */
int tw_checkpoint_restore(const char *path, tw_model *model, tw_optimizer *optimizer);

/* One metadata value of a checkpoint ("model_json", "training_config",
 * "format", ...), malloc'd; NULL with a message when the file is bad or
 * lacks the key. */
char *tw_checkpoint_read_metadata(const char *path, const char *key);

/* ---- the checkpointing callback (Keras' ModelCheckpoint) ------------------ */
/* Saves the model and its compiled optimizer to `path` at every epoch's end
 * or, with a monitor ("val_loss", "val_accuracy"), only when that value
 * improves (accuracies upwards, losses downwards). The training config in
 * the metadata records where a resumed fit starts: {"epoch": E, "step": 0,
 * "monitor": ..., "best": ..., "settings": SETTINGS} where SETTINGS is the
 * caller's JSON object (optimizer, batch size, seed, ...; may be NULL);
 * model_json (may be NULL) goes in as is.
 * tw_model_checkpoint_save_now saves mid-epoch (Ctrl+C, the UI's Stop)
 * with the step to resume at.
 * A save at an epoch's end that fails (a full disk, say) does not stop the
 * fit: the previous checkpoint stays as it was (saving is atomic), and
 * tw_model_checkpoint_failures / _error tell the caller, who warns. */
typedef struct tw_model_checkpoint tw_model_checkpoint;
tw_model_checkpoint *tw_model_checkpoint_new(const char *path, const char *monitor, const char *model_json,
                                             const char *settings_json);
tw_callback tw_model_checkpoint_callback(tw_model_checkpoint *mc);
int tw_model_checkpoint_save_now(tw_model_checkpoint *mc, tw_model *model, int epoch, int64_t step);
/* Times saved so far; saves that failed, and the last failure's message
 * (NULL when none failed). */
int tw_model_checkpoint_saves(const tw_model_checkpoint *mc);
int tw_model_checkpoint_failures(const tw_model_checkpoint *mc);
const char *tw_model_checkpoint_error(const tw_model_checkpoint *mc);
void tw_model_checkpoint_free(tw_model_checkpoint *mc);
/* Where a checkpoint says a resumed fit starts (0, 0 when it does not say). */
int tw_checkpoint_resume_position(const char *path, int *epoch, int64_t *step);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
