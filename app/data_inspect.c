/* twb data inspect FILE [--labels FILE] [--label-column NAME]
 * twb data inspect fashion-mnist[:train|:test]
 *
 * Tells the format by its magic number (gzip, NPY, IDX), then by the file
 * name's extension, then by whether it reads as text (CSV); loads it with
 * libtw-data (tw_idx_load, tw_npy_load, tw_csv_parse, or the Fashion-MNIST
 * dataset batched), walks the values once and prints a short aligned
 * report. The whole report is built first and printed at the end, so a file
 * that fails halfway prints nothing but the error. */
#include "data_inspect.h"
#include "train_data.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <gio/gio.h>
#include <glib.h>

#include <tw/data.h>
#include <tw/engine.h>

#define KEY_WIDTH 15       /* "labels format: " */
#define MAX_TABLE_ROWS 20  /* label classes or CSV columns listed before "..." */
#define DENSE_LABELS 65536 /* label values 0..65535 are counted in an array */
#define DATASET_BATCH 4096 /* examples per batch when walking a dataset by name */

typedef enum { FORMAT_IDX, FORMAT_NPY, FORMAT_CSV } file_format;


/* ---- the report ------------------------------------------------------------ */

__attribute__((format(printf, 3, 4))) static void put(GString *out, const char *key, const char *fmt, ...)
{
    char label[64];
    g_snprintf(label, sizeof label, "%s:", key);
    g_string_append_printf(out, "%-*s", KEY_WIDTH, label);
    va_list ap;
    va_start(ap, fmt);
    g_string_append_vprintf(out, fmt, ap);
    va_end(ap);
    g_string_append_c(out, '\n');
}

/* A number as a person reads it: whole numbers without decimals. */
static const char *num(double v, char *buf, size_t size)
{
    if (isfinite(v) && v == floor(v) && fabs(v) < 1e15)
        g_snprintf(buf, size, "%.0f", v);
    else
        g_snprintf(buf, size, "%.6g", v);
    return buf;
}

/* "(28, 28) uint8": the shape of one example (the first axis dropped). */
static const char *example_spec(int ndim, const int64_t *shape, tw_dtype dtype, char *buf, size_t size)
{
    char shape_text[160];
    tw_shape_str(ndim, shape, shape_text, sizeof shape_text);
    g_snprintf(buf, size, "%s %s", shape_text, tw_dtype_name(dtype));
    return buf;
}

/* ---- values: range, mean, non-finite counts --------------------------------- */

typedef struct {
    int64_t count, nan, inf;
    double min, max, sum; /* over finite values */
    bool integral;        /* every finite value is a whole number */
} value_stats;

static void stats_init(value_stats *s)
{
    *s = (value_stats){.min = INFINITY, .max = -INFINITY, .integral = true};
}

#define STATS_INTEGERS(type)                                                                                           \
    do {                                                                                                               \
        const type *v = data;                                                                                          \
        type lo = v[0], hi = v[0];                                                                                     \
        double sum = 0;                                                                                                \
        for (int64_t i = 0; i < n; i++) {                                                                              \
            lo = v[i] < lo ? v[i] : lo;                                                                                \
            hi = v[i] > hi ? v[i] : hi;                                                                                \
            sum += (double)v[i];                                                                                       \
        }                                                                                                              \
        s->min = fmin(s->min, (double)lo);                                                                             \
        s->max = fmax(s->max, (double)hi);                                                                             \
        s->sum += sum;                                                                                                 \
    } while (0)

#define STATS_FLOATS(type)                                                                                             \
    do {                                                                                                               \
        const type *v = data;                                                                                          \
        for (int64_t i = 0; i < n; i++) {                                                                              \
            double x = (double)v[i];                                                                                   \
            if (isnan(x)) {                                                                                            \
                s->nan++;                                                                                              \
            } else if (isinf(x)) {                                                                                     \
                s->inf++;                                                                                              \
            } else {                                                                                                   \
                s->min = fmin(s->min, x);                                                                              \
                s->max = fmax(s->max, x);                                                                              \
                s->sum += x;                                                                                           \
                if (s->integral && x != floor(x))                                                                      \
                    s->integral = false;                                                                               \
            }                                                                                                          \
        }                                                                                                              \
    } while (0)

