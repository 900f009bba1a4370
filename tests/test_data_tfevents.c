/* TensorBoard event files (tw/tfevents.h): every file of the shared corpus
 * reads with exactly the facts its expected.txt lists (worked out by an
 * independent decoder); synthetic files built here check the framing,
 * each kind of value and bad input (garbage, a 2^63 length, cuts at every
 * byte, bad checksums, wrong wire types, unknown fields, 100,000 levels of
 * nesting, images that are not images), and the import into the run
 * database keeps every point. */
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "scratch_tree.h"
#include "tw/engine.h"
#include "tw/model_file.h"
#include "tw/run_store.h"
#include "tw/tfevents.h"

/* ---- reading a file into a list of items ------------------------------------ */
typedef struct {
    tw_tb_kind kind;
    char *tag, *plugin;
    int64_t step;
    double wall_time, value;
    uint64_t offset;
    int session_status;
    double hmin, hmax, hnum, hsum, hcount_total;
    int nbuckets;
    int width, height, colorspace;
    char *format;
    size_t size; /* image bytes, text length or graph bytes */
    char *text;
} item;

typedef struct {
    GArray *items; /* item */
    GPtrArray *warnings;
    int records;
    int again; /* AGAIN results seen */
} reading;

static void item_clear(item *it)
{
    g_free(it->tag);
    g_free(it->plugin);
    g_free(it->format);
    g_free(it->text);
}

static void reading_init(reading *r)
{
    r->items = g_array_new(false, true, sizeof(item));
    g_array_set_clear_func(r->items, (GDestroyNotify)item_clear);
    r->warnings = g_ptr_array_new_with_free_func(g_free);
    r->records = 0;
    r->again = 0;
}

static void reading_clear(reading *r)
{
    g_array_unref(r->items);
    g_ptr_array_unref(r->warnings);
}

static void on_warning(void *user_data, const char *message)
{
    reading *r = user_data;
    g_ptr_array_add(r->warnings, g_strdup(message));
}

static void on_item(void *user_data, const tw_tb_item *in)
{
    reading *r = user_data;
    item it = {.kind = in->kind, .tag = g_strdup(in->tag), .plugin = g_strdup(in->plugin), .step = in->step,
               .wall_time = in->wall_time, .value = in->value, .offset = in->offset,
               .session_status = in->session_status};
    if (in->kind == TW_TB_HISTOGRAM) {
        it.hmin = in->histogram.min;
        it.hmax = in->histogram.max;
        it.hnum = in->histogram.num;
        it.hsum = in->histogram.sum;
        it.nbuckets = in->histogram.nbuckets;
        for (int i = 0; i < in->histogram.nbuckets; i++)
            it.hcount_total += in->histogram.count[i];
    }
    if (in->kind == TW_TB_IMAGE) {
        it.width = in->image.width;
        it.height = in->image.height;
        it.colorspace = in->image.colorspace;
        it.format = g_strdup(in->image.format);
        it.size = in->image.size;
    }
    if (in->text) {
        it.text = g_strndup(in->text, in->text_len ? in->text_len : strlen(in->text));
        it.size = in->text_len;
    }
    if (in->kind == TW_TB_GRAPH_DEF || in->kind == TW_TB_META_GRAPH_DEF)
        it.size = in->nbytes;
    g_array_append_val(r->items, it);
}

/* Read a whole file as the importer does (a cut at the end reported). */
static void read_file(const char *path, reading *r)
{
    reading_init(r);
    tw_tfrecord_reader *rd = tw_tfrecord_open(path, on_warning, r);
    g_assert_nonnull(rd);
    tw_tb_decoder *d = tw_tb_decoder_new(path, on_warning, r);
    const uint8_t *data;
    size_t n;
    uint64_t offset;
    tw_tfrecord_status s;
    while ((s = tw_tfrecord_next(rd, &data, &n, &offset)) != TW_TFRECORD_END) {
        g_assert_cmpint(s, !=, TW_TFRECORD_ERROR);
        if (s == TW_TFRECORD_AGAIN) {
            r->again++;
            tw_tfrecord_report_cut(rd);
            continue;
        }
        r->records++;
        tw_tb_decode_event(d, data, n, offset, on_item, r);
    }
    tw_tb_decoder_free(d);
    tw_tfrecord_close(rd);
}

static item *item_at(reading *r, int i)
{
    return &g_array_index(r->items, item, i);
}

static bool warned(reading *r, const char *needle)
{
    for (guint i = 0; i < r->warnings->len; i++)
        if (strstr(r->warnings->pdata[i], needle))
            return true;
    return false;
}

static void print_warnings(reading *r)
{
    for (guint i = 0; i < r->warnings->len; i++)
        g_test_message("warning: %s", (char *)r->warnings->pdata[i]);
}

/* ---- the corpus ----------------------------------------------------------- */
static char *corpus_dir(void)
{
    const char *srcdir = g_getenv("G_TEST_SRCDIR");
    return g_build_filename(srcdir ? srcdir : ".", "..", "..", "shared", "corpus", "tfevents", NULL);
}

/* One tag's facts from expected.txt. */
typedef struct {
    char *tag, *kind_line;
    int count;
    int64_t first_step, last_step;
    int scalar_points; /* -1 when not a scalar */
    int64_t first_point_step, last_point_step;
    double first_value, last_value;
    GPtrArray *details; /* the indented lines below the tag line */
} tag_facts;

typedef struct {
    char *file;
    int records;
    char *file_version; /* NULL: none */
    double first_wall, last_wall;
    int graph_defs, meta_graph_defs, wall_times;
    GPtrArray *tags; /* tag_facts */
} file_facts;

static void tag_facts_free(tag_facts *t)
{
    g_free(t->tag);
    g_free(t->kind_line);
    g_ptr_array_unref(t->details);
    g_free(t);
}

static void file_facts_free(file_facts *f)
{
    g_free(f->file);
    g_free(f->file_version);
    g_ptr_array_unref(f->tags);
    g_free(f);
}

/* The value of "{1: 101, 2: 99, ...}" for a field number, 0 when absent. */
static int field_count(const char *line, int field)
{
    char key[16];
    snprintf(key, sizeof key, "%s%d: ", field == 1 ? "{" : " ", field);
    const char *p = strstr(line, key);
    if (!p && field != 1) {
        snprintf(key, sizeof key, "{%d: ", field);
        p = strstr(line, key);
    }
    return p ? atoi(p + strlen(key)) : 0;
}

static GPtrArray *parse_expected(const char *path)
{
    char *text;
    g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
    GPtrArray *files = g_ptr_array_new_with_free_func((GDestroyNotify)file_facts_free);
    char **lines = g_strsplit(text, "\n", -1);
    file_facts *f = NULL;
    tag_facts *t = NULL;
    GRegex *tag_re = g_regex_new("^  tag '(.*)': (.*); count (\\d+); steps first/last (-?\\d+)/(-?\\d+)(.*)$", 0, 0,
                                 NULL);
    for (int i = 0; lines[i]; i++) {
        const char *l = lines[i];
        GMatchInfo *m = NULL;
        if (g_str_has_prefix(l, "## ")) {
            f = g_new0(file_facts, 1);
            f->file = g_strdup(l + 3);
            f->tags = g_ptr_array_new_with_free_func((GDestroyNotify)tag_facts_free);
            g_ptr_array_add(files, f);
            t = NULL;
        } else if (!f) {
            continue;
        } else if (g_str_has_prefix(l, "records: ")) {
            f->records = atoi(l + 9);
        } else if (g_str_has_prefix(l, "file_version: ")) {
            if (!g_str_has_prefix(l + 14, "NONE")) {
                const char *end = strstr(l + 14, " (");
                f->file_version = g_strndup(l + 14, end ? (gsize)(end - l - 14) : strlen(l + 14));
            }
        } else if (g_str_has_prefix(l, "wall_time first/last: ")) {
            g_assert_cmpint(sscanf(l + 22, "%lf / %lf", &f->first_wall, &f->last_wall), ==, 2);
        } else if (g_str_has_prefix(l, "event field counts")) {
            const char *counts = strchr(l, '{');
            f->wall_times = field_count(counts, 1);
            f->graph_defs = field_count(counts, 4);
            f->meta_graph_defs = field_count(counts, 9);
        } else if (g_regex_match(tag_re, l, 0, &m)) {
            t = g_new0(tag_facts, 1);
            t->tag = g_match_info_fetch(m, 1);
            t->kind_line = g_match_info_fetch(m, 2);
            char *s = g_match_info_fetch(m, 3);
            t->count = atoi(s);
            g_free(s);
            s = g_match_info_fetch(m, 4);
            t->first_step = g_ascii_strtoll(s, NULL, 10);
            g_free(s);
            s = g_match_info_fetch(m, 5);
            t->last_step = g_ascii_strtoll(s, NULL, 10);
            g_free(s);
            char *rest = g_match_info_fetch(m, 6);
            t->scalar_points = -1;
            if (strstr(rest, "scalar points"))
                g_assert_cmpint(sscanf(rest, "; scalar points %d; first (step %" G_GINT64_FORMAT ", %lf); last (step %" G_GINT64_FORMAT ", %lf)",
                                       &t->scalar_points, &t->first_point_step, &t->first_value, &t->last_point_step,
                                       &t->last_value),
                                ==, 5);
            g_free(rest);
            t->details = g_ptr_array_new_with_free_func(g_free);
            g_ptr_array_add(f->tags, t);
        } else if (t && g_str_has_prefix(l, "    ")) {
            g_ptr_array_add(t->details, g_strdup(l + 4));
        }
        g_match_info_free(m);
    }
    g_regex_unref(tag_re);
    g_strfreev(lines);
    g_free(text);
    return files;
}

