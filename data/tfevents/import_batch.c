/* A batch of runs imported in one transaction on the importer's connection
 * (tw_tb_batch, tfevents_internal.h): the runs small enough to be written
 * without a thread of their own go in together, committed a few times a
 * second, instead of a transaction per run and per writer wake. A failure
 * rolls the open batch back and ends the batch: every later begin fails
 * with the first message, so no run goes on writing rows whose tags and
 * chunks the rollback took away. */
#include <glib.h>
#include <sqlite3.h>

#include "run_store/summary_internal.h"
#include "tfevents_internal.h"
#include "tw/error.h"

static int failed(const tw_tb_batch *b)
{
    return tw_error_set("%s", b->error);
}

void tw__tb_batch_fail(tw_tb_batch *b, const char *message)
{
    if (b->error)
        return;
    b->error = g_strdup(message);
    if (b->open)
        sqlite3_exec(b->db, "ROLLBACK", NULL, NULL, NULL);
    b->open = false;
}

int tw__tb_batch_begin(tw_tb_batch *b)
{
    if (b->error)
        return failed(b);
    if (b->open)
        return 0;
    if (tw__store_exec(b->db, b->db_path, "BEGIN IMMEDIATE")) {
        tw__tb_batch_fail(b, tw_last_error());
        return -1;
    }
    b->open = true;
    b->since = g_get_monotonic_time();
    return 0;
}

int tw__tb_batch_commit(tw_tb_batch *b)
{
    if (b->error)
        return failed(b);
    /* the runs' metrics with what the batch wrote (their rows exist by then) */
    if (b->metrics.dirty && (tw__tb_batch_begin(b) || tw__tb_metrics_write(&b->metrics, b->db, b->db_path))) {
        tw__tb_batch_fail(b, tw_last_error());
        return -1;
    }
    if (!b->open)
        return 0;
    if (tw__store_exec(b->db, b->db_path, "COMMIT")) {
        tw__tb_batch_fail(b, tw_last_error());
        return -1;
    }
    b->open = false;
    b->commits++;
    return 0;
}

void tw__tb_batch_end(tw_tb_batch *b)
{
    tw__summary_statements_free(b->statements);
    b->statements = NULL;
    tw__tb_metrics_clear(&b->metrics);
    g_clear_pointer(&b->error, g_free);
}

/* The first commit at once (the first run on screen soon), then one per
 * TW_TB_BATCH_MS. */
int tw__tb_batch_commit_due(tw_tb_batch *b)
{
    bool due = b->open && (b->commits == 0 || g_get_monotonic_time() - b->since >= TW_TB_BATCH_MS * 1000);
    return due ? tw__tb_batch_commit(b) : b->error ? failed(b) : 0;
}
