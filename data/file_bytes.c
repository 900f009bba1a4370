/* Whole files into memory, gunzipped by magic with GIO's GZlibDecompressor
 * in a streaming loop whose buffer grows only as data actually arrives;
 * and members of zip archives (NPZ), stored or deflated. */
#include <errno.h>
#include <fcntl.h>
#include <gio/gio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "file_bytes.h"
#include "tw/error.h"

/* One convert call never hands zlib more than this (its counters are 32-bit). */
#define CHUNK_MAX ((size_t)1 << 30)
#define DEFLATE_MAX_RATIO TW_DEFLATE_MAX_RATIO
/* The buffer before a header has told the size. */
#define FIRST_BUFFER (64 * 1024)

bool tw__is_gzip(const uint8_t *bytes, size_t size)
{
    return size >= 2 && bytes[0] == 0x1f && bytes[1] == 0x8b;
}

bool tw__is_zip(const uint8_t *bytes, size_t size)
{
    /* A local file header, or the end record of an empty archive. */
    return size >= 4 && bytes[0] == 'P' && bytes[1] == 'K' && ((bytes[2] == 3 && bytes[3] == 4) ||
                                                                (bytes[2] == 5 && bytes[3] == 6));
}

static size_t min_size(size_t a, size_t b)
{
    return a < b ? a : b;
}

static size_t plausible_output(size_t in_size)
{
    return in_size > SIZE_MAX / DEFLATE_MAX_RATIO ? SIZE_MAX : in_size * DEFLATE_MAX_RATIO;
}

/* One compressed stream to decompress. */
typedef struct {
    const uint8_t *in;
    size_t in_size;
    size_t base; /* the file offset of in[0], for messages */
    const char *name;
    GZlibCompressorFormat format; /* GZIP (members may follow each other) or RAW (a zip member) */
    tw_expected_size_fn expected; /* may be NULL */
    size_t declared;              /* RAW: the exact size the archive declares */
    size_t hint;                  /* the likely size plus one, or 0 */
    size_t max;                   /* GZIP: the most the caller takes */
} inflate_job;

