/* The safetensors header as data: parsing the JSON (checked field by field
 * against the data buffer it describes) and writing it. Not installed. */
#ifndef TW_SAFETENSORS_INTERNAL_H
#define TW_SAFETENSORS_INTERNAL_H

#include <stdint.h>

#include "tw/checkpoint.h"

/* Headers past this are refused before being read (the reference
 * implementation's limit too). */
#define TW_SAFETENSORS_MAX_HEADER ((uint64_t)100 * 1000 * 1000)

typedef struct {
    char *name;
    tw_dtype dtype;
    int ndim;
    int64_t shape[TW_MAX_DIMS];
    uint64_t begin, end; /* byte offsets into the data buffer */
} tw_st_entry;

typedef struct {
    int n;
    tw_st_entry *entries; /* sorted by begin: the order of the data */
    int nmeta;
    char **meta_keys, **meta_values;
} tw_st_header;

/* "F32" <-> TW_FLOAT32; -1 for a name outside the six supported. */
int tw__st_dtype_from_name(const char *name, size_t len);
const char *tw__st_dtype_name(tw_dtype dtype);

/* Parse the JSON header json[0..size) that sits at file offset 8 and
 * describes a data buffer of buffer_size bytes, and check it: known dtypes,
 * shapes whose byte sizes match their offsets, offsets inside the buffer
 * covering it exactly, without overlaps or gaps. On failure: -1 with a
 * message naming `name` and the byte offset, and *h empty. */
int tw__st_header_parse(const uint8_t *json, size_t size, uint64_t buffer_size, const char *name,
                        tw_st_header *h);
void tw__st_header_clear(tw_st_header *h);

/* The JSON for a header whose entries' offsets are set, padded with spaces
 * to a multiple of 8 bytes (g_free; NULL with a message naming path when a
 * name or string is not valid UTF-8 or a name is repeated). */
char *tw__st_header_format(const tw_st_header *h, const char *path, size_t *size);

#endif
