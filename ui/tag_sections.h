/* TwTagSections: cards grouped by their tag's prefix before the first "/"
 * ("train/loss" in "train", "loss" in "loss"), one collapsible section
 * (GtkExpander) per group, groups alphabetical and cards in the order
 * given, in a scrolled grid that fits as many columns as the width holds.
 *
 * Cards are built lazily: a section holds fixed-size slots, and a slot's
 * content comes from the factory only once the slot is in an expanded
 * section and near the visible part of the scroll, one a frame, so opening
 * a page with hundreds of tags builds what is on screen and no frame holds
 * more than one chart's first drawing. A tag
 * filter (a regular expression, NULL for all) hides cards and sections. */
#ifndef TW_UI_TAG_SECTIONS_H
#define TW_UI_TAG_SECTIONS_H

#include <gtk/gtk.h>

G_BEGIN_DECLS

#define TW_TYPE_TAG_SECTIONS (tw_tag_sections_get_type())
G_DECLARE_FINAL_TYPE(TwTagSections, tw_tag_sections, TW, TAG_SECTIONS, GtkWidget)

/* The content of the card for key (called on the main loop when the slot
 * comes into view). */
typedef GtkWidget *(*TwCardFactory)(const char *key, const char *tag, gpointer user_data);
/* Properties (for .ui templates): "card-width" and "card-height", each
 * slot's size (construct-only, 420x300 by default), and the Pango markup
 * shown instead of the sections when there are no cards
 * ("no-cards-text") or none passes the filter ("none-match-text"). */
void tw_tag_sections_set_factory(TwTagSections *sections, TwCardFactory factory, gpointer user_data);
/* The cards: a unique key each and the tag it shows (which gives its
 * group and what the filter matches), in display order within a group.
 * Cards whose key stays keep their content. */
void tw_tag_sections_set_cards(TwTagSections *sections, int n, const char *const *keys, const char *const *tags);
void tw_tag_sections_set_filter(TwTagSections *sections, GRegex *regex);
/* The built content of key's card, or NULL (not built yet, or no such key). */
GtkWidget *tw_tag_sections_card(TwTagSections *sections, const char *key);
/* Calls func(key, content, user_data) for each built card. */
void tw_tag_sections_foreach(TwTagSections *sections, void (*func)(const char *key, GtkWidget *content, gpointer user_data),
                             gpointer user_data);
/* Groups (in order), and whether anything is still to be built on screen. */
int tw_tag_sections_n_groups(TwTagSections *sections);
const char *tw_tag_sections_group(TwTagSections *sections, int index);
GtkExpander *tw_tag_sections_expander(TwTagSections *sections, int index);
gboolean tw_tag_sections_settled(TwTagSections *sections);
/* Cards built so far (tests: lazy creation). */
int tw_tag_sections_n_built(TwTagSections *sections);

G_END_DECLS

#endif
