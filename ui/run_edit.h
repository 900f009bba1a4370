/* Changes the window makes to runs (rename, notes, colour, pin, the trash),
 * written off the main loop: each opens the run database for writing in a
 * worker thread, makes its one change and closes it, so the main loop never
 * waits on SQLite (a training process may hold the file's lock for a
 * moment). The dashboard's reader sees the change at its next poll.
 *
 *     tw_run_edit_async(path, TW_RUN_EDIT_PIN, "run-1", "1", on_done, self);
 *     ... on_done: if (!tw_run_edit_finish(result, &error)) show error->message
 */
#ifndef TW_UI_RUN_EDIT_H
#define TW_UI_RUN_EDIT_H

#include <gio/gio.h>

G_BEGIN_DECLS

typedef enum {
    TW_RUN_EDIT_RENAME,      /* value: the new name */
    TW_RUN_EDIT_NOTES,       /* value: the notes */
    TW_RUN_EDIT_COLOR,       /* value: "#rrggbb", or NULL for the palette's */
    TW_RUN_EDIT_PIN,         /* value: "1" or "0" */
    TW_RUN_EDIT_TRASH,       /* delete, with undo */
    TW_RUN_EDIT_UNTRASH,     /* the undo */
    TW_RUN_EDIT_EMPTY_TRASH, /* name unused: deletes every trashed run for good */
} tw_run_edit_kind;

/* The change, now, on this thread: TRUE, or FALSE with error set (the
 * store's message, naming the file and the run). */
gboolean tw_run_edit_apply(const char *path, tw_run_edit_kind kind, const char *name, const char *value,
                           GError **error);
void tw_run_edit_async(const char *path, tw_run_edit_kind kind, const char *name, const char *value,
                       GAsyncReadyCallback callback, gpointer user_data);
gboolean tw_run_edit_finish(GAsyncResult *result, GError **error);

G_END_DECLS

#endif
