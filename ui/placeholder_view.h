/* TwPlaceholderView: a view that is not there yet says so — an icon, a
 * title, what will be shown, and how to get data into it. No fake content. */
#ifndef TW_UI_PLACEHOLDER_VIEW_H
#define TW_UI_PLACEHOLDER_VIEW_H

#include <gtk/gtk.h>

G_BEGIN_DECLS

#define TW_TYPE_PLACEHOLDER_VIEW (tw_placeholder_view_get_type())
G_DECLARE_FINAL_TYPE(TwPlaceholderView, tw_placeholder_view, TW, PLACEHOLDER_VIEW, GtkWidget)

/* body and hint are Pango markup (escape what comes from elsewhere). */
GtkWidget *tw_placeholder_view_new(const char *icon_name, const char *title, const char *body, const char *hint);
void tw_placeholder_view_set_body(TwPlaceholderView *view, const char *body);
void tw_placeholder_view_set_hint(TwPlaceholderView *view, const char *hint);
/* What a person reads, without markup: the title, the body, the hint. */
const char *tw_placeholder_view_title(TwPlaceholderView *view);
const char *tw_placeholder_view_body(TwPlaceholderView *view);
const char *tw_placeholder_view_hint(TwPlaceholderView *view);

G_END_DECLS

#endif
