/* TFRecord framing: a uint64 length, the masked CRC-32C of those 8 bytes,
 * the data, the masked CRC-32C of the data, all little-endian.
 *
 * The file is read through one buffer (64 KiB, doubled while reads fill it
 * up to 1 MiB, grown to the largest record), so a gigabyte log costs a
 * megabyte; it is freed whenever every byte read is used, so the many
 * files a live log directory follows cost nothing while they are idle. A record whose data checksum fails is
 * skipped by its (checksummed) length. A header whose checksum fails, or
 * whose length is beyond TW_TFRECORD_MAX_LENGTH, cannot be trusted to say
 * where the next record starts: the reader then scans forward byte by byte
 * for the next header whose checksum holds (a chance of 1 in 2^32 per
 * position for garbage) and reports the bytes it skipped. A file that ends
 * inside a record gives TW_TFRECORD_AGAIN: a live file's writer is midway,
 * and the next call picks the record up once it is whole. */
#include <errno.h>
#include <fcntl.h>
#include <glib.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tw/engine.h"
#include "tw/tfevents.h"

#define BUFFER_MIN ((size_t)64 << 10)
#define BUFFER_MAX ((size_t)1 << 20)
#define HEADER 12 /* length + its CRC */
#define FOOTER 4  /* the data's CRC */

struct tw_tfrecord_reader {
    int fd;
    char *path;
    tw_tb_warn_fn warn;
    void *user_data;
    uint8_t *buf;
    size_t cap, pos, end; /* buf[pos, end) are the file's bytes from offset on; buf NULL when cap is 0 */
    size_t grow;          /* the capacity the next allocation takes */
    uint64_t offset;
    bool skipping;        /* scanning for a valid header after a damaged one */
    bool skip_quietly;    /* the scan started at a cut already reported */
    uint64_t skip_from;
    bool complete;        /* the caller said no more bytes will come (tw_tfrecord_report_cut) */
    bool close_idle;      /* close fd at each end of what the file has (tw_tfrecord_close_when_idle) */
};

static uint64_t le64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void warn(tw_tfrecord_reader *r, uint64_t offset, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void warn(tw_tfrecord_reader *r, uint64_t offset, const char *fmt, ...)
{
    if (!r->warn)
        return;
    va_list ap;
    va_start(ap, fmt);
    char *what = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    char *message = g_strdup_printf("%s: offset %llu: %s", r->path, (unsigned long long)offset, what);
    r->warn(r->user_data, message);
    g_free(message);
    g_free(what);
}

tw_tfrecord_reader *tw_tfrecord_open(const char *path, tw_tb_warn_fn warn_fn, void *user_data)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
        tw_error_set("%s: cannot open it: %s", path, g_strerror(errno));
        return NULL;
    }
    struct stat st;
    if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
        tw_error_set("%s: not a regular file", path);
        close(fd);
        return NULL;
    }
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK); /* O_NONBLOCK only kept a FIFO from blocking open */
    tw_tfrecord_reader *r = g_new0(tw_tfrecord_reader, 1);
    r->fd = fd;
    r->path = g_strdup(path);
    r->warn = warn_fn;
    r->user_data = user_data;
    r->grow = BUFFER_MIN;
    return r;
}

void tw_tfrecord_close_when_idle(tw_tfrecord_reader *r)
{
    r->close_idle = true;
}

void tw_tfrecord_close(tw_tfrecord_reader *r)
{
    if (!r)
        return;
    if (r->fd >= 0)
        close(r->fd);
    g_free(r->buf);
    g_free(r->path);
    g_free(r);
}

uint64_t tw_tfrecord_offset(const tw_tfrecord_reader *r)
{
    return r->offset;
}

const char *tw_tfrecord_path(const tw_tfrecord_reader *r)
{
    return r->path;
}

/* Make at least `need` bytes available from pos when the file has them;
 * returns how many are (fewer at the end of the file). -1 on a read error. */
