/* A classifier's evaluation (tw/evaluation.h) against hand values: the
 * confusion matrix, per-class precision/recall/F1 and the chosen examples'
 * order for probabilities, logits (softmax, sigmoid) and one-hot labels;
 * the same read back from the run database after tw_evaluation_log
 * (tensor, image and text summaries); tensor summaries of each dtype; an
 * annotating writer leaving a finished run's row as it was; bad input. */
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <png.h>
#include <sqlite3.h>
#include <string.h>

#include <tw/engine.h>
#include <tw/evaluation.h>
#include <tw/summary.h>

static char *scratch_db(void)
{
    GError *err = NULL;
    char *dir = g_dir_make_tmp("twb-eval-XXXXXX", &err);
    g_assert_no_error(err);
    char *path = g_build_filename(dir, "runs.db", NULL);
    g_free(dir);
    return path;
}

static void remove_db(char *path)
{
    char *dir = g_path_get_dirname(path);
    const char *suffixes[] = {"", "-wal", "-shm"};
    for (int i = 0; i < 3; i++) {
        char *f = g_strconcat(path, suffixes[i], NULL);
        g_remove(f);
        g_free(f);
    }
    g_rmdir(dir);
    g_free(dir);
    g_free(path);
}

static tw_tensor *floats(const float *v, int ndim, const int64_t *shape)
{
    return tw_tensor_from_data(v, TW_FLOAT32, ndim, shape);
}

/* Three classes, six examples, probabilities:
 *   e0 [.7 .2 .1] true 0 -> 0 (.7)     e1 [.1 .8 .1] true 0 -> 1 (.8) wrong
 *   e2 [.2 .6 .2] true 1 -> 1 (.6)     e3 [.5 .3 .2] true 1 -> 0 (.5) wrong
 *   e4 [.1 .1 .8] true 2 -> 2 (.8)     e5 [.3 .3 .4] true 2 -> 2 (.4)
 * rows (true) [1 1 0] [1 1 0] [0 0 2]; precision .5 .5 1, recall .5 .5 1,
 * F1 .5 .5 1, accuracy 4/6; order: wrong by confidence down (e1, e3), then
 * right by confidence up (e5, e2, e0, e4). */
static const float probs[] = {.7f, .2f, .1f, .1f, .8f, .1f, .2f, .6f, .2f, .5f, .3f, .2f, .1f, .1f, .8f, .3f, .3f, .4f};
static const int64_t labels3[] = {0, 0, 1, 1, 2, 2};

static void compute3(int per_cell, tw_evaluation *e)
{
    tw_tensor *out = floats(probs, 2, (int64_t[]){6, 3});
    tw_tensor *y = tw_tensor_from_data(labels3, TW_INT64, 1, (int64_t[]){6});
    g_assert_cmpint(tw_evaluation_compute(out, y, per_cell, e), ==, 0);
    tw_tensor_unref(out);
    tw_tensor_unref(y);
}