/* What a tag's kind line says our reader should make of it. */
static tw_tb_kind expected_kind(const tag_facts *t)
{
    const char *k = t->kind_line;
    if (!strcmp(k, "simple_value") || strstr(k, "plugin=scalars"))
        return TW_TB_SCALAR;
    if (!strcmp(k, "histo") || strstr(k, "plugin=histograms"))
        return TW_TB_HISTOGRAM;
    if (!strcmp(k, "image"))
        return TW_TB_IMAGE;
    if (strstr(k, "plugin=graph_keras_model"))
        return TW_TB_KERAS_MODEL;
    g_error("expected.txt: a kind this test does not know: %s", k);
}

/* float32 values printed with %.9g identify the float exactly. */
static void assert_float32(double got, double expected)
{
    g_assert_cmpfloat((float)got, ==, (float)expected);
}

static void check_histogram_details(const tag_facts *t, item **of_tag, int n)
{
    for (guint i = 0; i < t->details->len; i++) {
        const char *d = t->details->pdata[i];
        double num, min, max, sum;
        int buckets, limits, first_bytes, last_bytes;
        if (sscanf(d, "histo first: num=%lf min=%lf max=%lf sum=%lf buckets=%d bucket_limits=%d", &num, &min, &max,
                   &sum, &buckets, &limits) == 6 ||
            sscanf(d, "histo last: num=%lf min=%lf max=%lf sum=%lf buckets=%d bucket_limits=%d", &num, &min, &max,
                   &sum, &buckets, &limits) == 6) {
            item *h = g_str_has_prefix(d, "histo first") ? of_tag[0] : of_tag[n - 1];
            assert_float32(h->hnum, num);
            assert_float32(h->hmin, min);
            assert_float32(h->hmax, max);
            assert_float32(h->hsum, sum);
            g_assert_cmpfloat(h->hcount_total, ==, h->hnum); /* every value in a bucket */
            g_assert_cmpint(h->nbuckets, <=, buckets);
        } else if (sscanf(d, "tensor_content bytes first/last: %d/%d", &first_bytes, &last_bytes) == 2) {
            /* float64 rows of three */
            g_assert_cmpint(of_tag[0]->nbuckets, ==, first_bytes / 24);
            g_assert_cmpint(of_tag[n - 1]->nbuckets, ==, last_bytes / 24);
        }
    }
}

static void check_file(const file_facts *f)
{
    char *dir = corpus_dir();
    char *path = g_build_filename(dir, f->file, NULL);
    reading r;
    read_file(path, &r);
    print_warnings(&r);
    g_assert_cmpuint(r.warnings->len, ==, 0);
    g_assert_cmpint(r.again, ==, 0);
    g_assert_cmpint(r.records, ==, f->records);

    int versions = 0, graphs = 0, metas = 0;
    double first_wall = NAN, last_wall = NAN;
    for (guint i = 0; i < r.items->len; i++) {
        item *it = item_at(&r, (int)i);
        if (it->kind == TW_TB_FILE_VERSION) {
            versions++;
            g_assert_nonnull(f->file_version);
            g_assert_cmpstr(it->text, ==, f->file_version);
        }
        graphs += it->kind == TW_TB_GRAPH_DEF;
        metas += it->kind == TW_TB_META_GRAPH_DEF;
        if (!isnan(it->wall_time)) {
            if (isnan(first_wall))
                first_wall = it->wall_time;
            last_wall = it->wall_time;
        }
    }
    g_assert_cmpint(versions, ==, f->file_version ? 1 : 0);
    g_assert_cmpint(graphs, ==, f->graph_defs);
    g_assert_cmpint(metas, ==, f->meta_graph_defs);
    /* The first and last records carry a wall time in every file here. */
    g_assert_cmpint(f->wall_times, ==, f->records);
    g_assert_cmpfloat(first_wall, ==, f->first_wall);
    g_assert_cmpfloat(last_wall, ==, f->last_wall);

    int tagged = 0;
    for (guint i = 0; i < r.items->len; i++)
        tagged += item_at(&r, (int)i)->tag[0] != 0;
    int expected_tagged = 0;
    for (guint k = 0; k < f->tags->len; k++) {
        const tag_facts *t = f->tags->pdata[k];
        expected_tagged += t->count;
        item **of_tag = g_new0(item *, r.items->len + 1);
        int n = 0;
        for (guint i = 0; i < r.items->len; i++)
            if (!strcmp(item_at(&r, (int)i)->tag, t->tag))
                of_tag[n++] = item_at(&r, (int)i);
        g_assert_cmpint(n, ==, t->count);
        for (int i = 0; i < n; i++)
            g_assert_cmpint(of_tag[i]->kind, ==, expected_kind(t));
        g_assert_cmpint(of_tag[0]->step, ==, t->first_step);
        g_assert_cmpint(of_tag[n - 1]->step, ==, t->last_step);
        if (t->scalar_points >= 0) {
            g_assert_cmpint(n, ==, t->scalar_points);
            g_assert_cmpint(of_tag[0]->step, ==, t->first_point_step);
            g_assert_cmpint(of_tag[n - 1]->step, ==, t->last_point_step);
            assert_float32(of_tag[0]->value, t->first_value);
            assert_float32(of_tag[n - 1]->value, t->last_value);
        }
        if (expected_kind(t) == TW_TB_HISTOGRAM)
            check_histogram_details(t, of_tag, n);
        if (expected_kind(t) == TW_TB_IMAGE) {
            g_assert_cmpuint(t->details->len, ==, (guint)n);
            for (int i = 0; i < n; i++) {
                int h, w, c, bytes;
                char png[8];
                g_assert_cmpint(sscanf(t->details->pdata[i], "image: height=%d width=%d colorspace=%d encoded_bytes=%d png_signature=%7s",
                                       &h, &w, &c, &bytes, png),
                                ==, 5);
                g_assert_cmpint(of_tag[i]->height, ==, h);
                g_assert_cmpint(of_tag[i]->width, ==, w);
                g_assert_cmpint(of_tag[i]->colorspace, ==, c);
                g_assert_cmpint(of_tag[i]->size, ==, bytes);
                g_assert_cmpstr(of_tag[i]->format, ==, !strcmp(png, "True") ? "png" : "?");
            }
        }
        if (expected_kind(t) == TW_TB_KERAS_MODEL) {
            int bytes;
            g_assert_cmpint(sscanf(t->details->pdata[0], "string payload bytes: %d", &bytes), ==, 1);
            g_assert_cmpint(of_tag[0]->size, ==, bytes);
            g_assert_true(g_str_has_prefix(of_tag[0]->text, "{"));
        }
        g_free(of_tag);
    }
    g_assert_cmpint(tagged, ==, expected_tagged); /* no value of a tag the list does not have */
    reading_clear(&r);
    g_free(path);
    g_free(dir);
}

