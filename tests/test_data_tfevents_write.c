/* Writing TensorBoard event files: what the summary writer's thread writes
 * (tw_summary_run_options.tfevents_dir) and what `twb runs export --format
 * tfevents` writes (tw_tb_export_run) read back through our own reader
 * (tw_tb_import) exactly as stored — every scalar's bits, histograms,
 * texts, image bytes, hyperparameters — and through an independent
 * decoder, tests/tb_decode.py on Debian's python3-protobuf with
 * descriptors built from the field numbers (skipped, saying so, when
 * python3-protobuf is absent). */
#include <glib.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <tw/engine.h>
#include <tw/model_file.h>
#include <tw/summary.h>
#include <tw/tfevents.h>

#include "scratch_tree.h"

static const char hparams[] = "{\"learning_rate\": 0.001, \"optimizer\": \"adam\", \"deep\": true, "
                              "\"layers\": [64, 32], \"nested\": {\"a\": 1.5}, \"epochs\": 5}";
static const char markdown[] = "# Notes\n\n| a | b |\n|---|---|\n| **1** | é ✓ |\n";
/* A traced graph in twb's JSON (docs/graph_json.md): two inputs, an op of
 * two outputs, one reading the second. */
static const char graph[] =
    "{\"format\": \"twb-graph\", \"version\": 1, \"function\": \"f\", \"inputs\": [0, 1], \"outputs\": [[3, 0]], "
    "\"variables\": [], \"nodes\": ["
    "{\"id\": 0, \"op\": \"input\", \"name\": \"input_0\", \"scope\": \"\", \"inputs\": [], "
    "\"outputs\": [{\"dtype\": \"float32\", \"shape\": [5, 4]}], \"attrs\": {\"ints\": [], \"floats\": []}},"
    "{\"id\": 1, \"op\": \"input\", \"name\": \"input_1\", \"scope\": \"\", \"inputs\": [], "
    "\"outputs\": [{\"dtype\": \"float32\", \"shape\": [4]}], \"attrs\": {\"ints\": [], \"floats\": []}},"
    "{\"id\": 2, \"op\": \"moments\", \"name\": \"m/moments\", \"scope\": \"m\", \"inputs\": [[0, 0]], "
    "\"outputs\": [{\"dtype\": \"float32\", \"shape\": [4]}, {\"dtype\": \"float32\", \"shape\": [4]}], "
    "\"attrs\": {\"ints\": [], \"floats\": []}},"
    "{\"id\": 3, \"op\": \"add\", \"name\": \"m/add\", \"scope\": \"m\", \"inputs\": [[2, 1], [1, 0]], "
    "\"outputs\": [{\"dtype\": \"float32\", \"shape\": [4]}], \"attrs\": {\"ints\": [], \"floats\": []}}]}";

/* ---- a run with every kind ---------------------------------------------------------- */
static const double scalar_values[] = {0.5, -0.0, 1e-300, 4.9e-324, 1.7976931348623157e308, INFINITY, -INFINITY, NAN,
                                       0.1, 3.0};

static int32_t confusion[9] = {5, 1, 0, 2, 7, -1, 0, 0, 2147483647};
static float per_class[6] = {0.5f, 0.25f, 1e-30f, -3.5f, 0.0f, 1.0f};

