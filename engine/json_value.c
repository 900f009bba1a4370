/* The engine's JSON reader (json_value.h): recursive descent over the whole
 * text. Its recursion is as deep as the text's nesting, which
 * tw_json_too_deep (tw/json_check.h) checks before parsing starts, so a
 * hostile file cannot exhaust the stack. Strings
 * keep \uXXXX escapes as UTF-8 (surrogate pairs joined). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_value.h"
#include "tw/json_check.h"

typedef struct {
    const char *text, *p;
    char *error;
    size_t error_size;
    bool failed;
} parser;

static bool fail(parser *ps, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static bool fail(parser *ps, const char *fmt, ...)
{
    if (ps->failed)
        return false;
    ps->failed = true;
    int n = snprintf(ps->error, ps->error_size, "byte %td: ", ps->p - ps->text);
    va_list ap;
    va_start(ap, fmt);
    if (n >= 0 && (size_t)n < ps->error_size)
        vsnprintf(ps->error + n, ps->error_size - (size_t)n, fmt, ap);
    va_end(ap);
    return false;
}

static void skip_space(parser *ps)
{
    while (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r')
        ps->p++;
}

static bool value(parser *ps, tw_json *v);

/* Free what v holds (not v itself). */
static void clear(tw_json *v)
{
    for (int i = 0; i < v->count; i++) {
        clear(&v->items[i]);
        if (v->keys)
            free(v->keys[i]);
    }
    free(v->items);
    free(v->keys);
    free(v->string);
}

static bool literal(parser *ps, const char *word)
{
    size_t n = strlen(word);
    if (strncmp(ps->p, word, n) != 0)
        return fail(ps, "expected a JSON value");
    ps->p += n;
    return true;
}

static bool number(parser *ps, tw_json *v)
{
    const char *start = ps->p;
    char *end = NULL;
    errno = 0;
    v->number = strtod(start, &end);
    if (end == start || (*start != '-' && (*start < '0' || *start > '9')))
        return fail(ps, "expected a JSON value");
    v->kind = TW_JSON_NUMBER;
    bool whole = strcspn(start, ".eE") >= (size_t)(end - start);
    if (whole) {
        errno = 0;
        char *iend = NULL;
        long long i = strtoll(start, &iend, 10);
        v->integral = errno == 0 && iend == end;
        v->integer = i;
    }
    ps->p = end;
    return true;
}

static int hex4(const char *s)
{
    int v = 0;
    for (int i = 0; i < 4; i++) {
        char c = s[i];
        int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
        if (d < 0)
            return -1;
        v = v * 16 + d;
    }
    return v;
}

