/* PNG encoding of the summary writer's images, with libpng (on the writer
 * thread: the training thread only copies pixels). */
#include <png.h>
#include <stdlib.h>
#include <string.h>

#include "summary_internal.h"

typedef struct {
    uint8_t *data;
    size_t size, cap;
    bool failed;
} png_buffer;

static void write_bytes(png_structp png, png_bytep bytes, size_t n)
{
    png_buffer *b = png_get_io_ptr(png);
    if (b->failed)
        return;
    if (b->size + n > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->size + n)
            cap *= 2;
        uint8_t *data = realloc(b->data, cap);
        if (!data) {
            b->failed = true;
            return;
        }
        b->data = data;
        b->cap = cap;
    }
    memcpy(b->data + b->size, bytes, n);
    b->size += n;
}

static void flush_nothing(png_structp png)
{
    (void)png;
}

int tw__png_encode(const uint8_t *pixels, int height, int width, int channels, uint8_t **out, size_t *size)
{
    static const int color_types[] = {0, PNG_COLOR_TYPE_GRAY, PNG_COLOR_TYPE_GRAY_ALPHA, PNG_COLOR_TYPE_RGB,
                                      PNG_COLOR_TYPE_RGB_ALPHA};
    *out = NULL;
    *size = 0;
    if (channels < 1 || channels > 4 || height < 1 || width < 1)
        return -1;
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    /* volatile: read after longjmp */
    png_buffer *volatile b = calloc(1, sizeof(png_buffer));
    png_bytep *volatile rows = malloc((size_t)height * sizeof(png_bytep));
    int status = -1;
    if (!png || !info || !b || !rows)
        goto done;
    if (setjmp(png_jmpbuf(png)))
        goto done;
    png_set_write_fn(png, b, write_bytes, flush_nothing);
    png_set_IHDR(png, info, (png_uint_32)width, (png_uint_32)height, 8, color_types[channels], PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    /* Level 1: the writer thread has other rows to write, and summaries are small. */
    png_set_compression_level(png, 1);
    for (int y = 0; y < height; y++)
        rows[y] = (png_bytep)pixels + (size_t)y * (size_t)width * (size_t)channels;
    png_set_rows(png, info, rows);
    png_write_png(png, info, PNG_TRANSFORM_IDENTITY, NULL);
    if (!b->failed) {
        *out = b->data;
        *size = b->size;
        b->data = NULL;
        status = 0;
    }
done:
    png_destroy_write_struct(png ? &png : NULL, info ? &info : NULL);
    if (b)
        free(b->data);
    free(b);
    free(rows);
    return status;
}