static void write_everything(tw_summary_writer *w)
{
    tw_scope_begin();
    for (int i = 0; i < (int)G_N_ELEMENTS(scalar_values); i++)
        g_assert_cmpint(tw_summary_scalar(w, "train/loss", scalar_values[i], i * 10), ==, 0);
    tw_rng *rng = tw_rng_new(7);
    for (int s = 0; s < 3; s++)
        g_assert_cmpint(tw_summary_histogram(w, "weights/kernel", tw_random_normal(rng, TW_FLOAT32, TW_SHAPE(40, 30), s, 1),
                                             s * 100),
                        ==, 0);
    tw_rng_free(rng);
    g_assert_cmpint(tw_summary_text(w, "notes", markdown, 1), ==, 0);
    g_assert_cmpint(tw_summary_text(w, "notes", "second", 2), ==, 0);
    uint8_t rgb[2 * 3 * 4 * 3];
    for (size_t i = 0; i < sizeof rgb; i++)
        rgb[i] = (uint8_t)(i * 29 + 3);
    g_assert_cmpint(tw_summary_image(w, "samples", tw_tensor_from_data(rgb, TW_UINT8, TW_SHAPE(2, 3, 4, 3)), 5), ==, 0);
    float gray[6] = {0, 0.25f, 0.5f, 0.75f, 1, 0.1f};
    g_assert_cmpint(tw_summary_image(w, "gray", tw_tensor_from_data(gray, TW_FLOAT32, TW_SHAPE(2, 3, 1)), 6), ==, 0);
    g_assert_cmpint(tw_summary_graph(w, "graph/f", graph, 0), ==, 0);
    /* An evaluation's tables: a confusion matrix and a per-class table. */
    g_assert_cmpint(tw_summary_tensor(w, "eval/confusion", tw_tensor_from_data(confusion, TW_INT32, TW_SHAPE(3, 3)), 7),
                    ==, 0);
    g_assert_cmpint(tw_summary_tensor(w, "eval/per_class", tw_tensor_from_data(per_class, TW_FLOAT32, TW_SHAPE(3, 2)), 7),
                    ==, 0);
    /* Not a twb graph: left out of the event file, which goes on. */
    g_assert_cmpint(tw_summary_graph(w, "graph/other", "{\"x\": 1}", 0), ==, 0);
    tw_scope_end();
}

/* The run written by the summary writer, with an event file beside it. */
static char *write_run(const char *db, const char *dir)
{
    tw_summary_run_options o = {.hparams_json = hparams, .tfevents_dir = dir};
    tw_summary_writer *w = tw_summary_writer_open(db, "run", &o);
    g_assert_nonnull(w);
    char *file = g_strdup(tw_summary_writer_tfevents_path(w));
    g_assert_nonnull(file);
    g_assert_true(g_str_has_prefix(file, dir));
    write_everything(w);
    g_assert_cmpint(tw_summary_writer_close(w, TW_RUN_FINISHED), ==, 0);
    return file;
}

/* ---- comparing two stored runs --------------------------------------------------------- */
static bool same_value(double a, double b)
{
    return (isnan(a) && isnan(b)) || memcmp(&a, &b, sizeof a) == 0;
}

static int64_t tag_id(tw_run_store *s, int64_t run, const char *name)
{
    int64_t id = tw_run_store_find_tag(s, run, name);
    g_assert_cmpint(id, >=, 0);
    return id;
}

static void compare_json(JsonNode *a, JsonNode *b)
{
    g_assert_cmpint(json_node_get_node_type(a), ==, json_node_get_node_type(b));
    if (JSON_NODE_HOLDS_OBJECT(a)) {
        JsonObject *x = json_node_get_object(a), *y = json_node_get_object(b);
        g_assert_cmpuint(json_object_get_size(x), ==, json_object_get_size(y));
        GList *names = json_object_get_members(x);
        for (GList *l = names; l; l = l->next) {
            g_assert_true(json_object_has_member(y, l->data));
            compare_json(json_object_get_member(x, l->data), json_object_get_member(y, l->data));
        }
        g_list_free(names);
    } else if (JSON_NODE_HOLDS_ARRAY(a)) {
        JsonArray *x = json_node_get_array(a), *y = json_node_get_array(b);
        g_assert_cmpuint(json_array_get_length(x), ==, json_array_get_length(y));
        for (guint i = 0; i < json_array_get_length(x); i++)
            compare_json(json_array_get_element(x, i), json_array_get_element(y, i));
    } else if (JSON_NODE_HOLDS_VALUE(a) && json_node_get_value_type(a) == G_TYPE_STRING) {
        g_assert_cmpstr(json_node_get_string(a), ==, json_node_get_string(b));
    } else if (JSON_NODE_HOLDS_VALUE(a) && json_node_get_value_type(a) == G_TYPE_BOOLEAN) {
        g_assert_cmpint(json_node_get_boolean(a), ==, json_node_get_boolean(b));
    } else if (JSON_NODE_HOLDS_VALUE(a)) { /* numbers: 5 and 5.0 are one number */
        g_assert_cmpfloat(json_node_get_double(a), ==, json_node_get_double(b));
    }
}

static void compare_hparams(const char *a, const char *b)
{
    g_assert_nonnull(a);
    g_assert_nonnull(b);
    JsonNode *x = json_from_string(a, NULL), *y = json_from_string(b, NULL);
    g_assert_nonnull(x);
    g_assert_nonnull(y);
    compare_json(x, y);
    json_node_unref(x);
    json_node_unref(y);
}

