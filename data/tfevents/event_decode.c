/* Event and Summary messages (protobuf-c, from the .proto files in
 * proto/) into tw_tb_items: TF1's simple values, classic histograms and
 * images, and TF2's tensors read as their plugin says (scalars, [k, 3]
 * histograms, image strings, text, the Keras model config, hparams).
 *
 * TensorBoard's writers put a tag's metadata (its plugin) on its first
 * value only, so the decoder keeps each tag's plugin for the rest of the
 * file. A value it cannot read is reported and left out; the event's other
 * values still go through. */
#include <glib.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "event.pb-c.h"
#include "tfevents_internal.h"

/* The most rows a histogram tensor's single repeated value may fill. */
#define MAX_FILLED_BUCKETS 65536

struct tw_tb_decoder {
    char *path;
    tw_tb_warn_fn warn;
    void *user_data;
    tw_pb_arena arena;
    GHashTable *plugins; /* tag -> plugin name */
    GString *text;       /* NUL-terminated copies of strings handed out */
    double *hist;        /* left, right, count arrays of one histogram */
    size_t hist_cap;
};

tw_tb_decoder *tw_tb_decoder_new(const char *path, tw_tb_warn_fn warn, void *user_data)
{
    tw_tb_decoder *d = g_new0(tw_tb_decoder, 1);
    d->path = g_strdup(path);
    d->warn = warn;
    d->user_data = user_data;
    tw__pb_arena_init(&d->arena);
    d->plugins = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
    d->text = g_string_new(NULL);
    return d;
}

void tw_tb_decoder_free(tw_tb_decoder *d)
{
    if (!d)
        return;
    tw__pb_arena_free(&d->arena);
    g_hash_table_destroy(d->plugins);
    g_string_free(d->text, true);
    g_free(d->hist);
    g_free(d->path);
    g_free(d);
}

