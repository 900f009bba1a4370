/* The dataset core: from_tensors slices, iteration, cardinality, ownership. */
#include <glib.h>
#include <string.h>

#include "dataset_internal.h"

static void test_from_tensors(void)
{
    tw_scope_begin();
    tw_tensor *x = tw_reshape(tw_arange(0, 12, 1, TW_FLOAT32), TW_SHAPE(4, 3));
    tw_tensor *y = tw_arange(0, 4, 1, TW_INT64);
    tw_dataset *ds = tw_dataset_from_tensors(TW_TENSORS(x, y));
    tw_scope_end(); /* the dataset keeps its own references */
    g_assert_nonnull(ds);
    g_assert_cmpint(tw_dataset_cardinality(ds), ==, 4);
    for (int pass = 0; pass < 2; pass++) {
        tw_iterator *it = tw_dataset_iter(ds);
        tw_element e;
        int count = 0, rc;
        while ((rc = tw_iterator_next(it, &e)) > 0) {
            g_assert_cmpint(e.n, ==, 2);
            g_assert_cmpint(tw_tensor_ndim(e.t[0]), ==, 1);
            g_assert_cmpint(tw_tensor_dim(e.t[0], 0), ==, 3);
            g_assert_cmpfloat(tw_tensor_get(e.t[0], (int64_t[]){2}), ==, count * 3 + 2);
            g_assert_cmpfloat(tw_tensor_item(e.t[1]), ==, count);
            tw_element_clear(&e);
            count++;
        }
        g_assert_cmpint(rc, ==, 0);
        g_assert_cmpint(count, ==, 4);
        tw_iterator_free(it);
    }
    tw_dataset_unref(ds);
}

static void test_from_tensors_errors(void)
{
    tw_scope_begin();
    tw_tensor *x = tw_zeros(TW_FLOAT32, TW_SHAPE(4, 3)), *y = tw_zeros(TW_INT64, TW_SHAPE(5));
    g_assert_null(tw_dataset_from_tensors(TW_TENSORS(x, y)));
    g_assert_nonnull(strstr(tw_last_error(), "from_tensors: component 0 has shape (4, 3) but component 1 has shape (5,)"));
    g_assert_null(tw_dataset_from_tensors(TW_TENSORS(tw_scalar(1))));
    g_assert_nonnull(strstr(tw_last_error(), "scalar"));
    tw_scope_end();
    tw_error_clear();
    g_assert_null(tw_dataset_iter(NULL));
    g_assert_cmpstr(tw_last_error(), ==, "iter: the input dataset is NULL");
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/data/from-tensors", test_from_tensors);
    g_test_add_func("/data/from-tensors/errors", test_from_tensors_errors);
    return g_test_run();
}