static void test_corpus(void)
{
    char *dir = corpus_dir();
    char *expected = g_build_filename(dir, "expected.txt", NULL);
    if (!g_file_test(expected, G_FILE_TEST_EXISTS)) {
        g_test_skip("the shared corpus (../shared/corpus/tfevents) is not here");
        g_free(expected);
        g_free(dir);
        return;
    }
    GPtrArray *files = parse_expected(expected);
    g_assert_cmpuint(files->len, >=, 6);
    for (guint i = 0; i < files->len; i++) {
        check_file(files->pdata[i]);
        g_test_message("%s: read with its expected facts", ((file_facts *)files->pdata[i])->file);
    }
    g_test_message("%u of %u corpus files read with exactly their expected facts", files->len, files->len);
    g_ptr_array_unref(files);
    g_free(expected);
    g_free(dir);
}

/* ---- writing synthetic files --------------------------------------------------- */
static void put_varint(GByteArray *b, uint64_t v)
{
    do {
        uint8_t byte = (v & 0x7f) | (v >= 0x80 ? 0x80 : 0);
        g_byte_array_append(b, &byte, 1);
        v >>= 7;
    } while (v);
}

static void put_key(GByteArray *b, unsigned field, unsigned wire)
{
    put_varint(b, (uint64_t)field << 3 | wire);
}

static void put_bytes(GByteArray *b, unsigned field, const void *data, size_t n)
{
    put_key(b, field, 2);
    put_varint(b, n);
    g_byte_array_append(b, data, (guint)n);
}

static void put_message(GByteArray *b, unsigned field, GByteArray *m)
{
    put_bytes(b, field, m->data, m->len);
    g_byte_array_unref(m);
}

static void put_string(GByteArray *b, unsigned field, const char *s)
{
    put_bytes(b, field, s, strlen(s));
}

static void put_double(GByteArray *b, unsigned field, double v)
{
    put_key(b, field, 1);
    g_byte_array_append(b, (const uint8_t *)&v, 8);
}

static void put_float(GByteArray *b, unsigned field, float v)
{
    put_key(b, field, 5);
    g_byte_array_append(b, (const uint8_t *)&v, 4);
}

static GByteArray *event(double wall, int64_t step)
{
    GByteArray *e = g_byte_array_new();
    if (!isnan(wall))
        put_double(e, 1, wall);
    if (step)
        put_key(e, 2, 0), put_varint(e, (uint64_t)step);
    return e;
}

/* Summary{value{tag, [metadata{plugin_data{plugin_name}}], <field>: payload}} */
static GByteArray *value(const char *tag, const char *plugin)
{
    GByteArray *v = g_byte_array_new();
    put_string(v, 1, tag);
    if (plugin) {
        GByteArray *pd = g_byte_array_new(), *md = g_byte_array_new();
        put_string(pd, 1, plugin);
        put_message(md, 1, pd);
        put_message(v, 9, md);
    }
    return v;
}

static GByteArray *summary_of(GByteArray *v)
{
    GByteArray *s = g_byte_array_new();
    put_message(s, 1, v);
    return s;
}

static GByteArray *scalar_event(double wall, int64_t step, const char *tag, float x)
{
    GByteArray *e = event(wall, step), *v = value(tag, NULL);
    put_float(v, 2, x);
    put_message(e, 5, summary_of(v));
    return e;
}

static void frame(GByteArray *file, GByteArray *record)
{
    uint8_t header[12];
    uint64_t len = record->len;
    memcpy(header, &len, 8);
    uint32_t crc = tw_tfrecord_masked_crc(header, 8);
    memcpy(header + 8, &crc, 4);
    g_byte_array_append(file, header, 12);
    g_byte_array_append(file, record->data, record->len);
    crc = tw_tfrecord_masked_crc(record->data, record->len);
    g_byte_array_append(file, (const uint8_t *)&crc, 4);
    g_byte_array_unref(record);
}

static char *scratch_dir(void)
{
    return g_dir_make_tmp("twb-tfevents-XXXXXX", NULL);
}

static char *write_file(const char *dir, const char *name, const GByteArray *bytes, size_t n)
{
    char *path = g_build_filename(dir, name, NULL);
    g_assert_true(g_file_set_contents(path, (const char *)bytes->data, (gssize)MIN(n, bytes->len), NULL));
    return path;
}

static GByteArray *three_scalars(void)
{
    GByteArray *f = g_byte_array_new();
    GByteArray *v0 = event(100.0, 0);
    put_string(v0, 3, "brain.Event:2");
    frame(f, v0);
    frame(f, scalar_event(101.0, 1, "loss", 0.5f));
    frame(f, scalar_event(102.0, 2, "loss", 0.25f));
    frame(f, scalar_event(103.0, 3, "loss", 0.125f));
    return f;
}

/* ---- framing -------------------------------------------------------------------- */
static void test_crc32c(void)
{
    /* RFC 3720's check value for "123456789". */
    g_assert_cmphex(tw_crc32c(0, "123456789", 9), ==, 0xe3069283);
    uint8_t zeros[32] = {0};
    g_assert_cmphex(tw_crc32c(0, zeros, 32), ==, 0x8a9136aa);
    /* In pieces as in one go. */
    g_assert_cmphex(tw_crc32c(tw_crc32c(0, "1234", 4), "56789", 5), ==, 0xe3069283);
}

static void test_cut_everywhere(void)
{
    char *dir = scratch_dir();
    GByteArray *f = three_scalars();
    for (size_t n = 0; n <= f->len; n++) {
        char *path = write_file(dir, "events.out.tfevents.cut", f, n);
        reading r;
        read_file(path, &r);
        /* Whole records before the cut are read; a cut inside a record is
         * reported once, naming the file and the record's offset. */
        int whole = 0;
        size_t end = 0;
        while (end < f->len) {
            uint64_t len;
            memcpy(&len, f->data + end, 8);
            if (end + 16 + len > n)
                break;
            end += 16 + len;
            whole++;
        }
        bool cut = end < n;
        g_assert_cmpint(r.records, ==, whole);
        g_assert_cmpint(r.again, ==, cut ? 1 : 0);
        g_assert_cmpuint(r.warnings->len, ==, cut ? 1 : 0);
        if (cut) {
            char *where = g_strdup_printf("%s: offset %zu: the file ends inside a record", path, end);
            g_assert_true(warned(&r, where));
            g_free(where);
        }
        reading_clear(&r);
        g_free(path);
    }
    reading r;
    char *path = write_file(dir, "events.out.tfevents.cut", f, f->len);
    read_file(path, &r);
    g_assert_cmpint(r.records, ==, 4);
    g_assert_cmpuint(r.warnings->len, ==, 0);
    reading_clear(&r);
    g_free(path);
    g_byte_array_unref(f);
    scratch_remove_tree(dir);
    g_free(dir);
}

/* A live file: the writer has written part of a record. The reader waits
 * (AGAIN, no warning) and reads it whole once the rest arrives. */
static void test_live_torn_record(void)
{
    char *dir = scratch_dir();
    GByteArray *f = three_scalars();
    char *path = g_build_filename(dir, "events.out.tfevents.live", NULL);
    FILE *out = fopen(path, "wb");
    size_t cut = f->len - 7;
    fwrite(f->data, 1, cut, out);
    fflush(out);
    reading r;
    reading_init(&r);
    tw_tfrecord_reader *rd = tw_tfrecord_open(path, on_warning, &r);
    const uint8_t *data;
    size_t n;
    uint64_t offset;
    for (int i = 0; i < 3; i++)
        g_assert_cmpint(tw_tfrecord_next(rd, &data, &n, &offset), ==, TW_TFRECORD_OK);
    g_assert_cmpint(tw_tfrecord_next(rd, &data, &n, &offset), ==, TW_TFRECORD_AGAIN);
    g_assert_cmpint(tw_tfrecord_next(rd, &data, &n, &offset), ==, TW_TFRECORD_AGAIN);
    fwrite(f->data + cut, 1, f->len - cut, out);
    fclose(out);
    g_assert_cmpint(tw_tfrecord_next(rd, &data, &n, &offset), ==, TW_TFRECORD_OK);
    g_assert_cmpint(tw_tfrecord_next(rd, &data, &n, &offset), ==, TW_TFRECORD_END);
    g_assert_cmpuint(r.warnings->len, ==, 0);
    tw_tfrecord_close(rd);
    reading_clear(&r);
    g_free(path);
    g_byte_array_unref(f);
    scratch_remove_tree(dir);
    g_free(dir);
}

