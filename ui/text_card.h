/* TwTextCard: one run's text tag (TensorBoard's text plugin, tw_summary_text)
 * rendered as markdown (markdown.h): a "Step N" heading per record, then
 * its paragraphs, headings, code, lists, quotes and tables. Records are read
 * off the main loop (a GTask with its own read-only store handle) from the
 * card's cursor on, so a refresh reads only what is new. */
#ifndef TW_UI_TEXT_CARD_H
#define TW_UI_TEXT_CARD_H

#include <gtk/gtk.h>

#include "chart_render.h"

G_BEGIN_DECLS

#define TW_TYPE_TEXT_CARD (tw_text_card_get_type())
G_DECLARE_FINAL_TYPE(TwTextCard, tw_text_card, TW, TEXT_CARD, GtkWidget)

/* Records shown: the newest this many (the card says how many it leaves out). */
#define TW_TEXT_CARD_RECORDS 50

GtkWidget *tw_text_card_new(const char *db_path, gint64 tag_id, const char *title, tw_rgb color);
/* Read the records written since the last read (nothing when one is going on). */
void tw_text_card_refresh(TwTextCard *card);
/* TRUE once the first read has answered (records or an error). */
gboolean tw_text_card_loaded(TwTextCard *card);
/* Records shown now. */
int tw_text_card_n_records(TwTextCard *card);

/* The widgets for a text's blocks, appended to box (also tests). */
void tw_text_card_render(GtkBox *box, const char *text);

G_END_DECLS

#endif