/* Everything of run_a in db_a is in run_b of db_b, exactly. */
static void compare_runs(const char *db_a, const char *run_a, const char *db_b, const char *run_b)
{
    tw_run_store *a = tw_run_store_open(db_a, TW_STORE_READ_ONLY), *b = tw_run_store_open(db_b, TW_STORE_READ_ONLY);
    g_assert_nonnull(a);
    g_assert_nonnull(b);
    tw_run_info ra, rb;
    g_assert_cmpint(tw_run_store_get_run(a, run_a, &ra), ==, 0);
    g_assert_cmpint(tw_run_store_get_run(b, run_b, &rb), ==, 0);
    compare_hparams(ra.hparams_json, rb.hparams_json);

    tw_series_cursor ca = {0}, cb = {0};
    tw_scalar_point *pa, *pb;
    int64_t na, nb;
    g_assert_cmpint(tw_run_store_read_scalars(a, tag_id(a, ra.id, "train/loss"), &ca, 0, &pa, &na), ==, 0);
    g_assert_cmpint(tw_run_store_read_scalars(b, tag_id(b, rb.id, "train/loss"), &cb, 0, &pb, &nb), ==, 0);
    g_assert_cmpint(na, ==, (int64_t)G_N_ELEMENTS(scalar_values));
    g_assert_cmpint(nb, ==, na);
    for (int64_t i = 0; i < na; i++) {
        g_assert_cmpint(pa[i].step, ==, pb[i].step);
        g_assert_true(same_value(pa[i].value, pb[i].value));
        g_assert_true(same_value(pa[i].value, scalar_values[i]));
        g_assert_cmpfloat(pa[i].wall_time, ==, pb[i].wall_time);
    }
    free(pa);
    free(pb);

    tw_histogram *ha, *hb;
    int nha, nhb;
    g_assert_cmpint(tw_run_store_read_histograms(a, tag_id(a, ra.id, "weights/kernel"), 0, 1000, 0, &ha, &nha), ==, 0);
    g_assert_cmpint(tw_run_store_read_histograms(b, tag_id(b, rb.id, "weights/kernel"), 0, 1000, 0, &hb, &nhb), ==, 0);
    g_assert_cmpint(nha, ==, 3);
    g_assert_cmpint(nhb, ==, nha);
    for (int i = 0; i < nha; i++) {
        g_assert_cmpint(ha[i].step, ==, hb[i].step);
        g_assert_cmpfloat(ha[i].wall_time, ==, hb[i].wall_time);
        g_assert_cmpfloat(ha[i].count, ==, hb[i].count);
        g_assert_cmpfloat(ha[i].min, ==, hb[i].min);
        g_assert_cmpfloat(ha[i].max, ==, hb[i].max);
        g_assert_cmpfloat(ha[i].sum, ==, hb[i].sum);
        g_assert_cmpfloat(ha[i].sum_squares, ==, hb[i].sum_squares);
        g_assert_cmpint(ha[i].nbuckets, ==, hb[i].nbuckets);
        for (int k = 0; k < ha[i].nbuckets; k++)
            g_assert_cmpfloat(ha[i].buckets[k], ==, hb[i].buckets[k]);
    }
    tw_histogram_free(ha, nha);
    tw_histogram_free(hb, nhb);

    tw_text_record *ta, *tb;
    int nta, ntb;
    ca = cb = (tw_series_cursor){0};
    g_assert_cmpint(tw_run_store_read_texts(a, tag_id(a, ra.id, "notes"), &ca, &ta, &nta), ==, 0);
    g_assert_cmpint(tw_run_store_read_texts(b, tag_id(b, rb.id, "notes"), &cb, &tb, &ntb), ==, 0);
    g_assert_cmpint(nta, ==, 2);
    g_assert_cmpint(ntb, ==, 2);
    for (int i = 0; i < nta; i++) {
        g_assert_cmpstr(ta[i].text, ==, tb[i].text);
        g_assert_cmpint(ta[i].step, ==, tb[i].step);
        g_assert_cmpfloat(ta[i].wall_time, ==, tb[i].wall_time);
    }
    tw_text_record_free(ta, nta);
    tw_text_record_free(tb, ntb);

    tw_image_info *ia, *ib;
    int nia, nib;
    g_assert_cmpint(tw_run_store_list_images(a, ra.id, NULL, &ia, &nia), ==, 0);
    g_assert_cmpint(tw_run_store_list_images(b, rb.id, NULL, &ib, &nib), ==, 0);
    g_assert_cmpint(nia, ==, 3);
    g_assert_cmpint(nib, ==, 3);
    for (int i = 0; i < nia; i++) {
        g_assert_cmpstr(ia[i].tag, ==, ib[i].tag);
        g_assert_cmpint(ia[i].step, ==, ib[i].step);
        g_assert_cmpint(ia[i].sample, ==, ib[i].sample);
        g_assert_cmpint(ia[i].width, ==, ib[i].width);
        g_assert_cmpint(ia[i].height, ==, ib[i].height);
        g_assert_cmpstr(ia[i].format, ==, ib[i].format);
        g_assert_cmpfloat(ia[i].wall_time, ==, ib[i].wall_time);
        uint8_t *da, *db;
        size_t sa, sb;
        g_assert_cmpint(tw_run_store_read_image(a, ia[i].id, &da, &sa), ==, 0);
        g_assert_cmpint(tw_run_store_read_image(b, ib[i].id, &db, &sb), ==, 0);
        g_assert_cmpmem(da, sa, db, sb);
        free(da);
        free(db);
    }
    tw_image_info_free(ia, nia);
    tw_image_info_free(ib, nib);
    /* Tensors: the same dtype, shape and values. */
    tw_stored_tensor *xa, *xb;
    char **tags_a, **tags_b;
    int nxa, nxb;
    g_assert_cmpint(tw_run_store_read_run_tensors(a, ra.id, &xa, &tags_a, &nxa), ==, 0);
    g_assert_cmpint(tw_run_store_read_run_tensors(b, rb.id, &xb, &tags_b, &nxb), ==, 0);
    g_assert_cmpint(nxa, ==, 2);
    g_assert_cmpint(nxb, ==, nxa);
    for (int i = 0; i < nxa; i++) {
        g_assert_cmpstr(tags_a[i], ==, tags_b[i]);
        g_assert_cmpstr(xa[i].dtype, ==, xb[i].dtype);
        g_assert_cmpint(xa[i].step, ==, xb[i].step);
        g_assert_cmpint(xa[i].ndim, ==, xb[i].ndim);
        g_assert_cmpmem(xa[i].dims, sizeof(int64_t) * (size_t)xa[i].ndim, xb[i].dims, sizeof(int64_t) * (size_t)xb[i].ndim);
        g_assert_cmpmem(xa[i].values, sizeof(double) * (size_t)xa[i].numel, xb[i].values,
                        sizeof(double) * (size_t)xb[i].numel);
    }
    tw_stored_tensors_free(xa, tags_a, nxa);
    tw_stored_tensors_free(xb, tags_b, nxb);
    tw_run_info_clear(&ra);
    tw_run_info_clear(&rb);
    tw_run_store_close(a);
    tw_run_store_close(b);
}

