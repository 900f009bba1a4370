/* Atomic file replacement: temporary file, fsync, rename, fsync of the
 * directory (without the last step a crash can lose the rename).
 *
 * Stale temporary files: a writer killed mid-write leaves its
 * "<path>.tmp-XXXXXX" behind, as big as what it had written. A writer holds
 * an exclusive flock on its temporary file from before its first byte until
 * after the rename, so a temporary file of the same target that is not
 * empty and can be locked has no live writer: the next writer of that
 * target removes it. (An empty one may be a writer's between its mkstemp
 * and its flock: removed only once it is a minute old.) */
#include <errno.h>
#include <fcntl.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <stdbool.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "atomic_file.h"
#include "tw/error.h"

/* One message for every way the disk can refuse, naming the target. */
static int fail(tw_atomic_file *f, const char *step, int err)
{
    if (err == ENOSPC || err == EDQUOT)
        tw_error_set("%s: cannot save the %s: %s (%s; any previous file is unchanged)", f->path, f->what,
                     err == ENOSPC ? "no space left on the device" : "disk quota exceeded", step);
    else
        tw_error_set("%s: cannot save the %s: %s failed: %s (any previous file is unchanged)", f->path, f->what,
                     step, g_strerror(err));
    tw__atomic_abort(f);
    return -1;
}

#define EMPTY_STALE_SECONDS 60

/* Whether name is "<base>.tmp-" and six more characters (mkstemp's). */
static bool is_temporary_of(const char *name, const char *base)
{
    size_t n = strlen(base);
    return strncmp(name, base, n) == 0 && strncmp(name + n, ".tmp-", 5) == 0 && strlen(name + n + 5) == 6;
}

static void remove_if_stale(const char *file)
{
    int fd = open(file, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0)
        return;
    struct stat st;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && flock(fd, LOCK_EX | LOCK_NB) == 0 &&
        (st.st_size > 0 || time(NULL) - st.st_mtime > EMPTY_STALE_SECONDS))
        g_unlink(file);
    close(fd);
}

/* The temporary files of path's earlier writers that died. */
static void remove_stale(const char *path, const char *mine)
{
    char *dir = g_path_get_dirname(path), *base = g_path_get_basename(path);
    GDir *d = g_dir_open(dir, 0, NULL);
    for (const char *name; d && (name = g_dir_read_name(d));) {
        if (!is_temporary_of(name, base))
            continue;
        char *file = g_build_filename(dir, name, NULL);
        char *mine_base = g_path_get_basename(mine);
        if (strcmp(name, mine_base) != 0)
            remove_if_stale(file);
        g_free(mine_base);
        g_free(file);
    }
    if (d)
        g_dir_close(d);
    g_free(dir);
    g_free(base);
}

int tw__atomic_open(tw_atomic_file *f, const char *path, const char *what)
{
    f->fd = -1;
    f->path = g_strdup(path);
    f->what = what;
    f->tmp_path = g_strdup_printf("%s.tmp-XXXXXX", path);
    /* 0666 under the umask, as a plain open would create it (mkstemp's 0600
     * would make checkpoints private to their writer). */
    f->fd = g_mkstemp_full(f->tmp_path, O_RDWR | O_CLOEXEC, 0666);
    if (f->fd < 0) {
        int err = errno;
        char *dir = g_path_get_dirname(path);
        tw_error_set("%s: cannot save the %s: cannot create a file in directory '%s': %s", path, what, dir,
                     g_strerror(err));
        g_free(dir);
        g_free(f->tmp_path);
        f->tmp_path = NULL;
        g_free(f->path);
        f->path = NULL;
        return -1;
    }
    /* Ours until the rename (see the top); others' stale files go. */
    flock(f->fd, LOCK_EX);
    remove_stale(path, f->tmp_path);
    return 0;
}

int tw__atomic_write(tw_atomic_file *f, const void *data, size_t size)
{
    const char *p = data;
    while (size > 0) {
        ssize_t n = write(f->fd, p, size);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return fail(f, "writing", n < 0 ? errno : ENOSPC);
        p += n;
        size -= (size_t)n;
    }
    return 0;
}

static int sync_directory(const char *path)
{
    char *dir = g_path_get_dirname(path);
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    g_free(dir);
    if (fd < 0)
        return errno;
    int err = fsync(fd) ? errno : 0;
    close(fd);
    /* Some file systems cannot sync directories; the rename stands. */
    return err == EINVAL || err == ENOTSUP ? 0 : err;
}

int tw__atomic_commit(tw_atomic_file *f)
{
    if (fsync(f->fd))
        return fail(f, "flushing to disk", errno);
    /* Renamed while still open and locked (see the top), then closed. */
    if (rename(f->tmp_path, f->path))
        return fail(f, "renaming the temporary file over it", errno);
    g_free(f->tmp_path);
    f->tmp_path = NULL;
    int fd = f->fd;
    f->fd = -1;
    if (close(fd)) {
        tw_error_set("%s: the %s was written but closing it failed: %s", f->path, f->what, g_strerror(errno));
        tw__atomic_abort(f);
        return -1;
    }
    int err = sync_directory(f->path);
    if (err) {
        tw_error_set("%s: the %s was written but its directory could not be flushed to disk: %s", f->path, f->what,
                     g_strerror(err));
        tw__atomic_abort(f);
        return -1;
    }
    tw__atomic_abort(f); /* nothing left to remove: this frees the names */
    return 0;
}

void tw__atomic_abort(tw_atomic_file *f)
{
    if (f->fd >= 0)
        close(f->fd);
    f->fd = -1;
    if (f->tmp_path)
        g_unlink(f->tmp_path);
    g_free(f->tmp_path);
    f->tmp_path = NULL;
    g_free(f->path);
    f->path = NULL;
}