/* Add every value of t. 0 or -1 (error set). */
static int stats_add(value_stats *s, tw_tensor *t)
{
    tw_tensor *c = tw_contiguous(t);
    if (!c)
        return -1;
    int64_t n = tw_tensor_numel(c);
    const void *data = tw_tensor_data(c);
    if (n > 0) {
        switch (tw_tensor_dtype(c)) {
        case TW_UINT8: {
            /* The common case (images): an integer sum. */
            const uint8_t *v = data;
            uint8_t lo = v[0], hi = v[0];
            uint64_t sum = 0;
            for (int64_t i = 0; i < n; i++) {
                lo = v[i] < lo ? v[i] : lo;
                hi = v[i] > hi ? v[i] : hi;
                sum += v[i];
            }
            s->min = fmin(s->min, lo);
            s->max = fmax(s->max, hi);
            s->sum += (double)sum;
            break;
        }
        case TW_BOOL: STATS_INTEGERS(bool); break;
        case TW_INT32: STATS_INTEGERS(int32_t); break;
        case TW_INT64: STATS_INTEGERS(int64_t); break;
        case TW_FLOAT32: STATS_FLOATS(float); break;
        case TW_FLOAT64: STATS_FLOATS(double); break;
        default: break;
        }
    }
    s->count += n;
    tw_tensor_unref(c);
    return 0;
}

static int64_t stats_finite(const value_stats *s)
{
    return s->count - s->nan - s->inf;
}

/* "min 0, max 255, mean 72.94" (+ non-finite counts). */
static void put_range(GString *out, const char *key, const value_stats *s)
{
    if (s->count == 0) {
        put(out, key, "none (no values)");
        return;
    }
    char extra[96] = "";
    if (s->nan || s->inf)
        g_snprintf(extra, sizeof extra, "; not finite: %" PRId64 " NaN, %" PRId64 " inf (left out of the range)",
                   s->nan, s->inf);
    if (stats_finite(s) == 0) {
        put(out, key, "no finite values%s", extra);
        return;
    }
    char lo[32], hi[32];
    put(out, key, "min %s, max %s, mean %.6g%s", num(s->min, lo, sizeof lo), num(s->max, hi, sizeof hi),
        s->sum / (double)stats_finite(s), extra);
}

/* ---- labels: counts per class --------------------------------------------- */

typedef struct {
    int64_t *dense;     /* counts of 0..DENSE_LABELS-1 */
    GHashTable *others; /* int64 value -> int64 count, for the rest */
    int64_t total;
} label_counts;

static void counts_init(label_counts *c)
{
    c->dense = g_new0(int64_t, DENSE_LABELS);
    c->others = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, g_free);
    c->total = 0;
}

static void counts_clear(label_counts *c)
{
    g_free(c->dense);
    if (c->others)
        g_hash_table_destroy(c->others);
    *c = (label_counts){0};
}

static void counts_add(label_counts *c, int64_t value)
{
    c->total++;
    if (value >= 0 && value < DENSE_LABELS) {
        c->dense[value]++;
        return;
    }
    int64_t *count = g_hash_table_lookup(c->others, &value);
    if (count) {
        (*count)++;
        return;
    }
    count = g_new(int64_t, 1);
    *count = 1;
    g_hash_table_insert(c->others, g_memdup2(&value, sizeof value), count);
}

typedef struct {
    int64_t value, count;
} class_count;

static int compare_class(const void *a, const void *b)
{
    int64_t x = ((const class_count *)a)->value, y = ((const class_count *)b)->value;
    return (x > y) - (x < y);
}

/* Every class seen, in increasing order; *n gets how many. */
static class_count *counts_sorted(const label_counts *c, size_t *n)
{
    size_t size = g_hash_table_size(c->others);
    for (int64_t v = 0; v < DENSE_LABELS; v++)
        size += c->dense[v] != 0;
    class_count *classes = g_new(class_count, size ? size : 1);
    size_t k = 0;
    GHashTableIter iter;
    gpointer key, value;
    g_hash_table_iter_init(&iter, c->others);
    while (g_hash_table_iter_next(&iter, &key, &value))
        classes[k++] = (class_count){*(int64_t *)key, *(int64_t *)value};
    for (int64_t v = 0; v < DENSE_LABELS; v++)
        if (c->dense[v])
            classes[k++] = (class_count){v, c->dense[v]};
    qsort(classes, k, sizeof *classes, compare_class);
    *n = k;
    return classes;
}

/* The class -> count table, MAX_TABLE_ROWS rows at most. */
static void put_class_table(GString *out, const label_counts *c, const char *const *names, int nnames)
{
    size_t n = 0;
    class_count *classes = counts_sorted(c, &n);
    size_t shown = n > MAX_TABLE_ROWS ? MAX_TABLE_ROWS : n;
    int value_width = 5, count_width = 5; /* "class", "count" */
    for (size_t i = 0; i < shown; i++) {
        char buf[32];
        value_width = MAX(value_width, g_snprintf(buf, sizeof buf, "%" PRId64, classes[i].value));
        count_width = MAX(count_width, g_snprintf(buf, sizeof buf, "%" PRId64, classes[i].count));
    }
    g_string_append_printf(out, "  %*s  %*s  %6s%s\n", value_width, "class", count_width, "count", "share",
                           names ? "  name" : "");
    for (size_t i = 0; i < shown; i++) {
        const char *name = names && classes[i].value >= 0 && classes[i].value < nnames ? names[classes[i].value] : "";
        g_string_append_printf(out, "  %*" PRId64 "  %*" PRId64 "  %5.1f%%%s%s\n", value_width, classes[i].value,
                               count_width, classes[i].count, 100.0 * (double)classes[i].count / (double)c->total,
                               names ? "  " : "", name);
    }
    if (n > shown)
        g_string_append_printf(out, "  ... (%zu more classes)\n", n - shown);
    g_free(classes);
}

