/* Following a TensorBoard log directory live (tw_tb_follow): a thread
 * imports every run into a run database, then keeps each event file open
 * and reads what its writer appends, woken by inotify the moment a file
 * grows or a folder appears. Records go through each run's summary writer
 * (a small run's within the follower's batch transaction, committed after
 * each wake and every TW_TB_BATCH_MS of the first walk; a big one's thread
 * writes within milliseconds of a quiet spell), and the dashboard
 * reads the database as it reads a training run's, so a value written to
 * an event file is on screen well within 100 ms. A record the writer has
 * only half written is waited for, never reported (TW_TFRECORD_AGAIN).
 *
 * inotify rather than GFileMonitor: GIO rate-limits "changed" events per
 * file, and a file appended to every few milliseconds must not wait. */
#include <errno.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <poll.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sqlite3.h>

#include "tfevents_internal.h"
#include "tw/engine.h"

/* A folder this deep under the log directory is not watched. */
#define MAX_DEPTH 64
/* While nothing is written, the runs' statuses are brought up to date this
 * often (a run whose events stopped turns finished). */
#define SYNC_MS 10000

typedef struct {
    tw_tfrecord_reader *reader;
    tw_tb_decoder *decoder;
} followed_file;

typedef struct {
    char *name;
    tw_tb_sink sink;
    bool open, refused;
    GHashTable *files; /* file name -> followed_file */
} followed_run;

struct tw_tb_follower {
    char *logdir, *db_path;
    tw_tb_warn_fn warn;
    void *user_data;
    tw_tb_import_stats stats;
    GThread *thread;
    int inotify_fd, stop_fd;
    GHashTable *watches; /* watch descriptor -> run name (the folder's path relative to logdir, "." at the top) */
    GHashTable *runs;    /* run name -> followed_run */
    sqlite3 *db;         /* tw__tb_open_database's connection */
    tw_tb_batch batch;   /* on db: the small runs' transaction */
    bool failed;         /* the database cannot be written: stop */
};

static void warn(tw_tb_follower *f, const char *message)
{
    f->stats.warnings++;
    if (f->warn)
        f->warn(f->user_data, message);
}

static void followed_file_free(followed_file *ff)
{
    tw_tb_decoder_free(ff->decoder);
    tw_tfrecord_close(ff->reader);
    g_free(ff);
}

static void followed_run_free(followed_run *run)
{
    g_hash_table_destroy(run->files);
    g_free(run->name);
    g_free(run);
}

static followed_run *run_for(tw_tb_follower *f, const char *name)
{
    followed_run *run = g_hash_table_lookup(f->runs, name);
    if (run)
        return run;
    run = g_new0(followed_run, 1);
    run->name = g_strdup(name);
    run->files = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, (GDestroyNotify)followed_file_free);
    g_hash_table_insert(f->runs, run->name, run);
    return run;
}

/* Read what the file has now; a record cut short waits for the rest. */
static void read_file(tw_tb_follower *f, followed_run *run, followed_file *ff)
{
    const uint8_t *data;
    size_t n;
    uint64_t offset;
    tw_tfrecord_status s;
    while ((s = tw_tfrecord_next(ff->reader, &data, &n, &offset)) == TW_TFRECORD_OK) {
        f->stats.records++;
        tw_tb_decode_event(ff->decoder, data, n, offset, tw__tb_sink_item, &run->sink);
    }
    if (s == TW_TFRECORD_ERROR)
        warn(f, tw_last_error());
}

/* A failed batch (the database cannot be written) stops the following. */
static void check_batch(tw_tb_follower *f)
{
    if (!f->batch.error || f->failed)
        return;
    char *message = g_strdup_printf("%s; following stopped", f->batch.error);
    warn(f, message);
    g_free(message);
    f->failed = true;
}

/* Start following an event file (the run opens with its first file,
 * within the batch when that file is small). */
