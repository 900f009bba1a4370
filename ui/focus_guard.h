/* Keeps a window's focus widget alive a moment longer than GTK 4.8 does,
 * so that moving the focus away from a removed widget cannot read it freed
 * (see focus_guard.c). */
#ifndef TW_UI_FOCUS_GUARD_H
#define TW_UI_FOCUS_GUARD_H

#include <gtk/gtk.h>

/* Guards the window for its lifetime. Call from the main thread. */
void tw_focus_guard_attach(GtkWindow *window);

#endif