/* ---- a summary of features and labels, filled batch by batch -------------- */

typedef struct {
    bool seen;
    tw_dtype dtype;
    int ndim; /* of one example */
    int64_t shape[TW_MAX_DIMS];
    value_stats stats;
} component;

typedef struct {
    int64_t examples;
    component features, labels;
    bool has_labels;
    /* Labels: counted per class while every value is a whole number (one
     * per example), or while every row is one-hot (2-d labels). */
    bool countable, one_hot;
    label_counts counts;
    /* CSV: per-column ranges of the features. */
    value_stats *columns;
    int64_t ncolumns;
} summary;

static void summary_init(summary *s)
{
    *s = (summary){.countable = true, .one_hot = true};
    stats_init(&s->features.stats);
    stats_init(&s->labels.stats);
    counts_init(&s->counts);
}

static void summary_clear(summary *s)
{
    counts_clear(&s->counts);
    g_free(s->columns);
}

/* Remember the per-example shape and dtype (or fail when a later batch disagrees). */
static int component_see(component *c, tw_tensor *t, const char *what)
{
    int ndim = tw_tensor_ndim(t) - 1;
    if (ndim < 0)
        return tw_error_set("%s is a scalar (0-d): there is no axis of examples", what);
    if (!c->seen) {
        c->seen = true;
        c->dtype = tw_tensor_dtype(t);
        c->ndim = ndim;
        memcpy(c->shape, tw_tensor_shape(t) + 1, sizeof(int64_t) * (size_t)ndim);
    }
    return 0;
}

/* Count the labels: whole numbers one per example, or one-hot rows. */
static int count_labels(summary *s, tw_tensor *labels)
{
    int64_t n = tw_tensor_dim(labels, 0);
    int ndim = tw_tensor_ndim(labels);
    if (ndim > 2 || (ndim == 1 && !s->countable) || (ndim == 2 && !s->one_hot))
        return 0;
    tw_scope_begin();
    tw_tensor *values = tw_contiguous(tw_cast(labels, TW_FLOAT64));
    int status = values ? 0 : -1;
    if (values && ndim == 1) {
        const double *v = tw_tensor_data(values);
        for (int64_t i = 0; i < n && s->countable; i++) {
            if (!isfinite(v[i]) || v[i] != floor(v[i]) || fabs(v[i]) > 9e15)
                s->countable = false;
            else
                counts_add(&s->counts, (int64_t)v[i]);
        }
    } else if (values && ndim == 2) {
        int64_t classes = tw_tensor_dim(labels, 1);
        const double *v = tw_tensor_data(values);
        for (int64_t i = 0; i < n && s->one_hot; i++) {
            int64_t hot = -1, ones = 0;
            for (int64_t k = 0; k < classes; k++) {
                double x = v[i * classes + k];
                if (x == 1.0) {
                    hot = k;
                    ones++;
                } else if (x != 0.0) {
                    ones = 2; /* not a one-hot row */
                }
            }
            if (ones != 1)
                s->one_hot = false;
            else
                counts_add(&s->counts, hot);
        }
    }
    tw_scope_end();
    return status;
}

/* Per-column ranges of 2-d float32 features (CSV). */
static void add_columns(summary *s, tw_tensor *features)
{
    if (tw_tensor_ndim(features) != 2 || tw_tensor_dtype(features) != TW_FLOAT32)
        return;
    tw_tensor *c = tw_contiguous(features);
    if (!c)
        return;
    int64_t rows = tw_tensor_dim(c, 0), cols = tw_tensor_dim(c, 1);
    if (!s->columns) {
        s->ncolumns = cols;
        s->columns = g_new(value_stats, cols ? cols : 1);
        for (int64_t k = 0; k < cols; k++)
            stats_init(&s->columns[k]);
    }
    const float *v = tw_tensor_data(c);
    for (int64_t i = 0; i < rows; i++) {
        for (int64_t k = 0; k < cols && k < s->ncolumns; k++) {
            double x = v[i * cols + k];
            value_stats *st = &s->columns[k];
            st->count++;
            if (isnan(x)) {
                st->nan++;
            } else if (isinf(x)) {
                st->inf++;
            } else {
                st->min = fmin(st->min, x);
                st->max = fmax(st->max, x);
                st->sum += x;
            }
        }
    }
    tw_tensor_unref(c);
}

