/* TwImageCard: one run's image tag. A step slider over its images (every
 * step and, for a batch, every sample; the newest shown first and followed
 * as new ones come), and the image drawn pixel-exact: "Fit" scales by the
 * largest whole factor that fits (smoothly down only when the image is
 * larger than the card), 1:1 and the zoom buttons by whole factors, each
 * pixel a sharp square, scrolled when larger than the card. Bytes are read
 * and decoded (GdkPixbuf: PNG, JPEG, GIF) off the main loop; an image that
 * does not decode says why, naming its run, tag and step. */
#ifndef TW_UI_IMAGE_CARD_H
#define TW_UI_IMAGE_CARD_H

#include <gtk/gtk.h>

#include "chart_render.h"
#include "image_index.h"

G_BEGIN_DECLS

#define TW_TYPE_IMAGE_CARD (tw_image_card_get_type())
G_DECLARE_FINAL_TYPE(TwImageCard, tw_image_card, TW, IMAGE_CARD, GtkWidget)

#define TW_IMAGE_CARD_MAX_ZOOM 32

GtkWidget *tw_image_card_new(const char *db_path, const char *run_name, tw_rgb color);
/* The series' images (copied); the slider keeps its image, or follows the
 * newest when it was on the newest. */
void tw_image_card_set_images(TwImageCard *card, const TwImageSeries *series);
int tw_image_card_n_images(TwImageCard *card);
/* Show image index (0 .. n-1, by step then sample). */
void tw_image_card_select(TwImageCard *card, int index);
int tw_image_card_selected(TwImageCard *card);
/* 0: fit; else a whole factor (1 is 1:1). */
void tw_image_card_set_zoom(TwImageCard *card, int zoom);
/* The selected image, decoded; NULL while loading or when it failed. */
GdkPixbuf *tw_image_card_pixbuf(TwImageCard *card);
/* TRUE once the selected image is decoded or has failed; the failure. */
gboolean tw_image_card_loaded(TwImageCard *card);
const char *tw_image_card_error(TwImageCard *card);
/* The factor the image was last drawn at (0 before a drawing). */
double tw_image_card_drawn_scale(TwImageCard *card);

G_END_DECLS

#endif
