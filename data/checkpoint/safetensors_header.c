/* The safetensors header: a JSON object mapping tensor names to
 *     {"dtype": "F32", "shape": [2, 3], "data_offsets": [begin, end]}
 * plus an optional "__metadata__" object of strings. Parsed by hand as the
 * small grammar it is — strict JSON (strings with every escape, UTF-8
 * checked; integers only where the format has integers), no recursion —
 * and checked against the data buffer before anything trusts it. */
#include <glib.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "safetensors_internal.h"
#include "../byte_cursor.h"

/* The header starts after the 8-byte length; messages give file offsets. */
#define HEADER_START 8

static const char *const dtype_names[TW_DTYPE_COUNT] = {
    [TW_FLOAT32] = "F32", [TW_FLOAT64] = "F64", [TW_INT32] = "I32",
    [TW_INT64] = "I64",   [TW_UINT8] = "U8",    [TW_BOOL] = "BOOL",
};

int tw__st_dtype_from_name(const char *name, size_t len)
{
    for (int d = 0; d < TW_DTYPE_COUNT; d++)
        if (strlen(dtype_names[d]) == len && !memcmp(dtype_names[d], name, len))
            return d;
    return -1;
}

const char *tw__st_dtype_name(tw_dtype dtype)
{
    return dtype_names[dtype];
}

/* ---- parsing ---------------------------------------------------------------- */

typedef tw_byte_cursor cursor;

static int fail_at(const cursor *c, size_t pos, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail_at(const cursor *c, size_t pos, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *what = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    tw_error_set("%s: bad safetensors header at byte offset %zu: %s", c->name, HEADER_START + pos, what);
    g_free(what);
    return -1;
}

static bool at(const cursor *c, char ch)
{
    return c->pos < c->end && c->b[c->pos] == (uint8_t)ch;
}

static int expect(cursor *c, char ch, const char *where)
{
    tw__cursor_skip_space(c);
    if (!at(c, ch)) {
        char buf[16];
        return fail_at(c, c->pos, "expected '%c' %s, found %s", ch, where, tw__cursor_found(c, buf, sizeof buf));
    }
    c->pos++;
    return 0;
}

static int hex4(cursor *c, unsigned *out)
{
    if (c->end - c->pos < 4)
        return fail_at(c, c->pos, "\\u escape cut short by the end of the header");
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        int d = g_ascii_xdigit_value((char)c->b[c->pos + i]);
        if (d < 0)
            return fail_at(c, c->pos + i, "\\u escape needs four hex digits");
        v = v << 4 | (unsigned)d;
    }
    c->pos += 4;
    *out = v;
    return 0;
}

/* After a backslash: one escape, decoded into s. */
static int parse_escape(cursor *c, GString *s)
{
    size_t start = c->pos - 1;
    if (c->pos >= c->end)
        return fail_at(c, start, "unterminated string");
    char e = (char)c->b[c->pos++];
    static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
    const char *k = e ? strchr(from, e) : NULL;
    if (k) {
        g_string_append_c(s, to[k - from]);
        return 0;
    }
    if (e != 'u')
        return fail_at(c, start, "unknown escape '\\%c' in a string", g_ascii_isprint(e) ? e : '?');
    unsigned u = 0;
    if (hex4(c, &u))
        return -1;
    if (u >= 0xDC00 && u <= 0xDFFF)
        return fail_at(c, start, "lone low surrogate \\u%04X in a string", u);
    if (u >= 0xD800 && u <= 0xDBFF) {
        unsigned low = 0;
        if (c->end - c->pos < 2 || c->b[c->pos] != '\\' || c->b[c->pos + 1] != 'u')
            return fail_at(c, start, "high surrogate \\u%04X not followed by a low one", u);
        c->pos += 2;
        if (hex4(c, &low))
            return -1;
        if (low < 0xDC00 || low > 0xDFFF)
            return fail_at(c, start, "high surrogate \\u%04X followed by \\u%04X, not a low surrogate", u, low);
        u = 0x10000 + ((u - 0xD800) << 10) + (low - 0xDC00);
    }
    if (u == 0)
        return fail_at(c, start, "\\u0000 in a string (names and metadata cannot hold NUL)");
    g_string_append_unichar(s, u);
    return 0;
}

/* One UTF-8 sequence starting at the cursor, copied into s. */
static int copy_utf8(cursor *c, GString *s)
{
    uint8_t lead = c->b[c->pos];
    size_t len = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1;
    if (lead >= 0x80 && (len == 1 || c->end - c->pos < len || !g_utf8_validate((const char *)c->b + c->pos,
                                                                                 (gssize)len, NULL)))
        return fail_at(c, c->pos, "invalid UTF-8 in a string");
    g_string_append_len(s, (const char *)c->b + c->pos, (gssize)len);
    c->pos += len;
    return 0;
}