static void add_file(tw_tb_follower *f, const char *run_name, const char *name)
{
    followed_run *run = run_for(f, run_name);
    if (run->refused || g_hash_table_contains(run->files, name))
        return;
    char *dir = tw__tb_run_dir(f->logdir, run->name);
    char *path = g_build_filename(dir, name, NULL);
    g_free(dir);
    if (!run->open) {
        GStatBuf st;
        bool bulk = g_stat(path, &st) != 0 || (uint64_t)st.st_size <= TW_TB_BULK_MAX_BYTES;
        int rc = tw__tb_sink_open(&run->sink, &f->batch, run->name, bulk, &f->stats, f->warn, f->user_data);
        if (rc < 0) {
            char *message = g_strdup_printf("%s; following stopped", tw_last_error());
            warn(f, message);
            g_free(message);
            f->failed = true;
        }
        run->refused = rc != 0;
        run->open = rc == 0;
        run->sink.live = true;
        if (!run->open) {
            g_free(path);
            return;
        }
    }
    followed_file *ff = g_new0(followed_file, 1);
    ff->reader = tw_tfrecord_open(path, tw__tb_sink_warn, &run->sink);
    if (!ff->reader) {
        warn(f, tw_last_error());
        g_free(ff);
        g_free(path);
        return;
    }
    tw_tfrecord_close_when_idle(ff->reader);
    ff->decoder = tw_tb_decoder_new(path, tw__tb_sink_warn, &run->sink);
    g_hash_table_insert(run->files, g_strdup(name), ff);
    f->stats.files++;
    g_free(path);
    read_file(f, run, ff);
    tw__tb_sink_settle(&run->sink);
}