static void test_bad_crcs(void)
{
    char *dir = scratch_dir();
    GByteArray *f = three_scalars();
    /* Record offsets: find them by reading the good file. */
    char *path = write_file(dir, "events.out.tfevents.good", f, f->len);
    reading r;
    read_file(path, &r);
    g_assert_cmpint(r.records, ==, 4);
    uint64_t second = item_at(&r, 1)->offset, third = item_at(&r, 2)->offset;
    reading_clear(&r);
    g_free(path);

    /* A byte of the second record's data changed: that record is skipped,
     * named by its offset; the others are read. */
    GByteArray *bad = g_byte_array_new();
    g_byte_array_append(bad, f->data, f->len);
    bad->data[second + 14] ^= 0x40;
    path = write_file(dir, "events.out.tfevents.data", bad, bad->len);
    read_file(path, &r);
    g_assert_cmpint(r.records, ==, 3);
    char *where = g_strdup_printf("%s: offset %llu: the record's data", path, (unsigned long long)second);
    g_assert_true(warned(&r, where));
    g_free(where);
    g_assert_cmpuint(r.warnings->len, ==, 1);
    reading_clear(&r);
    g_free(path);

    /* Its length's checksum broken: the reader scans to the next valid
     * header and goes on from there. */
    memcpy(bad->data, f->data, f->len);
    bad->data[second + 9] ^= 0x01;
    path = write_file(dir, "events.out.tfevents.length", bad, bad->len);
    read_file(path, &r);
    print_warnings(&r);
    g_assert_cmpint(r.records, ==, 3);
    where = g_strdup_printf("offset %llu: the record header's checksum", (unsigned long long)second);
    g_assert_true(warned(&r, where));
    g_free(where);
    where = g_strdup_printf("records go on at offset %llu", (unsigned long long)third);
    g_assert_true(warned(&r, where));
    g_free(where);
    reading_clear(&r);
    g_free(path);
    g_byte_array_unref(bad);
    g_byte_array_unref(f);
    scratch_remove_tree(dir);
    g_free(dir);
}

/* A header announcing 2^63 bytes (with a checksum that holds), then good
 * records: refused, and the rest read. */
static void test_huge_length(void)
{
    char *dir = scratch_dir();
    GByteArray *f = g_byte_array_new();
    uint8_t header[12];
    uint64_t len = (uint64_t)1 << 63;
    memcpy(header, &len, 8);
    uint32_t crc = tw_tfrecord_masked_crc(header, 8);
    memcpy(header + 8, &crc, 4);
    g_byte_array_append(f, header, 12);
    GByteArray *rest = three_scalars();
    g_byte_array_append(f, rest->data, rest->len);
    g_byte_array_unref(rest);
    char *path = write_file(dir, "events.out.tfevents.huge", f, f->len);
    reading r;
    read_file(path, &r);
    print_warnings(&r);
    g_assert_cmpint(r.records, ==, 4);
    g_assert_true(warned(&r, "offset 0: a record length of 9223372036854775808 bytes is beyond"));
    reading_clear(&r);
    g_free(path);
    g_byte_array_unref(f);
    scratch_remove_tree(dir);
    g_free(dir);
}

/* A length of 100 MB with a checksum that holds, in a small file: read as
 * a record cut short, and the records after it still read. (That no
 * buffer of 100 MB is allocated for it is what the fuzz corpus's
 * crash-oom-lying-length checks, under libFuzzer's malloc limit.) */
static void test_lying_length(void)
{
    char *dir = scratch_dir();
    GByteArray *f = g_byte_array_new();
    uint8_t header[12];
    uint64_t len = 100u << 20;
    memcpy(header, &len, 8);
    uint32_t crc = tw_tfrecord_masked_crc(header, 8);
    memcpy(header + 8, &crc, 4);
    g_byte_array_append(f, header, 12);
    GByteArray *rest = three_scalars();
    g_byte_array_append(f, rest->data, rest->len);
    g_byte_array_unref(rest);
    char *path = write_file(dir, "events.out.tfevents.lying", f, f->len);
    reading r;
    read_file(path, &r);
    print_warnings(&r);
    g_assert_cmpint(r.records, ==, 4);
    g_assert_true(warned(&r, "offset 0: the file ends inside a record"));
    g_assert_true(warned(&r, "a valid record follows at offset 12"));
    reading_clear(&r);
    g_free(path);
    g_byte_array_unref(f);
    scratch_remove_tree(dir);
    g_free(dir);
}

static void test_garbage(void)
{
    char *dir = scratch_dir();
    GByteArray *f = g_byte_array_new();
    GRand *rand = g_rand_new_with_seed(7);
    for (int i = 0; i < 100000; i++) {
        uint8_t b = (uint8_t)g_rand_int(rand);
        g_byte_array_append(f, &b, 1);
    }
    g_rand_free(rand);
    /* Garbage, then a good file, then garbage again. */
    GByteArray *good = three_scalars();
    g_byte_array_append(f, good->data, good->len);
    g_byte_array_append(f, (const uint8_t *)"trailing rubbish", 16);
    char *path = write_file(dir, "events.out.tfevents.garbage", f, f->len);
    reading r;
    read_file(path, &r);
    print_warnings(&r);
    g_assert_cmpint(r.records, ==, 4);
    g_assert_true(warned(&r, "offset 0: the record header's checksum does not match"));
    g_assert_true(warned(&r, "records go on at offset 100000"));
    g_assert_cmpuint(r.items->len, ==, 4);
    reading_clear(&r);
    g_free(path);
    g_byte_array_unref(good);
    g_byte_array_unref(f);
    scratch_remove_tree(dir);
    g_free(dir);
}

/* ---- decoding -------------------------------------------------------------------- */
static void decode_one(GByteArray *record, reading *r)
{
    tw_tb_decoder *d = tw_tb_decoder_new("test.tfevents", on_warning, r);
    tw_tb_decode_event(d, record->data, record->len, 40, on_item, r);
    tw_tb_decoder_free(d);
    g_byte_array_unref(record);
}

static GByteArray *tensor(int dtype, const int64_t *dims, int rank)
{
    GByteArray *t = g_byte_array_new(), *shape = g_byte_array_new();
    put_key(t, 1, 0);
    put_varint(t, (uint64_t)dtype);
    for (int i = 0; i < rank; i++) {
        GByteArray *dim = g_byte_array_new();
        put_key(dim, 1, 0);
        put_varint(dim, (uint64_t)dims[i]);
        put_message(shape, 2, dim);
    }
    put_message(t, 2, shape);
    return t;
}

