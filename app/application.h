/* TwbApplication: Tensor Workbench as a GtkApplication (io.github.twb.Workbench).
 * It loads the styles, follows the desktop's light or dark preference,
 * sets the accelerators and the app.* actions (about, quit), and opens one
 * window per model: `twb` opens an empty model, `twb a.json b.json` one
 * window for each file (into the running instance when there is one).
 * `--logdb FILE` gives those windows that run database for their
 * Dashboard, Graph view and training panel (the active window too, when
 * twb is already running and opens no file). */
#ifndef TWB_APPLICATION_H
#define TWB_APPLICATION_H

#include <gtk/gtk.h>

#include "window.h"

G_BEGIN_DECLS

#define TW_APPLICATION_ID "io.github.twb.Workbench"

#define TWB_TYPE_APPLICATION (twb_application_get_type())
G_DECLARE_FINAL_TYPE(TwbApplication, twb_application, TWB, APPLICATION, GtkApplication)

/* flags are added to G_APPLICATION_HANDLES_OPEN: G_APPLICATION_NON_UNIQUE
 * for an instance of its own (screenshots). */
TwbApplication *twb_application_new(GApplicationFlags flags);
/* A window with a new model, loaded from path when it is not NULL (a
 * file that does not load leaves the model empty and says why in the
 * window's banner), on the --logdb being handled if there is one. Not yet
 * shown. */
TwWindow *twb_application_new_window(TwbApplication *app, const char *path);

/* Whether windows can open here; otherwise prints why (no display) on
 * stderr. Calls gtk_init. */
gboolean twb_application_can_open_windows(void);
/* `twb [--logdb FILE] [MODEL.json...]`: runs the application; the exit status. */
int twb_application_main(int argc, char **argv);

G_END_DECLS

#endif