static int compare(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Whether tw_tb_follower_stop asked the thread to end: the first walk
 * over a thousand runs takes seconds, and closing the window must not wait
 * for it. */
static bool stop_asked(tw_tb_follower *f)
{
    struct pollfd stop = {.fd = f->stop_fd, .events = POLLIN};
    return poll(&stop, 1, 0) > 0;
}

/* Watch a folder, then take its event files (in name order) and its
 * subfolders: watching first, nothing written meanwhile is missed. */
static void add_folder(tw_tb_follower *f, const char *relative, int depth)
{
    char *dir = tw__tb_run_dir(f->logdir, relative);
    int wd = inotify_add_watch(f->inotify_fd, dir, IN_CREATE | IN_MODIFY | IN_MOVED_TO | IN_ONLYDIR);
    if (wd >= 0)
        g_hash_table_insert(f->watches, GINT_TO_POINTER(wd), g_strdup(relative));
    GDir *d = g_dir_open(dir, 0, NULL);
    GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
    for (const char *name; d && (name = g_dir_read_name(d));)
        g_ptr_array_add(names, g_strdup(name));
    if (d)
        g_dir_close(d);
    g_ptr_array_sort(names, compare);
    for (guint i = 0; i < names->len && !f->failed && !stop_asked(f); i++) {
        const char *name = names->pdata[i];
        char *path = g_build_filename(dir, name, NULL);
        GStatBuf st;
        if (g_lstat(path, &st) == 0 && S_ISREG(st.st_mode) && tw_tb_is_event_file(name)) {
            add_file(f, relative, name);
            tw__tb_batch_commit_due(&f->batch);
            check_batch(f);
        } else if (g_lstat(path, &st) == 0 && S_ISDIR(st.st_mode) && depth < MAX_DEPTH) {
            char *sub = strcmp(relative, ".") ? g_build_filename(relative, name, NULL) : g_strdup(name);
            add_folder(f, sub, depth + 1);
            g_free(sub);
        }
        g_free(path);
    }
    g_ptr_array_unref(names);
    g_free(dir);
}

static int depth_of(const char *relative)
{
    int depth = strcmp(relative, ".") != 0;
    for (const char *p = relative; *p; p++)
        depth += *p == '/';
    return depth;
}

static void on_event(tw_tb_follower *f, const struct inotify_event *e)
{
    const char *relative = g_hash_table_lookup(f->watches, GINT_TO_POINTER(e->wd));
    if (!relative || !e->len)
        return;
    if (e->mask & IN_ISDIR) {
        char *sub = strcmp(relative, ".") ? g_build_filename(relative, e->name, NULL) : g_strdup(e->name);
        if (depth_of(sub) <= MAX_DEPTH)
            add_folder(f, sub, depth_of(sub));
        g_free(sub);
        return;
    }
    if (!tw_tb_is_event_file(e->name))
        return;
    followed_run *run = g_hash_table_lookup(f->runs, relative);
    followed_file *ff = run ? g_hash_table_lookup(run->files, e->name) : NULL;
    if (ff) {
        read_file(f, run, ff);
        tw__tb_sink_settle(&run->sink);
    } else {
        add_file(f, relative, e->name);
    }
}

static void sync_runs(tw_tb_follower *f)
{
    GHashTableIter it;
    gpointer value;
    g_hash_table_iter_init(&it, f->runs);
    while (g_hash_table_iter_next(&it, NULL, &value))
        if (((followed_run *)value)->open)
            tw__tb_sink_settle(&((followed_run *)value)->sink);
}

static gpointer follow_main(gpointer data)
{
    tw_tb_follower *f = data;
    f->db = tw__tb_open_database(f->db_path);
    if (!f->db) {
        warn(f, tw_last_error());
        return NULL;
    }
    f->batch = (tw_tb_batch){.db = f->db, .db_path = f->db_path};
    add_folder(f, ".", 0);
    tw__tb_batch_commit(&f->batch);
    check_batch(f);
    char buf[64 * 1024] __attribute__((aligned(__alignof__(struct inotify_event))));
    while (!f->failed) {
        struct pollfd fds[2] = {{.fd = f->inotify_fd, .events = POLLIN}, {.fd = f->stop_fd, .events = POLLIN}};
        int ready = poll(fds, 2, SYNC_MS);
        if (ready < 0 && errno != EINTR)
            break;
        if (fds[1].revents)
            break;
        if (ready == 0) {
            sync_runs(f); /* quiet runs turn from running to finished */
            tw__tb_batch_commit(&f->batch);
            check_batch(f);
        }
        if (!(fds[0].revents & POLLIN))
            continue;
        ssize_t got = read(f->inotify_fd, buf, sizeof buf);
        for (ssize_t at = 0; got > 0 && at < got;) {
            const struct inotify_event *e = (const struct inotify_event *)(buf + at);
            on_event(f, e);
            at += (ssize_t)(sizeof *e + e->len);
        }
        /* what this wake read, on screen now (a directory appearing with
         * many runs was walked in batches already) */
        tw__tb_batch_commit(&f->batch);
        check_batch(f);
    }
    tw__tb_batch_commit(&f->batch);
    return NULL;
}

tw_tb_follower *tw_tb_follow(const char *logdir, const char *db_path, tw_tb_warn_fn warn_fn, void *user_data)
{
    /* Not the walk of every run (tw_tb_list_runs): the thread walks the
     * folder anyway, and a thousand runs took a second before it started. */
    if (tw__tb_check_logdir(logdir))
        return NULL;
    tw_tb_follower *f = g_new0(tw_tb_follower, 1);
    f->inotify_fd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
    f->stop_fd = eventfd(0, EFD_CLOEXEC);
    if (f->inotify_fd < 0 || f->stop_fd < 0) {
        tw_error_set("%s: cannot watch the folder: %s", logdir, g_strerror(errno));
        if (f->inotify_fd >= 0)
            close(f->inotify_fd);
        if (f->stop_fd >= 0)
            close(f->stop_fd);
        g_free(f);
        return NULL;
    }
    f->logdir = g_strdup(logdir);
    f->db_path = g_strdup(db_path);
    f->warn = warn_fn;
    f->user_data = user_data;
    f->watches = g_hash_table_new_full(NULL, NULL, NULL, g_free);
    f->runs = g_hash_table_new_full(g_str_hash, g_str_equal, NULL, (GDestroyNotify)followed_run_free);
    f->thread = g_thread_new("twb-tfevents", follow_main, f);
    return f;
}

void tw_tb_follower_stop(tw_tb_follower *f)
{
    if (!f)
        return;
    uint64_t one = 1;
    if (write(f->stop_fd, &one, sizeof one) != sizeof one)
        g_warning("cannot stop the TensorBoard follower: %s", g_strerror(errno));
    g_thread_join(f->thread);
    GHashTableIter it;
    gpointer value;
    g_hash_table_iter_init(&it, f->runs);
    while (g_hash_table_iter_next(&it, NULL, &value)) {
        followed_run *run = value;
        g_hash_table_remove_all(run->files);
        if (run->open && tw__tb_sink_close(&run->sink, TW_RUN_FINISHED) && !f->batch.error)
            warn(f, tw_last_error());
    }
    if (f->db && tw__tb_batch_commit(&f->batch) && !f->failed)
        warn(f, tw_last_error());
    tw__tb_batch_end(&f->batch);
    g_hash_table_destroy(f->runs);
    g_hash_table_destroy(f->watches);
    sqlite3_close(f->db);
    close(f->inotify_fd);
    close(f->stop_fd);
    g_free(f->logdir);
    g_free(f->db_path);
    g_free(f);
}