static void test_tf2_values(void)
{
    reading r;
    reading_init(&r);
    GByteArray *e = event(5.0, 7), *s = g_byte_array_new();
    /* A float scalar in tensor_content, a double one in double_val. */
    GByteArray *v = value("epoch_loss", "scalars"), *t = tensor(1, NULL, 0);
    float f32 = 2.5f;
    put_bytes(t, 4, &f32, 4);
    put_message(v, 8, t);
    put_message(s, 1, v);
    v = value("lr", "scalars");
    t = tensor(2, NULL, 0);
    put_double(t, 6, 0.001);
    put_message(v, 8, t);
    put_message(s, 1, v);
    /* A [2, 3] histogram. */
    v = value("w", "histograms");
    t = tensor(2, (int64_t[]){2, 3}, 2);
    double rows[6] = {-1, 0, 3, 0, 2, 5};
    put_bytes(t, 4, rows, sizeof rows);
    put_message(v, 8, t);
    put_message(s, 1, v);
    /* Text. */
    v = value("notes", "text");
    t = tensor(7, NULL, 0);
    put_string(t, 8, "**bold** move");
    put_message(v, 8, t);
    put_message(s, 1, v);
    /* Images: [width, height, png, not-a-png]. */
    static const uint8_t png[33] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n', 0, 0, 0, 13, 'I', 'H', 'D', 'R',
                                    0, 0, 0, 4, 0, 0, 0, 3, 8, 2, 0, 0, 0, 1, 2, 3, 4};
    v = value("pics", "images");
    t = tensor(7, (int64_t[]){4}, 1);
    put_string(t, 8, "4");
    put_string(t, 8, "3");
    put_bytes(t, 8, png, sizeof png);
    put_string(t, 8, "<html>not an image</html>");
    put_message(v, 8, t);
    put_message(s, 1, v);
    put_message(e, 5, s);
    decode_one(e, &r);
    print_warnings(&r);
    g_assert_cmpuint(r.items->len, ==, 5);
    g_assert_cmpint(item_at(&r, 0)->kind, ==, TW_TB_SCALAR);
    g_assert_cmpfloat(item_at(&r, 0)->value, ==, 2.5);
    g_assert_cmpint(item_at(&r, 0)->step, ==, 7);
    g_assert_cmpfloat(item_at(&r, 1)->value, ==, 0.001);
    item *h = item_at(&r, 2);
    g_assert_cmpint(h->kind, ==, TW_TB_HISTOGRAM);
    g_assert_cmpint(h->nbuckets, ==, 2);
    g_assert_cmpfloat(h->hnum, ==, 8);
    g_assert_cmpfloat(h->hmin, ==, -1);
    g_assert_cmpfloat(h->hmax, ==, 2);
    g_assert_true(isnan(h->hsum));
    g_assert_cmpint(item_at(&r, 3)->kind, ==, TW_TB_TEXT);
    g_assert_cmpstr(item_at(&r, 3)->text, ==, "**bold** move");
    g_assert_cmpint(item_at(&r, 4)->kind, ==, TW_TB_IMAGE);
    g_assert_cmpint(item_at(&r, 4)->width, ==, 4);
    g_assert_cmpint(item_at(&r, 4)->height, ==, 3);
    /* The second image is not one: named, with the record's offset. */
    g_assert_cmpuint(r.warnings->len, ==, 1);
    g_assert_true(warned(&r, "test.tfevents: offset 40: tag 'pics', step 7: an image that is not a PNG, JPEG or GIF"));
    reading_clear(&r);
}

/* A tag's plugin arrives with its first value only; later values of the
 * tag are read by it. */
static void test_plugin_remembered(void)
{
    reading r;
    reading_init(&r);
    tw_tb_decoder *d = tw_tb_decoder_new("test.tfevents", on_warning, &r);
    for (int i = 0; i < 3; i++) {
        GByteArray *e = event(1.0 + i, i), *v = value("acc", i == 0 ? "scalars" : NULL), *t = tensor(1, NULL, 0);
        float x = 0.5f + (float)i;
        put_bytes(t, 4, &x, 4);
        put_message(v, 8, t);
        put_message(e, 5, summary_of(v));
        tw_tb_decode_event(d, e->data, e->len, 0, on_item, &r);
        g_byte_array_unref(e);
    }
    tw_tb_decoder_free(d);
    g_assert_cmpuint(r.items->len, ==, 3);
    for (int i = 0; i < 3; i++) {
        g_assert_cmpint(item_at(&r, i)->kind, ==, TW_TB_SCALAR);
        g_assert_cmpstr(item_at(&r, i)->plugin, ==, "scalars");
    }
    g_assert_cmpfloat(item_at(&r, 2)->value, ==, 2.5);
    reading_clear(&r);
}

static GByteArray *hparams_value(const char *tag, GByteArray *plugin_data)
{
    GByteArray *v = g_byte_array_new(), *pd = g_byte_array_new(), *md = g_byte_array_new();
    put_string(v, 1, tag);
    put_string(pd, 1, "hparams");
    put_message(pd, 2, plugin_data);
    put_message(md, 1, pd);
    put_message(v, 9, md);
    return v;
}

static void test_hparams_and_events(void)
{
    reading r;
    reading_init(&r);
    /* session_start_info{hparams{"lr": 0.01}, hparams{"opt": "adam"}} */
    GByteArray *start = g_byte_array_new(), *info = g_byte_array_new();
    GByteArray *entry = g_byte_array_new(), *val = g_byte_array_new();
    put_string(entry, 1, "lr");
    put_double(val, 2, 0.01);
    put_message(entry, 2, val);
    put_message(info, 1, entry);
    entry = g_byte_array_new();
    val = g_byte_array_new();
    put_string(entry, 1, "opt");
    put_string(val, 3, "adam");
    put_message(entry, 2, val);
    put_message(info, 1, entry);
    put_message(start, 3, info);
    GByteArray *end = g_byte_array_new(), *end_info = g_byte_array_new();
    put_key(end_info, 1, 0);
    put_varint(end_info, 1);
    put_double(end_info, 2, 50.0);
    put_message(end, 4, end_info);
    GByteArray *s = g_byte_array_new();
    put_message(s, 1, hparams_value("_hparams_/session_start_info", start));
    put_message(s, 1, hparams_value("_hparams_/session_end_info", end));
    GByteArray *e = event(9.0, 0);
    put_message(e, 5, s);
    decode_one(e, &r);
    print_warnings(&r);
    g_assert_cmpuint(r.items->len, ==, 2);
    g_assert_cmpint(item_at(&r, 0)->kind, ==, TW_TB_HPARAMS_START);
    g_assert_cmpstr(item_at(&r, 0)->text, ==, "{\"lr\":0.01,\"opt\":\"adam\"}");
    g_assert_cmpint(item_at(&r, 1)->kind, ==, TW_TB_HPARAMS_END);
    g_assert_cmpstr(item_at(&r, 1)->text, ==, "{\"status\":\"success\",\"end_time\":50.0}");

    /* session_log (checkpoint), an event without wall time. */
    e = event(NAN, 3);
    GByteArray *log = g_byte_array_new();
    put_key(log, 1, 0);
    put_varint(log, 3);
    put_string(log, 2, "/ckpt/model-3");
    put_message(e, 7, log);
    decode_one(e, &r);
    item *it = item_at(&r, 2);
    g_assert_cmpint(it->kind, ==, TW_TB_SESSION_LOG);
    g_assert_cmpint(it->session_status, ==, 3);
    g_assert_cmpstr(it->text, ==, "/ckpt/model-3");
    g_assert_true(isnan(it->wall_time));
    g_assert_cmpint(it->step, ==, 3);
    g_assert_cmpuint(r.warnings->len, ==, 0);
    reading_clear(&r);
}