/* Open the file again where reading stopped (after tw_tfrecord_close_when_idle). */
static int reopen(tw_tfrecord_reader *r)
{
    r->fd = open(r->path, O_RDONLY | O_CLOEXEC);
    off_t at = (off_t)(r->offset + (r->end - r->pos));
    if (r->fd < 0 || lseek(r->fd, at, SEEK_SET) != at) {
        tw_error_set("%s: cannot open it again: %s", r->path, g_strerror(errno));
        if (r->fd >= 0)
            close(r->fd);
        r->fd = -1;
        return -1;
    }
    return 0;
}

static ssize_t fill(tw_tfrecord_reader *r, size_t need)
{
    if (r->end - r->pos >= need)
        return (ssize_t)(r->end - r->pos);
    if (r->fd < 0 && reopen(r))
        return -1;
    if (r->pos && r->cap - r->pos < need) {
        memmove(r->buf, r->buf + r->pos, r->end - r->pos);
        r->end -= r->pos;
        r->pos = 0;
    }
    if (r->cap < need || r->cap < r->grow) {
        r->cap = MAX(need, r->grow);
        r->buf = g_realloc(r->buf, r->cap);
    }
    while (r->end - r->pos < need) {
        ssize_t got = read(r->fd, r->buf + r->end, r->cap - r->end);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            tw_error_set("%s: offset %llu: cannot read it: %s", r->path, (unsigned long long)r->offset,
                         g_strerror(errno));
            return -1;
        }
        if (got == 0)
            break;
        r->end += (size_t)got;
        if (r->end == r->cap && r->grow < BUFFER_MAX)
            r->grow *= 2; /* a big file: take more at a time from the next fill on */
    }
    return (ssize_t)(r->end - r->pos);
}

static void advance(tw_tfrecord_reader *r, size_t n)
{
    r->pos += n;
    r->offset += n;
}

/* A header that can be believed: its checksum holds and its length is one
 * a record may have. */
static bool header_valid(const uint8_t *h)
{
    return tw_tfrecord_masked_crc(h, 8) == le32(h + 8) && le64(h) <= TW_TFRECORD_MAX_LENGTH;
}

static void start_skip(tw_tfrecord_reader *r, bool quietly)
{
    r->skipping = true;
    r->skip_quietly = quietly;
    r->skip_from = r->offset;
    advance(r, 1);
}

/* Scan for the next valid header. OK when one is found (the reader is at
 * it), END or AGAIN when the file ran out first. */
static tw_tfrecord_status scan(tw_tfrecord_reader *r)
{
    for (;;) {
        ssize_t avail = fill(r, 64 * 1024);
        if (avail < 0)
            return TW_TFRECORD_ERROR;
        size_t i = 0;
        for (; i + HEADER <= (size_t)avail; i++)
            if (header_valid(r->buf + r->pos + i)) {
                advance(r, i);
                r->skipping = false;
                if (r->skip_quietly)
                    warn(r, r->skip_from, "a valid record follows at offset %llu: the cut record's length was wrong",
                         (unsigned long long)r->offset);
                else
                    warn(r, r->skip_from, "skipped %llu damaged bytes; records go on at offset %llu",
                         (unsigned long long)(r->offset - r->skip_from), (unsigned long long)r->offset);
                return TW_TFRECORD_OK;
            }
        bool more = (size_t)avail >= 64 * 1024;
        advance(r, i); /* keep the last HEADER - 1 bytes: a header may start there */
        if (more)
            continue;
        if (!r->complete)
            return TW_TFRECORD_AGAIN;
        advance(r, r->end - r->pos);
        r->skipping = false;
        if (!r->skip_quietly)
            warn(r, r->skip_from, "no valid record after this point: %llu bytes to the end of the file skipped",
                 (unsigned long long)(r->offset - r->skip_from));
        return TW_TFRECORD_END;
    }
}

/* Whether the file has need bytes from the reader's offset on: asked
 * before growing the buffer for a record, so that a length that lies (up
 * to the 256 MiB limit, with a checksum that holds) costs no allocation. */
