/* NPY files (NumPy's np.save format), versions 1.0, 2.0 and 3.0, raw,
 * gzip-compressed or inside an NPZ archive (np.savez, stored or deflated:
 * "data.npz:x_train" names one array; "data.npz" is enough when it holds
 * one).
 *
 * Layout: "\x93NUMPY", major and minor version bytes, the header length
 * (2 bytes little-endian in 1.0, 4 bytes in 2.0 and 3.0), then the header:
 * a Python dict literal such as
 *     {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }
 * padded with spaces and ended by a newline (3.0 allows UTF-8 in it), then
 * the data. The header is parsed as a small grammar (any key order, any
 * spacing, trailing commas); sizes are checked against the bytes actually
 * there before anything is allocated. */
#include <glib.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dataset_internal.h"
#include "file_bytes.h"
#include "../byte_cursor.h"

static const uint8_t npy_magic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};

typedef struct {
    char descr[16];
    char order;         /* '<', '>', '|' or '=' */
    char kind;          /* 'f', 'i', 'u', 'b' */
    size_t item_size;   /* bytes per value in the file */
    tw_dtype dtype;     /* what the values become */
    int ndim;
    int64_t shape[TW_MAX_DIMS];
    size_t data_offset; /* where the data starts */
    uint64_t data_size; /* bytes of data the header declares */
} npy_header;

typedef enum { HEADER_OK, HEADER_MORE, HEADER_BAD } header_status;

/* The header text being parsed; offsets in messages are file offsets. */
typedef tw_byte_cursor cursor;

