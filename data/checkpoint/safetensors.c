/* safetensors files: writing them atomically, and reading them with every
 * size checked against the file before anything is read or allocated. The
 * reader keeps the file open and reads tensors on demand, so opening a
 * large checkpoint to read its metadata costs one header. */
#include <errno.h>
#include <fcntl.h>
#include <glib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "atomic_file.h"
#include "safetensors_internal.h"

/* The format is little-endian and so is every machine we build for; a
 * big-endian port would byte-swap the length and the data here. */
_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "safetensors I/O assumes a little-endian host");

struct tw_safetensors {
    int fd;
    char *path;
    uint64_t data_start; /* file offset of the data buffer: 8 + header length */
    tw_st_header h;
    GHashTable *by_name; /* name -> tw_st_entry* in h */
};

/* ---- writing ---------------------------------------------------------------- */

static int check_write_args(const char *path, int n, const char *const *names, tw_tensor *const *tensors, int nmeta,
                            const char *const *keys, const char *const *values)
{
    if (!path)
        return tw_error_set("safetensors: the path is NULL");
    if (n < 0 || nmeta < 0 || (n > 0 && (!names || !tensors)) || (nmeta > 0 && (!keys || !values)))
        return tw_error_set("%s: bad arguments: %d tensors and %d metadata pairs (a negative count or a NULL array)",
                            path, n, nmeta);
    for (int i = 0; i < n; i++)
        if (!names[i] || !tensors[i])
            return tw_error_set("%s: tensor %d has no %s", path, i, names[i] ? "value (NULL)" : "name (NULL)");
    for (int i = 0; i < nmeta; i++)
        if (!keys[i] || !values[i])
            return tw_error_set("%s: metadata pair %d has a NULL %s", path, i, keys[i] ? "value" : "key");
    return 0;
}

/* Each tensor's description, its data placed right after the previous one's. */
static void describe(tw_st_header *h, int n, const char *const *names, tw_tensor *const *tensors, int nmeta,
                     const char *const *keys, const char *const *values)
{
    h->n = n;
    h->entries = g_new0(tw_st_entry, n ? n : 1);
    uint64_t offset = 0;
    for (int i = 0; i < n; i++) {
        tw_st_entry *e = &h->entries[i];
        e->name = (char *)names[i];
        e->dtype = tw_tensor_dtype(tensors[i]);
        e->ndim = tw_tensor_ndim(tensors[i]);
        memcpy(e->shape, tw_tensor_shape(tensors[i]), sizeof(int64_t) * (size_t)e->ndim);
        e->begin = offset;
        offset += (uint64_t)tw_tensor_numel(tensors[i]) * tw_dtype_size(e->dtype);
        e->end = offset;
    }
    h->nmeta = nmeta;
    h->meta_keys = (char **)keys;
    h->meta_values = (char **)values;
}

static int write_tensors(tw_atomic_file *f, int n, tw_tensor *const *tensors)
{
    int rc = 0;
    /* tw_contiguous's results (the tensor itself when already packed) and
     * the host copies of tensors on a device belong to this scope. */
    tw_scope_begin();
    for (int i = 0; i < n && rc == 0; i++) {
        tw_tensor *packed = tw_tensor_device(tensors[i]).kind == TW_DEVICE_CPU ? tw_contiguous(tensors[i])
                                                                                : tw_tensor_to(tensors[i], TW_CPU);
        size_t bytes = (size_t)tw_tensor_numel(tensors[i]) * tw_dtype_size(tw_tensor_dtype(tensors[i]));
        rc = packed ? tw__atomic_write(f, tw_tensor_data(packed), bytes) : -1;
    }
    tw_scope_end();
    return rc;
}

int tw_safetensors_write(const char *path, int n, const char *const *names, tw_tensor *const *tensors, int nmeta,
                         const char *const *meta_keys, const char *const *meta_values)
{
    if (check_write_args(path, n, names, tensors, nmeta, meta_keys, meta_values))
        return -1;
    tw_st_header h;
    describe(&h, n, names, tensors, nmeta, meta_keys, meta_values);
    size_t size;
    char *json = tw__st_header_format(&h, path, &size);
    g_free(h.entries); /* the names and metadata are the caller's */
    if (!json)
        return -1;
    uint64_t length = size;
    tw_atomic_file f;
    int rc = tw__atomic_open(&f, path, "safetensors file");
    if (rc == 0)
        rc = tw__atomic_write(&f, &length, 8);
    if (rc == 0)
        rc = tw__atomic_write(&f, json, size);
    if (rc == 0)
        rc = write_tensors(&f, n, tensors);
    if (rc == 0)
        rc = tw__atomic_commit(&f);
    else
        tw__atomic_abort(&f);
    g_free(json);
    return rc;
}

/* ---- reading ---------------------------------------------------------------- */

/* size bytes at offset; -1 with a message when the file ends first. */
static int read_at(int fd, const char *path, void *buf, size_t size, uint64_t offset, const char *what)
{
    char *p = buf;
    for (size_t done = 0; done < size;) {
        ssize_t n = pread(fd, p + done, size - done, (off_t)(offset + done));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return tw_error_set("%s: cannot read %s (%zu bytes at byte offset %llu): %s", path, what, size,
                                (unsigned long long)offset, n < 0 ? g_strerror(errno) : "the file ends early");
        done += (size_t)n;
    }
    return 0;
}