static char *scratch(void)
{
    GError *error = NULL;
    char *dir = g_dir_make_tmp("twb-tbwrite-XXXXXX", &error);
    g_assert_no_error(error);
    return dir;
}

static void import_back(const char *logdir, const char *db)
{
    tw_tb_import_stats stats;
    g_assert_cmpint(tw_tb_import(logdir, db, NULL, NULL, &stats), ==, 0);
    g_assert_cmpint(stats.warnings, ==, 0);
    g_assert_cmpint(stats.runs, ==, 1);
    g_assert_cmpint(stats.scalars, ==, (int64_t)G_N_ELEMENTS(scalar_values));
    g_assert_cmpint(stats.histograms, ==, 3);
    g_assert_cmpint(stats.texts, ==, 2);
    g_assert_cmpint(stats.images, ==, 3);
    g_assert_cmpint(stats.hparams, ==, 1);
    g_assert_cmpint(stats.graphs, ==, 1); /* stored as the series "graph_def" */
}

/* ---- our reader --------------------------------------------------------------------------- */
static void test_training_writer_round_trip(void)
{
    char *dir = scratch(), *db = g_build_filename(dir, "runs.db", NULL), *tb = g_build_filename(dir, "tb", NULL);
    char *back = g_build_filename(dir, "back.db", NULL);
    g_free(write_run(db, tb));
    import_back(tb, back);
    compare_runs(db, "run", back, ".");
    scratch_remove_tree(dir);
    g_free(back);
    g_free(tb);
    g_free(db);
    g_free(dir);
}

