/* Writing NPY files (format 1.0, C order, little-endian), the counterpart of
 * tw_npy_load: what `twb predict --output` and other tools hand to NumPy.
 * Written whole to a temporary file and renamed, so a reader never sees half
 * a file. */
#include <stdio.h>
#include <string.h>

#include <glib.h>

#include "tw/data.h"

static const char *descr(tw_dtype dtype)
{
    switch (dtype) {
    case TW_FLOAT32: return "<f4";
    case TW_FLOAT64: return "<f8";
    case TW_INT32: return "<i4";
    case TW_INT64: return "<i8";
    case TW_UINT8: return "|u1";
    case TW_BOOL: return "|b1";
    default: return NULL;
    }
}

/* The header dict, padded with spaces and a newline so the data starts at a
 * multiple of 64 bytes, as NumPy writes it. */
static GString *header(const tw_tensor *t)
{
    GString *h = g_string_new(NULL);
    g_string_append_printf(h, "{'descr': '%s', 'fortran_order': False, 'shape': (", descr(tw_tensor_dtype(t)));
    for (int i = 0; i < tw_tensor_ndim(t); i++)
        g_string_append_printf(h, "%lld,%s", (long long)tw_tensor_dim(t, i), i + 1 < tw_tensor_ndim(t) ? " " : "");
    g_string_append(h, "), }");
    while ((10 + h->len + 1) % 64)
        g_string_append_c(h, ' ');
    g_string_append_c(h, '\n');
    return h;
}

int tw_npy_save(const char *path, const tw_tensor *t)
{
    if (!t)
        return tw_error_set("%s: no tensor to write", path);
    if (!descr(tw_tensor_dtype(t)))
        return tw_error_set("%s: cannot write dtype %s as NPY", path, tw_dtype_name(tw_tensor_dtype(t)));
    GString *h = header(t);
    size_t data_bytes = (size_t)tw_tensor_numel(t) * tw_dtype_size(tw_tensor_dtype(t));
    size_t total = 10 + h->len + data_bytes;
    char *buf = g_malloc(total);
    memcpy(buf, "\x93NUMPY\x01\x00", 8);
    buf[8] = (char)(h->len & 0xff);
    buf[9] = (char)(h->len >> 8);
    memcpy(buf + 10, h->str, h->len);
    int rc = tw_tensor_copy_to(t, buf + 10 + h->len, data_bytes);
    GError *error = NULL;
    if (!rc && !g_file_set_contents_full(path, buf, (gssize)total,
                                         G_FILE_SET_CONTENTS_CONSISTENT | G_FILE_SET_CONTENTS_DURABLE, 0644, &error))
        rc = tw_error_set("%s", error->message);
    g_clear_error(&error);
    g_string_free(h, TRUE);
    g_free(buf);
    return rc;
}
