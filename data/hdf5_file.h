/* HDF5 files in memory through libhdf5 (what Keras' .h5 files and the
 * model.weights.h5 inside a .keras archive are): open an image, read string
 * attributes and datasets as tensors, create an image and write them.
 * HDF5 prints no error stacks (H5Eset_auto off); its innermost message is
 * put into ours, after the name of the file. Every function here holds one
 * lock while it calls the library (take tw__h5_lock() around a sequence of
 * calls): Debian's libhdf5 is thread-safe, but one built without
 * --enable-threadsafe is not, and the automatic error printing is
 * switched off per thread, on every entry. Not installed. */
#ifndef TW_HDF5_FILE_H
#define TW_HDF5_FILE_H

#include <hdf5.h>
#include <stddef.h>
#include <stdint.h>

#include "tw/tensor.h"

/* HDF5's signature at byte 0 (files with a user block are not taken). */
#define TW_H5_SIGNATURE "\x89HDF\r\n\x1a\n"
int tw__h5_is_hdf5(const uint8_t *bytes, size_t size);

/* The offset of a global heap collection libhdf5 1.10 would loop on or
 * overrun (hdf5_heap_check.c), with why, or -1; tw__h5_open_image refuses
 * such files. */
long long tw__h5_damaged_global_heap(const uint8_t *bytes, size_t size, const char **why);

/* The one lock around libhdf5 (recursive). */
void tw__h5_lock(void);
void tw__h5_unlock(void);

/* Open bytes as a read-only file; H5I_INVALID_HID with "name: not an HDF5
 * file (...)" on failure. Close with H5Fclose. */
hid_t tw__h5_open_image(const uint8_t *bytes, size_t size, const char *name);
/* An empty file in memory, for writing. */
hid_t tw__h5_create_image(const char *name);
/* The file's bytes as written so far (malloc'd). */
uint8_t *tw__h5_image_bytes(hid_t file, const char *name, size_t *size);

/* Whether an attribute / link exists (0 or 1; never an error). */
int tw__h5_has_attr(hid_t obj, const char *attr);
int tw__h5_has_link(hid_t loc, const char *path);

/* A scalar string attribute (fixed or variable length), malloc'd; NULL
 * with a message naming `where` (file:group) when absent or not a string. */
char *tw__h5_attr_string(hid_t obj, const char *attr, const char *where);
/* A list of strings stored as Keras stores layer_names and weight_names:
 * one string array attribute, or, when it would not fit in an object
 * header, the chunks attr0, attr1, ... . A NULL-terminated vector for
 * g_strfreev; NULL with a message when absent or malformed. */
char **tw__h5_attr_strings(hid_t obj, const char *attr, const char *where);

/* Write a scalar variable-length UTF-8 string attribute (what h5py writes
 * for a Python str) / a list of fixed-length byte strings (what Keras
 * writes from a NumPy array of bytes), chunked as Keras chunks them. */
int tw__h5_set_attr_string(hid_t obj, const char *attr, const char *value, const char *where);
int tw__h5_set_attr_strings(hid_t obj, const char *attr, int n, const char *const *values, const char *where);

/* The dataset at path (relative to loc) as a new tensor: float32/64,
 * int32/64 and uint8 of at most TW_MAX_DIMS dimensions. A dataset larger
 * than max_bytes is refused before it is read. */
tw_tensor *tw__h5_read_tensor(hid_t loc, const char *path, size_t max_bytes, const char *where);
/* Write a tensor as a new contiguous dataset at path (intermediate groups
 * created). */
int tw__h5_write_tensor(hid_t loc, const char *path, const tw_tensor *t, const char *where);
/* Create (or open) the group at path, intermediate groups included; close it
 * with H5Gclose. */
hid_t tw__h5_group(hid_t loc, const char *path, const char *where);

/* Sets the engine's error to "<where>: <what>: <HDF5's innermost
 * message>" and returns -1. */
int tw__h5_fail(const char *where, const char *what);

#endif
