/* twb save and twb summary on Functional model files: the summary's
 * Functional table, the two JSON forms written and read back, usage
 * errors. */
#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>

#include "twb_run.h"

static const char *const model_json =
    "{\"class_name\": \"Functional\", \"config\": {\"name\": \"pair\", \"layers\": ["
    "{\"class_name\": \"InputLayer\", \"config\": {\"batch_input_shape\": [null, 4], \"name\": \"a\"}, "
    "\"name\": \"a\", \"inbound_nodes\": []}, "
    "{\"class_name\": \"InputLayer\", \"config\": {\"batch_input_shape\": [null, 4], \"name\": \"b\"}, "
    "\"name\": \"b\", \"inbound_nodes\": []}, "
    "{\"class_name\": \"Dense\", \"config\": {\"name\": \"shared\", \"units\": 2}, \"name\": \"shared\", "
    "\"inbound_nodes\": [[[\"a\", 0, 0, {}]], [[\"b\", 0, 0, {}]]]}, "
    "{\"class_name\": \"Subtract\", \"config\": {\"name\": \"diff\"}, \"name\": \"diff\", "
    "\"inbound_nodes\": [[[\"shared\", 0, 0, {}], [\"shared\", 1, 0, {}]]]}], "
    "\"input_layers\": [[\"a\", 0, 0], [\"b\", 0, 0]], \"output_layers\": [[\"diff\", 0, 0]]}}";

static void test_save_and_summary(void)
{
    char *dir = g_dir_make_tmp("twb-functional-cli-XXXXXX", NULL);
    char *in = g_build_filename(dir, "pair.json", NULL), *k3 = g_build_filename(dir, "pair3.json", NULL),
         *k2 = g_build_filename(dir, "pair2.json", NULL);
    g_assert_true(g_file_set_contents(in, model_json, -1, NULL));

    twb_run r = run_twb("summary", in, NULL);
    g_assert_cmpint(r.exit_status, ==, 0);
    g_assert_nonnull(strstr(r.out, "shared (Dense)                  (None, 2)            10          a[0][0]\n"
                                   "                                                                 b[0][0]\n"));
    g_assert_nonnull(strstr(r.out, "Total params: 10\n"));
    twb_run_clear(&r);

    r = run_twb("save", in, k3, "--format", "keras3", NULL);
    g_assert_cmpint(r.exit_status, ==, 0);
    twb_run_clear(&r);
    char *text = NULL;
    g_assert_true(g_file_get_contents(k3, &text, NULL, NULL));
    g_assert_nonnull(strstr(text, "\"class_name\": \"__keras_tensor__\""));
    g_assert_nonnull(strstr(text, "\"registered_name\": \"Functional\""));
    g_free(text);
    /* Keras 3's form read back and written in Keras 2's: the input's text
     * as this writer writes it. */
    r = run_twb("save", k3, k2, NULL);
    g_assert_cmpint(r.exit_status, ==, 0);
    twb_run_clear(&r);
    g_assert_true(g_file_get_contents(k2, &text, NULL, NULL));
    g_assert_nonnull(strstr(text, "\"inbound_nodes\": [[[\"shared\", 0, 0, {}], [\"shared\", 1, 0, {}]]]"));
    g_free(text);

    r = run_twb("save", in, k2, "--format", "keras4", NULL);
    g_assert_cmpint(r.exit_status, ==, 2);
    g_assert_nonnull(strstr(r.err, "twb: save: --format takes keras2 or keras3, got 'keras4'"));
    twb_run_clear(&r);
    r = run_twb("save", in, NULL);
    g_assert_cmpint(r.exit_status, ==, 2);
    twb_run_clear(&r);
    char *missing = g_build_filename(dir, "missing.json", NULL);
    r = run_twb("save", missing, k2, NULL);
    g_assert_cmpint(r.exit_status, ==, 1);
    g_assert_nonnull(strstr(r.err, missing));
    twb_run_clear(&r);
    g_free(missing);

    g_unlink(in);
    g_unlink(k2);
    g_unlink(k3);
    g_rmdir(dir);
    g_free(in);
    g_free(k2);
    g_free(k3);
    g_free(dir);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/functional-cli/save-and-summary", test_save_and_summary);
    return g_test_run();
}
