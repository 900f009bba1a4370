/* Atomic file replacement: temporary file, fsync, rename, fsync of the
 * directory (without the last step a crash can lose the rename). */
#include <errno.h>
#include <fcntl.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>
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
    int fd = f->fd;
    f->fd = -1;
    if (close(fd))
        return fail(f, "closing", errno);
    if (rename(f->tmp_path, f->path))
        return fail(f, "renaming the temporary file over it", errno);
    g_free(f->tmp_path);
    f->tmp_path = NULL;
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