/* Add a batch: features (n, ...) and labels (n, ...) or NULL. */
static int summary_add(summary *s, tw_tensor *features, tw_tensor *labels, const char *features_name,
                       const char *labels_name, bool per_column)
{
    if (component_see(&s->features, features, features_name) < 0)
        return -1;
    int64_t n = tw_tensor_dim(features, 0);
    if (labels) {
        if (component_see(&s->labels, labels, labels_name) < 0)
            return -1;
        int64_t nl = tw_tensor_dim(labels, 0);
        if (nl != n)
            return tw_error_set("the counts disagree: %s has %" PRId64 " examples but %s has %" PRId64 " labels",
                                features_name, n, labels_name, nl);
        s->has_labels = true;
    }
    s->examples += n;
    if (stats_add(&s->features.stats, features) < 0)
        return -1;
    if (per_column)
        add_columns(s, features);
    if (labels && (stats_add(&s->labels.stats, labels) < 0 || count_labels(s, labels) < 0))
        return -1;
    return 0;
}

static void put_component(GString *out, const char *key, const component *c, const char *extra)
{
    char spec[200];
    put(out, key, "%s%s", example_spec(c->ndim, c->shape, c->dtype, spec, sizeof spec), extra ? extra : "");
}

/* Whether IDX image values look like 8-bit pixels. */
static void put_pixels(GString *out, const summary *s)
{
    const component *f = &s->features;
    const value_stats *st = &f->stats;
    if (s->examples == 0)
        return;
    char lo[32], hi[32];
    if (f->dtype == TW_UINT8)
        put(out, "8-bit pixels", "yes: uint8, 0..255 (scale by 1/255 for [0, 1])");
    else if (!tw_dtype_is_float(f->dtype) && st->min >= 0 && st->max <= 255)
        put(out, "8-bit pixels", "probably: whole numbers within 0..255, stored as %s", tw_dtype_name(f->dtype));
    else if (tw_dtype_is_float(f->dtype) && st->nan + st->inf == 0 && st->min >= 0 && st->max <= 1)
        put(out, "8-bit pixels", "no: %s within [0, 1], already scaled", tw_dtype_name(f->dtype));
    else
        put(out, "8-bit pixels", "no: %s values from %s to %s", tw_dtype_name(f->dtype),
            num(st->min, lo, sizeof lo), num(st->max, hi, sizeof hi));
}

static void put_labels(GString *out, const char *key, const summary *s, const char *const *names, int nnames)
{
    const component *l = &s->labels;
    bool scalar = l->ndim == 0, rows = l->ndim == 1;
    if (s->examples > 0 && scalar && s->countable) {
        size_t n = 0;
        g_free(counts_sorted(&s->counts, &n));
        char extra[64];
        g_snprintf(extra, sizeof extra, ", %zu %s", n, n == 1 ? "class" : "classes");
        put_component(out, key, l, extra);
        put_class_table(out, &s->counts, names, nnames);
    } else if (s->examples > 0 && rows && s->one_hot) {
        char extra[64];
        g_snprintf(extra, sizeof extra, ", one-hot over %" PRId64 " classes", l->shape[0]);
        put_component(out, key, l, extra);
        put_class_table(out, &s->counts, NULL, 0);
    } else {
        put_component(out, key, l, NULL);
        put_range(out, strcmp(key, "labels") == 0 ? "label range" : "value range", &l->stats);
    }
}

/* ---- telling the format ---------------------------------------------------- */

static bool is_idx_magic(const uint8_t *b, size_t n)
{
    if (n < 4 || b[0] != 0 || b[1] != 0)
        return false;
    switch (b[2]) {
    case 0x08: case 0x09: case 0x0B: case 0x0C: case 0x0D: case 0x0E: return true;
    default: return false;
    }
}

static bool has_suffix_ci(const char *path, const char *suffix)
{
    size_t n = strlen(path), m = strlen(suffix);
    return n >= m && g_ascii_strcasecmp(path + n - m, suffix) == 0;
}

/* Read up to `size` bytes from the start of the file (decompressed when gzip). */
static int read_head(const char *path, bool gzip, uint8_t *buf, size_t size, size_t *got)
{
    *got = 0;
    if (!gzip) {
        FILE *f = fopen(path, "rb");
        if (!f)
            return tw_error_set("%s: %s", path, g_strerror(errno));
        *got = fread(buf, 1, size, f);
        bool failed = ferror(f) != 0;
        fclose(f);
        return failed ? tw_error_set("%s: cannot read the file", path) : 0;
    }
    GError *error = NULL;
    GFile *file = g_file_new_for_path(path);
    GInputStream *raw = G_INPUT_STREAM(g_file_read(file, NULL, &error));
    g_object_unref(file);
    if (!raw) {
        tw_error_set("%s: %s", path, error->message);
        g_error_free(error);
        return -1;
    }
    GConverter *decompressor = G_CONVERTER(g_zlib_decompressor_new(G_ZLIB_COMPRESSOR_FORMAT_GZIP));
    GInputStream *in = g_converter_input_stream_new(raw, decompressor);
    g_object_unref(raw);
    g_object_unref(decompressor);
    gboolean ok = g_input_stream_read_all(in, buf, size, got, NULL, &error);
    g_object_unref(in);
    if (!ok) {
        tw_error_set("%s: %s", path, error->message);
        g_error_free(error);
        return -1;
    }
    return 0;
}