static void test_bad_messages(void)
{
    reading r;
    reading_init(&r);
    /* step (field 2, int64) sent length-delimited: the field is named. */
    GByteArray *e = g_byte_array_new();
    put_double(e, 1, 1.0);
    put_string(e, 2, "seven");
    decode_one(e, &r);
    g_assert_cmpuint(r.items->len, ==, 0);
    g_assert_true(warned(&r, "test.tfevents: offset 40: not an Event message: field 2 (step) of tensorflow.Event: "
                             "wire type 2 (length-delimited) where int64 takes varint"));

    /* Unknown fields anywhere are skipped without a word. */
    g_ptr_array_set_size(r.warnings, 0);
    e = scalar_event(2.0, 1, "loss", 1.5f);
    put_key(e, 15, 0);
    put_varint(e, 12345);
    put_string(e, 99, "from a newer TensorFlow");
    decode_one(e, &r);
    g_assert_cmpuint(r.warnings->len, ==, 0);
    g_assert_cmpuint(r.items->len, ==, 1);
    g_assert_cmpfloat(item_at(&r, 0)->value, ==, 1.5);

    /* 100,000 nested list values in an hparams value: refused before
     * protobuf-c recurses into them; the event's other value still read. */
    GByteArray *nested = g_byte_array_new();
    for (int i = 0; i < 100000; i++) {
        GByteArray *list = g_byte_array_new(), *outer = g_byte_array_new();
        if (nested->len)
            put_message(list, 1, nested); /* ListValue.values = Value */
        else
            g_byte_array_unref(nested);
        put_message(outer, 6, list); /* Value.list_value */
        nested = outer;
    }
    GByteArray *start = g_byte_array_new(), *info = g_byte_array_new(), *entry = g_byte_array_new();
    put_string(entry, 1, "deep");
    put_message(entry, 2, nested);
    put_message(info, 1, entry);
    put_message(start, 3, info);
    GByteArray *s = g_byte_array_new();
    put_message(s, 1, hparams_value("_hparams_/session_start_info", start));
    GByteArray *v = value("loss", NULL);
    put_float(v, 2, 4.0f);
    put_message(s, 1, v);
    e = event(3.0, 2);
    put_message(e, 5, s);
    decode_one(e, &r);
    print_warnings(&r);
    g_assert_true(warned(&r, "tag '_hparams_/session_start_info', step 2: messages nested more than 100 deep"));
    g_assert_cmpuint(r.items->len, ==, 2);
    g_assert_cmpfloat(item_at(&r, 1)->value, ==, 4.0);

    /* A PNG signature with nothing after it. */
    g_ptr_array_set_size(r.warnings, 0);
    GByteArray *img = g_byte_array_new();
    put_key(img, 1, 0), put_varint(img, 10);
    put_key(img, 2, 0), put_varint(img, 10);
    put_bytes(img, 4, "\x89PNG\r\n\x1a\n", 8);
    v = value("pic", NULL);
    put_message(v, 4, img);
    e = event(4.0, 3);
    put_message(e, 5, summary_of(v));
    decode_one(e, &r);
    g_assert_cmpuint(r.items->len, ==, 2);
    g_assert_true(warned(&r, "tag 'pic', step 3: a PNG signature without a valid IHDR chunk"));

    /* A histogram whose shape claims 10^8 rows, with one value: refused
     * before any memory is taken for the rows. */
    g_ptr_array_set_size(r.warnings, 0);
    v = value("w", "histograms");
    GByteArray *t = tensor(2, (int64_t[]){100000000, 3}, 2);
    put_double(t, 6, 1.0);
    put_message(v, 8, t);
    e = event(5.0, 4);
    put_message(e, 5, summary_of(v));
    decode_one(e, &r);
    g_assert_cmpuint(r.items->len, ==, 2);
    g_assert_true(warned(&r, "tag 'w', step 4: a [100000000, 3] histogram tensor with 1 values; left out"));
    reading_clear(&r);
}

/* ---- importing ------------------------------------------------------------------ */
static void test_import(void)
{
    char *dir = scratch_dir();
    char *run_a = g_build_filename(dir, "logs", "a", NULL), *run_b = g_build_filename(dir, "logs", "b", "train", NULL);
    g_assert_cmpint(g_mkdir_with_parents(run_a, 0700), ==, 0);
    g_assert_cmpint(g_mkdir_with_parents(run_b, 0700), ==, 0);
    /* Run a: 2000 points (several chunks) with one event lacking its wall
     * time; run b: a histogram and a text. */
    GByteArray *f = g_byte_array_new();
    for (int i = 0; i < 2000; i++)
        frame(f, scalar_event(i == 1000 ? NAN : 1000.0 + i, i, "loss", (float)i * 0.5f));
    g_free(write_file(run_a, "events.out.tfevents.1.host", f, f->len));
    g_byte_array_unref(f);
    f = g_byte_array_new();
    GByteArray *e = event(50.0, 4), *v = value("w", NULL), *h = g_byte_array_new();
    put_double(h, 1, -2.0);
    put_double(h, 2, 2.0);
    put_double(h, 3, 4.0);
    put_double(h, 4, 1.0);
    put_double(h, 5, 10.0);
    double limits[3] = {-1.0, 0.0, 1.7976931348623157e308}, counts[3] = {1, 0, 3};
    put_bytes(h, 6, limits, sizeof limits);
    put_bytes(h, 7, counts, sizeof counts);
    put_message(v, 5, h);
    put_message(e, 5, summary_of(v));
    frame(f, e);
    e = event(51.0, 5);
    v = value("notes", "text");
    GByteArray *t = tensor(7, NULL, 0);
    put_string(t, 8, "hello");
    put_message(v, 8, t);
    put_message(e, 5, summary_of(v));
    frame(f, e);
    g_free(write_file(run_b, "events.out.tfevents.2.host", f, f->len));
    g_byte_array_unref(f);

    char *logdir = g_build_filename(dir, "logs", NULL), *db = g_build_filename(dir, "runs.db", NULL);
    char **runs = tw_tb_list_runs(logdir);
    g_assert_nonnull(runs);
    g_assert_cmpuint(g_strv_length(runs), ==, 2);
    g_assert_cmpstr(runs[0], ==, "a");
    g_assert_cmpstr(runs[1], ==, "b/train");
    g_strfreev(runs);

    reading warnings;
    reading_init(&warnings);
    tw_tb_import_stats stats;
    g_assert_cmpint(tw_tb_import(logdir, db, on_warning, &warnings, &stats), ==, 0);
    print_warnings(&warnings);
    g_assert_cmpint(stats.runs, ==, 2);
    g_assert_cmpint(stats.scalars, ==, 2000);
    g_assert_cmpint(stats.histograms, ==, 1);
    g_assert_cmpint(stats.texts, ==, 1);
    g_assert_cmpint(stats.warnings, ==, 0);

    tw_run_store *store = tw_run_store_open(db, TW_STORE_READ_ONLY);
    g_assert_nonnull(store);
    tw_run_info info;
    g_assert_cmpint(tw_run_store_get_run(store, "a", &info), ==, 0);
    g_assert_cmpint(info.status, ==, TW_RUN_FINISHED);
    g_assert_cmpfloat(info.start_time, ==, 1000.0);
    g_assert_cmpfloat(info.end_time, ==, 2999.0);
    int64_t tag = tw_run_store_find_tag(store, info.id, "loss");
    tw_run_info_clear(&info);
    tw_series_cursor cursor = {0};
    tw_scalar_point *points;
    int64_t n;
    g_assert_cmpint(tw_run_store_read_scalars(store, tag, &cursor, 0, &points, &n), ==, 0);
    g_assert_cmpint(n, ==, 2000);
    for (int i = 0; i < 2000; i++) {
        g_assert_cmpint(points[i].step, ==, i);
        g_assert_cmpfloat(points[i].value, ==, (float)i * 0.5f);
        /* the event without a wall time takes the one before it */
        g_assert_cmpfloat(points[i].wall_time, ==, i == 1000 ? 1999.0 : 1000.0 + i);
    }
    g_free(points);

    g_assert_cmpint(tw_run_store_get_run(store, "b/train", &info), ==, 0);
    tag = tw_run_store_find_tag(store, info.id, "w");
    tw_histogram *hs;
    int nh;
    g_assert_cmpint(tw_run_store_read_histograms(store, tag, 0, 100, 0, &hs, &nh), ==, 0);
    g_assert_cmpint(nh, ==, 1);
    g_assert_cmpfloat(hs[0].count, ==, 4);
    g_assert_cmpfloat(hs[0].min, ==, -2.0);
    g_assert_cmpfloat(hs[0].max, ==, 2.0);
    g_assert_cmpfloat(hs[0].sum, ==, 1.0);
    double total = 0, below_minus_one = 0;
    for (int i = 0; i < hs[0].nbuckets; i++) {
        total += hs[0].buckets[i];
        if (i < hs[0].nbuckets / 4)
            below_minus_one += hs[0].buckets[i];
    }
    g_assert_cmpfloat_with_epsilon(total, 4.0, 1e-9);
    /* [-2, -1] holds one value: the first quarter of [-2, 2]. */
    g_assert_cmpfloat_with_epsilon(below_minus_one, 1.0, 1e-9);
    tw_histogram_free(hs, nh);
    tag = tw_run_store_find_tag(store, info.id, "notes");
    tw_text_record *texts;
    int nt;
    tw_series_cursor tc = {0};
    g_assert_cmpint(tw_run_store_read_texts(store, tag, &tc, &texts, &nt), ==, 0);
    g_assert_cmpint(nt, ==, 1);
    g_assert_cmpstr(texts[0].text, ==, "hello");
    g_assert_cmpint(texts[0].step, ==, 5);
    tw_text_record_free(texts, nt);
    tw_run_info_clear(&info);
    tw_run_store_close(store);

    /* A second import of the same directory: the names are taken. */
    g_assert_cmpint(tw_tb_import(logdir, db, on_warning, &warnings, &stats), ==, 0);
    g_assert_cmpint(stats.refused_runs, ==, 2);
    g_assert_true(warned(&warnings, "a run named 'a' is already in the file"));
    reading_clear(&warnings);

    /* Not a directory. */
    g_assert_cmpint(tw_tb_import(db, db, NULL, NULL, &stats), ==, -1);
    g_assert_nonnull(strstr(tw_last_error(), "not a folder"));
    tw_error_clear();

    g_free(logdir);
    g_free(db);
    g_free(run_a);
    g_free(run_b);
    scratch_remove_tree(dir);
    g_free(dir);
}

