/* The dashboard data's reader thread (dashboard_data.h): it owns a
 * read-only store handle and everything read from it, and hands the main
 * loop batches of results (dashboard_batch.h). This is all the thread and
 * the main loop share. */
#ifndef TW_UI_DASHBOARD_READER_H
#define TW_UI_DASHBOARD_READER_H

#include <glib.h>

#include "dashboard_batch.h"

/* Under lock. The main loop adds to `asked` and pokes (sets `poked`,
 * wakes reader_context); the thread takes the requests and posts its
 * batches into `pending`, merged into one not yet delivered; `deliver`
 * (deliver_data) runs on `context` for each pending batch. */
typedef struct {
    GMutex lock;
    GMainContext *context;        /* the main loop's */
    GMainContext *reader_context; /* the thread's: woken for requests */
    gboolean quit, poked;
    tw_dashboard_requests asked;
    tw_dashboard_batch *pending;
    GSource *pending_source;
    GSourceFunc deliver;
    gpointer deliver_data;
} tw_dashboard_shared;

/* Starts the thread; it runs until `quit` is set (and reader_context
 * woken), then frees what it read: join it before freeing `shared`. */
GThread *tw_dashboard_reader_start(tw_dashboard_shared *shared);

#endif