/* The format by magic number, then extension, then content. */
static int detect_format(const char *path, file_format *format, bool *gzip)
{
    uint8_t head[512];
    size_t n = 0;
    if (g_file_test(path, G_FILE_TEST_IS_DIR))
        return tw_error_set("%s: is a directory, not a data file", path);
    /* Reading a FIFO would wait forever, /dev/zero until memory runs out. */
    if (g_file_test(path, G_FILE_TEST_EXISTS) && !g_file_test(path, G_FILE_TEST_IS_REGULAR))
        return tw_error_set("%s: is not a regular file (a device, pipe or socket); only files can be read", path);
    if (read_head(path, false, head, sizeof head, &n) < 0)
        return -1;
    *gzip = false;
    if (n >= 2 && head[0] == 0x1f && head[1] == 0x8b) {
        /* libtw-data reads gzip-compressed IDX files. */
        *gzip = true;
        *format = FORMAT_IDX;
        return 0;
    }
    if (n >= 6 && memcmp(head, "\x93NUMPY", 6) == 0) {
        *format = FORMAT_NPY;
        return 0;
    }
    if (is_idx_magic(head, n)) {
        *format = FORMAT_IDX;
        return 0;
    }
    /* No known magic: the name decides, and its parser says what is wrong. */
    char *base = g_path_get_basename(path);
    bool npy = has_suffix_ci(base, ".npy");
    bool csv = has_suffix_ci(base, ".csv");
    bool idx = has_suffix_ci(base, "-ubyte") || strstr(base, ".idx") || g_str_has_prefix(base, "idx") ||
               has_suffix_ci(base, ".gz");
    g_free(base);
    if (npy || csv || idx) {
        *format = npy ? FORMAT_NPY : csv ? FORMAT_CSV : FORMAT_IDX;
        return 0;
    }
    if (n == 0)
        return tw_error_set("%s: the file is empty", path);
    /* Text (a header row and numbers) reads as CSV. */
    bool text = true;
    for (size_t i = 0; i < n && text; i++)
        text = head[i] == '\n' || head[i] == '\r' || head[i] == '\t' || (head[i] >= 0x20 && head[i] != 0x7f) ||
               head[i] >= 0x80;
    if (text) {
        *format = FORMAT_CSV;
        return 0;
    }
    return tw_error_set("%s: not an IDX, NPY or CSV file (it starts with bytes %02x %02x %02x %02x)", path, head[0],
                        n > 1 ? head[1] : 0, n > 2 ? head[2] : 0, n > 3 ? head[3] : 0);
}

static const char *format_name(file_format format)
{
    return format == FORMAT_IDX ? "IDX" : format == FORMAT_NPY ? "NPY" : "CSV";
}

static const char *idx_type_name(int type)
{
    switch (type) {
    case 0x08: return "unsigned byte";
    case 0x09: return "signed byte";
    case 0x0B: return "short, 16-bit";
    case 0x0C: return "int, 32-bit";
    case 0x0D: return "float, 32-bit";
    case 0x0E: return "double, 64-bit";
    default: return "unknown";
    }
}

/* "IDX, gzip-compressed; type 0x08 (unsigned byte), 3 dimensions (60000, 28, 28)" */
static int describe_idx(const char *path, bool gzip, tw_tensor *t, char *buf, size_t size)
{
    uint8_t head[4];
    size_t n = 0;
    if (read_head(path, gzip, head, sizeof head, &n) < 0)
        return -1;
    char shape[160];
    tw_shape_str(tw_tensor_ndim(t), tw_tensor_shape(t), shape, sizeof shape);
    int ndim = n == 4 ? head[3] : tw_tensor_ndim(t);
    g_snprintf(buf, size, "IDX%s; type 0x%02X (%s), %d %s %s", gzip ? ", gzip-compressed" : "",
               n == 4 ? head[2] : 0, idx_type_name(n == 4 ? head[2] : 0), ndim, ndim == 1 ? "dimension" : "dimensions",
               shape);
    return 0;
}

/* "NPY version 1.0, descr '<f4', shape (4, 3)", from the header (which
 * tw_npy_load has already accepted). */