/* The length prefix and the header, checked against the file's size. */
static int read_header(tw_safetensors *st, uint64_t file_size)
{
    if (file_size < 8)
        return tw_error_set("%s: not a safetensors file: %llu bytes, shorter than the 8-byte header length", st->path,
                            (unsigned long long)file_size);
    uint64_t length;
    if (read_at(st->fd, st->path, &length, 8, 0, "the header length"))
        return -1;
    if (length > file_size - 8)
        return tw_error_set("%s: the header length %llu (byte offset 0) runs past the end of the %llu-byte file",
                            st->path, (unsigned long long)length, (unsigned long long)file_size);
    if (length > TW_SAFETENSORS_MAX_HEADER)
        return tw_error_set("%s: the header length %llu (byte offset 0) is over the format's limit of %llu", st->path,
                            (unsigned long long)length, (unsigned long long)TW_SAFETENSORS_MAX_HEADER);
    uint8_t *json = g_try_malloc(length ? length : 1);
    if (!json)
        return tw_error_set("%s: out of memory for a %llu-byte header", st->path, (unsigned long long)length);
    int rc = read_at(st->fd, st->path, json, length, 8, "the header");
    st->data_start = 8 + length;
    if (rc == 0)
        rc = tw__st_header_parse(json, length, file_size - st->data_start, st->path, &st->h);
    g_free(json);
    return rc;
}

tw_safetensors *tw_safetensors_open(const char *path)
{
    if (!path) {
        tw_error_set("safetensors: the path is NULL");
        return NULL;
    }
    tw_safetensors *st = g_new0(tw_safetensors, 1);
    st->path = g_strdup(path);
    /* O_NONBLOCK: opening a FIFO must not wait for a writer before the
     * regular-file check below refuses it (no effect on regular files). */
    st->fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    struct stat info;
    if (st->fd < 0 || fstat(st->fd, &info)) {
        tw_error_set("%s: cannot open: %s", path, g_strerror(errno));
        tw_safetensors_close(st);
        return NULL;
    }
    if (!S_ISREG(info.st_mode)) {
        tw_error_set("%s: is not a regular file (a device, pipe or socket); only files can be read", path);
        tw_safetensors_close(st);
        return NULL;
    }
    if (read_header(st, (uint64_t)info.st_size)) {
        tw_safetensors_close(st);
        return NULL;
    }
    st->by_name = g_hash_table_new(g_str_hash, g_str_equal);
    for (int i = 0; i < st->h.n; i++)
        g_hash_table_insert(st->by_name, st->h.entries[i].name, &st->h.entries[i]);
    return st;
}

void tw_safetensors_close(tw_safetensors *st)
{
    if (!st)
        return;
    if (st->fd >= 0)
        close(st->fd);
    if (st->by_name)
        g_hash_table_destroy(st->by_name);
    tw__st_header_clear(&st->h);
    g_free(st->path);
    g_free(st);
}

int tw_safetensors_count(const tw_safetensors *st)
{
    return st->h.n;
}

const char *tw_safetensors_name(const tw_safetensors *st, int index)
{
    if (index < 0 || index >= st->h.n) {
        tw_error_set("%s: no tensor at index %d (the file has %d)", st->path, index, st->h.n);
        return NULL;
    }
    return st->h.entries[index].name;
}

bool tw_safetensors_has(const tw_safetensors *st, const char *name)
{
    return name && g_hash_table_contains(st->by_name, name);
}

static const tw_st_entry *find(const tw_safetensors *st, const char *name)
{
    const tw_st_entry *e = name ? g_hash_table_lookup(st->by_name, name) : NULL;
    if (!e)
        tw_error_set("%s: no tensor '%s' in the file", st->path, name ? name : "(null)");
    return e;
}

int tw_safetensors_info(const tw_safetensors *st, const char *name, tw_dtype *dtype, int *ndim, int64_t *shape)
{
    const tw_st_entry *e = find(st, name);
    if (!e)
        return -1;
    *dtype = e->dtype;
    *ndim = e->ndim;
    memcpy(shape, e->shape, sizeof(int64_t) * (size_t)e->ndim);
    return 0;
}

/* Bool bytes other than 0 and 1 are not bools (and would be undefined
 * behaviour once read as C bools). */
static int check_bools(const tw_safetensors *st, const tw_st_entry *e, const uint8_t *bytes)
{
    for (uint64_t i = 0; i < e->end - e->begin; i++)
        if (bytes[i] > 1)
            return tw_error_set("%s: tensor '%s': BOOL value %u at byte offset %llu (only 0 and 1 are bools)",
                                st->path, e->name, bytes[i], (unsigned long long)(st->data_start + e->begin + i));
    return 0;
}

tw_tensor *tw_safetensors_get(tw_safetensors *st, const char *name)
{
    const tw_st_entry *e = find(st, name);
    if (!e)
        return NULL;
    /* Read and checked into a buffer first, so a failure leaves no
     * half-filled tensor with the caller's scope. */
    size_t bytes = (size_t)(e->end - e->begin);
    uint8_t *buf = g_try_malloc(bytes ? bytes : 1);
    if (!buf) {
        tw_error_set("%s: out of memory for tensor '%s' (%zu bytes)", st->path, e->name, bytes);
        return NULL;
    }
    char what[160];
    snprintf(what, sizeof what, "tensor '%s'", e->name);
    tw_tensor *t = NULL;
    if (read_at(st->fd, st->path, buf, bytes, st->data_start + e->begin, what) == 0 &&
        (e->dtype != TW_BOOL || check_bools(st, e, buf) == 0))
        t = tw_tensor_from_data(buf, e->dtype, e->ndim, e->shape);
    g_free(buf);
    return t;
}

const char *tw_safetensors_metadata(const tw_safetensors *st, const char *key)
{
    for (int i = 0; key && i < st->h.nmeta; i++)
        if (!strcmp(st->h.meta_keys[i], key))
            return st->h.meta_values[i];
    return NULL;
}