static void test_hand_values(void)
{
    tw_evaluation e;
    compute3(8, &e);
    static const int64_t confusion[] = {1, 1, 0, 1, 1, 0, 0, 0, 2};
    g_assert_cmpint(e.classes, ==, 3);
    g_assert_cmpint(e.examples, ==, 6);
    for (int i = 0; i < 9; i++)
        g_assert_cmpint(e.confusion[i], ==, confusion[i]);
    static const double p[] = {.5, .5, 1}, r[] = {.5, .5, 1}, f[] = {.5, .5, 1};
    static const int64_t support[] = {2, 2, 2};
    for (int c = 0; c < 3; c++) {
        g_assert_cmpfloat_with_epsilon(e.precision[c], p[c], 1e-12);
        g_assert_cmpfloat_with_epsilon(e.recall[c], r[c], 1e-12);
        g_assert_cmpfloat_with_epsilon(e.f1[c], f[c], 1e-12);
        g_assert_cmpint(e.support[c], ==, support[c]);
    }
    g_assert_cmpfloat_with_epsilon(e.accuracy, 4.0 / 6.0, 1e-12);
    static const int64_t order[] = {1, 3, 5, 2, 0, 4};
    static const double conf[] = {.8, .5, .4, .6, .7, .8};
    g_assert_cmpint(e.nsamples, ==, 6);
    for (int s = 0; s < 6; s++) {
        g_assert_cmpint(e.sample_index[s], ==, order[s]);
        g_assert_cmpint(e.sample_true[s], ==, labels3[order[s]]);
        g_assert_cmpfloat_with_epsilon(e.sample_confidence[s], conf[s], 1e-6);
    }
    g_assert_cmpint(e.sample_pred[0], ==, 1);
    g_assert_cmpint(e.sample_pred[1], ==, 0);
    tw_evaluation_clear(&e);

    /* One per cell: cell (2, 2) keeps e5, its least confident. */
    compute3(1, &e);
    static const int64_t one[] = {1, 3, 5, 2, 0};
    g_assert_cmpint(e.nsamples, ==, 5);
    for (int s = 0; s < 5; s++)
        g_assert_cmpint(e.sample_index[s], ==, one[s]);
    tw_evaluation_clear(&e);
}

/* Logits (a value outside [0, 1]) are softmaxed; one-hot labels. */
static void test_logits_one_hot(void)
{
    static const float logits[] = {2, 0, 0, 1, -1, 0};
    static const float onehot[] = {1, 0, 1, 0, 0, 1};
    tw_tensor *out = floats(logits, 2, (int64_t[]){3, 2}), *y = floats(onehot, 2, (int64_t[]){3, 2});
    tw_evaluation e;
    g_assert_cmpint(tw_evaluation_compute(out, y, 8, &e), ==, 0);
    /* e0 true 0 -> 0, e1 true 0 -> 1 (wrong), e2 true 1 -> 1 */
    static const int64_t confusion[] = {1, 1, 0, 1};
    for (int i = 0; i < 4; i++)
        g_assert_cmpint(e.confusion[i], ==, confusion[i]);
    g_assert_cmpint(e.sample_index[0], ==, 1);
    g_assert_cmpfloat_with_epsilon(e.sample_confidence[0], 1 / (1 + exp(-1.0)), 1e-9);
    /* right ones, least confident first: e2 (1/(1+e^-1)) before e0 (1/(1+e^-2)) */
    g_assert_cmpint(e.sample_index[1], ==, 2);
    g_assert_cmpint(e.sample_index[2], ==, 0);
    g_assert_cmpfloat_with_epsilon(e.sample_confidence[2], 1 / (1 + exp(-2.0)), 1e-9);
    g_assert_cmpfloat_with_epsilon(e.precision[0], 1.0, 1e-12);
    g_assert_cmpfloat_with_epsilon(e.recall[0], 0.5, 1e-12);
    g_assert_cmpfloat_with_epsilon(e.f1[0], 2 * 0.5 / 1.5, 1e-12);
    g_assert_cmpfloat_with_epsilon(e.precision[1], 0.5, 1e-12);
    tw_evaluation_clear(&e);
    tw_tensor_unref(out);
    tw_tensor_unref(y);
}

/* One output: a probability, or (3.0 among them) logits, sigmoided. */
static void test_binary(void)
{
    static const float logits[] = {0.9f, 0.2f, 3.0f};
    static const float labels[] = {1, 1, 0};
    tw_tensor *out = floats(logits, 2, (int64_t[]){3, 1}), *y = floats(labels, 1, (int64_t[]){3});
    tw_evaluation e;
    g_assert_cmpint(tw_evaluation_compute(out, y, 8, &e), ==, 0);
    g_assert_cmpint(e.classes, ==, 2);
    static const int64_t confusion[] = {0, 1, 0, 2};
    for (int i = 0; i < 4; i++)
        g_assert_cmpint(e.confusion[i], ==, confusion[i]);
    g_assert_cmpint(e.sample_index[0], ==, 2);
    g_assert_cmpfloat_with_epsilon(e.sample_confidence[0], 1 / (1 + exp(-3.0)), 1e-6);
    g_assert_cmpfloat_with_epsilon(e.precision[0], 0, 1e-12); /* never predicted: 0, as sklearn */
    g_assert_cmpfloat_with_epsilon(e.f1[0], 0, 1e-12);
    tw_evaluation_clear(&e);
    tw_tensor_unref(out);
    tw_tensor_unref(y);
}

