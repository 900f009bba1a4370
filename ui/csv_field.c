/* See csv_field.h. */
#include "csv_field.h"

#include <string.h>

void tw_csv_append_field(GString *out, const char *text)
{
    if (!strpbrk(text, ",\"\r\n")) {
        g_string_append(out, text);
        return;
    }
    g_string_append_c(out, '"');
    for (const char *c = text; *c; c++) {
        if (*c == '"')
            g_string_append_c(out, '"');
        g_string_append_c(out, *c);
    }
    g_string_append_c(out, '"');
}