/* A JSON string, decoded (g_free). */
static int parse_string(cursor *c, char **out, const char *what)
{
    tw__cursor_skip_space(c);
    size_t start = c->pos;
    if (!at(c, '"')) {
        char buf[16];
        return fail_at(c, start, "expected %s (a string), found %s", what, tw__cursor_found(c, buf, sizeof buf));
    }
    c->pos++;
    GString *s = g_string_new(NULL);
    for (;;) {
        if (c->pos >= c->end) {
            fail_at(c, start, "unterminated string");
            break;
        }
        uint8_t ch = c->b[c->pos];
        if (ch == '"') {
            c->pos++;
            *out = g_string_free(s, FALSE);
            return 0;
        }
        if (ch < 0x20) {
            fail_at(c, c->pos, "control byte 0x%02x in a string (JSON needs it escaped)", ch);
            break;
        }
        if (ch == '\\') {
            c->pos++;
            if (parse_escape(c, s))
                break;
        } else if (copy_utf8(c, s)) {
            break;
        }
    }
    g_string_free(s, TRUE);
    return -1;
}

/* A non-negative JSON integer (the format has no other numbers). */
static int parse_uint(cursor *c, uint64_t *out, const char *what)
{
    tw__cursor_skip_space(c);
    size_t start = c->pos;
    char buf[16];
    if (!(c->pos < c->end && g_ascii_isdigit(c->b[c->pos])))
        return fail_at(c, start, "expected %s (a non-negative integer), found %s", what, tw__cursor_found(c, buf, sizeof buf));
    uint64_t v = 0;
    while (c->pos < c->end && g_ascii_isdigit(c->b[c->pos])) {
        unsigned d = c->b[c->pos] - '0';
        if (v > (UINT64_MAX - d) / 10)
            return fail_at(c, start, "%s does not fit in 64 bits", what);
        v = v * 10 + d;
        c->pos++;
    }
    if (c->pos - start > 1 && c->b[start] == '0')
        return fail_at(c, start, "%s has a leading zero (not JSON)", what);
    if (at(c, '.') || at(c, 'e') || at(c, 'E'))
        return fail_at(c, start, "%s must be an integer", what);
    *out = v;
    return 0;
}

/* [n, n, ...] with at most cap values. */
static int parse_uint_array(cursor *c, uint64_t *values, int cap, int *count, const char *what)
{
    if (expect(c, '[', what))
        return -1;
    *count = 0;
    tw__cursor_skip_space(c);
    if (at(c, ']')) {
        c->pos++;
        return 0;
    }
    for (;;) {
        size_t item = c->pos;
        if (*count == cap)
            return fail_at(c, item, "%s has more than %d values", what, cap);
        if (parse_uint(c, &values[(*count)++], what))
            return -1;
        tw__cursor_skip_space(c);
        if (at(c, ']')) {
            c->pos++;
            return 0;
        }
        if (expect(c, ',', "or ']' in an array"))
            return -1;
    }
}

/* The comma between members, or the closing brace. 1: more members follow. */
static int next_member(cursor *c)
{
    tw__cursor_skip_space(c);
    if (at(c, '}')) {
        c->pos++;
        return 0;
    }
    return expect(c, ',', "or '}' after an object member") ? -1 : 1;
}

/* The opening brace, then 1 when a member follows, 0 for an empty object. */
static int open_object(cursor *c, const char *what)
{
    if (expect(c, '{', what))
        return -1;
    tw__cursor_skip_space(c);
    if (at(c, '}')) {
        c->pos++;
        return 0;
    }
    return 1;
}

static int parse_dtype(cursor *c, const char *tensor, tw_st_entry *e)
{
    tw__cursor_skip_space(c);
    size_t start = c->pos;
    char *text;
    if (parse_string(c, &text, "a dtype"))
        return -1;
    int d = tw__st_dtype_from_name(text, strlen(text));
    if (d < 0) {
        fail_at(c, start, "tensor '%s': unsupported dtype \"%s\" (supported: F32, F64, I32, I64, U8, BOOL)", tensor,
                text);
        g_free(text);
        return -1;
    }
    g_free(text);
    e->dtype = (tw_dtype)d;
    return 0;
}

