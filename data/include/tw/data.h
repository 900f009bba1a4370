/* Tensor Workbench — the input pipeline (tf.data's counterpart).
 *
 * A dataset is a recipe for a stream of elements; an element is a small
 * tuple of tensors, usually (features, label). Sources read files or memory;
 * transformations wrap another dataset. Iterating is a plain C loop; each
 * iterator is one pass (an epoch), and a dataset can be iterated many times:
 *
 *     tw_dataset *ds = tw_dataset_fashion_mnist("train");
 *     tw_dataset *train = tw_dataset_batch(tw_dataset_shuffle(ds, 60000, 42, true), 64, false);
 *     tw_iterator *it = tw_dataset_iter(train);
 *     tw_element e;
 *     int rc;
 *     while ((rc = tw_iterator_next(it, &e)) > 0) {
 *         ... e.t[0] is (64, 28, 28) uint8, e.t[1] is (64,) uint8 ...
 *         tw_element_clear(&e);
 *     }
 *     if (rc < 0) fprintf(stderr, "%s\n", tw_last_error());
 *     tw_iterator_free(it);
 *     tw_dataset_unref(train);
 *
 * Ownership: datasets are reference counted. A transformation takes over
 * the reference to its input dataset that the caller passes (so pipelines
 * nest as above); call tw_dataset_ref first to keep using the input. Every
 * function returning a dataset returns a new reference, or NULL with the
 * engine's error set (tw/error.h): file errors name the file and the byte
 * offset, or the line and column. A NULL input dataset makes a
 * transformation return NULL and keep the earlier message.
 *
 * Element tensors are new references owned by the element (not by any
 * scope): tw_element_clear releases them.
 *
 * Determinism: every random choice (shuffle, synthetic sets, splits) comes
 * from an explicit seed; iterating the same pipeline twice with the same
 * seeds gives the same stream, and shuffles that reshuffle each iteration
 * derive epoch k's order from (seed, k). */
#ifndef TW_DATA_H
#define TW_DATA_H

#include <stdbool.h>
#include <stdint.h>

#include "tw/engine.h"

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

#define TW_ELEMENT_MAX 4

typedef struct {
    int n;                        /* number of components */
    tw_tensor *t[TW_ELEMENT_MAX]; /* owned references */
} tw_element;

/* Release the components and set n to 0. */
void tw_element_clear(tw_element *e);

typedef struct tw_dataset tw_dataset;
typedef struct tw_iterator tw_iterator;

/* Cardinality values beside a count (TensorFlow's constants). */
#define TW_INFINITE_CARDINALITY (-1)
#define TW_UNKNOWN_CARDINALITY (-2)

tw_dataset *tw_dataset_ref(tw_dataset *ds);
void tw_dataset_unref(tw_dataset *ds);
/* Number of elements one pass yields, or one of the constants above. */
int64_t tw_dataset_cardinality(const tw_dataset *ds);
/* A short description of the pipeline, e.g. "batch(64, shuffle(60000, idx))". */
const char *tw_dataset_name(const tw_dataset *ds);

/* A new pass over the dataset. */
tw_iterator *tw_dataset_iter(tw_dataset *ds);
/* 1 and an element, 0 at the end, -1 on an error (message set). */
int tw_iterator_next(tw_iterator *it, tw_element *out);
void tw_iterator_free(tw_iterator *it);

/* ---- sources -------------------------------------------------------------- */
/* Slices along the first axis of n tensors (all with the same first
 * dimension); element i is (t[0][i], ..., t[n-1][i]) as views. */
tw_dataset *tw_dataset_from_tensors(int n, tw_tensor *const *tensors);

/* IDX files (MNIST's format), raw or gzip-compressed (".gz" or by magic).
 * With a labels file, elements are (image, label); with NULL, (image,). */
tw_dataset *tw_dataset_idx(const char *images_path, const char *labels_path);
/* Parse one IDX file from memory into a tensor (uint8, int8->int32, int16->int32,
 * int32, float32, float64 per the IDX type byte). name is used in messages. */
tw_tensor *tw_idx_parse(const uint8_t *bytes, size_t size, const char *name);
tw_tensor *tw_idx_load(const char *path);