static void warn(tw_tb_decoder *d, const tw_tb_item *at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void warn(tw_tb_decoder *d, const tw_tb_item *at, const char *fmt, ...)
{
    if (!d->warn)
        return;
    va_list ap;
    va_start(ap, fmt);
    char *what = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    char *message = at->tag[0] ? g_strdup_printf("%s: offset %llu: tag '%s', step %lld: %s", d->path,
                                                 (unsigned long long)at->offset, at->tag, (long long)at->step, what)
                               : g_strdup_printf("%s: offset %llu: %s", d->path, (unsigned long long)at->offset, what);
    d->warn(d->user_data, message);
    g_free(message);
    g_free(what);
}

static const char *str(const char *s)
{
    return s ? s : "";
}

/* A NUL-terminated copy (protobuf bytes are not), valid until the next. */
static const char *text_copy(tw_tb_decoder *d, const uint8_t *data, size_t n, size_t *len)
{
    g_string_truncate(d->text, 0);
    g_string_append_len(d->text, (const char *)data, (gssize)n);
    if (len)
        *len = n;
    return d->text->str;
}

static double *hist_room(tw_tb_decoder *d, size_t k)
{
    if (3 * k > d->hist_cap || !d->hist) {
        d->hist_cap = MAX(3 * k, 3); /* never NULL: an empty histogram's arrays still point somewhere */
        d->hist = g_renew(double, d->hist, d->hist_cap);
    }
    return d->hist;
}

/* ---- tensors ------------------------------------------------------------- */
/* The element count of a tensor's shape; -1 for a shape no tensor has. */
static int64_t tensor_numel(const Tensorflow__TensorProto *t, int *rank)
{
    const Tensorflow__TensorShapeProto *s = t->tensor_shape;
    *rank = s ? (int)s->n_dim : 0;
    int64_t n = 1;
    for (int i = 0; i < *rank; i++) {
        int64_t size = s->dim[i]->size;
        if (size < 0 || (size && n > INT64_MAX / size))
            return -1;
        n *= size;
    }
    return n;
}

static const char *dtype_name(int dtype)
{
    switch (dtype) {
    case TW_TB_DT_FLOAT: return "DT_FLOAT";
    case TW_TB_DT_DOUBLE: return "DT_DOUBLE";
    case TW_TB_DT_INT32: return "DT_INT32";
    case TW_TB_DT_STRING: return "DT_STRING";
    case TW_TB_DT_INT64: return "DT_INT64";
    case TW_TB_DT_HALF: return "DT_HALF";
    default: return "a dtype not read here";
    }
}

static double half_to_double(uint16_t h)
{
    int exp = (h >> 10) & 0x1f, man = h & 0x3ff;
    double v = exp == 0 ? ldexp(man, -24) : exp == 31 ? (man ? NAN : INFINITY) : ldexp(man | 0x400, exp - 25);
    return h & 0x8000 ? -v : v;
}

/* n numbers of a float, double, half or integer tensor as doubles, from
 * tensor_content (little-endian) or the typed list (version 0's rule: a
 * single value fills the shape). -1 with why when the tensor does not hold
 * n of them. */
static int tensor_doubles(const Tensorflow__TensorProto *t, double *out, int64_t n, char *why, size_t size)
{
    int dtype = t->dtype;
    size_t width = dtype == TW_TB_DT_FLOAT || dtype == TW_TB_DT_INT32 ? 4
                   : dtype == TW_TB_DT_DOUBLE || dtype == TW_TB_DT_INT64 ? 8
                   : dtype == TW_TB_DT_HALF ? 2
                                            : 0;
    if (!width) {
        snprintf(why, size, "a %s tensor where numbers were expected", dtype_name(dtype));
        return -1;
    }
    if (t->has_tensor_content && t->tensor_content.len) {
        if (t->tensor_content.len != (uint64_t)n * width) {
            snprintf(why, size, "%s tensor_content of %zu bytes where its shape needs %lld", dtype_name(dtype),
                     t->tensor_content.len, (long long)(n * (int64_t)width));
            return -1;
        }
        const uint8_t *p = t->tensor_content.data;
        for (int64_t i = 0; i < n; i++, p += width) {
            uint64_t bits = 0;
            for (size_t b = width; b-- > 0;)
                bits = bits << 8 | p[b];
            if (dtype == TW_TB_DT_FLOAT) {
                float f;
                uint32_t u = (uint32_t)bits;
                memcpy(&f, &u, 4);
                out[i] = f;
            } else if (dtype == TW_TB_DT_DOUBLE) {
                memcpy(&out[i], &bits, 8);
            } else if (dtype == TW_TB_DT_HALF) {
                out[i] = half_to_double((uint16_t)bits);
            } else {
                out[i] = width == 4 ? (double)(int32_t)bits : (double)(int64_t)bits;
            }
        }
        return 0;
    }
    size_t have = dtype == TW_TB_DT_FLOAT    ? t->n_float_val
                  : dtype == TW_TB_DT_DOUBLE ? t->n_double_val
                  : dtype == TW_TB_DT_INT64  ? t->n_int64_val
                                             : t->n_int_val; /* int32 and half (as its bits) */
    if (n > 0 && have != (size_t)n && have != 1) {
        snprintf(why, size, "%zu %s values where its shape needs %lld", have, dtype_name(dtype), (long long)n);
        return -1;
    }
    for (int64_t i = 0; i < n; i++) {
        size_t k = have == 1 ? 0 : (size_t)i;
        out[i] = dtype == TW_TB_DT_FLOAT    ? t->float_val[k]
                 : dtype == TW_TB_DT_DOUBLE ? t->double_val[k]
                 : dtype == TW_TB_DT_INT64  ? (double)t->int64_val[k]
                 : dtype == TW_TB_DT_HALF   ? half_to_double((uint16_t)t->int_val[k])
                                            : (double)t->int_val[k];
    }
    return 0;
}

/* ---- images -------------------------------------------------------------- */
static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Tell the format from the bytes and take the size from the image's own
 * header where it has one early (PNG's IHDR, GIF's screen). -1 with why
 * when the bytes are none of PNG, JPEG or GIF. */
static int sniff_image(const uint8_t *p, size_t n, tw_tb_image *img, char *why, size_t size)
{
    static const uint8_t png[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    img->data = p;
    img->size = n;
    if (n >= 8 && !memcmp(p, png, 8)) {
        if (n < 33 || memcmp(p + 12, "IHDR", 4) || be32(p + 16) == 0 || be32(p + 20) == 0 ||
            be32(p + 16) > INT32_MAX || be32(p + 20) > INT32_MAX) {
            snprintf(why, size, "a PNG signature without a valid IHDR chunk (%zu bytes)", n);
            return -1;
        }
        img->format = "png";
        img->width = (int)be32(p + 16);
        img->height = (int)be32(p + 20);
        return 0;
    }
    if (n >= 10 && (!memcmp(p, "GIF87a", 6) || !memcmp(p, "GIF89a", 6))) {
        img->format = "gif";
        img->width = p[6] | p[7] << 8;
        img->height = p[8] | p[9] << 8;
        return 0;
    }
    if (n >= 4 && p[0] == 0xff && p[1] == 0xd8 && p[2] == 0xff) {
        img->format = "jpeg";
        return 0;
    }
    if (n == 0)
        snprintf(why, size, "an empty image");
    else
        snprintf(why, size, "an image that is not a PNG, JPEG or GIF (its first bytes: %02x %02x %02x %02x)", p[0],
                 n > 1 ? p[1] : 0, n > 2 ? p[2] : 0, n > 3 ? p[3] : 0);
    return -1;
}

static void emit_image(tw_tb_decoder *d, tw_tb_item *it, const uint8_t *p, size_t n, int width, int height,
                       int colorspace, tw_tb_item_fn fn, void *ud)
{
    char why[160];
    it->kind = TW_TB_IMAGE;
    it->image = (tw_tb_image){.width = width, .height = height, .colorspace = colorspace};
    if (sniff_image(p, n, &it->image, why, sizeof why)) {
        warn(d, it, "%s; image left out", why);
        return;
    }
    if (it->image.width <= 0 || it->image.height <= 0) {
        warn(d, it, "a %s image with no size (width %d, height %d); image left out", it->image.format, width, height);
        return;
    }
    fn(ud, it);
}

/* A TF2 image summary: a string vector [width, height, image...]. */
static void tensor_images(tw_tb_decoder *d, tw_tb_item *it, const Tensorflow__TensorProto *t, tw_tb_item_fn fn,
                          void *ud)
{
    if (t->dtype != TW_TB_DT_STRING || t->n_string_val < 2) {
        warn(d, it, "an image tensor that is not [width, height, images...] strings (%s, %zu strings); left out",
             dtype_name(t->dtype), t->n_string_val);
        return;
    }
    int dims[2];
    for (int k = 0; k < 2; k++) {
        char number[24];
        const ProtobufCBinaryData *s = &t->string_val[k];
        size_t len = MIN(s->len, sizeof number - 1);
        if (len)
            memcpy(number, s->data, len); /* an empty string's data may be NULL */
        number[len] = 0;
        char *end;
        long long v = g_ascii_strtoll(number, &end, 10);
        dims[k] = len && *end == 0 && v > 0 && v <= INT32_MAX && s->len < sizeof number ? (int)v : 0;
    }
    for (size_t i = 2; i < t->n_string_val; i++)
        emit_image(d, it, t->string_val[i].data, t->string_val[i].len, dims[0], dims[1], 0, fn, ud);
}

/* ---- histograms ---------------------------------------------------------- */
/* A classic HistogramProto as TensorBoard itself turns it into buckets
 * (data_compat.py): the empty buckets at either end dropped, the first
 * bucket starting at min and the last ending at max. */
static void classic_histogram(tw_tb_decoder *d, tw_tb_item *it, const Tensorflow__HistogramProto *h,
                              tw_tb_item_fn fn, void *ud)
{
    if (h->n_bucket != h->n_bucket_limit) {
        warn(d, it, "a histogram with %zu buckets and %zu bucket limits; left out", h->n_bucket, h->n_bucket_limit);
        return;
    }
    size_t n = h->n_bucket, start = 0, end = n;
    while (start < n && !(h->bucket[start] > 0))
        start++;
    while (end > start && !(h->bucket[end - 1] > 0))
        end--;
    size_t k = end - start;
    double *buf = hist_room(d, k);
    double *left = buf, *right = buf + k, *count = buf + 2 * k;
    for (size_t i = 0; i < k; i++) {
        left[i] = i == 0 ? h->min : h->bucket_limit[start + i - 1];
        right[i] = i + 1 == k ? h->max : h->bucket_limit[start + i];
        count[i] = h->bucket[start + i];
    }
    it->kind = TW_TB_HISTOGRAM;
    it->histogram = (tw_tb_histogram){.min = h->min, .max = h->max, .num = h->num,
                                      .sum = h->has_sum ? h->sum : NAN,
                                      .sum_squares = h->has_sum_squares ? h->sum_squares : NAN,
                                      .nbuckets = (int)k, .left = left, .right = right, .count = count};
    fn(ud, it);
}

/* A TF2 histogram: a [k, 3] tensor of (left edge, right edge, count) rows. */
static void tensor_histogram(tw_tb_decoder *d, tw_tb_item *it, const Tensorflow__TensorProto *t, tw_tb_item_fn fn,
                             void *ud)
{
    int rank;
    int64_t numel = tensor_numel(t, &rank);
    if (rank != 2 || t->tensor_shape->dim[1]->size != 3 || numel < 0 || numel > INT32_MAX) {
        warn(d, it, "a histogram tensor whose shape is not [k, 3]; left out");
        return;
    }
    size_t k = (size_t)(numel / 3);
    /* The shape is only a claim: memory for it is taken once the tensor's
     * bytes are known to fill it (a single typed value, which version 0
     * repeats over the shape, fills at most MAX_FILLED_BUCKETS rows). */
    size_t values = t->has_tensor_content && t->tensor_content.len ? t->tensor_content.len / 2 /* the narrowest (half) */
                    : t->dtype == TW_TB_DT_DOUBLE                  ? t->n_double_val
                                                                   : t->n_float_val;
    if ((size_t)numel > values && !(values == 1 && k <= MAX_FILLED_BUCKETS)) {
        warn(d, it, "a [%zu, 3] histogram tensor with %zu values; left out", k, values);
        return;
    }
    double *rows = g_new(double, numel ? numel : 1);
    char why[160];
    if (tensor_doubles(t, rows, numel, why, sizeof why)) {
        warn(d, it, "histogram: %s; left out", why);
        g_free(rows);
        return;
    }
    double *buf = hist_room(d, k), num = 0;
    for (size_t i = 0; i < k; i++) {
        buf[i] = rows[3 * i];
        buf[k + i] = rows[3 * i + 1];
        buf[2 * k + i] = rows[3 * i + 2];
        num += rows[3 * i + 2];
    }
    g_free(rows);
    it->kind = TW_TB_HISTOGRAM;
    it->histogram = (tw_tb_histogram){.min = k ? buf[0] : NAN, .max = k ? buf[2 * k - 1] : NAN, .num = num,
                                      .sum = NAN, .sum_squares = NAN, .nbuckets = (int)k,
                                      .left = buf, .right = buf + k, .count = buf + 2 * k};
    fn(ud, it);
}

/* ---- one value ----------------------------------------------------------- */
static void tensor_scalar(tw_tb_decoder *d, tw_tb_item *it, const Tensorflow__TensorProto *t, tw_tb_item_fn fn,
                          void *ud)
{
    int rank;
    int64_t numel = tensor_numel(t, &rank);
    char why[160];
    if (numel != 1) {
        warn(d, it, "a scalar tensor of %lld elements (rank %d); left out", (long long)numel, rank);
        return;
    }
    if (tensor_doubles(t, &it->value, 1, why, sizeof why)) {
        warn(d, it, "scalar: %s; left out", why);
        return;
    }
    it->kind = TW_TB_SCALAR;
    fn(ud, it);
}

/* The text plugin's strings: one, or each element of an array in row-major
 * order, as paragraphs. */
static void tensor_text(tw_tb_decoder *d, tw_tb_item *it, const Tensorflow__TensorProto *t, tw_tb_item_fn fn,
                        void *ud)
{
    if (t->dtype != TW_TB_DT_STRING) {
        warn(d, it, "a text tensor of %s; left out", dtype_name(t->dtype));
        return;
    }
    g_string_truncate(d->text, 0);
    for (size_t i = 0; i < t->n_string_val; i++) {
        if (i)
            g_string_append(d->text, "\n\n");
        g_string_append_len(d->text, (const char *)t->string_val[i].data, (gssize)t->string_val[i].len);
    }
    it->kind = TW_TB_TEXT;
    it->text = d->text->str;
    it->text_len = d->text->len;
    fn(ud, it);
}

static const char *plugin_of(tw_tb_decoder *d, const Tensorflow__Summary__Value *v, const char *tag)
{
    const Tensorflow__SummaryMetadata *m = v->metadata;
    const char *named = m && m->plugin_data ? str(m->plugin_data->plugin_name) : "";
    if (!named[0])
        return str(g_hash_table_lookup(d->plugins, tag));
    const char *known = g_hash_table_lookup(d->plugins, tag);
    if (!known || strcmp(known, named))
        g_hash_table_insert(d->plugins, g_strdup(tag), g_strdup(named));
    return named;
}

/* The most elements a tensor of no plugin may claim with a single value
 * filling its shape (its memory is taken for them). */
#define MAX_FILLED_ELEMENTS (1 << 23)

/* A tensor of numbers of no plugin (tw_tb_write_tensor's, TF2's
 * tf.summary.write without metadata): its values as doubles. */
static void tensor_numbers(tw_tb_decoder *d, tw_tb_item *it, const Tensorflow__TensorProto *t, tw_tb_item_fn fn,
                           void *ud)
{
    int rank;
    int64_t numel = tensor_numel(t, &rank);
    if (numel < 0 || rank > TW_TB_TENSOR_MAX_DIMS) {
        warn(d, it, "a tensor of rank %d or of a shape no tensor has; left out", rank);
        return;
    }
    /* The shape is only a claim: memory for it is taken once the values
     * are there (or one value fills a shape of bounded size). */
    size_t width = t->dtype == TW_TB_DT_FLOAT || t->dtype == TW_TB_DT_INT32 ? 4 : t->dtype == TW_TB_DT_HALF ? 2 : 8;
    size_t have = t->has_tensor_content && t->tensor_content.len ? t->tensor_content.len / width
                  : t->dtype == TW_TB_DT_FLOAT                   ? t->n_float_val
                  : t->dtype == TW_TB_DT_DOUBLE                  ? t->n_double_val
                  : t->dtype == TW_TB_DT_INT64                   ? t->n_int64_val
                                                                 : t->n_int_val;
    if ((uint64_t)numel != have && !(have == 1 && numel <= MAX_FILLED_ELEMENTS)) {
        warn(d, it, "a tensor whose shape needs %lld values, with %zu; left out", (long long)numel, have);
        return;
    }
    double *values = g_new(double, MAX(numel, 1));
    char why[256];
    if (tensor_doubles(t, values, numel, why, sizeof why)) {
        warn(d, it, "%s; left out", why);
        g_free(values);
        return;
    }
    it->kind = TW_TB_TENSOR;
    it->tensor = (tw_tb_tensor){.dtype = t->dtype == TW_TB_DT_DOUBLE  ? "float64"
                                         : t->dtype == TW_TB_DT_INT32 ? "int32"
                                         : t->dtype == TW_TB_DT_INT64 ? "int64"
                                                                      : "float32",
                                .ndim = rank, .numel = numel, .values = values};
    for (int i = 0; i < rank; i++)
        it->tensor.dims[i] = t->tensor_shape->dim[i]->size;
    fn(ud, it);
    g_free(values);
}

static void decode_value(tw_tb_decoder *d, tw_tb_item *it, const Tensorflow__Summary__Value *v, tw_tb_item_fn fn,
                         void *ud)
{
    it->tag = str(v->tag);
    it->plugin = plugin_of(d, v, it->tag);
    const char *plugin = it->plugin;
    const Tensorflow__TensorProto *t = v->value_case == TENSORFLOW__SUMMARY__VALUE__VALUE_TENSOR ? v->tensor : NULL;
    if (!strcmp(plugin, "hparams")) {
        const Tensorflow__SummaryMetadata *m = v->metadata;
        if (!m || !m->plugin_data || !m->plugin_data->has_content) {
            warn(d, it, "an hparams value without its plugin data; left out");
            return;
        }
        char why[256];
        char *json = tw__tb_hparams_json(m->plugin_data->content.data, m->plugin_data->content.len,
                                         &d->arena.allocator, &it->kind, why, sizeof why);
        if (!json) {
            warn(d, it, "%s; left out", why);
            return;
        }
        it->text = json;
        it->text_len = strlen(json);
        fn(ud, it);
        g_free(json);
        return;
    }
    switch (v->value_case) {
    case TENSORFLOW__SUMMARY__VALUE__VALUE_SIMPLE_VALUE:
        it->kind = TW_TB_SCALAR;
        it->value = v->simple_value;
        fn(ud, it);
        return;
    case TENSORFLOW__SUMMARY__VALUE__VALUE_HISTO: classic_histogram(d, it, v->histo, fn, ud); return;
    case TENSORFLOW__SUMMARY__VALUE__VALUE_IMAGE: {
        const Tensorflow__Summary__Image *im = v->image;
        emit_image(d, it, im->encoded_image_string.data, im->encoded_image_string.len, im->width, im->height,
                   im->colorspace, fn, ud);
        return;
    }
    case TENSORFLOW__SUMMARY__VALUE__VALUE_TENSOR: break;
    default:
        it->kind = TW_TB_OTHER;
        it->text = v->value_case == TENSORFLOW__SUMMARY__VALUE__VALUE_OBSOLETE_OLD_STYLE_HISTOGRAM
                       ? "an obsolete old-style histogram"
                       : "a value of a kind not read (audio?)";
        fn(ud, it);
        return;
    }
    if (!strcmp(plugin, "scalars"))
        tensor_scalar(d, it, t, fn, ud);
    else if (!strcmp(plugin, "histograms"))
        tensor_histogram(d, it, t, fn, ud);
    else if (!strcmp(plugin, "images"))
        tensor_images(d, it, t, fn, ud);
    else if (!strcmp(plugin, "text"))
        tensor_text(d, it, t, fn, ud);
    else if (!strcmp(plugin, "graph_keras_model")) {
        if (t->dtype != TW_TB_DT_STRING || t->n_string_val != 1) {
            warn(d, it, "a Keras model config that is not one string; left out");
            return;
        }
        it->kind = TW_TB_KERAS_MODEL;
        it->text = text_copy(d, t->string_val[0].data, t->string_val[0].len, &it->text_len);
        fn(ud, it);
    } else if (!plugin[0] && (t->dtype == TW_TB_DT_FLOAT || t->dtype == TW_TB_DT_DOUBLE || t->dtype == TW_TB_DT_HALF ||
                              t->dtype == TW_TB_DT_INT32 || t->dtype == TW_TB_DT_INT64)) {
        /* No plugin named for the tag anywhere in the file: a rank-0 float
         * is read as a scalar, as tf.summary.scalar's data is; other
         * numbers as a tensor. */
        int rank;
        if (t->dtype != TW_TB_DT_INT32 && t->dtype != TW_TB_DT_INT64 && tensor_numel(t, &rank) == 1 && rank == 0)
            tensor_scalar(d, it, t, fn, ud);
        else
            tensor_numbers(d, it, t, fn, ud);
    } else {
        it->kind = TW_TB_OTHER;
        it->text = plugin[0] ? plugin : "a tensor of no plugin";
        fn(ud, it);
    }
}

int tw_tb_decode_event(tw_tb_decoder *d, const uint8_t *data, size_t n, uint64_t offset, tw_tb_item_fn fn,
                       void *user_data)
{
    tw__pb_arena_reset(&d->arena);
    tw_tb_item base = {.tag = "", .plugin = "", .offset = offset};
    Tensorflow__Event *e = tensorflow__event__unpack(&d->arena.allocator, n, data);
    if (!e) {
        char why[256];
        if (tw__pb_check(&tensorflow__event__descriptor, data, n, TW_PB_MAX_DEPTH, why, sizeof why))
            warn(d, &base, "not an Event message: %s; record skipped", why);
        else
            warn(d, &base, "not an Event message; record skipped");
        return -1;
    }
    base.step = e->has_step ? e->step : 0;
    base.wall_time = e->has_wall_time ? e->wall_time : NAN;
    tw_tb_item it = base;
    switch (e->what_case) {
    case TENSORFLOW__EVENT__WHAT_FILE_VERSION:
        it.kind = TW_TB_FILE_VERSION;
        it.text = str(e->file_version);
        it.text_len = strlen(it.text);
        fn(user_data, &it);
        break;
    case TENSORFLOW__EVENT__WHAT_GRAPH_DEF:
    case TENSORFLOW__EVENT__WHAT_META_GRAPH_DEF:
        it.kind = e->what_case == TENSORFLOW__EVENT__WHAT_GRAPH_DEF ? TW_TB_GRAPH_DEF : TW_TB_META_GRAPH_DEF;
        it.bytes = it.kind == TW_TB_GRAPH_DEF ? e->graph_def.data : e->meta_graph_def.data;
        it.nbytes = it.kind == TW_TB_GRAPH_DEF ? e->graph_def.len : e->meta_graph_def.len;
        if (it.kind == TW_TB_GRAPH_DEF) {
            char why[256];
            char *json = tw__tb_graph_json_from_graph_def(it.bytes, it.nbytes, "graph_def", why, sizeof why);
            if (why[0])
                warn(d, &it, "graph_def: %s%s", why, json ? "" : "; the graph is left out");
            it.text = json;
            it.text_len = json ? strlen(json) : 0;
            fn(user_data, &it);
            g_free(json);
        } else {
            fn(user_data, &it);
        }
        break;
    case TENSORFLOW__EVENT__WHAT_SESSION_LOG: {
        const Tensorflow__SessionLog *s = e->session_log;
        it.kind = TW_TB_SESSION_LOG;
        it.session_status = s->status;
        it.text = s->status == TENSORFLOW__SESSION_LOG__SESSION_STATUS__CHECKPOINT ? str(s->checkpoint_path)
                                                                                     : str(s->msg);
        it.text_len = strlen(it.text);
        fn(user_data, &it);
        break;
    }
    case TENSORFLOW__EVENT__WHAT_SUMMARY:
        for (size_t i = 0; i < e->summary->n_value; i++) {
            it = base;
            decode_value(d, &it, e->summary->value[i], fn, user_data);
        }
        break;
    default: break; /* wall time only, or fields not read (log_message, run metadata) */
    }
    return 0;
}
