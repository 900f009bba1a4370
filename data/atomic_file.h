/* Replacing a file atomically: the new contents go to "<path>.tmp-XXXXXX"
 * in the target's directory, are flushed to disk, and are renamed over the
 * target, whose directory is then flushed too. Readers see the old file or
 * the whole new one, never a mix; a failure at any step removes the
 * temporary file and leaves the old one as it was. Messages name the
 * target path. Not installed. */
#ifndef TW_ATOMIC_FILE_H
#define TW_ATOMIC_FILE_H

#include <stddef.h>

typedef struct {
    int fd;
    char *path;     /* the target */
    char *tmp_path; /* where the data goes until the commit */
    const char *what; /* "checkpoint", for messages */
} tw_atomic_file;

/* Create the temporary file (and remove the stale ones of earlier writers
 * of path that died, see atomic_file.c). -1 with a message when the
 * directory is missing or not writable. */
int tw__atomic_open(tw_atomic_file *f, const char *path, const char *what);
/* Append bytes; on failure the file is abandoned (as tw__atomic_abort). */
int tw__atomic_write(tw_atomic_file *f, const void *data, size_t size);
/* Flush, rename over the target, flush the directory. On failure the
 * temporary file is gone and the target unchanged. */
int tw__atomic_commit(tw_atomic_file *f);
/* Give up: close and remove the temporary file. Safe to call twice. */
void tw__atomic_abort(tw_atomic_file *f);

#endif
