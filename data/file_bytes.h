/* Reading a whole file into memory for the parsers, gunzipping it
 * transparently when it starts with gzip's magic bytes 1f 8b (whatever its
 * name); and reading members of zip archives (NPZ). Messages name the file
 * and the byte offset. Not installed. */
#ifndef TW_FILE_BYTES_H
#define TW_FILE_BYTES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

/* What a format's header says about the size of the whole (decompressed)
 * file, judged from its first `size` bytes: TW_SIZE_MORE while the header is
 * still incomplete, TW_SIZE_INVALID when the header is malformed (reading
 * stops there and the parser reports the problem), else the total in bytes.
 * Decompression stops with an error as soon as the data runs past that
 * total, so a small .gz that declares gigabytes never allocates them. */
/* The most deflate expands data: about 1032:1 (a run of one byte). */
#define TW_DEFLATE_MAX_RATIO 1032

#define TW_SIZE_MORE ((size_t)0)
#define TW_SIZE_INVALID SIZE_MAX
typedef size_t (*tw_expected_size_fn)(const uint8_t *head, size_t size);

/* Whether the bytes start with gzip's magic number. */
bool tw__is_gzip(const uint8_t *bytes, size_t size);

/* Decompress gzip data (one or more members) from memory. expected may be
 * NULL (no limit but the data itself). Returns a malloc'd buffer (free());
 * NULL with an error naming `name` and the compressed byte offset. */
uint8_t *tw__gunzip(const uint8_t *in, size_t in_size, const char *name, tw_expected_size_fn expected,
                    size_t *out_size);

/* Zip archives (NPZ is a zip of NPY files): whether the bytes start with a
 * local file header; the member names (a NULL-terminated vector for
 * g_strfreev); one member's bytes, stored or deflated, checked against the
 * sizes and CRC-32 of the archive's directory and, through expected,
 * against its own header as it inflates. NULL with an error naming
 * name (and name:member) and the byte offset. */
bool tw__is_zip(const uint8_t *bytes, size_t size);
char **tw__zip_list(const uint8_t *zip, size_t size, const char *name);
uint8_t *tw__zip_member(const uint8_t *zip, size_t size, const char *name, const char *member,
                        tw_expected_size_fn expected, size_t *out_size);

/* 0 when path names a regular file (its stat in st); else -1 with a message
 * naming it: it cannot be opened (missing, no permission), is a directory,
 * or is a device, pipe or socket (which would never end, or wait forever
 * for a writer). Every reader's check before it opens a file. */
int tw__stat_regular_file(const char *path, struct stat *st);

/* The whole file at path, gunzipped when it is gzip data. Returns a malloc'd
 * buffer (free(); never NULL on success, even for an empty file) and its
 * size, or NULL with an error naming the path. Only regular files are read
 * (not devices, pipes or sockets), of at most the machine's memory, or max
 * bytes (before and after gunzipping) for tw__file_bytes_at_most. */
uint8_t *tw__file_bytes(const char *path, tw_expected_size_fn expected, size_t *size);
uint8_t *tw__file_bytes_at_most(const char *path, tw_expected_size_fn expected, size_t max, size_t *size);

#endif
