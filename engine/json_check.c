/* The JSON nesting check (tw/json_check.h): one pass over the bytes that
 * tracks bracket depth outside strings and comments. It must never count
 * less than a parser would: for text that is valid JSON up to some byte,
 * every bracket a parser recursed on up to there is a bracket counted here,
 * and a parser stops at the first byte that is not valid JSON. */
#include <stdbool.h>
#include <string.h>

#include "tw/error.h"
#include "tw/json_check.h"

ptrdiff_t tw_json_too_deep(const char *text, ptrdiff_t length)
{
    if (!text)
        return -1;
    size_t n = length < 0 ? strlen(text) : (size_t)length;
    int depth = 0;
    for (size_t i = 0; i < n; i++) {
        char c = text[i];
        if (c == '[' || c == '{') {
            if (++depth > TW_JSON_MAX_DEPTH)
                return (ptrdiff_t)i;
        } else if ((c == ']' || c == '}') && depth > 0) {
            depth--;
        } else if (c == '"') { /* to the closing quote, skipping escaped characters */
            for (i++; i < n && text[i] != '"'; i++)
                if (text[i] == '\\')
                    i++;
        } else if (c == '\'') { /* json-glib's single-quoted strings have no escapes */
            for (i++; i < n && text[i] != '\''; i++)
                ;
        } else if (c == '/' && i + 1 < n && text[i + 1] == '*') { /* json-glib skips C comments */
            for (i += 2; i + 1 < n && !(text[i] == '*' && text[i + 1] == '/'); i++)
                ;
            i++;
        }
    }
    return -1;
}

static int hex_value(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* The length of the escape at s (a backslash, n bytes left) when JSON has
 * it, else 0. */
static size_t escape_length(const char *s, size_t n)
{
    if (n >= 2 && s[1] && strchr("\"\\/bfnrt", s[1]))
        return 2;
    unsigned unit[2];
    for (int k = 0; k < 2; k++) {
        const char *u = s + 6 * k;
        if (n < 6 * (size_t)k + 6 || u[0] != '\\' || u[1] != 'u')
            return 0;
        unit[k] = 0;
        for (int d = 2; d < 6; d++) {
            int v = hex_value(u[d]);
            if (v < 0)
                return 0;
            unit[k] = 16 * unit[k] + (unsigned)v;
        }
        if (unit[k] < 0xd800 || unit[k] > 0xdfff)
            return k ? 0 : 6;
        if (k == 0 && unit[0] >= 0xdc00) /* a low surrogate first */
            return 0;
    }
    return unit[1] >= 0xdc00 ? 12 : 0;
}

const char tw_json_not_an_escape[] = "is not an escape JSON has (\\\" \\\\ \\/ \\b \\f \\n \\r \\t, or \\u and "
                                     "four hex digits, a high surrogate followed by a low one)";

ptrdiff_t tw_json_bad_escape(const char *text, ptrdiff_t length, size_t *shown)
{
    if (!text)
        return -1;
    size_t n = length < 0 ? strlen(text) : (size_t)length;
    for (size_t i = 0; i < n; i++) {
        char c = text[i];
        if (c == '"') {
            for (i++; i < n && text[i] != '"'; i++) {
                if (text[i] != '\\')
                    continue;
                size_t e = escape_length(text + i, n - i);
                if (!e) { /* the backslash and its letter (an ASCII one), \u's digits too */
                    bool more = i + 1 < n;
                    size_t k = more && !(text[i + 1] & 0x80) ? 2 : 1;
                    while (more && text[i + 1] == 'u' && k < 6 && i + k < n && hex_value(text[i + k]) >= 0)
                        k++;
                    if (shown)
                        *shown = k;
                    return (ptrdiff_t)i;
                }
                i += e - 1;
            }
        } else if (c == '\'') { /* json-glib's single-quoted strings have no escapes */
            for (i++; i < n && text[i] != '\''; i++)
                ;
        } else if (c == '/' && i + 1 < n && text[i + 1] == '*') {
            for (i += 2; i + 1 < n && !(text[i] == '*' && text[i + 1] == '/'); i++)
                ;
            i++;
        }
    }
    return -1;
}

void tw_json_line_column(const char *text, ptrdiff_t offset, int *line, int *column)
{
    *line = *column = 1;
    for (ptrdiff_t i = 0; i < offset; i++)
        if (text[i] == '\n')
            ++*line, *column = 1;
        else if (((unsigned char)text[i] & 0xc0) != 0x80) /* a character, not a UTF-8 continuation byte */
            ++*column;
}

int tw_json_check_text(const char *text, ptrdiff_t length, const char *name)
{
    ptrdiff_t at = tw_json_too_deep(text, length);
    if (at >= 0)
        return tw_error_set("%s: JSON nested deeper than %d levels (at byte %td)", name, TW_JSON_MAX_DEPTH, at);
    size_t shown = 0;
    at = tw_json_bad_escape(text, length, &shown);
    if (at < 0)
        return 0;
    int line, column;
    tw_json_line_column(text, at, &line, &column);
    return tw_error_set("%s: line %d, column %d: %.*s %s", name, line, column, (int)shown, text + at,
                        tw_json_not_an_escape);
}