static int parse_shape(cursor *c, const char *tensor, tw_st_entry *e)
{
    tw__cursor_skip_space(c);
    size_t start = c->pos;
    uint64_t dims[TW_MAX_DIMS];
    if (parse_uint_array(c, dims, TW_MAX_DIMS, &e->ndim, "a shape"))
        return -1;
    for (int i = 0; i < e->ndim; i++) {
        if (dims[i] > INT64_MAX)
            return fail_at(c, start, "tensor '%s': dimension %d is too large (%llu)", tensor, i,
                           (unsigned long long)dims[i]);
        e->shape[i] = (int64_t)dims[i];
    }
    return 0;
}

static int parse_offsets(cursor *c, const char *tensor, tw_st_entry *e)
{
    tw__cursor_skip_space(c);
    size_t start = c->pos;
    uint64_t v[2];
    int n;
    if (parse_uint_array(c, v, 2, &n, "data_offsets"))
        return -1;
    if (n != 2)
        return fail_at(c, start, "tensor '%s': data_offsets needs two values [begin, end], got %d", tensor, n);
    e->begin = v[0];
    e->end = v[1];
    return 0;
}

/* The bytes a dtype and shape take, or -1 when that overflows 64 bits. */
static int byte_size(const tw_st_entry *e, uint64_t *bytes)
{
    uint64_t n = tw_dtype_size(e->dtype);
    for (int i = 0; i < e->ndim; i++) {
        uint64_t d = (uint64_t)e->shape[i];
        if (d && n > UINT64_MAX / d)
            return -1;
        n *= d;
    }
    *bytes = n;
    return 0;
}

/* The three fields, each once, in any order. */
static int parse_fields(cursor *c, size_t start, tw_st_entry *e)
{
    static const char *const keys[3] = {"dtype", "shape", "data_offsets"};
    bool seen[3] = {false, false, false};
    int more = open_object(c, "to open a tensor's description");
    while (more > 0) {
        tw__cursor_skip_space(c);
        size_t key_pos = c->pos;
        char *key;
        if (parse_string(c, &key, "a key"))
            return -1;
        int k = 0;
        while (k < 3 && strcmp(key, keys[k]))
            k++;
        if (k == 3 || seen[k]) {
            fail_at(c, key_pos, "tensor '%s': %s key \"%s\" (expected dtype, shape and data_offsets)", e->name,
                    k == 3 ? "unknown" : "repeated", key);
            g_free(key);
            return -1;
        }
        g_free(key);
        seen[k] = true;
        if (expect(c, ':', "after a key"))
            return -1;
        int rc = k == 0   ? parse_dtype(c, e->name, e)
                 : k == 1 ? parse_shape(c, e->name, e)
                          : parse_offsets(c, e->name, e);
        if (rc)
            return -1;
        more = next_member(c);
    }
    if (more < 0)
        return -1;
    for (int k = 0; k < 3; k++)
        if (!seen[k])
            return fail_at(c, start, "tensor '%s' has no \"%s\"", e->name, keys[k]);
    return 0;
}

/* The fields' agreement with each other and with the buffer. */
static int check_entry(const cursor *c, size_t start, uint64_t buffer_size, const tw_st_entry *e)
{
    uint64_t bytes;
    if (byte_size(e, &bytes))
        return fail_at(c, start, "tensor '%s': the shape's size overflows 64 bits", e->name);
    if (e->end < e->begin)
        return fail_at(c, start, "tensor '%s': data_offsets [%llu, %llu] end before they begin", e->name,
                       (unsigned long long)e->begin, (unsigned long long)e->end);
    if (e->end - e->begin != bytes)
        return fail_at(c, start, "tensor '%s': data_offsets [%llu, %llu] span %llu bytes, but %s of that shape take "
                       "%llu",
                       e->name, (unsigned long long)e->begin, (unsigned long long)e->end,
                       (unsigned long long)(e->end - e->begin), dtype_names[e->dtype], (unsigned long long)bytes);
    if (e->end > buffer_size)
        return fail_at(c, start, "tensor '%s': data_offsets [%llu, %llu] run past the %llu-byte data buffer", e->name,
                       (unsigned long long)e->begin, (unsigned long long)e->end, (unsigned long long)buffer_size);
    return 0;
}

static int parse_entry(cursor *c, uint64_t buffer_size, tw_st_entry *e)
{
    tw__cursor_skip_space(c);
    size_t start = c->pos; /* messages about the whole entry point at its '{' */
    return parse_fields(c, start, e) || check_entry(c, start, buffer_size, e) ? -1 : 0;
}