static int fail(cursor *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(cursor *c, const char *fmt, ...)
{
    if (!c->name)
        return -1;
    va_list ap;
    va_start(ap, fmt);
    char *what = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    tw_error_set("%s: bad NPY header at byte offset %zu: %s", c->name, c->pos, what);
    g_free(what);
    return -1;
}

static bool peek(cursor *c, char ch)
{
    tw__cursor_skip_space(c);
    return c->pos < c->end && c->b[c->pos] == (uint8_t)ch;
}

static int expect(cursor *c, char ch, const char *what)
{
    char buf[32];
    if (!peek(c, ch))
        return fail(c, "expected '%c' %s, found %s", ch, what, tw__cursor_found(c, buf, sizeof buf));
    c->pos++;
    return 0;
}

/* A Python string literal: its raw contents [*start, *start + *len). */
static int parse_string(cursor *c, size_t *start, size_t *len)
{
    char buf[32];
    tw__cursor_skip_space(c);
    if (c->pos >= c->end || (c->b[c->pos] != '\'' && c->b[c->pos] != '"'))
        return fail(c, "expected a quoted string, found %s", tw__cursor_found(c, buf, sizeof buf));
    uint8_t quote = c->b[c->pos];
    size_t open = c->pos++;
    *start = c->pos;
    while (c->pos < c->end && c->b[c->pos] != quote) {
        if (c->b[c->pos] == '\\' && c->pos + 1 < c->end)
            c->pos++;
        c->pos++;
    }
    if (c->pos >= c->end) {
        c->pos = open;
        return fail(c, "the string that starts here is not closed");
    }
    *len = c->pos - *start;
    c->pos++;
    return 0;
}

static bool is_word_char(uint8_t ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_' ||
           ch == '.' || ch == '-' || ch == '+';
}

/* A bare word (True, False, None, a number): [*start, *start + *len). */
static int parse_word(cursor *c, size_t *start, size_t *len)
{
    char buf[32];
    tw__cursor_skip_space(c);
    *start = c->pos;
    while (c->pos < c->end && is_word_char(c->b[c->pos]))
        c->pos++;
    *len = c->pos - *start;
    if (*len == 0)
        return fail(c, "expected a value, found %s", tw__cursor_found(c, buf, sizeof buf));
    return 0;
}

static bool word_is(const cursor *c, size_t start, size_t len, const char *word)
{
    return len == strlen(word) && memcmp(c->b + start, word, len) == 0;
}

/* Any value, skipped (for keys this reader does not use). */
static int skip_value(cursor *c, int depth)
{
    size_t s, n;
    if (depth > 32)
        return fail(c, "values nested too deeply");
    tw__cursor_skip_space(c);
    if (c->pos < c->end && (c->b[c->pos] == '\'' || c->b[c->pos] == '"'))
        return parse_string(c, &s, &n);
    if (c->pos < c->end && (c->b[c->pos] == '(' || c->b[c->pos] == '[' || c->b[c->pos] == '{')) {
        char close = c->b[c->pos] == '(' ? ')' : c->b[c->pos] == '[' ? ']' : '}';
        c->pos++;
        while (!peek(c, close)) {
            if (skip_value(c, depth + 1) < 0)
                return -1;
            if (close == '}' && expect(c, ':', "after a key") < 0)
                return -1;
            if (close == '}' && skip_value(c, depth + 1) < 0)
                return -1;
            if (!peek(c, ','))
                break;
            c->pos++;
        }
        return expect(c, close, "to close a bracket");
    }
    return parse_word(c, &s, &n);
}

/* 'descr': the dtype string. */
static int parse_descr(cursor *c, npy_header *h)
{
    if (peek(c, '[') || peek(c, '{'))
        return fail(c, "'descr' is a structured dtype (a list of fields); only plain numeric arrays are supported");
    size_t s, n;
    size_t at = (tw__cursor_skip_space(c), c->pos);
    if (parse_string(c, &s, &n) < 0)
        return -1;
    if (n == 0 || n >= sizeof h->descr) {
        c->pos = at;
        return fail(c, "'descr' %s is not a dtype this reader knows",
                    n ? "is too long and" : "is empty and");
    }
    memcpy(h->descr, c->b + s, n);
    h->descr[n] = '\0';
    const char *d = h->descr;
    h->order = '|';
    if (*d == '<' || *d == '>' || *d == '|' || *d == '=')
        h->order = *d++;
    h->kind = *d++;
    char *end;
    long size = strtol(d, &end, 10);
    bool known = *d >= '0' && *d <= '9' && *end == '\0';
    if (known) {
        h->item_size = (size_t)size;
        switch (h->kind) {
        case 'f':
            known = size == 2 || size == 4 || size == 8;
            h->dtype = size == 8 ? TW_FLOAT64 : TW_FLOAT32;
            break;
        case 'i':
            known = size == 1 || size == 2 || size == 4 || size == 8;
            h->dtype = size == 8 ? TW_INT64 : TW_INT32;
            break;
        case 'u':
            known = size == 1 || size == 2 || size == 4;
            h->dtype = size == 1 ? TW_UINT8 : size == 4 ? TW_INT64 : TW_INT32;
            break;
        case 'b':
            known = size == 1;
            h->dtype = TW_BOOL;
            break;
        default:
            known = false;
        }
    }
    if (!known) {
        c->pos = at;
        return fail(c, "dtype '%s' is not supported (supported: f2 f4 f8, i1 i2 i4 i8, u1 u2 u4, b1, little- or "
                       "big-endian)",
                    h->descr);
    }
    return 0;
}

/* 'shape': a tuple of non-negative integers. */
static int parse_shape(cursor *c, npy_header *h)
{
    char buf[32];
    if (expect(c, '(', "to open the shape tuple") < 0)
        return -1;
    h->ndim = 0;
    while (!peek(c, ')')) {
        if (h->ndim == TW_MAX_DIMS)
            return fail(c, "the shape has more than %d dimensions", TW_MAX_DIMS);
        size_t s, n;
        if (parse_word(c, &s, &n) < 0)
            return -1;
        int64_t v = 0;
        size_t i = 0;
        for (; i < n && c->b[s + i] >= '0' && c->b[s + i] <= '9'; i++) {
            if (v > (INT64_MAX - 9) / 10) {
                c->pos = s;
                return fail(c, "shape dimension %d is too large", h->ndim);
            }
            v = v * 10 + (c->b[s + i] - '0');
        }
        if (i < n && (c->b[s + i] == 'L' || c->b[s + i] == 'l')) /* Python 2's long literals */
            i++;
        if (i == 0 || i != n) {
            c->pos = s;
            return fail(c, "shape dimension %d is not a non-negative integer: %s", h->ndim, tw__cursor_found(c, buf, sizeof buf));
        }
        h->shape[h->ndim++] = v;
        if (!peek(c, ','))
            break;
        c->pos++;
    }
    return expect(c, ')', "to close the shape tuple");
}

static int parse_dict(cursor *c, npy_header *h)
{
    bool have_descr = false, have_order = false, have_shape = false;
    size_t dict_at = (tw__cursor_skip_space(c), c->pos);
    if (expect(c, '{', "to open the header dict") < 0)
        return -1;
    while (!peek(c, '}')) {
        size_t s, n;
        if (parse_string(c, &s, &n) < 0)
            return -1;
        if (expect(c, ':', "after a key") < 0)
            return -1;
        if (word_is(c, s, n, "descr")) {
            if (parse_descr(c, h) < 0)
                return -1;
            have_descr = true;
        } else if (word_is(c, s, n, "fortran_order")) {
            size_t ws, wn;
            if (parse_word(c, &ws, &wn) < 0)
                return -1;
            if (word_is(c, ws, wn, "True")) {
                c->pos = ws;
                return fail(c, "fortran_order is True; only C-order arrays are supported (save "
                               "np.ascontiguousarray(a) instead)");
            }
            if (!word_is(c, ws, wn, "False")) {
                c->pos = ws;
                return fail(c, "fortran_order must be True or False");
            }
            have_order = true;
        } else if (word_is(c, s, n, "shape")) {
            if (parse_shape(c, h) < 0)
                return -1;
            have_shape = true;
        } else {
            if (skip_value(c, 0) < 0)
                return -1;
        }
        if (!peek(c, ','))
            break;
        c->pos++;
    }
    if (expect(c, '}', "to close the header dict") < 0)
        return -1;
    tw__cursor_skip_space(c);
    if (c->pos < c->end) {
        char buf[32];
        return fail(c, "unexpected %s after the header dict", tw__cursor_found(c, buf, sizeof buf));
    }
    if (!have_descr || !have_order || !have_shape) {
        c->pos = dict_at;
        return fail(c, "the header dict lacks %s",
                    !have_descr ? "'descr'" : !have_order ? "'fortran_order'" : "'shape'");
    }
    return 0;
}

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static header_status npy_read_header(const uint8_t *b, size_t size, const char *name, npy_header *h)
{
    memset(h, 0, sizeof *h);
    size_t have = size < 8 ? size : 8;
    if (have > 0 && memcmp(b, npy_magic, have < 6 ? have : 6) != 0) {
        if (name) {
            char got[40] = "";
            for (size_t i = 0; i < have && i < 6; i++)
                snprintf(got + 3 * i, sizeof got - 3 * i, "%02x ", b[i]);
            tw_error_set("%s: not an NPY file: wrong magic number %sat byte offset 0 (NPY files start with "
                         "\\x93NUMPY)",
                         name, got);
        }
        return HEADER_BAD;
    }
    if (size < 8) {
        if (name)
            tw_error_set("%s: truncated NPY header: the file has %zu bytes; the magic number and version need 8",
                         name, size);
        return HEADER_MORE;
    }
    int major = b[6], minor = b[7];
    if (major < 1 || major > 3) {
        if (name)
            tw_error_set("%s: NPY format version %d.%d at byte offset 6 is not supported (1.0, 2.0 and 3.0 are)",
                         name, major, minor);
        return HEADER_BAD;
    }
    size_t len_size = major == 1 ? 2 : 4;
    if (size < 8 + len_size) {
        if (name)
            tw_error_set("%s: truncated NPY header: the file has %zu bytes; the header length at byte offset 8 "
                         "needs %zu",
                         name, size, 8 + len_size);
        return HEADER_MORE;
    }
    size_t header_len = major == 1 ? (size_t)b[8] | (size_t)b[9] << 8 : le32(b + 8);
    size_t start = 8 + len_size;
    if (size - start < header_len) {
        if (name)
            tw_error_set("%s: truncated NPY header: the header length at byte offset 8 says %zu bytes but the file "
                         "has %zu after offset %zu",
                         name, header_len, size - start, start);
        return header_len > (size_t)64 << 20 ? HEADER_BAD : HEADER_MORE;
    }
    cursor c = {b, start, start + header_len, name};
    if (parse_dict(&c, h) < 0)
        return HEADER_BAD;
    h->data_offset = start + header_len;
    uint64_t elements = 1, bytes = h->item_size;
    bool overflow = false;
    for (int d = 0; d < h->ndim; d++) {
        uint64_t n = (uint64_t)h->shape[d];
        overflow |= __builtin_mul_overflow(elements, n ? n : 1, &elements);
        overflow |= __builtin_mul_overflow(bytes, n, &bytes);
    }
    overflow |= elements > INT64_MAX / 8 || bytes > (uint64_t)(SIZE_MAX / 2);
    if (overflow) {
        if (name) {
            char dims[200];
            tw_error_set("%s: the NPY header declares shape %s of '%s', more than can be addressed (header at "
                         "byte offset %zu)",
                         name, tw_shape_str(h->ndim, h->shape, dims, sizeof dims), h->descr, start);
        }
        return HEADER_BAD;
    }
    h->data_size = bytes;
    return HEADER_OK;
}

static size_t npy_expected_size(const uint8_t *head, size_t size)
{
    npy_header h;
    switch (npy_read_header(head, size, NULL, &h)) {
    case HEADER_MORE: return TW_SIZE_MORE;
    case HEADER_BAD: return TW_SIZE_INVALID;
    default: return h.data_offset + (size_t)h.data_size;
    }
}

static float half_to_float(uint16_t h)
{
    int sign = h >> 15, exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff;
    float v;
    if (exponent == 0)
        v = ldexpf((float)mantissa, -24);
    else if (exponent == 31)
        v = mantissa ? NAN : INFINITY;
    else
        v = ldexpf((float)(mantissa | 0x400), exponent - 25);
    return sign ? -v : v;
}

static bool host_is_little(void)
{
    return __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__;
}

/* Value i of the file's data as raw bits, in host order. */
static inline uint64_t load_bits(const uint8_t *p, size_t size, bool big)
{
    uint64_t v = 0;
    if (big)
        for (size_t k = 0; k < size; k++)
            v = v << 8 | p[k];
    else
        for (size_t k = size; k-- > 0;)
            v = v << 8 | p[k];
    return v;
}

static void convert(const npy_header *h, const uint8_t *src, void *dst, size_t n)
{
    bool big = h->order == '>' || (h->order == '=' && !host_is_little());
    bool native = h->item_size == 1 || big != host_is_little();
    size_t size = h->item_size;
    /* Same layout in the file and in the tensor: one copy. */
    if (native && size == tw_dtype_size(h->dtype) && h->kind != 'b' && !(h->kind == 'u' && size == 4) &&
        !(h->kind == 'f' && size == 2)) {
        if (n)
            memcpy(dst, src, n * size);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        uint64_t bits = load_bits(src + i * size, size, big);
        switch (h->dtype) {
        case TW_FLOAT32: {
            float f;
            if (size == 2) {
                f = half_to_float((uint16_t)bits);
            } else {
                uint32_t w = (uint32_t)bits;
                memcpy(&f, &w, 4);
            }
            ((float *)dst)[i] = f;
            break;
        }
        case TW_FLOAT64:
            memcpy((double *)dst + i, &bits, 8);
            break;
        case TW_INT32:
            if (h->kind == 'u')
                ((int32_t *)dst)[i] = (int32_t)bits;
            else if (size == 1)
                ((int32_t *)dst)[i] = (int8_t)bits;
            else if (size == 2)
                ((int32_t *)dst)[i] = (int16_t)bits;
            else
                ((int32_t *)dst)[i] = (int32_t)(uint32_t)bits;
            break;
        case TW_INT64:
            ((int64_t *)dst)[i] = h->kind == 'u' ? (int64_t)(uint32_t)bits : (int64_t)bits;
            break;
        case TW_UINT8:
            ((uint8_t *)dst)[i] = (uint8_t)bits;
            break;
        case TW_BOOL:
            ((uint8_t *)dst)[i] = bits != 0;
            break;
        default:
            break;
        }
    }
}

tw_tensor *tw_npy_parse(const uint8_t *bytes, size_t size, const char *name)
{
    if (!name)
        name = "npy";
    if (!bytes && size > 0) {
        tw_error_set("%s: the data pointer is NULL", name);
        return NULL;
    }
    npy_header h;
    if (npy_read_header(bytes, size, name, &h) != HEADER_OK)
        return NULL;
    size_t remaining = size - h.data_offset;
    if (h.data_size != remaining) {
        char dims[200];
        tw_error_set("%s: header declares shape %s of '%s' = %llu bytes of data but the file has %zu bytes after "
                     "offset %zu",
                     name, tw_shape_str(h.ndim, h.shape, dims, sizeof dims), h.descr,
                     (unsigned long long)h.data_size, remaining, h.data_offset);
        return NULL;
    }
    tw_tensor *t = tw_tensor_empty_on(TW_CPU, h.dtype, h.ndim, h.shape);
    if (!t)
        return NULL;
    convert(&h, bytes + h.data_offset, tw_tensor_data(t), (size_t)tw_tensor_numel(t));
    return t;
}

/* One array of an NPZ archive: `member` names it (with or without ".npy"),
 * or the archive holds exactly one. */
static tw_tensor *npz_load(const uint8_t *zip, size_t size, const char *path, const char *member)
{
    char **names = tw__zip_list(zip, size, path);
    if (!names)
        return NULL;
    const char *chosen = NULL;
    guint count = g_strv_length(names);
    for (guint i = 0; i < count && member && !chosen; i++) {
        size_t n = strlen(names[i]);
        if (strcmp(names[i], member) == 0 ||
            (n == strlen(member) + 4 && g_str_has_suffix(names[i], ".npy") && strncmp(names[i], member, n - 4) == 0))
            chosen = names[i];
    }
    if (!member && count == 1)
        chosen = names[0];
    tw_tensor *t = NULL;
    if (!chosen) {
        GString *list = g_string_new(NULL);
        for (guint i = 0; i < count; i++) {
            size_t n = strlen(names[i]);
            g_string_append_printf(list, "%s%.*s", i ? ", " : "",
                                   (int)(g_str_has_suffix(names[i], ".npy") ? n - 4 : n), names[i]);
        }
        if (count == 0)
            tw_error_set("%s: the NPZ archive holds no arrays", path);
        else if (member)
            tw_error_set("%s: no array '%s' in the NPZ archive; it holds: %s", path, member, list->str);
        else
            tw_error_set("%s: the NPZ archive holds %u arrays (%s); name one as %s:NAME", path, count, list->str,
                         path);
        g_string_free(list, TRUE);
        g_strfreev(names);
        return NULL;
    }
    size_t n;
    uint8_t *bytes = tw__zip_member(zip, size, path, chosen, npy_expected_size, &n);
    if (bytes) {
        char *label = g_strdup_printf("%s:%s", path, chosen);
        t = tw_npy_parse(bytes, n, label);
        g_free(label);
        free(bytes);
    }
    g_strfreev(names);
    return t;
}

tw_tensor *tw_npy_load(const char *path)
{
    if (!path) {
        tw_error_set("npy: the path is NULL");
        return NULL;
    }
    /* "archive.npz:name" when the path itself is not there. */
    char *archive = NULL;
    const char *member = NULL, *colon = strrchr(path, ':');
    if (colon && colon > path && colon[1] && !strchr(colon, '/') && !g_file_test(path, G_FILE_TEST_EXISTS)) {
        archive = g_strndup(path, (gsize)(colon - path));
        member = colon + 1;
        if (!g_file_test(archive, G_FILE_TEST_EXISTS)) {
            g_free(archive);
            archive = NULL;
            member = NULL;
        }
    }
    const char *file = archive ? archive : path;
    size_t size;
    tw_tensor *t = NULL;
    uint8_t *bytes = tw__file_bytes(file, npy_expected_size, &size);
    if (!bytes)
        goto done;
    if (tw__is_zip(bytes, size))
        t = npz_load(bytes, size, file, member);
    else if (member)
        tw_error_set("%s: not an NPZ archive (no zip magic number at byte offset 0), so it has no array '%s'", file,
                     member);
    else
        t = tw_npy_parse(bytes, size, file);
    free(bytes);
done:
    g_free(archive);
    return t;
}

tw_dataset *tw_dataset_npy(const char *features_path, const char *labels_path)
{
    if (!features_path) {
        tw_error_set("npy: the features path is NULL");
        return NULL;
    }
    tw_dataset *ds = NULL;
    tw_scope_begin();
    tw_tensor *features = tw_npy_load(features_path);
    tw_tensor *labels = features && labels_path ? tw_npy_load(labels_path) : NULL;
    if (!features || (labels_path && !labels))
        goto done;
    if (tw_tensor_ndim(features) < 1) {
        tw_error_set("npy: %s holds a scalar; a dataset needs a first axis to slice", features_path);
        goto done;
    }
    if (labels) {
        if (tw_tensor_ndim(labels) < 1) {
            tw_error_set("npy: %s holds a scalar; a dataset needs a first axis to slice", labels_path);
            goto done;
        }
        if (tw_tensor_dim(labels, 0) != tw_tensor_dim(features, 0)) {
            tw_error_set("npy: %s has %lld examples but %s has %lld labels; the counts must agree", features_path,
                         (long long)tw_tensor_dim(features, 0), labels_path, (long long)tw_tensor_dim(labels, 0));
            goto done;
        }
    }
    ds = labels ? tw_dataset_from_tensors(TW_TENSORS(features, labels))
                : tw_dataset_from_tensors(TW_TENSORS(features));
    if (ds) {
        g_free(ds->name);
        ds->name = g_strdup("npy");
    }
done:
    tw_scope_end();
    return ds;
}