static void test_export_round_trip(void)
{
    char *dir = scratch(), *db = g_build_filename(dir, "runs.db", NULL), *tb = g_build_filename(dir, "tb", NULL);
    char *out = g_build_filename(dir, "exported", NULL), *back = g_build_filename(dir, "back.db", NULL);
    g_free(write_run(db, tb));
    tw_tb_export_stats stats;
    char *file = NULL;
    g_assert_cmpint(tw_tb_export_run(db, "run", out, &file, &stats), ==, 0);
    g_assert_nonnull(file);
    g_assert_cmpint(stats.scalars, ==, (int64_t)G_N_ELEMENTS(scalar_values));
    g_assert_cmpint(stats.histograms, ==, 3);
    g_assert_cmpint(stats.images, ==, 3);
    g_assert_cmpint(stats.texts, ==, 2);
    g_assert_cmpint(stats.hparams, ==, 1);
    g_assert_cmpint(stats.graphs, ==, 1);
    g_assert_cmpint(stats.graphs_left_out, ==, 1);
    g_assert_cmpint(stats.tensors, ==, 2);
    import_back(out, back);
    compare_runs(db, "run", back, ".");

    /* A run that is not there; a folder that cannot be made. */
    g_assert_cmpint(tw_tb_export_run(db, "nope", out, NULL, &stats), ==, -1);
    g_assert_nonnull(strstr(tw_last_error(), "nope"));
    char *blocked = g_build_filename(db, "sub", NULL); /* under a file */
    g_assert_cmpint(tw_tb_export_run(db, "run", blocked, NULL, &stats), ==, -1);
    g_assert_nonnull(strstr(tw_last_error(), blocked));
    g_free(blocked);
    g_free(file);
    scratch_remove_tree(dir);
    g_free(back);
    g_free(out);
    g_free(tb);
    g_free(db);
    g_free(dir);
}

/* ---- the independent decoder --------------------------------------------------------------- */
/* tb_decode.py's lines for file, or NULL after a skip (no python3-protobuf). */
static GPtrArray *decode(const char *file)
{
    const char *srcdir = g_getenv("G_TEST_SRCDIR");
    char *script = g_build_filename(srcdir ? srcdir : ".", "tb_decode.py", NULL);
    char *argv[] = {"/usr/bin/python3", script, (char *)file, NULL};
    char *out = NULL, *err = NULL;
    int status = 0;
    GError *error = NULL;
    gboolean ran = g_spawn_sync(NULL, argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out, &err, &status, &error);
    g_free(script);
    if (!ran || (g_spawn_check_wait_status(status, NULL) == FALSE && WIFEXITED(status) && WEXITSTATUS(status) == 2)) {
        g_test_skip(ran ? "python3-protobuf is not installed (apt-get install python3-protobuf): the independent "
                          "decoder did not run"
                        : "/usr/bin/python3 cannot run: the independent decoder did not run");
        g_clear_error(&error);
        g_free(out);
        g_free(err);
        return NULL;
    }
    if (!g_spawn_check_wait_status(status, NULL))
        g_error("tb_decode.py %s failed: %s", file, err);
    GPtrArray *lines = g_ptr_array_new_with_free_func((GDestroyNotify)json_node_unref);
    char **split = g_strsplit(out, "\n", -1);
    for (char **l = split; *l; l++)
        if (**l) {
            JsonNode *node = json_from_string(*l, &error);
            g_assert_no_error(error);
            g_ptr_array_add(lines, node);
        }
    g_strfreev(split);
    g_free(out);
    g_free(err);
    return lines;
}

static double hex_double(JsonObject *o, const char *member)
{
    return g_ascii_strtod(json_object_get_string_member(o, member), NULL);
}

/* The decoded values against the stored run: counts per kind, scalars'
 * bits, histograms' statistics and buckets, texts, image bytes' SHA-256,
 * hyperparameters. */