/* The Keras callback's model config (plugin graph_keras_model), imported
 * as the run's model_json, opens as a model: the corpus's TF2 run builds
 * with 1,292,935 parameters (counted by hand from the config: conv2d 320,
 * conv2d_1 18,496, conv2d_2 73,856, conv2d_3 147,584, dense 1,049,088,
 * dense_1 3,591) and 7 outputs, and each Conv2D and Dense layer has as
 * many as TensorFlow's own weight histograms of that run hold values
 * (layer/kernel_0 and layer/bias_0). */
/* A file of one event holding the hparams plugin's data (field 2: the
 * experiment, 3: a session's start). */
static GByteArray *hparams_file(int field, GByteArray *data)
{
    GByteArray *plugin_data = g_byte_array_new(), *s = g_byte_array_new(), *f = g_byte_array_new();
    put_message(plugin_data, field, data);
    put_message(s, 1, hparams_value(field == 2 ? "_hparams_/experiment" : "_hparams_/session_start_info", plugin_data));
    GByteArray *e = event(10.0, 0);
    put_message(e, 5, s);
    frame(f, e);
    return f;
}

static void write_run(const char *logdir, const char *run, GByteArray *file)
{
    char *dir = g_build_filename(logdir, run, NULL);
    g_assert_cmpint(g_mkdir_with_parents(dir, 0700), ==, 0);
    g_free(write_file(dir, "events.out.tfevents.1.test", file, file->len));
    g_byte_array_unref(file);
    g_free(dir);
}

static char *metrics_of(const char *db, const char *run)
{
    tw_run_store *store = tw_run_store_open(db, TW_STORE_READ_ONLY);
    g_assert_nonnull(store);
    tw_run_info info;
    g_assert_cmpint(tw_run_store_get_run(store, run, &info), ==, 0);
    char *metrics = g_strdup(info.metrics_json);
    tw_run_info_clear(&info);
    tw_run_store_close(store);
    return metrics;
}

/* Imported runs get the last value of the metrics the hparams experiment
 * names (a tag of the session's run or of its group's subfolder run), and
 * without an experiment every scalar tag's last value, in Keras's names. */
static void test_import_metrics(void)
{
    char *logdir = scratch_dir(), *db = g_build_filename(logdir, "runs.db", NULL);
    /* Experiment{metric_infos{name{group "validation", tag "epoch_accuracy"}},
     * metric_infos{name{tag "loss"}}}, at the log directory's root */
    GByteArray *experiment = g_byte_array_new(), *info = g_byte_array_new(), *name = g_byte_array_new();
    put_string(name, 1, "validation");
    put_string(name, 2, "epoch_accuracy");
    put_message(info, 1, name);
    put_message(experiment, 5, info);
    info = g_byte_array_new(), name = g_byte_array_new();
    put_string(name, 2, "loss");
    put_message(info, 1, name);
    put_message(experiment, 5, info);
    write_run(logdir, ".", hparams_file(2, experiment));
    /* session "s1": hparams{"lr": 0.1}, its own loss, a validation folder */
    GByteArray *start = g_byte_array_new(), *entry = g_byte_array_new(), *val = g_byte_array_new();
    put_string(entry, 1, "lr");
    put_double(val, 2, 0.1);
    put_message(entry, 2, val);
    put_message(start, 3, entry);
    GByteArray *session = hparams_file(3, start);
    frame(session, scalar_event(11.0, 1, "loss", 0.75f));
    frame(session, scalar_event(12.0, 2, "loss", 0.5f));
    frame(session, scalar_event(12.0, 2, "other", 3.0f));
    write_run(logdir, "s1", session);
    GByteArray *validation = g_byte_array_new();
    frame(validation, scalar_event(11.0, 1, "epoch_accuracy", 0.25f));
    frame(validation, scalar_event(12.0, 2, "epoch_accuracy", 0.625f));
    write_run(logdir, "s1/validation", validation);

    tw_tb_import_stats stats;
    g_assert_cmpint(tw_tb_import(logdir, db, NULL, NULL, &stats), ==, 0);
    char *metrics = metrics_of(db, "s1");
    g_assert_cmpstr(metrics, ==, "{\"val_accuracy\":0.625,\"loss\":0.5}");
    g_free(metrics);
    metrics = metrics_of(db, "s1/validation"); /* no session: the experiment's metrics are the sessions' */
    g_assert_null(metrics);

    /* No experiment (a Keras callback's runs alone): each run's own tags. */
    char *other = scratch_dir(), *db2 = g_build_filename(other, "runs.db", NULL);
    GByteArray *train = g_byte_array_new();
    frame(train, scalar_event(11.0, 1, "epoch_loss", 0.75f));
    frame(train, scalar_event(12.0, 2, "epoch_loss", 0.25f));
    write_run(other, "a/train", train);
    /* an exported twb run's tags */
    GByteArray *own = g_byte_array_new();
    frame(own, scalar_event(12.0, 2, "epoch/loss", 0.25f));
    frame(own, scalar_event(12.0, 2, "validation/loss", 0.5f));
    frame(own, scalar_event(12.0, 2, "train/loss", 0.75f));
    write_run(other, "b", own);
    validation = g_byte_array_new();
    frame(validation, scalar_event(12.0, 2, "epoch_loss", 0.5f));
    frame(validation, scalar_event(12.0, 2, "epoch_accuracy", 0.875f));
    write_run(other, "a/validation", validation);
    g_assert_cmpint(tw_tb_import(other, db2, NULL, NULL, &stats), ==, 0);
    metrics = metrics_of(db2, "a/train");
    g_assert_cmpstr(metrics, ==, "{\"loss\":0.25}");
    g_free(metrics);
    metrics = metrics_of(db2, "a/validation");
    g_assert_cmpstr(metrics, ==, "{\"val_accuracy\":0.875,\"val_loss\":0.5}");
    g_free(metrics);
    metrics = metrics_of(db2, "b");
    g_assert_cmpstr(metrics, ==, "{\"loss\":0.25,\"train/loss\":0.75,\"val_loss\":0.5}");
    g_free(metrics);
    scratch_remove_tree(other);
    scratch_remove_tree(logdir);
    g_free(db2), g_free(other), g_free(db), g_free(logdir);
}

