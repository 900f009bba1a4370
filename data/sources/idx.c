/* IDX files (the MNIST format), raw or gzip-compressed.
 *
 * Layout: two zero bytes, a type byte, the number of dimensions, then one
 * big-endian uint32 per dimension, then the data, big-endian, row-major.
 * Every size is checked against the bytes actually there before anything is
 * allocated. */
#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dataset_internal.h"
#include "file_bytes.h"

typedef struct {
    int type;           /* the IDX type byte */
    int ndim;
    int64_t shape[TW_MAX_DIMS];
    size_t item_size;   /* bytes per value in the file */
    tw_dtype dtype;     /* what the values become */
    size_t header_size; /* where the data starts */
    uint64_t data_size; /* bytes of data the header declares */
} idx_header;

typedef enum { HEADER_OK, HEADER_MORE, HEADER_BAD } header_status;

static bool idx_type(int type, size_t *item_size, tw_dtype *dtype)
{
    switch (type) {
    case 0x08: *item_size = 1; *dtype = TW_UINT8; return true;
    case 0x09: *item_size = 1; *dtype = TW_INT32; return true;
    case 0x0B: *item_size = 2; *dtype = TW_INT32; return true;
    case 0x0C: *item_size = 4; *dtype = TW_INT32; return true;
    case 0x0D: *item_size = 4; *dtype = TW_FLOAT32; return true;
    case 0x0E: *item_size = 8; *dtype = TW_FLOAT64; return true;
    default: return false;
    }
}

static const char *idx_type_name(int type)
{
    switch (type) {
    case 0x08: return "uint8";
    case 0x09: return "int8";
    case 0x0B: return "int16";
    case 0x0C: return "int32";
    case 0x0D: return "float32";
    default: return "float64";
    }
}

static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

/* "60000x28x28" */
static void dims_str(const idx_header *h, char *buf, size_t size)
{
    size_t used = 0;
    buf[0] = '\0';
    if (h->ndim == 0)
        snprintf(buf, size, "a scalar");
    for (int d = 0; d < h->ndim && used < size; d++)
        used += (size_t)snprintf(buf + used, size - used, "%s%lld", d ? "x" : "", (long long)h->shape[d]);
}

/* Read the header from the first `size` bytes. With name non-NULL a
 * problem is reported as an error naming it (HEADER_MORE then means a
 * truncated file); with NULL it is only classified. */
static header_status idx_read_header(const uint8_t *b, size_t size, const char *name, idx_header *h)
{
    if (size < 4) {
        if (name)
            tw_error_set("%s: truncated IDX header: the file has %zu bytes but the header needs at least 4 "
                         "(magic number at byte offset 0)",
                         name, size);
        return HEADER_MORE;
    }
    if (b[0] != 0 || b[1] != 0) {
        if (name)
            tw_error_set("%s: not an IDX file: wrong magic number %02x %02x %02x %02x at byte offset 0 (IDX "
                         "files start with 00 00, a type byte and the number of dimensions)",
                         name, b[0], b[1], b[2], b[3]);
        return HEADER_BAD;
    }
    h->type = b[2];
    if (!idx_type(h->type, &h->item_size, &h->dtype)) {
        if (name)
            tw_error_set("%s: unknown IDX data type 0x%02x at byte offset 2 (known: 0x08 uint8, 0x09 int8, 0x0B "
                         "int16, 0x0C int32, 0x0D float32, 0x0E float64)",
                         name, b[2]);
        return HEADER_BAD;
    }
    h->ndim = b[3];
    if (h->ndim > TW_MAX_DIMS) {
        if (name)
            tw_error_set("%s: the IDX header declares %d dimensions at byte offset 3; at most %d are supported", name,
                         h->ndim, TW_MAX_DIMS);
        return HEADER_BAD;
    }
    h->header_size = 4 + 4 * (size_t)h->ndim;
    if (size < h->header_size) {
        if (name)
            tw_error_set("%s: truncated IDX header: %d dimensions need %zu header bytes but the file has %zu", name,
                         h->ndim, h->header_size, size);
        return HEADER_MORE;
    }
    /* The product must fit both as bytes and as the engine's int64 element
     * counts and strides, counting a zero dimension as one. */
    uint64_t elements = 1, bytes = h->item_size;
    bool overflow = false;
    for (int d = 0; d < h->ndim; d++) {
        uint32_t n = be32(b + 4 + 4 * (size_t)d);
        h->shape[d] = n;
        overflow |= __builtin_mul_overflow(elements, n ? n : 1, &elements);
        overflow |= __builtin_mul_overflow(bytes, n, &bytes);
    }
    overflow |= elements > INT64_MAX / 8 || bytes > (uint64_t)(SIZE_MAX / 2);
    if (overflow) {
        if (name) {
            char dims[160];
            dims_str(h, dims, sizeof dims);
            tw_error_set("%s: the IDX header declares %s %s values at byte offset 4, more than can be addressed", name,
                         dims, idx_type_name(h->type));
        }
        return HEADER_BAD;
    }
    h->data_size = bytes;
    return HEADER_OK;
}

