/* Tensors: creation, dtypes, views that alias, contiguity, casting, devices,
 * element access and the error model's basics. */
#include <glib.h>
#include <math.h>
#include <string.h>

#include "internal.h"

static void test_creation(void)
{
    tw_scope_begin();
    tw_tensor *z = tw_zeros(TW_INT32, TW_SHAPE(2, 3));
    g_assert_cmpint(tw_tensor_ndim(z), ==, 2);
    g_assert_cmpint(tw_tensor_numel(z), ==, 6);
    g_assert_cmpint(tw_tensor_dtype(z), ==, TW_INT32);
    g_assert_cmpfloat(tw_tensor_item(tw_sum_all(tw_ones(TW_FLOAT64, TW_SHAPE(4, 5)))), ==, 20.0);
    g_assert_cmpfloat(tw_tensor_item(tw_full(2.5, TW_FLOAT32, 0, NULL)), ==, 2.5);
    tw_tensor *r = tw_arange(1, 2, 0.25, TW_FLOAT64);
    g_assert_cmpint(tw_tensor_numel(r), ==, 4);
    g_assert_cmpfloat(tw_tensor_get(r, (int64_t[]){3}), ==, 1.75);
    tw_tensor *down = tw_arange(5, 0, -2, TW_INT64);
    g_assert_cmpint(tw_tensor_numel(down), ==, 3);
    g_assert_cmpfloat(tw_tensor_get(down, (int64_t[]){2}), ==, 1.0);
    tw_tensor *l = tw_linspace(0, 1, 5, TW_FLOAT32);
    g_assert_cmpfloat(tw_tensor_get(l, (int64_t[]){1}), ==, 0.25);
    g_assert_cmpfloat(tw_tensor_get(l, (int64_t[]){4}), ==, 1.0);
    tw_tensor *e = tw_eye(2, 3, TW_UINT8);
    g_assert_cmpfloat(tw_tensor_get(e, (int64_t[]){1, 1}), ==, 1.0);
    g_assert_cmpfloat(tw_tensor_get(e, (int64_t[]){1, 2}), ==, 0.0);
    int64_t data[] = {1, -2, 3};
    tw_tensor *d = tw_tensor_from_data(data, TW_INT64, TW_SHAPE(3));
    data[0] = 100; /* copied, not borrowed */
    g_assert_cmpfloat(tw_tensor_get(d, (int64_t[]){0}), ==, 1.0);
    tw_tensor *b = tw_tensor_from_data((uint8_t[]){1, 0}, TW_BOOL, TW_SHAPE(2));
    g_assert_cmpint(tw_dtype_size(TW_BOOL), ==, 1);
    g_assert_cmpfloat(tw_tensor_get(b, (int64_t[]){0}), ==, 1.0);
    tw_tensor *big = tw_zeros(TW_FLOAT32, TW_SHAPE(1, 1, 1, 1, 1, 1, 1, 2));
    g_assert_cmpint(tw_tensor_ndim(big), ==, 8);
    g_assert_null(tw_zeros(TW_FLOAT32, 9, (int64_t[]){1, 1, 1, 1, 1, 1, 1, 1, 1}));
    g_assert_nonnull(strstr(tw_last_error(), "rank 9"));
    g_assert_null(tw_zeros(TW_FLOAT32, TW_SHAPE(2, -1)));
    g_assert_nonnull(strstr(tw_last_error(), "negative dimension"));
    tw_scope_end();
}

/* Sizes whose product passes INT64_MAX (signed overflow, undefined) are
 * refused naming the op, wherever a shape is made: creation, reshape,
 * broadcast_to, concat. */
static void expect_too_large(const tw_tensor *t, const char *message)
{
    g_assert_null(t);
    g_assert_cmpstr(tw_last_error(), ==, message);
}