static void test_bad_input(void)
{
    tw_evaluation e;
    static const float out3[] = {.5f, .5f, .5f, .5f};
    tw_tensor *out = floats(out3, 2, (int64_t[]){2, 2});
    tw_tensor *y = tw_tensor_from_data((int64_t[]){0, 2}, TW_INT64, 1, (int64_t[]){2});
    g_assert_cmpint(tw_evaluation_compute(out, y, 8, &e), ==, -1);
    g_assert_nonnull(strstr(tw_last_error(), "example 1 has label 2, not one of the 2 classes"));
    g_assert_null(e.confusion);
    tw_tensor_unref(y);
    y = tw_tensor_from_data((int64_t[]){0, 1, 1}, TW_INT64, 1, (int64_t[]){3});
    g_assert_cmpint(tw_evaluation_compute(out, y, 8, &e), ==, -1);
    g_assert_nonnull(strstr(tw_last_error(), "2 predictions but labels of shape (3,)"));
    tw_tensor_unref(y);
    y = tw_tensor_from_data((float[]){0, 0.5f}, TW_FLOAT32, 1, (int64_t[]){2});
    g_assert_cmpint(tw_evaluation_compute(out, y, 8, &e), ==, -1);
    g_assert_nonnull(strstr(tw_last_error(), "has label 0.5"));
    tw_tensor_unref(y);
    tw_tensor_unref(out);
}

static int64_t run_id(tw_run_store *store, const char *name, tw_run_info *info)
{
    g_assert_cmpint(tw_run_store_get_run(store, name, info), ==, 0);
    return info->id;
}

/* Pixel (0, 0) of a stored gray PNG. */
static int first_pixel(tw_run_store *store, const tw_image_info *im)
{
    uint8_t *data;
    size_t size;
    g_assert_cmpint(tw_run_store_read_image(store, im->id, &data, &size), ==, 0);
    png_image image = {.version = PNG_IMAGE_VERSION};
    g_assert_true(png_image_begin_read_from_memory(&image, data, size));
    image.format = PNG_FORMAT_GRAY;
    uint8_t *pixels = g_malloc(PNG_IMAGE_SIZE(image));
    g_assert_true(png_image_finish_read(&image, NULL, pixels, 0, NULL));
    int v = pixels[0];
    g_free(pixels);
    free(data);
    return v;
}

/* The evaluation written into a finished run by an annotating writer and
 * read back: the run's row unchanged, every summary as computed. */