static void check_decoded(GPtrArray *lines, const char *db)
{
    tw_run_store *s = tw_run_store_open(db, TW_STORE_READ_ONLY);
    tw_run_info run;
    g_assert_cmpint(tw_run_store_get_run(s, "run", &run), ==, 0);
    tw_histogram *h;
    int nh;
    g_assert_cmpint(tw_run_store_read_histograms(s, tag_id(s, run.id, "weights/kernel"), 0, 1000, 0, &h, &nh), ==, 0);
    tw_image_info *images;
    int ni;
    g_assert_cmpint(tw_run_store_list_images(s, run.id, NULL, &images, &ni), ==, 0);
    int scalars = 0, histograms = 0, texts = 0, nimages = 0, nhparams = 0, versions = 0, graphs = 0, tensors = 0;
    bool used[8] = {false};
    g_assert_cmpint(ni, <=, 8);
    for (guint i = 0; i < lines->len; i++) {
        JsonObject *o = json_node_get_object(lines->pdata[i]);
        if (json_object_has_member(o, "file_version")) {
            g_assert_cmpstr(json_object_get_string_member(o, "file_version"), ==, "brain.Event:2");
            versions++;
            continue;
        }
        const char *kind = json_object_get_string_member(o, "kind");
        int64_t step = json_object_get_int_member(o, "step");
        if (!strcmp(kind, "graph")) {
            /* names, ops, inputs ("m/moments:1"), shapes */
            JsonArray *nodes = json_object_get_array_member(o, "nodes");
            g_assert_cmpuint(json_array_get_length(nodes), ==, 4);
            JsonObject *m = json_array_get_object_element(nodes, 2), *add = json_array_get_object_element(nodes, 3);
            g_assert_cmpstr(json_object_get_string_member(m, "name"), ==, "m/moments");
            g_assert_cmpstr(json_object_get_string_member(m, "op"), ==, "moments");
            g_assert_cmpuint(json_array_get_length(json_object_get_array_member(m, "shapes")), ==, 2);
            JsonArray *in = json_object_get_array_member(add, "inputs");
            g_assert_cmpuint(json_array_get_length(in), ==, 2);
            g_assert_cmpstr(json_array_get_string_element(in, 0), ==, "m/moments:1");
            g_assert_cmpstr(json_array_get_string_element(in, 1), ==, "input_1");
            JsonArray *shape = json_array_get_array_element(
                json_object_get_array_member(json_array_get_object_element(nodes, 0), "shapes"), 0);
            g_assert_cmpint(json_array_get_int_element(shape, 0), ==, 5);
            g_assert_cmpint(json_array_get_int_element(shape, 1), ==, 4);
            graphs++;
            continue;
        }
        if (!strcmp(kind, "scalar")) {
            g_assert_cmpstr(json_object_get_string_member(o, "tag"), ==, "train/loss");
            g_assert_cmpint(step, ==, scalars * 10);
            g_assert_true(same_value(hex_double(o, "value"), scalar_values[scalars]));
            scalars++;
        } else if (!strcmp(kind, "histogram")) {
            const tw_histogram *x = &h[histograms++];
            g_assert_cmpint(step, ==, x->step);
            g_assert_cmpfloat(hex_double(o, "min"), ==, x->min);
            g_assert_cmpfloat(hex_double(o, "max"), ==, x->max);
            g_assert_cmpfloat(hex_double(o, "num"), ==, x->count);
            g_assert_cmpfloat(hex_double(o, "sum"), ==, x->sum);
            g_assert_cmpfloat(hex_double(o, "sum_squares"), ==, x->sum_squares);
            JsonArray *buckets = json_object_get_array_member(o, "buckets"),
                      *limits = json_object_get_array_member(o, "limits");
            g_assert_cmpuint(json_array_get_length(buckets), ==, (guint)x->nbuckets);
            g_assert_cmpuint(json_array_get_length(limits), ==, (guint)x->nbuckets);
            for (int k = 0; k < x->nbuckets; k++)
                g_assert_cmpfloat(g_ascii_strtod(json_array_get_string_element(buckets, (guint)k), NULL), ==,
                                  x->buckets[k]);
            g_assert_cmpfloat(g_ascii_strtod(json_array_get_string_element(limits, (guint)x->nbuckets - 1), NULL), ==,
                              x->max);
        } else if (!strcmp(kind, "text")) {
            g_assert_cmpstr(json_object_get_string_member(o, "text"), ==, texts == 0 ? markdown : "second");
            texts++;
        } else if (!strcmp(kind, "image")) {
            /* The event file has them in writing order, the listing by tag. */
            const char *tag = json_object_get_string_member(o, "tag");
            const tw_image_info *im = NULL;
            for (int k = 0; k < ni && !im; k++)
                if (!used[k] && images[k].step == step && !strcmp(images[k].tag, tag))
                    used[k] = true, im = &images[k];
            g_assert_nonnull(im);
            nimages++;
            g_assert_cmpint(json_object_get_int_member(o, "width"), ==, im->width);
            g_assert_cmpint(json_object_get_int_member(o, "height"), ==, im->height);
            g_assert_cmpint(json_object_get_int_member(o, "colorspace"), ==, !strcmp(im->tag, "gray") ? 1 : 3);
            uint8_t *data;
            size_t size;
            g_assert_cmpint(tw_run_store_read_image(s, im->id, &data, &size), ==, 0);
            char *sha = g_compute_checksum_for_data(G_CHECKSUM_SHA256, data, size);
            g_assert_cmpstr(json_object_get_string_member(o, "sha256"), ==, sha);
            g_free(sha);
            free(data);
        } else if (!strcmp(kind, "hparams")) {
            JsonObject *hp = json_object_get_object_member(o, "hparams");
            g_assert_cmpstr(json_object_get_string_member(hp, "optimizer"), ==, "adam");
            g_assert_cmpfloat(hex_double(hp, "learning_rate"), ==, 0.001);
            g_assert_cmpfloat(hex_double(hp, "epochs"), ==, 5);
            g_assert_true(json_object_get_boolean_member(hp, "deep"));
            g_assert_cmpuint(json_array_get_length(json_object_get_array_member(hp, "layers")), ==, 2);
            nhparams++;
        } else if (!strcmp(kind, "tensor")) {
            /* TF2's generic tensor: no plugin, dtype, shape, tensor_content */
            bool is_confusion = !strcmp(json_object_get_string_member(o, "tag"), "eval/confusion");
            g_assert_cmpstr(json_object_get_string_member(o, "plugin"), ==, "");
            g_assert_cmpint(json_object_get_int_member(o, "dtype"), ==, is_confusion ? 3 /* DT_INT32 */ : 1 /* DT_FLOAT */);
            JsonArray *shape = json_object_get_array_member(o, "shape"), *values = json_object_get_array_member(o, "values");
            g_assert_cmpuint(json_array_get_length(shape), ==, 2);
            g_assert_cmpint(json_array_get_int_element(shape, 0), ==, 3);
            g_assert_cmpint(json_array_get_int_element(shape, 1), ==, is_confusion ? 3 : 2);
            g_assert_cmpuint(json_array_get_length(values), ==, is_confusion ? 9 : 6);
            for (guint k = 0; k < json_array_get_length(values); k++)
                g_assert_cmpfloat(g_ascii_strtod(json_array_get_string_element(values, k), NULL), ==,
                                  is_confusion ? (double)confusion[k] : (double)per_class[k]);
            tensors++;
        } else {
            g_error("tb_decode.py read a value of kind %s", kind);
        }
    }
    g_assert_cmpint(versions, ==, 1);
    g_assert_cmpint(scalars, ==, (int)G_N_ELEMENTS(scalar_values));
    g_assert_cmpint(histograms, ==, 3);
    g_assert_cmpint(texts, ==, 2);
    g_assert_cmpint(nimages, ==, 3);
    g_assert_cmpint(nhparams, ==, 1);
    g_assert_cmpint(graphs, ==, 1);
    g_assert_cmpint(tensors, ==, 2);
    tw_image_info_free(images, ni);
    tw_histogram_free(h, nh);
    tw_run_info_clear(&run);
    tw_run_store_close(s);
}