static uint8_t *inflate_all(const inflate_job *job, size_t *out_size)
{
    *out_size = 0;
    bool raw = job->format == G_ZLIB_COMPRESSOR_FORMAT_RAW;
    size_t limit = raw ? job->declared : job->max; /* the most the data may hold */
    bool from_header = false;                      /* whether limit is the format header's */
    bool header_known = job->expected == NULL, stop = false;
    /* Until the header has told the size, a small buffer: the header is
     * near the start, and a lying size field buys nothing. */
    size_t cap = header_known && job->hint ? job->hint : FIRST_BUFFER;
    if (limit != SIZE_MAX && cap > limit + 1)
        cap = limit + 1;
    uint8_t *out = malloc(cap);
    if (!out) {
        tw_error_set("%s: out of memory for %zu bytes of decompressed data", job->name, cap);
        return NULL;
    }
    GZlibDecompressor *z = g_zlib_decompressor_new(job->format);
    size_t in_pos = 0, out_len = 0;
    while (!stop) {
        if (out_len == cap) {
            size_t want = cap > SIZE_MAX / 2 ? SIZE_MAX : cap * 2;
            if (header_known && job->hint > want)
                want = job->hint;
            if (limit != SIZE_MAX && want > limit + 1)
                want = limit + 1; /* one byte past the limit shows that the data runs past it */
            if (want <= cap) {
                tw_error_set("%s: decompressed data too large (over %zu bytes)", job->name, cap);
                goto fail;
            }
            uint8_t *bigger = realloc(out, want);
            if (!bigger) {
                tw_error_set("%s: out of memory for %zu bytes of decompressed data (byte offset %zu)", job->name,
                             want, job->base + in_pos);
                goto fail;
            }
            out = bigger;
            cap = want;
        }
        gsize nread = 0, nwritten = 0;
        GError *err = NULL;
        size_t in_chunk = min_size(job->in_size - in_pos, CHUNK_MAX);
        GConverterResult res =
            g_converter_convert(G_CONVERTER(z), job->in + in_pos, in_chunk, out + out_len,
                                min_size(cap - out_len, CHUNK_MAX),
                                in_chunk == job->in_size - in_pos ? G_CONVERTER_INPUT_AT_END : 0, &nread, &nwritten,
                                &err);
        if (res == G_CONVERTER_ERROR) {
            if (g_error_matches(err, G_IO_ERROR, G_IO_ERROR_PARTIAL_INPUT))
                tw_error_set("%s: truncated %s data: the compressed stream ends at byte offset %zu before its end "
                             "(%zu bytes decompressed so far)",
                             job->name, raw ? "deflate" : "gzip", job->base + job->in_size, out_len);
            else
                tw_error_set("%s: corrupt %s data near compressed byte offset %zu: %s", job->name,
                             raw ? "deflate" : "gzip", job->base + in_pos, err ? err->message : "unknown error");
            g_clear_error(&err);
            goto fail;
        }
        in_pos += nread;
        out_len += nwritten;
        if (!header_known) {
            size_t e = job->expected(out, out_len);
            if (e == TW_SIZE_INVALID) {
                stop = true; /* the parser reports the bad header from what we have */
            } else if (e != TW_SIZE_MORE) {
                header_known = true;
                if (e < limit) {
                    limit = e;
                    from_header = true;
                }
            }
        }
        if (out_len > limit) {
            if (from_header)
                tw_error_set("%s: the decompressed data runs past the %zu bytes its header declares (stopped at "
                             "compressed byte offset %zu)",
                             job->name, limit, job->base + in_pos);
            else if (!raw)
                tw_error_set("%s: the decompressed data runs past %zu bytes, the most this kind of file may hold "
                             "(stopped at compressed byte offset %zu)",
                             job->name, limit, job->base + in_pos);
            else
                tw_error_set("%s: the member inflates past the %zu bytes the archive's directory declares (stopped "
                             "at byte offset %zu)",
                             job->name, limit, job->base + in_pos);
            goto fail;
        }
        if (res == G_CONVERTER_FINISHED) {
            /* Concatenated gzip members form one file; anything else after the
             * end is ignored, as gzip itself does. */
            if (!raw && tw__is_gzip(job->in + in_pos, job->in_size - in_pos))
                g_converter_reset(G_CONVERTER(z));
            else
                stop = true;
        } else if (nread == 0 && nwritten == 0 && out_len < cap) {
            tw_error_set("%s: decompression made no progress at byte offset %zu", job->name, job->base + in_pos);
            goto fail;
        }
    }
    g_object_unref(z);
    *out_size = out_len;
    return out;

fail:
    g_object_unref(z);
    free(out);
    return NULL;
}

static uint8_t *gunzip_at_most(const uint8_t *in, size_t in_size, const char *name, tw_expected_size_fn expected,
                               size_t max, size_t *out_size)
{
    /* The likely size: the last member's ISIZE field (the size modulo 2^32),
     * believed only as far as deflate could expand the input. One
     * allocation for an honest file, no giant one for a lying file. */
    size_t hint = 0;
    if (in_size >= 18) {
        const uint8_t *p = in + in_size - 4;
        size_t isize = (size_t)p[0] | (size_t)p[1] << 8 | (size_t)p[2] << 16 | (size_t)p[3] << 24;
        if (isize > 0 && isize <= plausible_output(in_size))
            hint = isize + 1;
    }
    inflate_job job = {in, in_size, 0, name, G_ZLIB_COMPRESSOR_FORMAT_GZIP, expected, SIZE_MAX, hint, max};
    return inflate_all(&job, out_size);
}

uint8_t *tw__gunzip(const uint8_t *in, size_t in_size, const char *name, tw_expected_size_fn expected,
                    size_t *out_size)
{
    return gunzip_at_most(in, in_size, name, expected, SIZE_MAX, out_size);
}

/* ---- zip archives ------------------------------------------------------------ */