static void test_shape_overflow(void)
{
    tw_scope_begin();
    const int64_t big = (int64_t)1 << 32;
    expect_too_large(tw_zeros(TW_FLOAT32, TW_SHAPE(big, big)),
                     "tensor: shape (4294967296, 4294967296) has more than INT64_MAX elements");
    expect_too_large(tw_tensor_empty(TW_UINT8, TW_SHAPE(0, big, big)),
                     "tensor: shape (0, 4294967296, 4294967296) has more than INT64_MAX elements");
    expect_too_large(tw_tensor_empty(TW_FLOAT64, TW_SHAPE((int64_t)1 << 62)),
                     "tensor: shape (4611686018427387904,) of float64 needs more bytes than memory can address");
    tw_tensor *one = tw_ones(TW_FLOAT32, TW_SHAPE(1));
    expect_too_large(tw_broadcast_to(one, TW_SHAPE(big, big)),
                     "broadcast_to: shape (4294967296, 4294967296) has more than INT64_MAX elements");
    expect_too_large(tw_reshape(tw_zeros(TW_FLOAT32, TW_SHAPE(0)), TW_SHAPE(big, big, -1)),
                     "reshape: shape (4294967296, 4294967296, -1) has more than INT64_MAX elements");
    expect_too_large(tw_reshape(tw_zeros(TW_FLOAT32, TW_SHAPE(0)), TW_SHAPE(0, big, big)),
                     "reshape: shape (0, 4294967296, 4294967296) has more than INT64_MAX elements");
    tw_tensor *wide = tw_broadcast_to(one, TW_SHAPE((int64_t)1 << 62));
    g_assert_nonnull(wide); /* a view: no memory behind its 2^62 elements */
    expect_too_large(tw_concat(TW_TENSORS(wide, wide), 0), "concat: the sizes along axis 0 add up past INT64_MAX");
    tw_scope_end();
}

static void test_views_alias(void)
{
    tw_scope_begin();
    tw_tensor *v = tw_variable(tw_arange(0, 12, 1, TW_FLOAT32), "v", true);
    tw_tensor *m = tw_reshape(v, TW_SHAPE(3, 4));
    tw_tensor *t = tw_transpose(m);
    tw_tensor *s = tw_slice(m, 1, 3, 0, -2); /* columns 3, 1 */
    tw_tensor *b = tw_broadcast_to(tw_slice(m, 0, 0, 1, 1), TW_SHAPE(5, 4));
    tw_tensor *u = tw_expand_dims(t, 0);
    tw_tensor *q = tw_squeeze(u, 0, NULL);
    for (tw_tensor **p = (tw_tensor *[]){m, t, s, b, u, q, NULL}; *p; p++)
        g_assert_true(tw_tensor_shares_storage(v, *p));
    g_assert_true(tw_tensor_is_contiguous(m));
    g_assert_false(tw_tensor_is_contiguous(t));
    g_assert_cmpint(tw_tensor_strides(b)[0], ==, 0);
    g_assert_cmpint(tw_tensor_dim(s, 1), ==, 2);
    g_assert_cmpfloat(tw_tensor_get(s, (int64_t[]){2, 0}), ==, 11.0);
    g_assert_cmpfloat(tw_tensor_get(s, (int64_t[]){2, 1}), ==, 9.0);
    tw_assign(v, tw_mul_scalar(tw_arange(0, 12, 1, TW_FLOAT32), -1));
    g_assert_cmpfloat(tw_tensor_get(t, (int64_t[]){3, 2}), ==, -11.0);
    g_assert_cmpfloat(tw_tensor_get(b, (int64_t[]){4, 2}), ==, -2.0);
    g_assert_cmpfloat(tw_tensor_get(q, (int64_t[]){1, 0}), ==, -1.0);
    /* contiguous() copies only what is not packed already */
    tw_tensor *c1 = tw_contiguous(m), *c2 = tw_contiguous(t);
    g_assert_true(c1 == m);
    g_assert_false(tw_tensor_shares_storage(c2, v));
    g_assert_true(tw_tensor_is_contiguous(c2));
    g_assert_cmpfloat(tw_tensor_get(c2, (int64_t[]){3, 2}), ==, -11.0);
    /* reshape of a strided view copies rather than failing */
    tw_tensor *flat = tw_reshape(t, TW_SHAPE(12));
    g_assert_false(tw_tensor_shares_storage(flat, v));
    g_assert_cmpfloat(tw_tensor_get(flat, (int64_t[]){1}), ==, -4.0);
    tw_scope_end();
}