static int describe_npy(const char *path, tw_tensor *t, char *buf, size_t size)
{
    uint8_t head[4096];
    size_t n = 0;
    if (read_head(path, false, head, sizeof head, &n) < 0)
        return -1;
    char descr[64] = "?";
    int major = n > 6 ? head[6] : 0, minor = n > 7 ? head[7] : 0;
    size_t start = major == 1 ? 10 : 12;
    if (n > start) {
        char *header = g_strndup((const char *)head + start, n - start);
        const char *key = strstr(header, "descr");
        const char *colon = key ? strchr(key, ':') : NULL;
        if (colon) {
            const char *p = colon + 1;
            while (*p == ' ')
                p++;
            if (*p == '\'' || *p == '"') {
                const char *end = strchr(p + 1, *p);
                if (end && (size_t)(end - p - 1) < sizeof descr)
                    g_snprintf(descr, sizeof descr, "%.*s", (int)(end - p - 1), p + 1);
            }
        }
        g_free(header);
    }
    char shape[160];
    tw_shape_str(tw_tensor_ndim(t), tw_tensor_shape(t), shape, sizeof shape);
    g_snprintf(buf, size, "NPY version %d.%d; descr '%s', shape %s", major, minor, descr, shape);
    return 0;
}

/* Load one IDX or NPY file into a tensor and describe its format. */
static tw_tensor *load_array(const char *path, char *description, size_t size)
{
    file_format format;
    bool gzip = false;
    if (detect_format(path, &format, &gzip) < 0)
        return NULL;
    if (format == FORMAT_CSV) {
        tw_error_set("%s: a CSV file cannot be a labels file; pass --label-column NAME with the CSV file", path);
        return NULL;
    }
    tw_tensor *t = format == FORMAT_IDX ? tw_idx_load(path) : tw_npy_load(path);
    if (!t)
        return NULL;
    if ((format == FORMAT_IDX ? describe_idx(path, gzip, t, description, size)
                              : describe_npy(path, t, description, size)) < 0) {
        tw_tensor_unref(t);
        return NULL;
    }
    return t;
}

/* ---- CSV -------------------------------------------------------------------- */

/* The header row's column names (trimmed, quotes removed). */
static char **csv_header(const char *text, size_t size)
{
    const char *end = memchr(text, '\n', size);
    char *line = g_strndup(text, end ? (size_t)(end - text) : size);
    char **names = g_strsplit(line, ",", -1);
    g_free(line);
    for (char **p = names; *p; p++) {
        g_strstrip(*p);
        size_t n = strlen(*p);
        if (n >= 2 && (*p)[0] == '"' && (*p)[n - 1] == '"') {
            memmove(*p, *p + 1, n - 2);
            (*p)[n - 2] = '\0';
        }
    }
    return names;
}

static void put_column_table(GString *out, const summary *s, char **names, const char *label_column)
{
    /* The feature columns are the header's names without the label column. */
    GPtrArray *features = g_ptr_array_new();
    bool skipped = false;
    for (char **p = names; *p; p++) {
        if (label_column && !skipped && strcmp(*p, label_column) == 0) {
            skipped = true;
            continue;
        }
        g_ptr_array_add(features, *p);
    }
    bool named = (int64_t)features->len == s->ncolumns;
    int name_width = 6; /* "column" */
    int64_t shown = s->ncolumns > MAX_TABLE_ROWS ? MAX_TABLE_ROWS : s->ncolumns;
    for (int64_t k = 0; k < shown && named; k++)
        name_width = MAX(name_width, (int)g_utf8_strlen(features->pdata[k], -1));
    name_width = MIN(name_width, 24);
    g_string_append_printf(out, "  %-*s  %12s  %12s  %12s\n", name_width, "column", "min", "max", "mean");
    for (int64_t k = 0; k < shown; k++) {
        const value_stats *st = &s->columns[k];
        char name[64], lo[32], hi[32], mean[32];
        if (named)
            g_snprintf(name, sizeof name, "%s", (const char *)features->pdata[k]);
        else
            g_snprintf(name, sizeof name, "%" PRId64, k);
        int64_t finite = stats_finite(st);
        if (finite > 0)
            g_snprintf(mean, sizeof mean, "%.6g", st->sum / (double)finite);
        g_string_append_printf(out, "  %-*s  %12s  %12s  %12s%s\n", name_width, name,
                               finite ? num(st->min, lo, sizeof lo) : "-", finite ? num(st->max, hi, sizeof hi) : "-",
                               finite ? mean : "-", st->nan + st->inf ? "  (not finite values)" : "");
    }
    if (s->ncolumns > shown)
        g_string_append_printf(out, "  ... (%" PRId64 " more columns)\n", s->ncolumns - shown);
    g_ptr_array_free(features, TRUE);
}