static void test_keras_model_config(void)
{
    char *corpus = corpus_dir(), *logdir = g_build_filename(corpus, "tf2-keras-callback-histograms", NULL);
    if (!g_file_test(logdir, G_FILE_TEST_IS_DIR)) {
        g_test_skip("the shared corpus (../shared/corpus/tfevents) is not here");
        g_free(corpus), g_free(logdir);
        return;
    }
    char *dir = g_dir_make_tmp("twb-tfevents-XXXXXX", NULL), *db = g_build_filename(dir, "runs.db", NULL);
    tw_tb_import_stats stats;
    g_assert_cmpint(tw_tb_import(logdir, db, NULL, NULL, &stats), ==, 0);
    tw_run_store *store = tw_run_store_open(db, TW_STORE_READ_ONLY);
    g_assert_nonnull(store);
    tw_run_info run = {0};
    g_assert_cmpint(tw_run_store_get_run(store, ".", &run), ==, 0);
    g_assert_nonnull(run.model_json);
    tw_model *model = tw_model_from_json(run.model_json, strlen(run.model_json), "tf2-keras-callback-histograms");
    g_assert_nonnull(model);
    g_assert_cmpint(tw_model_build(model, NULL, 1), ==, 0);
    int64_t total = 0, trainable = 0, frozen = 0;
    g_assert_cmpint(tw_model_count_params(model, &total, &trainable, &frozen), ==, 0);
    g_assert_cmpint(total, ==, 1292935);
    int n = tw_model_nlayers(model);
    tw_layer_info *info = g_new0(tw_layer_info, n);
    const tw_shape *input = tw_model_input_shape(model);
    g_assert_nonnull(input);
    g_assert_cmpint(tw_model_infer(model, input, info), ==, n);
    g_assert_cmpint(info[n - 1].output.ndim, ==, 2);
    g_assert_cmpint(info[n - 1].output.dims[1], ==, 7);
    int checked = 0;
    for (int i = 0; i < n; i++) {
        const char *name = tw_layer_name(tw_model_layer_at(model, i));
        double values = 0;
        for (int w = 0; w < 2; w++) {
            char *tag = g_strdup_printf("%s/%s_0/histogram", name, w ? "bias" : "kernel");
            int64_t id = tw_run_store_find_tag(store, run.id, tag);
            g_free(tag);
            if (id < 0)
                continue;
            tw_histogram *hs;
            int nh;
            g_assert_cmpint(tw_run_store_read_histograms(store, id, INT64_MIN, INT64_MAX, 0, &hs, &nh), ==, 0);
            g_assert_cmpint(nh, >, 0);
            values += hs[0].count;
            tw_histogram_free(hs, nh);
        }
        if (values > 0) {
            g_assert_cmpfloat(values, ==, (double)info[i].trainable_params);
            checked++;
        }
    }
    g_assert_cmpint(checked, ==, 6);
    g_free(info);
    tw_layer_unref(model);
    tw_run_info_clear(&run);
    tw_run_store_close(store);
    scratch_remove_tree(dir);
    g_free(db), g_free(dir), g_free(logdir), g_free(corpus);
}

/* ---- following a live directory ---------------------------------------------- */
static void append(const char *path, GByteArray *bytes, size_t from, size_t to)
{
    FILE *out = fopen(path, "ab");
    g_assert_nonnull(out);
    g_assert_cmpuint(fwrite(bytes->data + from, 1, to - from, out), ==, to - from);
    fclose(out);
}

/* How many points the tag has in the database (0 while the run or tag is
 * not there yet). */
static int64_t points_in(const char *db, const char *run, const char *tag_name)
{
    if (!g_file_test(db, G_FILE_TEST_EXISTS))
        return 0;
    tw_run_store *store = tw_run_store_open(db, TW_STORE_READ_ONLY);
    if (!store) {
        tw_error_clear();
        return 0;
    }
    tw_run_info info;
    int64_t n = 0;
    if (tw_run_store_get_run(store, run, &info) == 0) {
        int64_t tag = tw_run_store_find_tag(store, info.id, tag_name);
        tw_series_cursor cursor = {0};
        tw_scalar_point *points = NULL;
        if (tag >= 0 && tw_run_store_read_scalars(store, tag, &cursor, 0, &points, &n))
            n = 0;
        g_free(points);
        tw_run_info_clear(&info);
    }
    tw_error_clear();
    tw_run_store_close(store);
    return n;
}

/* Wait (a catastrophic bound, not a timing) until the tag has n points. */
static void wait_for_points(const char *db, const char *run, const char *tag, int64_t n)
{
    gint64 deadline = g_get_monotonic_time() + 20 * G_TIME_SPAN_SECOND;
    while (points_in(db, run, tag) != n) {
        g_assert_cmpint(g_get_monotonic_time(), <, deadline);
        g_usleep(2000);
    }
}

static void test_follow(void)
{
    char *dir = scratch_dir();
    char *logdir = g_build_filename(dir, "logs", NULL), *run_a = g_build_filename(logdir, "a", NULL);
    char *db = g_build_filename(dir, "live.db", NULL);
    g_assert_cmpint(g_mkdir_with_parents(run_a, 0700), ==, 0);
    char *file_a = g_build_filename(run_a, "events.out.tfevents.1.host", NULL);
    GByteArray *f = g_byte_array_new();
    for (int i = 0; i < 10; i++)
        frame(f, scalar_event(100.0 + i, i, "loss", (float)i));
    size_t first_part = f->len;
    append(file_a, f, 0, first_part);

    reading warnings;
    reading_init(&warnings);
    tw_tb_follower *follower = tw_tb_follow(logdir, db, on_warning, &warnings);
    g_assert_nonnull(follower);
    wait_for_points(db, "a", "loss", 10);

    /* A writer appends a record in two pieces: the torn half is waited
     * for (no warning), the whole record then read. */
    frame(f, scalar_event(110.0, 10, "loss", 10.0f));
    size_t middle = first_part + 9;
    append(file_a, f, first_part, middle);
    g_usleep(20000);
    g_assert_cmpint(points_in(db, "a", "loss"), ==, 10);
    append(file_a, f, middle, f->len);
    wait_for_points(db, "a", "loss", 11);

    /* A run folder created after the follower started appears. */
    char *run_b = g_build_filename(logdir, "b", "train", NULL);
    g_assert_cmpint(g_mkdir_with_parents(run_b, 0700), ==, 0);
    char *file_b = g_build_filename(run_b, "events.out.tfevents.2.host", NULL);
    GByteArray *g = g_byte_array_new();
    frame(g, scalar_event(200.0, 1, "acc", 0.5f));
    append(file_b, g, 0, g->len);
    wait_for_points(db, "b/train", "acc", 1);

    tw_tb_follower_stop(follower);
    print_warnings(&warnings);
    g_assert_cmpuint(warnings.warnings->len, ==, 0);
    tw_run_store *store = tw_run_store_open(db, TW_STORE_READ_ONLY);
    tw_run_info info;
    g_assert_cmpint(tw_run_store_get_run(store, "a", &info), ==, 0);
    g_assert_cmpint(info.status, ==, TW_RUN_FINISHED);
    g_assert_cmpfloat(info.start_time, ==, 100.0);
    g_assert_cmpfloat(info.end_time, ==, 110.0);
    tw_run_info_clear(&info);
    tw_run_store_close(store);

    reading_clear(&warnings);
    g_byte_array_unref(f);
    g_byte_array_unref(g);
    g_free(file_a);
    g_free(file_b);
    g_free(run_a);
    g_free(run_b);
    g_free(logdir);
    g_free(db);
    scratch_remove_tree(dir);
    g_free(dir);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/tfevents/crc32c", test_crc32c);
    g_test_add_func("/tfevents/corpus", test_corpus);
    g_test_add_func("/tfevents/cut_everywhere", test_cut_everywhere);
    g_test_add_func("/tfevents/live_torn_record", test_live_torn_record);
    g_test_add_func("/tfevents/bad_crcs", test_bad_crcs);
    g_test_add_func("/tfevents/huge_length", test_huge_length);
    g_test_add_func("/tfevents/lying_length", test_lying_length);
    g_test_add_func("/tfevents/garbage", test_garbage);
    g_test_add_func("/tfevents/tf2_values", test_tf2_values);
    g_test_add_func("/tfevents/plugin_remembered", test_plugin_remembered);
    g_test_add_func("/tfevents/hparams_and_events", test_hparams_and_events);
    g_test_add_func("/tfevents/bad_messages", test_bad_messages);
    g_test_add_func("/tfevents/import", test_import);
    g_test_add_func("/tfevents/import_metrics", test_import_metrics);
    g_test_add_func("/tfevents/keras_model_config", test_keras_model_config);
    g_test_add_func("/tfevents/follow", test_follow);
    return g_test_run();
}