static void test_copy_to_and_cast(void)
{
    tw_scope_begin();
    tw_tensor *m = tw_transpose(tw_tensor_from_data((int32_t[]){1, 2, 3, 4, 5, 6}, TW_INT32, TW_SHAPE(2, 3)));
    int32_t out[6];
    g_assert_cmpint(tw_tensor_copy_to(m, out, sizeof out), ==, 0);
    int32_t expected[] = {1, 4, 2, 5, 3, 6};
    g_assert_cmpmem(out, sizeof out, expected, sizeof expected);
    g_assert_cmpint(tw_tensor_copy_to(m, out, 5), ==, -1);
    tw_tensor *f = tw_cast(tw_tensor_from_data((double[]){-1.7, 0, 2.9, 300}, TW_FLOAT64, TW_SHAPE(4)), TW_INT32);
    g_assert_cmpfloat(tw_tensor_get(f, (int64_t[]){0}), ==, -1.0);
    g_assert_cmpfloat(tw_tensor_get(f, (int64_t[]){2}), ==, 2.0);
    tw_tensor *bits = tw_cast(f, TW_BOOL);
    g_assert_cmpfloat(tw_tensor_get(bits, (int64_t[]){1}), ==, 0.0);
    g_assert_cmpfloat(tw_tensor_get(bits, (int64_t[]){3}), ==, 1.0);
    tw_scope_end();
}

static void test_devices(void)
{
    tw_scope_begin();
    tw_tensor *x = tw_ones(TW_FLOAT32, TW_SHAPE(2));
    char name[32];
    g_assert_cmpstr(tw_device_name(tw_tensor_device(x), name, sizeof name), ==, "cpu:0");
    tw_device cuda = {TW_DEVICE_CUDA, 0};
    g_assert_null(tw_tensor_to(x, cuda));
    g_assert_nonnull(strstr(tw_last_error(), "cuda:0 is not available"));
    g_assert_cmpint(tw_set_default_device(cuda), ==, -1);
    tw_tensor *y = tw_tensor_to(x, TW_CPU);
    g_assert_false(tw_tensor_shares_storage(x, y));
    tw_scope_end();
}

static void test_error_chaining(void)
{
    tw_scope_begin();
    tw_error_clear();
    tw_tensor *a = tw_ones(TW_FLOAT32, TW_SHAPE(2, 3)), *b = tw_ones(TW_FLOAT32, TW_SHAPE(4, 5));
    tw_tensor *r = tw_add(tw_matmul(a, b), a);
    g_assert_null(r);
    g_assert_cmpstr(tw_last_error(), ==, "matmul: inner dimensions differ: (2, 3) x (4, 5)");
    g_assert_true(tw_error_pending());
    tw_error_clear();
    g_assert_false(tw_error_pending());
    g_assert_null(tw_neg(NULL));
    g_assert_cmpstr(tw_last_error(), ==, "neg: input 0 is NULL");
    g_assert_true(isnan(tw_tensor_item(a)));
    g_assert_nonnull(strstr(tw_last_error(), "exactly one element"));
    tw_scope_end();
}

static void test_blas_info(void)
{
    g_assert_nonnull(tw_blas_info());
    g_test_message("BLAS: %s", tw_blas_info());
    g_assert_nonnull(strstr(tw_blas_info(), "OpenBLAS"));
    g_assert_cmpstr(tw_version(), ==, "0.1.0");
}

static void test_op_registry(void)
{
    int count = 0;
    for (const tw_op_def *const *op = tw_op_registry(); *op; op++, count++)
        g_assert_true(tw_op_lookup((*op)->name) == *op);
    g_assert_cmpint(count, >, 50);
    g_assert_null(tw_op_lookup("no_such_op"));
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/tensor/creation", test_creation);
    g_test_add_func("/tensor/shape-overflow", test_shape_overflow);
    g_test_add_func("/tensor/views-alias", test_views_alias);
    g_test_add_func("/tensor/copy-to-and-cast", test_copy_to_and_cast);
    g_test_add_func("/tensor/devices", test_devices);
    g_test_add_func("/tensor/error-chaining", test_error_chaining);
    g_test_add_func("/tensor/blas-info", test_blas_info);
    g_test_add_func("/tensor/op-registry", test_op_registry);
    return g_test_run();
}
