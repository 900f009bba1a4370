/* A cursor over a file header's bytes, shared by the hand-written header
 * parsers (NPY's Python-literal dict, safetensors' JSON). Not installed. */
#ifndef TW_DATA_BYTE_CURSOR_H
#define TW_DATA_BYTE_CURSOR_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef struct {
    const uint8_t *b;
    size_t pos, end;
    const char *name; /* the file, for messages; NULL: classify only, set no error */
} tw_byte_cursor;

/* The byte at the cursor, quoted for a message ("'x'", "byte 0x0a", or the end). */
static inline const char *tw__cursor_found(const tw_byte_cursor *c, char *buf, size_t size)
{
    if (c->pos >= c->end)
        return "the end of the header";
    uint8_t ch = c->b[c->pos];
    if (ch >= 0x20 && ch < 0x7f)
        snprintf(buf, size, "'%c'", ch);
    else
        snprintf(buf, size, "byte 0x%02x", ch);
    return buf;
}

static inline void tw__cursor_skip_space(tw_byte_cursor *c)
{
    while (c->pos < c->end && (c->b[c->pos] == ' ' || c->b[c->pos] == '\t' || c->b[c->pos] == '\n' ||
                               c->b[c->pos] == '\r'))
        c->pos++;
}

#endif
