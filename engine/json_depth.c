/* The JSON nesting check (tw/json_depth.h): one pass over the bytes that
 * tracks bracket depth outside strings and comments. It must never count
 * less than a parser would: for text that is valid JSON up to some byte,
 * every bracket a parser recursed on up to there is a bracket counted here,
 * and a parser stops at the first byte that is not valid JSON. */
#include <string.h>

#include "tw/error.h"
#include "tw/json_depth.h"

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

int tw_json_check_depth(const char *text, ptrdiff_t length, const char *name)
{
    ptrdiff_t at = tw_json_too_deep(text, length);
    if (at < 0)
        return 0;
    return tw_error_set("%s: JSON nested deeper than %d levels (at byte %td)", name, TW_JSON_MAX_DEPTH, at);
}