static void test_stored(void)
{
    char *db = scratch_db();
    tw_summary_writer *w = tw_summary_writer_open(db, "cnn", &(tw_summary_run_options){.hparams_json = "{\"lr\":1}"});
    g_assert_nonnull(w);
    tw_summary_scalar(w, "train/loss", 1.0, 1);
    g_assert_cmpint(tw_summary_writer_close(w, TW_RUN_FINISHED), ==, 0);
    tw_run_store *store = tw_run_store_open(db, TW_STORE_READ_ONLY);
    tw_run_info before;
    run_id(store, "cnn", &before);
    tw_run_store_close(store);

    g_assert_null(tw_summary_writer_open(db, "nope", &(tw_summary_run_options){.annotate = true}));
    g_assert_nonnull(strstr(tw_last_error(), "no run named 'nope'"));

    tw_evaluation e;
    compute3(8, &e);
    /* x: six 2x2 gray images, example i all i/10 */
    float x[24];
    for (int i = 0; i < 24; i++)
        x[i] = (float)(i / 4) / 10.0f;
    tw_tensor *xt = floats(x, 4, (int64_t[]){6, 2, 2, 1});
    w = tw_summary_writer_open(db, "cnn", &(tw_summary_run_options){.annotate = true});
    g_assert_nonnull(w);
    const char *names[] = {"cat", "dog", "emu"};
    g_assert_cmpint(tw_evaluation_log(w, &e, xt, names, 7), ==, 0);
    g_assert_cmpint(tw_summary_writer_close(w, TW_RUN_FAILED), ==, 0);

    store = tw_run_store_open(db, TW_STORE_READ_ONLY);
    tw_run_info after;
    int64_t id = run_id(store, "cnn", &after);
    g_assert_cmpint(after.status, ==, TW_RUN_FINISHED);
    g_assert_cmpfloat(after.end_time, ==, before.end_time);
    g_assert_cmpstr(after.hparams_json, ==, before.hparams_json);

    tw_stored_tensor t;
    g_assert_cmpint(tw_run_store_read_tensor(store, id, TW_EVAL_TAG_CONFUSION, &t), ==, 1);
    g_assert_cmpstr(t.dtype, ==, "int64");
    g_assert_cmpint(t.ndim, ==, 2);
    g_assert_cmpint(t.dims[0], ==, 3);
    g_assert_cmpint(t.dims[1], ==, 3);
    g_assert_cmpint(t.step, ==, 7);
    for (int i = 0; i < 9; i++)
        g_assert_cmpfloat(t.values[i], ==, (double)e.confusion[i]);
    tw_stored_tensor_clear(&t);
    g_assert_cmpint(tw_run_store_read_tensor(store, id, TW_EVAL_TAG_PER_CLASS, &t), ==, 1);
    g_assert_cmpint(t.dims[0], ==, 3);
    g_assert_cmpint(t.dims[1], ==, 4);
    static const double per_class[] = {.5, .5, .5, 2, .5, .5, .5, 2, 1, 1, 1, 2};
    for (int i = 0; i < 12; i++)
        g_assert_cmpfloat_with_epsilon(t.values[i], per_class[i], 1e-12);
    tw_stored_tensor_clear(&t);
    g_assert_cmpint(tw_run_store_read_tensor(store, id, TW_EVAL_TAG_SAMPLES, &t), ==, 1);
    g_assert_cmpint(t.dims[0], ==, 6);
    g_assert_cmpfloat(t.values[0], ==, 1);  /* e1 first */
    g_assert_cmpfloat(t.values[1], ==, 0);  /* true 0 */
    g_assert_cmpfloat(t.values[2], ==, 1);  /* predicted 1 */
    g_assert_cmpfloat_with_epsilon(t.values[3], .8, 1e-6);
    tw_stored_tensor_clear(&t);
    g_assert_cmpint(tw_run_store_read_tensor(store, id, TW_EVAL_TAG_SAMPLE_VALUES, &t), ==, 0);

    tw_image_info *images;
    int n;
    g_assert_cmpint(tw_run_store_list_images(store, id, TW_EVAL_TAG_SAMPLE_IMAGES, &images, &n), ==, 0);
    g_assert_cmpint(n, ==, 6);
    static const int64_t order[] = {1, 3, 5, 2, 0, 4};
    for (int s = 0; s < n; s++) {
        g_assert_cmpint(images[s].sample, ==, s);
        g_assert_cmpint(images[s].width, ==, 2);
        g_assert_cmpint(first_pixel(store, &images[s]), ==, (int)lround(order[s] / 10.0 * 255));
    }
    tw_image_info_free(images, n);

    int64_t tag = tw_run_store_find_tag(store, id, TW_EVAL_TAG_CLASS_NAMES);
    g_assert_cmpint(tag, >=, 0);
    tw_series_cursor cursor = {0};
    tw_text_record *texts;
    g_assert_cmpint(tw_run_store_read_texts(store, tag, &cursor, &texts, &n), ==, 0);
    g_assert_cmpint(n, ==, 1);
    g_assert_cmpstr(texts[0].text, ==, "cat\ndog\nemu\n");
    tw_text_record_free(texts, n);

    tw_run_info_clear(&before);
    tw_run_info_clear(&after);
    tw_run_store_close(store);
    tw_tensor_unref(xt);
    tw_evaluation_clear(&e);
    remove_db(db);
}