/* NPY files (format versions 1, 2, 3; C order; every engine dtype). */
tw_tensor *tw_npy_parse(const uint8_t *bytes, size_t size, const char *name);
tw_tensor *tw_npy_load(const char *path);
/* Write a tensor as an NPY file (version 1.0, C order), atomically. */
int tw_npy_save(const char *path, const tw_tensor *t);
/* Elements are (features[i], labels[i]); labels_path may be NULL. */
tw_dataset *tw_dataset_npy(const char *features_path, const char *labels_path);

/* CSV with a header row. Every column but the label column is a float32
 * feature; the label column (by name) gives int64 class indices, or
 * float32 one-hot rows when one_hot_classes > 0. label_column NULL: no labels. */
typedef struct {
    const char *label_column;
    int one_hot_classes;
} tw_csv_options;
/* Parse from memory into features (rows, columns) float32 and labels. */
int tw_csv_parse(const char *text, size_t size, const char *name, const tw_csv_options *options,
                 tw_tensor **features, tw_tensor **labels);
tw_dataset *tw_dataset_csv(const char *path, const tw_csv_options *options);

/* Fashion-MNIST by name: split "train" (60,000) or "test" (10,000), from
 * $TWB_DATA_DIR or /usr/share/datasets/fashion-mnist; elements are
 * ((28, 28) uint8 image, uint8 label). The error says how to install it. */
tw_dataset *tw_dataset_fashion_mnist(const char *split);
/* Fashion-MNIST's ten class names, by label ("T-shirt/top", ...). */
extern const char *const tw_fashion_mnist_classes[10];

/* Synthetic sets, all seeded. */
/* The seeds' linear set: x ~ N(0, 1), y = 3x + 2 + N(0, noise^2); float32 scalars. */
tw_dataset *tw_dataset_linear(int64_t n, double noise, uint64_t seed);
/* Two interleaved spirals: (2,) float32 points, int64 labels 0/1. */
tw_dataset *tw_dataset_spirals(int64_t n, double noise, uint64_t seed);
/* Gaussian blobs around `centers` random centres in `dims` dimensions. */
tw_dataset *tw_dataset_blobs(int64_t n, int centers, int dims, double stddev, uint64_t seed);

/* ---- transformations (each takes over its input's reference) -------------- */
/* fn maps one element to another (out starts empty); return 0, or -1 with an
 * error set. user_data is released with destroy (may be NULL) with the dataset. */
typedef int (*tw_map_fn)(const tw_element *in, tw_element *out, void *user_data);
tw_dataset *tw_dataset_map(tw_dataset *ds, tw_map_fn fn, void *user_data, void (*destroy)(void *));
/* Uniform shuffle within a buffer; buffer >= cardinality is a full shuffle. */
tw_dataset *tw_dataset_shuffle(tw_dataset *ds, int64_t buffer_size, uint64_t seed, bool reshuffle_each_iteration);
/* Stack batch_size consecutive elements; the last batch may be smaller
 * unless drop_remainder. */
tw_dataset *tw_dataset_batch(tw_dataset *ds, int64_t batch_size, bool drop_remainder);
/* count < 0: forever. */
tw_dataset *tw_dataset_repeat(tw_dataset *ds, int64_t count);
tw_dataset *tw_dataset_take(tw_dataset *ds, int64_t count);
tw_dataset *tw_dataset_skip(tw_dataset *ds, int64_t count);
/* Keep the first pass in memory; later passes replay it. */
tw_dataset *tw_dataset_cache(tw_dataset *ds);
/* Produce up to buffer_size elements ahead on a background thread. */
tw_dataset *tw_dataset_prefetch(tw_dataset *ds, int64_t buffer_size);
/* Cast component `component` (a uint8 image) to float32 times scale
 * (1/255 maps pixels to [0, 1]). */
tw_dataset *tw_dataset_scale(tw_dataset *ds, int component, double scale);
/* Keras' validation_split: the last `fraction` of a finite dataset is the
 * validation part, the rest the training part. Takes over ds's reference;
 * both results are new references. */
int tw_dataset_split(tw_dataset *ds, double validation_fraction, tw_dataset **train, tw_dataset **validation);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