static int inspect_csv(const char *path, const char *label_column, GString *out)
{
    char *text = NULL;
    gsize size = 0;
    GError *error = NULL;
    if (!g_file_get_contents(path, &text, &size, &error)) {
        tw_error_set("%s: %s", path, error->message);
        g_error_free(error);
        return -1;
    }
    tw_tensor *features = NULL, *labels = NULL;
    tw_csv_options options = {.label_column = label_column, .one_hot_classes = 0};
    if (tw_csv_parse(text, size, path, &options, &features, &labels) < 0) {
        g_free(text);
        return -1;
    }
    char **names = csv_header(text, size);
    g_free(text);

    summary s;
    summary_init(&s);
    int status = summary_add(&s, features, label_column ? labels : NULL, path, path, true);
    if (status == 0) {
        int64_t ncols = (int64_t)g_strv_length(names);
        put(out, "file", "%s", path);
        if (label_column)
            put(out, "format", "CSV; header row with %" PRId64 " columns, label column '%s'", ncols, label_column);
        else
            put(out, "format", "CSV; header row with %" PRId64 " columns, no label column", ncols);
        put(out, "examples", "%" PRId64, s.examples);
        put_component(out, "features", &s.features, NULL);
        put_range(out, "value range", &s.features.stats);
        if (s.columns)
            put_column_table(out, &s, names, label_column);
        if (s.has_labels)
            put_labels(out, "labels", &s, NULL, 0);
        else
            put(out, "labels", "none (--label-column NAME picks one)");
    }
    g_strfreev(names);
    summary_clear(&s);
    tw_tensor_unref(features);
    tw_tensor_unref(labels);
    return status;
}

/* ---- IDX and NPY -------------------------------------------------------------- */

static int inspect_array(const char *path, const char *labels_path, file_format format, GString *out)
{
    char description[320], labels_description[320];
    tw_tensor *features = load_array(path, description, sizeof description);
    if (!features)
        return -1;
    tw_tensor *labels = NULL;
    if (labels_path && !(labels = load_array(labels_path, labels_description, sizeof labels_description))) {
        tw_tensor_unref(features);
        return -1;
    }
    summary s;
    summary_init(&s);
    int status = summary_add(&s, features, labels, path, labels_path, false);
    if (status == 0) {
        put(out, "file", "%s", path);
        put(out, "format", "%s", description);
        put(out, "examples", "%" PRId64, s.examples);
        /* A 1-d integer file on its own is most likely a labels file. */
        bool values_only = !labels && s.features.ndim == 0;
        if (values_only) {
            s.has_labels = true;
            s.labels = s.features;
            if (count_labels(&s, features) < 0)
                status = -1;
            put_labels(out, "values", &s, NULL, 0);
            if (s.countable)
                put(out, "note", "one whole number per example: a labels file? Pass it with --labels");
        } else {
            put_component(out, "features", &s.features, NULL);
            put_range(out, "value range", &s.features.stats);
            if (format == FORMAT_IDX)
                put_pixels(out, &s);
            if (labels) {
                put(out, "labels file", "%s", labels_path);
                put(out, "labels format", "%s", labels_description);
                put_labels(out, "labels", &s, NULL, 0);
            } else {
                put(out, "labels", "none (--labels FILE pairs a labels file)");
            }
        }
    }
    summary_clear(&s);
    tw_tensor_unref(features);
    tw_tensor_unref(labels);
    return status;
}

/* ---- Fashion-MNIST by name ---------------------------------------------------- */

static char *fashion_mnist_files(const char *split);

static int inspect_fashion_mnist_split(const char *split, GString *out)
{
    tw_dataset *source = tw_dataset_fashion_mnist(split);
    if (!source)
        return -1;
    int64_t cardinality = tw_dataset_cardinality(source);
    char *source_name = g_strdup(tw_dataset_name(source));
    tw_dataset *batches = tw_dataset_batch(source, DATASET_BATCH, false);
    tw_iterator *it = batches ? tw_dataset_iter(batches) : NULL;
    summary s;
    summary_init(&s);
    int status = it ? 0 : -1, rc = 0;
    tw_element e = {0};
    while (status == 0 && (rc = tw_iterator_next(it, &e)) > 0) {
        if (e.n < 1)
            status = tw_error_set("fashion-mnist %s: an element without components", split);
        else if (summary_add(&s, e.t[0], e.n > 1 ? e.t[1] : NULL, "the images", "the labels", false) < 0)
            status = -1;
        tw_element_clear(&e);
    }
    if (rc < 0)
        status = -1;
    if (status == 0) {
        put(out, "dataset", "fashion-mnist, %s split", split);
        char *files = fashion_mnist_files(split);
        put(out, "files", "%s", files ? files : source_name);
        g_free(files);
        put(out, "examples", "%" PRId64, s.examples);
        if (cardinality >= 0 && cardinality != s.examples)
            put(out, "warning", "the dataset announced %" PRId64 " examples", cardinality);
        put_component(out, "features", &s.features, NULL);
        put_range(out, "value range", &s.features.stats);
        put_pixels(out, &s);
        if (s.has_labels)
            put_labels(out, "labels", &s, tw_fashion_mnist_classes, 10);
        else
            put(out, "labels", "none");
    }
    summary_clear(&s);
    tw_iterator_free(it);
    tw_dataset_unref(batches);
    g_free(source_name);
    return status;
}