/* Non-image inputs: the first TW_EVALUATION_MAX_VALUES values of each row. */
static void test_stored_values(void)
{
    char *db = scratch_db();
    tw_summary_writer *w = tw_summary_writer_open(db, "mlp", NULL);
    tw_evaluation e;
    compute3(8, &e);
    float x[6 * 20];
    for (int i = 0; i < 6 * 20; i++)
        x[i] = (float)i;
    tw_tensor *xt = floats(x, 2, (int64_t[]){6, 20});
    g_assert_cmpint(tw_evaluation_log(w, &e, xt, NULL, 0), ==, 0);
    g_assert_cmpint(tw_summary_writer_close(w, TW_RUN_FINISHED), ==, 0);
    tw_run_store *store = tw_run_store_open(db, TW_STORE_READ_ONLY);
    tw_run_info info;
    int64_t id = run_id(store, "mlp", &info);
    tw_stored_tensor t;
    g_assert_cmpint(tw_run_store_read_tensor(store, id, TW_EVAL_TAG_SAMPLE_VALUES, &t), ==, 1);
    g_assert_cmpint(t.dims[0], ==, 6);
    g_assert_cmpint(t.dims[1], ==, TW_EVALUATION_MAX_VALUES);
    g_assert_cmpfloat(t.values[0], ==, 20);       /* e1's first value */
    g_assert_cmpfloat(t.values[TW_EVALUATION_MAX_VALUES + 1], ==, 61); /* e3's second */
    tw_stored_tensor_clear(&t);
    tw_image_info *images;
    int n;
    g_assert_cmpint(tw_run_store_list_images(store, id, NULL, &images, &n), ==, 0);
    g_assert_cmpint(n, ==, 0);
    g_assert_cmpint(tw_run_store_find_tag(store, id, TW_EVAL_TAG_CLASS_NAMES), ==, -1);
    tw_run_info_clear(&info);
    tw_run_store_close(store);
    tw_tensor_unref(xt);
    tw_evaluation_clear(&e);
    remove_db(db);
}

/* Each dtype read back exactly; bad calls refused; a file without the
 * tensors table (an older one) has none; a damaged row is named. */