static size_t put_utf8(char *out, unsigned cp)
{
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xC0 | cp >> 6);
        out[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xE0 | cp >> 12);
        out[1] = (char)(0x80 | (cp >> 6 & 0x3F));
        out[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | cp >> 18);
    out[1] = (char)(0x80 | (cp >> 12 & 0x3F));
    out[2] = (char)(0x80 | (cp >> 6 & 0x3F));
    out[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* One \u escape (and its low surrogate) at p, past the backslash and 'u'. */
static bool unicode_escape(parser *ps, char *out, size_t *n)
{
    int cp = hex4(ps->p);
    if (cp < 0)
        return fail(ps, "bad \\u escape in a string");
    ps->p += 4;
    if (cp >= 0xD800 && cp < 0xDC00 && ps->p[0] == '\\' && ps->p[1] == 'u') {
        int low = hex4(ps->p + 2);
        if (low >= 0xDC00 && low < 0xE000) {
            cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
            ps->p += 6;
        }
    }
    *n += put_utf8(out + *n, (unsigned)cp);
    return true;
}

static bool string(parser *ps, char **out)
{
    ps->p++; /* the opening quote */
    size_t cap = strcspn(ps->p, "\"") * 2 + 8, n = 0; /* escapes never grow the text beyond this */
    char *s = malloc(cap);
    if (!s)
        return fail(ps, "out of memory");
    while (*ps->p != '"') {
        unsigned char c = (unsigned char)*ps->p;
        if (c == '\0' || c < 0x20) {
            free(s);
            return fail(ps, c ? "a control character in a string" : "a string is not closed");
        }
        if (n + 8 >= cap) {
            char *bigger = realloc(s, cap *= 2);
            if (!bigger) {
                free(s);
                return fail(ps, "out of memory");
            }
            s = bigger;
        }
        ps->p++;
        if (c != '\\') {
            s[n++] = (char)c;
            continue;
        }
        char e = *ps->p++;
        const char *from = "\"\\/bfnrt", *to = "\"\\/\b\f\n\r\t";
        const char *at = e ? strchr(from, e) : NULL;
        if (at) {
            s[n++] = to[at - from];
        } else if (e != 'u' || !unicode_escape(ps, s, &n)) {
            free(s);
            return fail(ps, "bad escape in a string");
        }
    }
    ps->p++;
    s[n] = '\0';
    *out = s;
    return true;
}

static bool append(parser *ps, tw_json *v, const tw_json *item, char *key)
{
    if ((v->count & (v->count - 1)) == 0) { /* grow at powers of two */
        size_t cap = v->count ? (size_t)v->count * 2 : 1;
        tw_json *items = realloc(v->items, sizeof *items * cap);
        if (items)
            v->items = items;
        bool object = v->kind == TW_JSON_OBJECT;
        char **keys = object && items ? realloc(v->keys, sizeof *keys * cap) : NULL;
        if (!items || (object && !keys))
            return fail(ps, "out of memory");
        if (object)
            v->keys = keys;
    }
    v->items[v->count] = *item;
    if (v->keys)
        v->keys[v->count] = key;
    v->count++;
    return true;
}

/* An array or an object, after its opening bracket. */
static bool container(parser *ps, tw_json *v)
{
    bool object = v->kind == TW_JSON_OBJECT;
    char close = object ? '}' : ']';
    skip_space(ps);
    if (*ps->p == close) {
        ps->p++;
        return true;
    }
    for (;;) {
        char *key = NULL;
        skip_space(ps);
        if (object) {
            if (*ps->p != '"' || !string(ps, &key))
                return fail(ps, "expected a member name in quotes");
            skip_space(ps);
            if (*ps->p++ != ':') {
                free(key);
                ps->p--;
                return fail(ps, "expected ':'");
            }
        }
        tw_json item = {0};
        if (!value(ps, &item) || !append(ps, v, &item, key)) {
            free(key);
            clear(&item);
            return false;
        }
        skip_space(ps);
        if (*ps->p == close) {
            ps->p++;
            return true;
        }
        if (*ps->p != ',')
            return fail(ps, "expected ',' or '%c'", close);
        ps->p++;
    }
}

static bool value(parser *ps, tw_json *v)
{
    skip_space(ps);
    switch (*ps->p) {
    case '{':
    case '[':
        v->kind = *ps->p++ == '{' ? TW_JSON_OBJECT : TW_JSON_ARRAY;
        return container(ps, v);
    case '"':
        v->kind = TW_JSON_STRING;
        return string(ps, &v->string);
    case 't':
        v->kind = TW_JSON_BOOL;
        v->boolean = true;
        return literal(ps, "true");
    case 'f':
        v->kind = TW_JSON_BOOL;
        return literal(ps, "false");
    case 'n':
        return literal(ps, "null");
    default:
        return number(ps, v);
    }
}

tw_json *tw__json_parse(const char *text, char *error, size_t error_size)
{
    parser ps = {text, text, error, error_size, false};
    ptrdiff_t too_deep = tw_json_too_deep(text, -1);
    if (too_deep >= 0) {
        snprintf(error, error_size, "byte %td: nested deeper than %d levels", too_deep, TW_JSON_MAX_DEPTH);
        return NULL;
    }
    tw_json *v = calloc(1, sizeof *v);
    if (!v) {
        snprintf(error, error_size, "out of memory");
        return NULL;
    }
    if (value(&ps, v)) {
        skip_space(&ps);
        if (*ps.p != '\0')
            fail(&ps, "unexpected text after the JSON value");
    }
    if (ps.failed) {
        tw__json_free(v);
        return NULL;
    }
    return v;
}

void tw__json_free(tw_json *v)
{
    if (!v)
        return;
    clear(v);
    free(v); /* the root; every other value lives in its parent's items */
}

const tw_json *tw__json_get(const tw_json *v, const char *key)
{
    if (!v || v->kind != TW_JSON_OBJECT)
        return NULL;
    for (int i = 0; i < v->count; i++)
        if (strcmp(v->keys[i], key) == 0)
            return &v->items[i];
    return NULL;
}
