/* The HParams plots' cached base layers (hparams_layer.h). */
#include "hparams_layer.h"

#include <string.h>

struct tw_hp_layer {
    cairo_surface_t *image;   /* NULL until drawn, or invalidated */
    int width, height, scale; /* what it was drawn for */
    GArray *key;              /* of int */
};

tw_hp_layer *tw_hp_layer_new(void)
{
    tw_hp_layer *layer = g_new0(tw_hp_layer, 1);
    layer->key = g_array_new(FALSE, FALSE, sizeof(int));
    return layer;
}

void tw_hp_layer_invalidate(tw_hp_layer *layer)
{
    g_clear_pointer(&layer->image, cairo_surface_destroy);
}

void tw_hp_layer_free(tw_hp_layer *layer)
{
    if (!layer)
        return;
    tw_hp_layer_invalidate(layer);
    g_array_unref(layer->key);
    g_free(layer);
}

static gboolean same_key(const GArray *a, const GArray *b)
{
    return a->len == b->len && !memcmp(a->data, b->data, a->len * sizeof(int));
}

/* The layer is recorded, then played into the image: text drawn straight
 * onto an image surface gets its metrics hinted, on a recording surface
 * (the drawing area's) not, so the image matches what the drawing area
 * would have shown for the same calls. */
static void draw_layer(tw_hp_layer *layer, int width, int height, int scale, tw_hp_draw draw, void *user_data)
{
    cairo_surface_t *recording =
        cairo_recording_surface_create(CAIRO_CONTENT_COLOR_ALPHA, &(cairo_rectangle_t){0, 0, width, height});
    cairo_t *cr = cairo_create(recording);
    draw(cr, width, height, user_data);
    cairo_destroy(cr);
    layer->image = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, width * scale, height * scale);
    cairo_surface_set_device_scale(layer->image, scale, scale);
    cr = cairo_create(layer->image);
    cairo_set_source_surface(cr, recording, 0, 0);
    cairo_paint(cr);
    cairo_destroy(cr);
    cairo_surface_destroy(recording);
}

void tw_hp_layer_update(tw_hp_layer *layer, int width, int height, int scale, const GArray *key, tw_hp_draw draw,
                        void *user_data)
{
    scale = MAX(scale, 1);
    if (width < 1 || height < 1 ||
        (layer->image && width == layer->width && height == layer->height && scale == layer->scale &&
         same_key(layer->key, key)))
        return;
    tw_hp_layer_invalidate(layer);
    draw_layer(layer, width, height, scale, draw, user_data);
    layer->width = width;
    layer->height = height;
    layer->scale = scale;
    g_array_set_size(layer->key, 0);
    g_array_append_vals(layer->key, key->data, key->len);
}

void tw_hp_layer_paint(tw_hp_layer *layer, cairo_t *cr)
{
    if (!layer->image)
        return;
    cairo_save(cr);
    cairo_set_source_surface(cr, layer->image, 0, 0);
    cairo_paint(cr);
    cairo_restore(cr);
}