/* Where the split's files are, as tw_dataset_fashion_mnist looks for them
 * ($TWB_DATA_DIR, a fashion-mnist folder in it, then Debian's folder; raw
 * or .gz): for the report only. */
static char *fashion_mnist_files(const char *split)
{
    const char *prefix = strcmp(split, "train") == 0 ? "train" : "t10k";
    const char *env = g_getenv("TWB_DATA_DIR");
    char *sub = env && env[0] ? g_build_filename(env, "fashion-mnist", NULL) : NULL;
    const char *dirs[3] = {env, sub, "/usr/share/datasets/fashion-mnist"};
    char *result = NULL;
    for (int i = 0; i < 3 && !result; i++) {
        if (!dirs[i] || !dirs[i][0])
            continue;
        char *found[2] = {NULL, NULL};
        const char *kinds[2] = {"images-idx3-ubyte", "labels-idx1-ubyte"};
        for (int k = 0; k < 2; k++) {
            char *base = g_strdup_printf("%s-%s", prefix, kinds[k]);
            char *path = g_build_filename(dirs[i], base, NULL);
            char *gz = g_strconcat(path, ".gz", NULL);
            if (g_file_test(path, G_FILE_TEST_IS_REGULAR))
                found[k] = g_path_get_basename(path);
            else if (g_file_test(gz, G_FILE_TEST_IS_REGULAR))
                found[k] = g_path_get_basename(gz);
            g_free(base);
            g_free(path);
            g_free(gz);
        }
        if (found[0] && found[1])
            result = g_strdup_printf("%s/{%s, %s}", dirs[i], found[0], found[1]);
        g_free(found[0]);
        g_free(found[1]);
    }
    g_free(sub);
    return result;
}

/* The name wins over a file of that name in the current folder; write
 * ./fashion-mnist for the file. */
static bool is_dataset_name(const char *path)
{
    return strcmp(path, "fashion-mnist") == 0 || g_str_has_prefix(path, "fashion-mnist:");
}

/* ---- the command ---------------------------------------------------------------- */

int twb_data_inspect(const twb_inspect_options *options, FILE *out, char **usage_message)
{
    *usage_message = NULL;
    GString *report = g_string_new(NULL);
    int status = TWB_INSPECT_OK;
    const char *path = options->path;

    if (is_dataset_name(path)) {
        const char *split = strchr(path, ':');
        split = split ? split + 1 : NULL;
        if (options->labels_path || options->label_column) {
            *usage_message = g_strdup_printf("data inspect: %s takes no --labels or --label-column; "
                                             "its labels come with it", path);
            status = TWB_INSPECT_USAGE;
        } else if (split && strcmp(split, "train") != 0 && strcmp(split, "test") != 0) {
            *usage_message = g_strdup_printf("data inspect: unknown split '%s' of fashion-mnist "
                                             "(there are: train, test)", split);
            status = TWB_INSPECT_USAGE;
        } else if (split) {
            status = inspect_fashion_mnist_split(split, report);
        } else {
            status = inspect_fashion_mnist_split("train", report);
            if (status == 0) {
                g_string_append_c(report, '\n');
                status = inspect_fashion_mnist_split("test", report);
            }
        }
    } else {
        file_format format;
        bool gzip = false;
        if (detect_format(path, &format, &gzip) < 0) {
            status = TWB_INSPECT_FAILED;
        } else if (format == FORMAT_CSV && options->labels_path) {
            *usage_message = g_strdup_printf("data inspect: %s is a CSV file: --labels is for IDX and NPY files; "
                                             "name the label column with --label-column NAME",
                                             path);
            status = TWB_INSPECT_USAGE;
        } else if (format != FORMAT_CSV && options->label_column) {
            *usage_message = g_strdup_printf("data inspect: %s is an %s file: --label-column is for CSV files; "
                                             "pair a labels file with --labels FILE",
                                             path, format_name(format));
            status = TWB_INSPECT_USAGE;
        } else if (format == FORMAT_CSV) {
            status = inspect_csv(path, options->label_column, report);
        } else {
            status = inspect_array(path, options->labels_path, format, report);
        }
    }

    if (status == TWB_INSPECT_OK) {
        fputs(report->str, out);
        fflush(out);
    } else if (status == TWB_INSPECT_FAILED && !tw_error_pending()) {
        tw_error_set("%s: cannot be inspected", path);
    }
    g_string_free(report, TRUE);
    return status < 0 ? status : TWB_INSPECT_OK;
}