static uint16_t le16(const uint8_t *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t le64(const uint8_t *p)
{
    return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32;
}

typedef struct {
    const uint8_t *name; /* not NUL-terminated */
    size_t name_len;
    int method;
    uint32_t crc;
    uint64_t compressed, size, local_offset;
    size_t directory_offset; /* of this entry, for messages */
} zip_entry;

typedef struct {
    zip_entry *entries;
    size_t count;
} zip_directory;

/* The central directory, every field checked against the archive's size. */
static int zip_read_directory(const uint8_t *b, size_t size, const char *name, zip_directory *dir)
{
    dir->entries = NULL;
    dir->count = 0;
    /* The end record: 22 bytes plus a comment of up to 65535, at the end. */
    size_t end = SIZE_MAX;
    for (size_t p = size >= 22 ? size - 22 : 0; size >= 22; p--) {
        if (le32(b + p) == 0x06054b50 && p + 22 + le16(b + p + 20) == size) {
            end = p;
            break;
        }
        if (p == 0 || size - p > 22 + 65535)
            break;
    }
    if (end == SIZE_MAX)
        return tw_error_set("%s: not a complete zip archive: no end-of-directory record in its last bytes "
                            "(truncated?)",
                            name);
    uint64_t count = le16(b + end + 10), dir_size = le32(b + end + 12), dir_offset = le32(b + end + 16);
    if (count == 0xffff || dir_size == 0xffffffff || dir_offset == 0xffffffff) {
        /* Zip64: a locator just before the end record points at the zip64 end record. */
        size_t loc = end >= 20 ? end - 20 : SIZE_MAX;
        if (loc == SIZE_MAX || le32(b + loc) != 0x07064b50)
            return tw_error_set("%s: zip64 archive without its locator at byte offset %zu", name,
                                end >= 20 ? end - 20 : 0);
        uint64_t z64 = le64(b + loc + 8);
        if (z64 > size || size - z64 < 56 || le32(b + z64) != 0x06064b50)
            return tw_error_set("%s: the zip64 end record at byte offset %llu is missing or truncated", name,
                                (unsigned long long)z64);
        count = le64(b + z64 + 32);
        dir_size = le64(b + z64 + 40);
        dir_offset = le64(b + z64 + 48);
    }
    if (dir_offset > size || dir_size > size - dir_offset)
        return tw_error_set("%s: the zip directory (byte offset %llu, %llu bytes) lies outside the %zu-byte file "
                            "(end record at byte offset %zu)",
                            name, (unsigned long long)dir_offset, (unsigned long long)dir_size, size, end);
    if (count > dir_size / 46)
        return tw_error_set("%s: the zip directory at byte offset %llu declares %llu entries, more than its %llu "
                            "bytes can hold",
                            name, (unsigned long long)dir_offset, (unsigned long long)count,
                            (unsigned long long)dir_size);
    dir->entries = calloc(count ? count : 1, sizeof *dir->entries);
    if (!dir->entries)
        return tw_error_set("%s: out of memory for %llu zip entries", name, (unsigned long long)count);
    size_t p = (size_t)dir_offset, dir_end = (size_t)(dir_offset + dir_size);
    for (uint64_t i = 0; i < count; i++) {
        if (dir_end - p < 46 || le32(b + p) != 0x02014b50) {
            free(dir->entries);
            dir->entries = NULL;
            return tw_error_set("%s: zip directory entry %llu at byte offset %zu is %s", name,
                                (unsigned long long)i, p, dir_end - p < 46 ? "truncated" : "not a directory entry");
        }
        zip_entry *e = &dir->entries[i];
        size_t name_len = le16(b + p + 28), extra_len = le16(b + p + 30), comment_len = le16(b + p + 32);
        if (dir_end - p - 46 < name_len + extra_len + comment_len) {
            free(dir->entries);
            dir->entries = NULL;
            return tw_error_set("%s: zip directory entry %llu at byte offset %zu runs past the directory", name,
                                (unsigned long long)i, p);
        }
        e->directory_offset = p;
        e->method = le16(b + p + 10);
        e->crc = le32(b + p + 16);
        e->compressed = le32(b + p + 20);
        e->size = le32(b + p + 24);
        e->local_offset = le32(b + p + 42);
        e->name = b + p + 46;
        e->name_len = name_len;
        /* Zip64 extra field: the fields that read 0xffffffff, in this order. */
        const uint8_t *x = b + p + 46 + name_len, *x_end = x + extra_len;
        while (x_end - x >= 4) {
            size_t id = le16(x), len = le16(x + 2);
            if ((size_t)(x_end - x - 4) < len)
                break;
            if (id == 0x0001) {
                const uint8_t *f = x + 4, *f_end = f + len;
                uint64_t *fields[3] = {&e->size, &e->compressed, &e->local_offset};
                for (int k = 0; k < 3; k++)
                    if (*fields[k] == 0xffffffff && f_end - f >= 8) {
                        *fields[k] = le64(f);
                        f += 8;
                    }
            }
            x += 4 + len;
        }
        p += 46 + name_len + extra_len + comment_len;
        dir->count++;
    }
    return 0;
}

char **tw__zip_list(const uint8_t *zip, size_t size, const char *name)
{
    zip_directory dir;
    if (zip_read_directory(zip, size, name, &dir) < 0)
        return NULL;
    char **names = g_new0(char *, dir.count + 1);
    for (size_t i = 0; i < dir.count; i++)
        names[i] = g_strndup((const char *)dir.entries[i].name, dir.entries[i].name_len);
    free(dir.entries);
    return names;
}

static uint32_t crc32_of(const uint8_t *p, size_t n)
{
    static uint32_t table[256];
    static gsize ready = 0;
    if (g_once_init_enter(&ready)) {
        for (uint32_t i = 0; i < 256; i++) {
            uint32_t c = i;
            for (int k = 0; k < 8; k++)
                c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
            table[i] = c;
        }
        g_once_init_leave(&ready, 1);
    }
    uint32_t c = 0xffffffffu;
    for (size_t i = 0; i < n; i++)
        c = table[(c ^ p[i]) & 0xff] ^ (c >> 8);
    return c ^ 0xffffffffu;
}

uint8_t *tw__zip_member(const uint8_t *zip, size_t size, const char *name, const char *member,
                        tw_expected_size_fn expected, size_t *out_size)
{
    *out_size = 0;
    zip_directory dir;
    if (zip_read_directory(zip, size, name, &dir) < 0)
        return NULL;
    const zip_entry *e = NULL;
    for (size_t i = 0; i < dir.count && !e; i++)
        if (dir.entries[i].name_len == strlen(member) && memcmp(dir.entries[i].name, member, strlen(member)) == 0)
            e = &dir.entries[i];
    char *label = g_strdup_printf("%s:%s", name, member);
    uint8_t *out = NULL;
    if (!e) {
        tw_error_set("%s: no member '%s' in the zip archive", name, member);
        goto done;
    }
    /* The local header: only its name and extra lengths matter; the sizes
     * come from the directory. */
    uint64_t lo = e->local_offset;
    if (lo > size || size - lo < 30 || le32(zip + lo) != 0x04034b50) {
        tw_error_set("%s: the local header the directory entry at byte offset %zu points to (byte offset %llu) is "
                     "%s",
                     label, e->directory_offset, (unsigned long long)lo,
                     lo > size || size - lo < 30 ? "outside the file" : "not a local header");
        goto done;
    }
    uint64_t data = lo + 30 + le16(zip + lo + 26) + le16(zip + lo + 28);
    if (data > size || e->compressed > size - data) {
        tw_error_set("%s: the member's %llu bytes of data at byte offset %llu run past the end of the %zu-byte file",
                     label, (unsigned long long)e->compressed, (unsigned long long)data, size);
        goto done;
    }
    if (e->size > SIZE_MAX / 2) {
        tw_error_set("%s: the directory entry at byte offset %zu declares %llu bytes, more than can be addressed",
                     label, e->directory_offset, (unsigned long long)e->size);
        goto done;
    }
    size_t n = 0;
    if (e->method == 0) {
        if (e->compressed != e->size) {
            tw_error_set("%s: a stored member of %llu bytes that the directory at byte offset %zu says is %llu "
                         "bytes",
                         label, (unsigned long long)e->compressed, e->directory_offset, (unsigned long long)e->size);
            goto done;
        }
        n = (size_t)e->size;
        out = malloc(n ? n : 1);
        if (!out) {
            tw_error_set("%s: out of memory for %zu bytes", label, n);
            goto done;
        }
        if (n)
            memcpy(out, zip + data, n);
    } else if (e->method == 8) {
        size_t declared = (size_t)e->size;
        size_t hint = declared < plausible_output((size_t)e->compressed + 1) ? declared + 1 : 0;
        inflate_job job = {zip + data, (size_t)e->compressed, (size_t)data, label, G_ZLIB_COMPRESSOR_FORMAT_RAW,
                           expected, declared, hint, SIZE_MAX};
        out = inflate_all(&job, &n);
        if (!out)
            goto done;
        if (n != declared) {
            bool header_stopped = expected && expected(out, n) == TW_SIZE_INVALID;
            if (!header_stopped) {
                tw_error_set("%s: the member inflates to %zu bytes but the directory entry at byte offset %zu "
                             "declares %zu",
                             label, n, e->directory_offset, declared);
                free(out);
                out = NULL;
                goto done;
            }
        }
    } else {
        tw_error_set("%s: compression method %d (directory entry at byte offset %zu) is not supported; NPZ members "
                     "are stored (0) or deflated (8)",
                     label, e->method, e->directory_offset);
        goto done;
    }
    if (n == e->size && crc32_of(out, n) != e->crc) {
        tw_error_set("%s: the member's CRC-32 is %08x but the directory entry at byte offset %zu says %08x "
                     "(corrupt data)",
                     label, crc32_of(out, n), e->directory_offset, e->crc);
        free(out);
        out = NULL;
        goto done;
    }
    *out_size = n;

done:
    g_free(label);
    free(dir.entries);
    return out;
}

/* ---- files ---------------------------------------------------------------------- */

int tw__stat_regular_file(const char *path, struct stat *st)
{
    if (stat(path, st) != 0)
        return tw_error_set("%s: cannot open: %s", path, g_strerror(errno));
    if (S_ISDIR(st->st_mode))
        return tw_error_set("%s: is a directory, not a file", path);
    if (!S_ISREG(st->st_mode))
        return tw_error_set("%s: is not a regular file (a device, pipe or socket); only files can be read", path);
    return 0;
}

/* The raw bytes of a regular file of at most max bytes. Anything else is
 * refused before it is opened: reading /dev/zero or a pipe would never end,
 * and opening a FIFO with no writer would wait forever. */
static uint8_t *read_all(const char *path, size_t max, size_t *size)
{
    struct stat st;
    if (tw__stat_regular_file(path, &st))
        return NULL;
    if ((uint64_t)st.st_size > max) {
        tw_error_set("%s: the file is %lld bytes, more than the %zu bytes this kind of file may hold", path,
                     (long long)st.st_size, max);
        return NULL;
    }
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
        tw_error_set("%s: cannot open: %s", path, g_strerror(errno));
        return NULL;
    }
    /* +1: the end shows without growing; a file that grows while it is read
     * is read up to max. */
    size_t cap = (size_t)st.st_size + 1;
    uint8_t *buf = malloc(cap);
    if (!buf) {
        tw_error_set("%s: out of memory for %zu bytes", path, cap);
        close(fd);
        return NULL;
    }
    size_t len = 0;
    for (;;) {
        if (len == cap) {
            size_t want = cap > max / 2 ? max + 1 : cap * 2;
            uint8_t *bigger = want > cap ? realloc(buf, want) : NULL;
            if (!bigger) {
                if (want > cap)
                    tw_error_set("%s: out of memory reading past byte offset %zu", path, len);
                else
                    tw_error_set("%s: the file grew past %zu bytes, the most this kind of file may hold, while it "
                                 "was read",
                                 path, max);
                goto fail;
            }
            buf = bigger;
            cap = want;
        }
        ssize_t n = read(fd, buf + len, min_size(cap - len, CHUNK_MAX));
        if (n < 0) {
            if (errno == EINTR)
                continue;
            tw_error_set("%s: read error at byte offset %zu: %s", path, len, g_strerror(errno));
            goto fail;
        }
        if (n == 0)
            break;
        len += (size_t)n;
    }
    close(fd);
    *size = len;
    return buf;

fail:
    close(fd);
    free(buf);
    return NULL;
}

/* The most a file read whole may hold: the machine's memory. */
static size_t memory_size(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    if (pages <= 0 || page <= 0 || (unsigned long)pages > SIZE_MAX / (unsigned long)page)
        return SIZE_MAX - 1;
    return (size_t)pages * (size_t)page;
}

uint8_t *tw__file_bytes_at_most(const char *path, tw_expected_size_fn expected, size_t max, size_t *size)
{
    *size = 0;
    if (!path) {
        tw_error_set("file: the path is NULL");
        return NULL;
    }
    size_t raw_size;
    uint8_t *raw = read_all(path, max, &raw_size);
    if (!raw || !tw__is_gzip(raw, raw_size)) {
        *size = raw ? raw_size : 0;
        return raw;
    }
    uint8_t *out = gunzip_at_most(raw, raw_size, path, expected, max, size);
    free(raw);
    return out;
}

uint8_t *tw__file_bytes(const char *path, tw_expected_size_fn expected, size_t *size)
{
    return tw__file_bytes_at_most(path, expected, memory_size(), size);
}