static void test_independent_decoder(void)
{
    char *dir = scratch(), *db = g_build_filename(dir, "runs.db", NULL), *tb = g_build_filename(dir, "tb", NULL);
    char *out = g_build_filename(dir, "exported", NULL);
    char *file = write_run(db, tb);
    GPtrArray *lines = decode(file);
    if (lines) {
        check_decoded(lines, db);
        g_ptr_array_unref(lines);
        tw_tb_export_stats stats;
        char *exported = NULL;
        g_assert_cmpint(tw_tb_export_run(db, "run", out, &exported, &stats), ==, 0);
        lines = decode(exported);
        check_decoded(lines, db);
        g_ptr_array_unref(lines);
        g_free(exported);
    }
    g_free(file);
    scratch_remove_tree(dir);
    g_free(out);
    g_free(tb);
    g_free(db);
    g_free(dir);
}

/* ---- the run's model, as the Keras callback writes it ----------------------------------------- */
/* A run's model_json exported as the Keras TensorBoard callback's model
 * config (tag "keras", a rank-0 string tensor of plugin
 * "graph_keras_model" whose content is "1", at step 0), read by the
 * independent decoder as such, and imported back as the run's model_json,
 * byte for byte, which builds as the same model. */
static void test_export_model_config(void)
{
    const char *srcdir = g_getenv("G_TEST_SRCDIR");
    char *model_path = g_build_filename(srcdir ? srcdir : ".", "..", "examples", "models", "mlp_fashion_mnist.json",
                                        NULL);
    char *model = NULL;
    g_assert_true(g_file_get_contents(model_path, &model, NULL, NULL));
    char *dir = scratch(), *db = g_build_filename(dir, "runs.db", NULL), *out = g_build_filename(dir, "exported", NULL);
    char *back = g_build_filename(dir, "back.db", NULL);
    tw_summary_run_options o = {.model_json = model};
    tw_summary_writer *w = tw_summary_writer_open(db, "run", &o);
    g_assert_nonnull(w);
    g_assert_cmpint(tw_summary_scalar(w, "loss", 0.5, 1), ==, 0);
    g_assert_cmpint(tw_summary_writer_close(w, TW_RUN_FINISHED), ==, 0);

    tw_tb_export_stats stats;
    char *exported = NULL;
    g_assert_cmpint(tw_tb_export_run(db, "run", out, &exported, &stats), ==, 0);
    g_assert_cmpint(stats.models, ==, 1);
    GPtrArray *lines = decode(exported);
    if (lines) {
        int configs = 0;
        for (guint i = 0; i < lines->len; i++) {
            JsonObject *v = json_node_get_object(lines->pdata[i]);
            if (g_strcmp0(json_object_get_string_member_with_default(v, "kind", ""), "keras_model"))
                continue;
            configs++;
            g_assert_cmpstr(json_object_get_string_member(v, "tag"), ==, "keras");
            g_assert_cmpint(json_object_get_int_member(v, "step"), ==, 0);
            g_assert_cmpstr(json_object_get_string_member(v, "plugin"), ==, "graph_keras_model");
            g_assert_cmpstr(json_object_get_string_member(v, "content"), ==, "1");
            g_assert_cmpint(json_object_get_int_member(v, "dtype"), ==, 7); /* DT_STRING */
            g_assert_cmpint(json_object_get_int_member(v, "rank"), ==, 0);
            JsonArray *config = json_object_get_array_member(v, "config");
            g_assert_cmpuint(json_array_get_length(config), ==, 1);
            g_assert_cmpstr(json_array_get_string_element(config, 0), ==, model);
        }
        g_assert_cmpint(configs, ==, 1);
        g_ptr_array_unref(lines);
    }

    tw_tb_import_stats imported;
    g_assert_cmpint(tw_tb_import(out, back, NULL, NULL, &imported), ==, 0);
    g_assert_cmpint(imported.warnings, ==, 0);
    tw_run_store *s = tw_run_store_open(back, TW_STORE_READ_ONLY);
    tw_run_info run;
    g_assert_cmpint(tw_run_store_get_run(s, ".", &run), ==, 0);
    g_assert_cmpstr(run.model_json, ==, model);
    tw_model *built = tw_model_from_json(run.model_json, strlen(run.model_json), "the imported run");
    g_assert_nonnull(built);
    tw_layer_unref(built);
    tw_run_info_clear(&run);
    tw_run_store_close(s);
    g_free(exported);
    scratch_remove_tree(dir);
    g_free(back);
    g_free(out);
    g_free(db);
    g_free(dir);
    g_free(model);
    g_free(model_path);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/tfevents-write/training-writer-round-trip", test_training_writer_round_trip);
    g_test_add_func("/tfevents-write/export-round-trip", test_export_round_trip);
    g_test_add_func("/tfevents-write/independent-decoder", test_independent_decoder);
    g_test_add_func("/tfevents-write/export-model-config", test_export_model_config);
    return g_test_run();
}