static bool file_holds(tw_tfrecord_reader *r, size_t need)
{
    if (r->fd < 0 && reopen(r))
        return false;
    struct stat st;
    return fstat(r->fd, &st) == 0 && (uint64_t)st.st_size >= r->offset + need;
}

/* Nothing read is left unused: give the buffer back. */
static void release(tw_tfrecord_reader *r)
{
    if (r->pos == r->end) {
        g_clear_pointer(&r->buf, g_free);
        r->cap = r->pos = r->end = 0;
    }
}

static tw_tfrecord_status next(tw_tfrecord_reader *r, const uint8_t **data, size_t *n, uint64_t *offset);

tw_tfrecord_status tw_tfrecord_next(tw_tfrecord_reader *r, const uint8_t **data, size_t *n, uint64_t *offset)
{
    tw_tfrecord_status s = next(r, data, n, offset);
    if (s == TW_TFRECORD_END || s == TW_TFRECORD_AGAIN) {
        release(r);
        if (r->close_idle && r->fd >= 0) {
            close(r->fd);
            r->fd = -1;
        }
    }
    return s;
}

static tw_tfrecord_status next(tw_tfrecord_reader *r, const uint8_t **data, size_t *n, uint64_t *offset)
{
    for (;;) {
        if (r->skipping) {
            tw_tfrecord_status s = scan(r);
            if (s != TW_TFRECORD_OK)
                return s;
        }
        ssize_t avail = fill(r, HEADER);
        if (avail < 0)
            return TW_TFRECORD_ERROR;
        if (avail == 0)
            return TW_TFRECORD_END;
        if (avail < HEADER)
            return TW_TFRECORD_AGAIN;
        const uint8_t *h = r->buf + r->pos;
        uint64_t length = le64(h);
        if (tw_tfrecord_masked_crc(h, 8) != le32(h + 8)) {
            warn(r, r->offset, "the record header's checksum does not match (a damaged file, or not a TFRecord "
                               "file); looking for the next valid record");
            start_skip(r, false);
            continue;
        }
        if (length > TW_TFRECORD_MAX_LENGTH) {
            warn(r, r->offset, "a record length of %llu bytes is beyond the %llu MiB limit; looking for the next "
                               "valid record",
                 (unsigned long long)length, (unsigned long long)(TW_TFRECORD_MAX_LENGTH >> 20));
            start_skip(r, false);
            continue;
        }
        size_t need = HEADER + (size_t)length + FOOTER;
        if (need > r->cap && !file_holds(r, need))
            return TW_TFRECORD_AGAIN; /* no buffer for a record the file does not hold (yet) */
        avail = fill(r, need);
        if (avail < 0)
            return TW_TFRECORD_ERROR;
        if ((size_t)avail < need)
            return TW_TFRECORD_AGAIN;
        const uint8_t *body = r->buf + r->pos + HEADER;
        if (tw_tfrecord_masked_crc(body, (size_t)length) != le32(body + length)) {
            warn(r, r->offset, "the record's data (%llu bytes) does not match its checksum; record skipped",
                 (unsigned long long)length);
            advance(r, need);
            continue;
        }
        *data = body;
        *n = (size_t)length;
        *offset = r->offset;
        advance(r, need);
        return TW_TFRECORD_OK;
    }
}

void tw_tfrecord_report_cut(tw_tfrecord_reader *r)
{
    r->complete = true;
    if (r->skipping)
        return; /* the scan ends the file itself */
    size_t avail = r->end - r->pos;
    if (avail == 0)
        return;
    if (avail < HEADER)
        warn(r, r->offset, "the file ends inside a record header (%zu of 12 bytes)", avail);
    else
        warn(r, r->offset, "the file ends inside a record (%zu of the %llu bytes its header announces)", avail,
             (unsigned long long)(le64(r->buf + r->pos) + HEADER + FOOTER));
    start_skip(r, true);
}