static int parse_metadata(cursor *c, GPtrArray *keys, GPtrArray *values)
{
    g_autoptr(GHashTable) seen = g_hash_table_new(g_str_hash, g_str_equal);
    int more = open_object(c, "to open __metadata__");
    while (more > 0) {
        tw__cursor_skip_space(c);
        size_t key_pos = c->pos;
        char *key, *value;
        if (parse_string(c, &key, "a metadata key"))
            return -1;
        g_ptr_array_add(keys, key);
        if (!g_hash_table_add(seen, key))
            return fail_at(c, key_pos, "metadata key \"%s\" appears twice", key);
        if (expect(c, ':', "after a metadata key") || parse_string(c, &value, "a metadata value"))
            return -1;
        g_ptr_array_add(values, value);
        more = next_member(c);
    }
    return more;
}

static int compare_entries(const void *a, const void *b)
{
    const tw_st_entry *x = a, *y = b;
    if (x->begin != y->begin)
        return x->begin < y->begin ? -1 : 1;
    return x->end < y->end ? -1 : x->end > y->end;
}

/* Sorted by offset, the tensors must tile the buffer: no overlap, no gap,
 * nothing after the last. Messages give file offsets. */
static int check_tiling(const cursor *c, tw_st_header *h, uint64_t buffer_size)
{
    if (h->n > 1)
        qsort(h->entries, (size_t)h->n, sizeof *h->entries, compare_entries);
    uint64_t data_start = HEADER_START + c->end, covered = 0;
    for (int i = 0; i < h->n; i++) {
        const tw_st_entry *e = &h->entries[i];
        if (e->begin < covered)
            return tw_error_set("%s: tensors '%s' and '%s' overlap: both hold data bytes [%llu, %llu) (byte offset "
                                "%llu)",
                                c->name, h->entries[i - 1].name, e->name, (unsigned long long)e->begin,
                                (unsigned long long)covered, (unsigned long long)(data_start + e->begin));
        if (e->begin > covered)
            return tw_error_set("%s: data bytes [%llu, %llu) belong to no tensor: a gap before '%s' (byte offset "
                                "%llu)",
                                c->name, (unsigned long long)covered, (unsigned long long)e->begin, e->name,
                                (unsigned long long)(data_start + covered));
        covered = e->end;
    }
    if (covered < buffer_size)
        return tw_error_set("%s: %llu bytes of trailing data after the last tensor (byte offset %llu)", c->name,
                            (unsigned long long)(buffer_size - covered), (unsigned long long)(data_start + covered));
    return 0;
}

static int parse_top(cursor *c, uint64_t buffer_size, GArray *entries, GPtrArray *keys, GPtrArray *values)
{
    bool have_metadata = false;
    /* Borrowed names (the entries own them): repeats found in O(1). */
    g_autoptr(GHashTable) names = g_hash_table_new(g_str_hash, g_str_equal);
    int more = open_object(c, "to open the header (a JSON object)");
    while (more > 0) {
        tw__cursor_skip_space(c);
        size_t key_pos = c->pos;
        char *key;
        if (parse_string(c, &key, "a tensor name"))
            return -1;
        if (expect(c, ':', "after a tensor name")) {
            g_free(key);
            return -1;
        }
        if (!strcmp(key, "__metadata__")) {
            g_free(key);
            if (have_metadata)
                return fail_at(c, key_pos, "__metadata__ appears twice");
            have_metadata = true;
            if (parse_metadata(c, keys, values))
                return -1;
        } else {
            if (g_hash_table_contains(names, key)) {
                fail_at(c, key_pos, "tensor '%s' appears twice", key);
                g_free(key);
                return -1;
            }
            g_hash_table_add(names, key);
            tw_st_entry e = {.name = key};
            g_array_append_val(entries, e);
            if (parse_entry(c, buffer_size, &g_array_index(entries, tw_st_entry, entries->len - 1)))
                return -1;
        }
        more = next_member(c);
    }
    if (more < 0)
        return -1;
    tw__cursor_skip_space(c);
    if (c->pos < c->end)
        return fail_at(c, c->pos, "unexpected bytes after the header's JSON object (only spaces may pad it)");
    return 0;
}

static char **take_strings(GPtrArray *a)
{
    g_ptr_array_add(a, NULL);
    return (char **)g_ptr_array_free(a, FALSE);
}

int tw__st_header_parse(const uint8_t *json, size_t size, uint64_t buffer_size, const char *name, tw_st_header *h)
{
    memset(h, 0, sizeof *h);
    cursor c = {json, 0, size, name};
    GArray *entries = g_array_new(FALSE, TRUE, sizeof(tw_st_entry));
    GPtrArray *keys = g_ptr_array_new(), *values = g_ptr_array_new();
    int rc = parse_top(&c, buffer_size, entries, keys, values);
    /* A failed parse may leave a key without its value: keep them paired. */
    while (keys->len > values->len)
        g_free(g_ptr_array_remove_index(keys, keys->len - 1));
    h->n = (int)entries->len;
    h->entries = (tw_st_entry *)(void *)g_array_free(entries, FALSE);
    h->nmeta = (int)keys->len;
    h->meta_keys = take_strings(keys);
    h->meta_values = take_strings(values);
    if (rc == 0)
        rc = check_tiling(&c, h, buffer_size);
    if (rc)
        tw__st_header_clear(h);
    return rc;
}

