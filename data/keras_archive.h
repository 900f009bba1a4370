/* The containers behind tw/keras_file.h, on bytes in memory (what the
 * public functions and the fuzz targets call). `name` goes in front of
 * every message. Not installed. */
#ifndef TW_KERAS_ARCHIVE_H
#define TW_KERAS_ARCHIVE_H

#include <hdf5.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tw/keras_file.h"

/* The most a weight dataset may hold, given the file it came from: what
 * deflate could expand the file to, so a forged shape allocates nothing. */
size_t tw__h5_dataset_cap(size_t file_size);

/* ---- Keras 2 .h5 (hdf5_keras2.c) ------------------------------------------ */
/* The model_config attribute of a full-model file (malloc'd). */
char *tw__h5_model_config(hid_t file, const char *name);
/* Weights in Keras 2's layout under `group` (model_weights/ of a full
 * model, the root of a save_weights file) onto a built model: every one
 * read and checked, then all assigned. */
int tw__keras2_apply_weights(tw_model *model, hid_t group, size_t cap, const char *name);
/* A whole .h5 model file: config and weights (built model). malloc'd bytes. */
uint8_t *tw__keras2_h5_bytes(tw_model *model, const char *json, const char *name, size_t *size);

/* ---- Keras 3 per-object weights (hdf5_keras3.c) --------------------------- */
int tw__keras3_apply_weights(tw_model *model, hid_t file, size_t cap, const char *name);
/* model.weights.h5 of a built model (malloc'd bytes). */
uint8_t *tw__keras3_weights_bytes(tw_model *model, const char *name, size_t *size);

/* ---- .keras zips (keras_archive.c) ----------------------------------------- */
/* One member, at most cap bytes whatever the archive declares; NULL with
 * "name: ..." when absent, larger, corrupt or not a zip. */
uint8_t *tw__keras_member(const uint8_t *zip, size_t size, const char *name, const char *member, size_t cap,
                          size_t *out_size);
/* The archive's bytes: metadata.json, config.json, model.weights.h5,
 * stored uncompressed, as Keras writes them. */
uint8_t *tw__keras_archive_bytes(const char *metadata, const char *config, const uint8_t *weights,
                                 size_t weights_size, const char *name, size_t *size);

/* ---- whole files from bytes (keras_archive_open.c) ------------------------ */
/* A model from a .keras or .h5 file's bytes; *had_weights says whether the
 * file carried weights (then the model is built and holds them). */
tw_model *tw__model_open_bytes(const uint8_t *bytes, size_t size, const char *name, bool *had_weights);
/* tw_model_file_config and tw_model_file_weights on bytes. */
char *tw__model_config_bytes(const uint8_t *bytes, size_t size, const char *name, size_t *length);
int tw__model_weights_bytes(const uint8_t *bytes, size_t size, const char *name, tw_weight_list *out);

#endif
