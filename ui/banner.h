/* TwBanner: a message across the top of the window, revealed with a slide.
 * Errors are red and stay until closed; other messages hide by themselves
 * after a few seconds. */
#ifndef TW_UI_BANNER_H
#define TW_UI_BANNER_H

#include <gtk/gtk.h>

G_BEGIN_DECLS

#define TW_TYPE_BANNER (tw_banner_get_type())
G_DECLARE_FINAL_TYPE(TwBanner, tw_banner, TW, BANNER, GtkWidget)

GtkWidget *tw_banner_new(void);
void tw_banner_show(TwBanner *banner, const char *message, gboolean is_error);
void tw_banner_hide(TwBanner *banner);
/* The message shown, or NULL while hidden. */
const char *tw_banner_message(TwBanner *banner);
gboolean tw_banner_is_error(TwBanner *banner);

G_END_DECLS

#endif