void tw__st_header_clear(tw_st_header *h)
{
    for (int i = 0; i < h->n; i++)
        g_free(h->entries[i].name);
    g_free(h->entries);
    g_strfreev(h->meta_keys);
    g_strfreev(h->meta_values);
    memset(h, 0, sizeof *h);
}

/* ---- writing ---------------------------------------------------------------- */

static void append_string(GString *s, const char *text)
{
    g_string_append_c(s, '"');
    for (const char *p = text; *p; p++) {
        unsigned char ch = (unsigned char)*p;
        if (ch == '"' || ch == '\\')
            g_string_append_printf(s, "\\%c", ch);
        else if (ch < 0x20)
            g_string_append_printf(s, "\\u%04x", ch);
        else
            g_string_append_c(s, (char)ch);
    }
    g_string_append_c(s, '"');
}

static int check_utf8(const char *text, const char *what, const char *path)
{
    if (g_utf8_validate(text, -1, NULL))
        return 0;
    char *shown = g_utf8_make_valid(text, -1);
    tw_error_set("%s: %s \"%s\" is not valid UTF-8 (JSON needs UTF-8)", path, what, shown);
    g_free(shown);
    return -1;
}

static int append_metadata(GString *s, const tw_st_header *h, const char *path)
{
    g_autoptr(GHashTable) seen = g_hash_table_new(g_str_hash, g_str_equal);
    g_string_append(s, "\"__metadata__\":{");
    for (int i = 0; i < h->nmeta; i++) {
        if (check_utf8(h->meta_keys[i], "metadata key", path) ||
            check_utf8(h->meta_values[i], "metadata value", path))
            return -1;
        if (!g_hash_table_add(seen, h->meta_keys[i]))
            return tw_error_set("%s: metadata key \"%s\" given twice", path, h->meta_keys[i]);
        if (i)
            g_string_append_c(s, ',');
        append_string(s, h->meta_keys[i]);
        g_string_append_c(s, ':');
        append_string(s, h->meta_values[i]);
    }
    g_string_append_c(s, '}');
    return 0;
}

static int append_entry(GString *s, const tw_st_entry *e, GHashTable *seen, const char *path)
{
    if (check_utf8(e->name, "tensor name", path))
        return -1;
    if (!strcmp(e->name, "__metadata__"))
        return tw_error_set("%s: \"__metadata__\" is reserved and cannot name a tensor", path);
    if (!g_hash_table_add(seen, e->name))
        return tw_error_set("%s: tensor name \"%s\" given twice", path, e->name);
    append_string(s, e->name);
    g_string_append_printf(s, ":{\"dtype\":\"%s\",\"shape\":[", dtype_names[e->dtype]);
    for (int d = 0; d < e->ndim; d++)
        g_string_append_printf(s, d ? ",%lld" : "%lld", (long long)e->shape[d]);
    g_string_append_printf(s, "],\"data_offsets\":[%llu,%llu]}", (unsigned long long)e->begin,
                           (unsigned long long)e->end);
    return 0;
}

char *tw__st_header_format(const tw_st_header *h, const char *path, size_t *size)
{
    g_autoptr(GHashTable) seen = g_hash_table_new(g_str_hash, g_str_equal);
    GString *s = g_string_new("{");
    int rc = h->nmeta ? append_metadata(s, h, path) : 0;
    for (int i = 0; i < h->n && rc == 0; i++) {
        if (i || h->nmeta)
            g_string_append_c(s, ',');
        rc = append_entry(s, &h->entries[i], seen, path);
    }
    g_string_append_c(s, '}');
    /* Spaces up to a multiple of 8, so the data after the 8-byte length
     * starts aligned for every dtype. */
    while (s->len % 8)
        g_string_append_c(s, ' ');
    if (rc == 0 && s->len > TW_SAFETENSORS_MAX_HEADER)
        rc = tw_error_set("%s: the header would take %zu bytes, over the format's limit of %llu", path, s->len,
                          (unsigned long long)TW_SAFETENSORS_MAX_HEADER);
    if (rc) {
        g_string_free(s, TRUE);
        return NULL;
    }
    *size = s->len;
    return g_string_free(s, FALSE);
}
