/* The fast reader of run objects (hparams_json.h). */
#include "hparams_json.h"

#include <math.h>
#include <string.h>

/* Deeper objects are left to json-glib (and tw_json_too_deep). */
#define MAX_DEPTH 64

typedef struct {
    const char *p;
    GStringChunk *chunk;
    GArray *out;
    GString *buffer;
    int depth;
    GHashTable *keys; /* the flattened names so far (interned: compared as pointers) */
} scan;

static void skip_space(scan *s)
{
    while (*s->p == ' ' || *s->p == '\t' || *s->p == '\n' || *s->p == '\r')
        s->p++;
}

static int hex_digit(char c)
{
    return g_ascii_isxdigit(c) ? g_ascii_xdigit_value(c) : -1;
}

static bool read_hex4(scan *s, gunichar *out)
{
    gunichar v = 0;
    for (int i = 0; i < 4; i++) {
        int d = hex_digit(s->p[i]);
        if (d < 0)
            return false;
        v = v * 16 + (gunichar)d;
    }
    s->p += 4;
    *out = v;
    return true;
}

/* A string into s->buffer, s->p past its closing quote. */
static bool read_string(scan *s)
{
    if (*s->p != '"')
        return false;
    s->p++;
    g_string_truncate(s->buffer, 0);
    for (;;) {
        unsigned char c = (unsigned char)*s->p;
        if (c == '"')
            break;
        if (c < 0x20) /* the end of the text, or a control character */
            return false;
        if (c != '\\') {
            g_string_append_c(s->buffer, (char)c);
            s->p++;
            continue;
        }
        s->p++;
        char e = *s->p++;
        gunichar u;
        switch (e) {
        case '"': g_string_append_c(s->buffer, '"'); break;
        case '\\': g_string_append_c(s->buffer, '\\'); break;
        case '/': g_string_append_c(s->buffer, '/'); break;
        case 'b': g_string_append_c(s->buffer, '\b'); break;
        case 'f': g_string_append_c(s->buffer, '\f'); break;
        case 'n': g_string_append_c(s->buffer, '\n'); break;
        case 'r': g_string_append_c(s->buffer, '\r'); break;
        case 't': g_string_append_c(s->buffer, '\t'); break;
        case 'u':
            if (!read_hex4(s, &u))
                return false;
            if (u >= 0xDC00 && u <= 0xDFFF)
                return false; /* a lone second half */
            if (u >= 0xD800 && u <= 0xDBFF) {
                gunichar low;
                if (s->p[0] != '\\' || s->p[1] != 'u')
                    return false;
                s->p += 2;
                if (!read_hex4(s, &low) || low < 0xDC00 || low > 0xDFFF)
                    return false;
                u = 0x10000 + ((u - 0xD800) << 10) + (low - 0xDC00);
            }
            if (u == 0) /* json-glib's strings end there */
                return false;
            g_string_append_unichar(s->buffer, u);
            break;
        default: return false;
        }
    }
    s->p++;
    return g_utf8_validate(s->buffer->str, (gssize)s->buffer->len, NULL);
}

/* JSON's number grammar; integers a double holds exactly (15 digits). */
static bool read_number(scan *s, double *out)
{
    const char *start = s->p, *p = s->p;
    if (*p == '-')
        p++;
    if (*p == '0')
        p++;
    else if (*p >= '1' && *p <= '9')
        while (g_ascii_isdigit(*p))
            p++;
    else
        return false;
    bool integer = true;
    if (*p == '.') {
        integer = false;
        p++;
        if (!g_ascii_isdigit(*p))
            return false;
        while (g_ascii_isdigit(*p))
            p++;
    }
    if (*p == 'e' || *p == 'E') {
        integer = false;
        p++;
        if (*p == '+' || *p == '-')
            p++;
        if (!g_ascii_isdigit(*p))
            return false;
        while (g_ascii_isdigit(*p))
            p++;
    }
    if (integer && p - start - (*start == '-') > 15)
        return false;
    char *end;
    *out = g_ascii_strtod(start, &end);
    if (end != p || !isfinite(*out))
        return false;
    s->p = p;
    return true;
}

static bool add(scan *s, const char *name, tw_hp_kind kind, double number, const char *text)
{
    if (*name) /* a leaf needs a name, as json-glib's flattening */
        g_array_append_val(s->out, ((tw_hp_json_member){name, kind, number, text}));
    return true;
}

static bool read_object(scan *s, const char *prefix);

/* The value of member `name`. */
static bool read_value(scan *s, const char *name)
{
    switch (*s->p) {
    case '{': return read_object(s, name);
    case '"':
        return read_string(s) && add(s, name, TW_HP_STRING, 0, g_string_chunk_insert_const(s->chunk, s->buffer->str));
    case 't':
        if (strncmp(s->p, "true", 4))
            return false;
        s->p += 4;
        return add(s, name, TW_HP_BOOL, 1, NULL);
    case 'f':
        if (strncmp(s->p, "false", 5))
            return false;
        s->p += 5;
        return add(s, name, TW_HP_BOOL, 0, NULL);
    case 'n':
        if (strncmp(s->p, "null", 4))
            return false;
        s->p += 4;
        return add(s, name, TW_HP_MISSING, 0, NULL);
    default: {
        double v;
        return read_number(s, &v) && add(s, name, TW_HP_NUMBER, v, NULL);
    }
    }
}

static bool read_object(scan *s, const char *prefix)
{
    if (++s->depth > MAX_DEPTH)
        return false;
    s->p++; /* '{' */
    skip_space(s);
    if (*s->p == '}') {
        s->p++;
        s->depth--;
        return true;
    }
    for (;;) {
        if (!read_string(s))
            return false;
        char *joined = *prefix ? g_strconcat(prefix, ".", s->buffer->str, NULL) : NULL;
        const char *name = g_string_chunk_insert_const(s->chunk, joined ? joined : s->buffer->str);
        g_free(joined);
        /* a repeated key replaces a whole subtree in json-glib, and "a.b"
         * and {"a": {"b"}} both flatten to "a.b": json-glib reads those */
        if (!g_hash_table_add(s->keys, (gpointer)name))
            return false;
        skip_space(s);
        if (*s->p++ != ':')
            return false;
        skip_space(s);
        if (!read_value(s, name))
            return false;
        skip_space(s);
        if (*s->p == '}') {
            s->p++;
            s->depth--;
            return true;
        }
        if (*s->p++ != ',')
            return false;
        skip_space(s);
    }
}

bool tw_hp_json_read(const char *json, GStringChunk *chunk, GArray *out)
{
    guint before = out->len;
    scan s = {json, chunk, out, g_string_new(NULL), 0, g_hash_table_new(NULL, NULL)};
    skip_space(&s);
    bool ok = *s.p == '{' && read_object(&s, "");
    if (ok) {
        skip_space(&s);
        ok = *s.p == '\0';
    }
    g_string_free(s.buffer, TRUE);
    g_hash_table_unref(s.keys);
    if (!ok)
        g_array_set_size(out, before);
    return ok;
}