static size_t idx_expected_size(const uint8_t *head, size_t size)
{
    idx_header h;
    switch (idx_read_header(head, size, NULL, &h)) {
    case HEADER_MORE: return TW_SIZE_MORE;
    case HEADER_BAD: return TW_SIZE_INVALID;
    default: return h.header_size + (size_t)h.data_size;
    }
}

tw_tensor *tw_idx_parse(const uint8_t *bytes, size_t size, const char *name)
{
    if (!name)
        name = "idx";
    if (!bytes && size > 0) {
        tw_error_set("%s: the data pointer is NULL", name);
        return NULL;
    }
    idx_header h;
    if (idx_read_header(bytes, size, name, &h) != HEADER_OK)
        return NULL;
    size_t remaining = size - h.header_size;
    if (h.data_size != remaining) {
        char dims[160];
        dims_str(&h, dims, sizeof dims);
        if (h.item_size == 1)
            tw_error_set("%s: header declares %s = %llu bytes of data but the file has %zu bytes after offset %zu",
                         name, dims, (unsigned long long)h.data_size, remaining, h.header_size);
        else
            tw_error_set("%s: header declares %s %s values = %llu bytes of data but the file has %zu bytes after "
                         "offset %zu",
                         name, dims, idx_type_name(h.type), (unsigned long long)h.data_size, remaining,
                         h.header_size);
        return NULL;
    }
    tw_tensor *t = tw_tensor_empty_on(TW_CPU, h.dtype, h.ndim, h.shape);
    if (!t)
        return NULL;
    const uint8_t *src = bytes + h.header_size;
    size_t n = (size_t)tw_tensor_numel(t);
    switch (h.type) {
    case 0x08:
        if (n)
            memcpy(tw_tensor_data(t), src, n);
        break;
    case 0x09: {
        int32_t *dst = tw_tensor_data(t);
        for (size_t i = 0; i < n; i++)
            dst[i] = (int8_t)src[i];
        break;
    }
    case 0x0B: {
        int32_t *dst = tw_tensor_data(t);
        for (size_t i = 0; i < n; i++)
            dst[i] = (int16_t)(uint16_t)(src[2 * i] << 8 | src[2 * i + 1]);
        break;
    }
    case 0x0C:
    case 0x0D: { /* both 4-byte: reverse the bytes into place */
        uint32_t *dst = tw_tensor_data(t);
        for (size_t i = 0; i < n; i++)
            dst[i] = be32(src + 4 * i);
        break;
    }
    default: {
        uint64_t *dst = tw_tensor_data(t);
        for (size_t i = 0; i < n; i++)
            dst[i] = (uint64_t)be32(src + 8 * i) << 32 | be32(src + 8 * i + 4);
        break;
    }
    }
    return t;
}

tw_tensor *tw_idx_load(const char *path)
{
    size_t size;
    uint8_t *bytes = tw__file_bytes(path, idx_expected_size, &size);
    if (!bytes)
        return NULL;
    tw_tensor *t = tw_idx_parse(bytes, size, path);
    free(bytes);
    return t;
}

tw_dataset *tw_dataset_idx(const char *images_path, const char *labels_path)
{
    if (!images_path) {
        tw_error_set("idx: the images path is NULL");
        return NULL;
    }
    tw_dataset *ds = NULL;
    tw_scope_begin();
    tw_tensor *images = tw_idx_load(images_path);
    tw_tensor *labels = images && labels_path ? tw_idx_load(labels_path) : NULL;
    if (!images || (labels_path && !labels))
        goto done;
    if (tw_tensor_ndim(images) < 1) {
        tw_error_set("idx: %s holds a scalar; a dataset needs a first axis to slice", images_path);
        goto done;
    }
    if (labels) {
        if (tw_tensor_ndim(labels) < 1) {
            tw_error_set("idx: %s holds a scalar; a dataset needs a first axis to slice", labels_path);
            goto done;
        }
        if (tw_tensor_dim(labels, 0) != tw_tensor_dim(images, 0)) {
            tw_error_set("idx: %s has %lld images but %s has %lld labels; the counts must agree", images_path,
                         (long long)tw_tensor_dim(images, 0), labels_path, (long long)tw_tensor_dim(labels, 0));
            goto done;
        }
    }
    ds = labels ? tw_dataset_from_tensors(TW_TENSORS(images, labels)) : tw_dataset_from_tensors(TW_TENSORS(images));
    if (ds) {
        g_free(ds->name);
        ds->name = g_strdup("idx");
    }
done:
    tw_scope_end();
    return ds;
}