static void test_tensor_summaries(void)
{
    char *db = scratch_db();
    tw_summary_writer *w = tw_summary_writer_open(db, "r", NULL);
    tw_tensor *f32 = tw_tensor_from_data((float[]){1.5f, -2, 3}, TW_FLOAT32, 1, (int64_t[]){3});
    tw_tensor *i32 = tw_tensor_from_data((int32_t[]){7, -8, 9, 10}, TW_INT32, 2, (int64_t[]){2, 2});
    tw_tensor *u8 = tw_tensor_from_data((uint8_t[]){1}, TW_UINT8, 1, (int64_t[]){1});
    tw_tensor *empty = tw_tensor_empty(TW_FLOAT64, 2, (int64_t[]){0, 3});
    g_assert_cmpint(tw_summary_tensor(w, "a", f32, 1), ==, 0);
    g_assert_cmpint(tw_summary_tensor(w, "a", i32, 0), ==, 0);
    g_assert_cmpint(tw_summary_tensor(w, "a", f32, 0), ==, 0); /* the newest is read, not the highest step */
    g_assert_cmpint(tw_summary_tensor(w, "b", i32, 2), ==, 0);
    g_assert_cmpint(tw_summary_tensor(w, "e", empty, 0), ==, 0);
    g_assert_cmpint(tw_summary_tensor(w, "c", u8, 0), ==, -1);
    g_assert_nonnull(strstr(tw_last_error(), "tag 'c': expected float32, float64, int32 or int64, got uint8"));
    g_assert_cmpint(tw_summary_scalar(w, "a", 1, 0), ==, -1); /* a tensor tag */
    g_assert_cmpint(tw_summary_writer_close(w, TW_RUN_FINISHED), ==, 0);

    tw_run_store *store = tw_run_store_open(db, TW_STORE_READ_ONLY);
    tw_run_info info;
    int64_t id = run_id(store, "r", &info);
    tw_stored_tensor t;
    g_assert_cmpint(tw_run_store_read_tensor(store, id, "a", &t), ==, 1);
    g_assert_cmpstr(t.dtype, ==, "float32");
    g_assert_cmpint(t.step, ==, 0);
    g_assert_cmpfloat(t.values[0], ==, 1.5);
    g_assert_cmpfloat(t.values[1], ==, -2);
    tw_stored_tensor_clear(&t);
    g_assert_cmpint(tw_run_store_read_tensor(store, id, "b", &t), ==, 1);
    g_assert_cmpint(t.ndim, ==, 2);
    g_assert_cmpfloat(t.values[1], ==, -8);
    g_assert_cmpfloat(t.values[3], ==, 10);
    tw_stored_tensor_clear(&t);
    g_assert_cmpint(tw_run_store_read_tensor(store, id, "e", &t), ==, 1);
    g_assert_cmpint(t.numel, ==, 0);
    g_assert_cmpint(t.dims[1], ==, 3);
    tw_stored_tensor_clear(&t);
    g_assert_cmpint(tw_run_store_read_tensor(store, id, "zz", &t), ==, 0);
    tw_tag_info *tags;
    int n;
    g_assert_cmpint(tw_run_store_list_tags(store, id, &tags, &n), ==, 0);
    g_assert_cmpint(n, ==, 0); /* tensors are not series of the tags table */
    tw_tag_info_free(tags, n);
    tw_run_store_close(store);

    sqlite3 *sq;
    g_assert_cmpint(sqlite3_open(db, &sq), ==, SQLITE_OK);
    g_assert_cmpint(sqlite3_exec(sq, "UPDATE tensors SET shape = '[2, 3]' WHERE tag = 'b'", NULL, NULL, NULL), ==,
                    SQLITE_OK);
    store = tw_run_store_open(db, TW_STORE_READ_ONLY);
    g_assert_cmpint(tw_run_store_read_tensor(store, id, "b", &t), ==, -1);
    g_assert_nonnull(strstr(tw_last_error(), "tensor 'b': a damaged row (dtype int32, shape [2, 3], 16 bytes)"));
    tw_run_store_close(store);
    g_assert_cmpint(sqlite3_exec(sq, "DROP TABLE tensors", NULL, NULL, NULL), ==, SQLITE_OK);
    sqlite3_close(sq);
    store = tw_run_store_open(db, TW_STORE_READ_ONLY);
    g_assert_cmpint(tw_run_store_read_tensor(store, id, "a", &t), ==, 0);
    tw_run_store_close(store);

    tw_run_info_clear(&info);
    tw_tensor_unref(f32);
    tw_tensor_unref(i32);
    tw_tensor_unref(u8);
    tw_tensor_unref(empty);
    remove_db(db);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/evaluation/hand-values", test_hand_values);
    g_test_add_func("/evaluation/logits-one-hot", test_logits_one_hot);
    g_test_add_func("/evaluation/binary", test_binary);
    g_test_add_func("/evaluation/bad-input", test_bad_input);
    g_test_add_func("/evaluation/stored", test_stored);
    g_test_add_func("/evaluation/stored-values", test_stored_values);
    g_test_add_func("/evaluation/tensor-summaries", test_tensor_summaries);
    return g_test_run();
}
