/* Run changes off the main loop (run_edit.h). */
#include "run_edit.h"

#include <tw/error.h>
#include <tw/run_store.h>

typedef struct {
    char *path, *name, *value;
    tw_run_edit_kind kind;
} edit;

static void edit_free(gpointer data)
{
    edit *e = data;
    g_free(e->path);
    g_free(e->name);
    g_free(e->value);
    g_free(e);
}

static int apply(tw_run_store *store, tw_run_edit_kind kind, const char *name, const char *value)
{
    switch (kind) {
    case TW_RUN_EDIT_RENAME: return tw_run_store_rename_run(store, name, value);
    case TW_RUN_EDIT_NOTES: return tw_run_store_set_notes(store, name, value);
    case TW_RUN_EDIT_COLOR: return tw_run_store_set_color(store, name, value);
    case TW_RUN_EDIT_PIN: return tw_run_store_set_pinned(store, name, g_strcmp0(value, "1") == 0);
    case TW_RUN_EDIT_TRASH: return tw_run_store_trash_run(store, name);
    case TW_RUN_EDIT_UNTRASH: return tw_run_store_untrash_run(store, name);
    case TW_RUN_EDIT_EMPTY_TRASH: return tw_run_store_empty_trash(store, NULL);
    }
    return tw_error_set("unknown run change %d", (int)kind);
}

gboolean tw_run_edit_apply(const char *path, tw_run_edit_kind kind, const char *name, const char *value,
                           GError **error)
{
    tw_run_store *store = tw_run_store_open(path, 0);
    int rc = store ? apply(store, kind, name, value) : -1;
    if (rc)
        g_set_error_literal(error, G_IO_ERROR, G_IO_ERROR_FAILED, tw_last_error());
    tw_run_store_close(store);
    return rc == 0;
}

static void run_in_thread(GTask *task, gpointer source, gpointer data, GCancellable *cancellable)
{
    edit *e = data;
    GError *error = NULL;
    if (tw_run_edit_apply(e->path, e->kind, e->name, e->value, &error))
        g_task_return_boolean(task, TRUE);
    else
        g_task_return_error(task, error);
}

void tw_run_edit_async(const char *path, tw_run_edit_kind kind, const char *name, const char *value,
                       GAsyncReadyCallback callback, gpointer user_data)
{
    edit *e = g_new(edit, 1);
    *e = (edit){g_strdup(path), g_strdup(name), g_strdup(value), kind};
    GTask *task = g_task_new(NULL, NULL, callback, user_data);
    g_task_set_task_data(task, e, edit_free);
    g_task_run_in_thread(task, run_in_thread);
    g_object_unref(task);
}

gboolean tw_run_edit_finish(GAsyncResult *result, GError **error)
{
    return g_task_propagate_boolean(G_TASK(result), error);
}
