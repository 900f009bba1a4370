/* Seeded random numbers (Philox), dropout, and printing tensors. */
#include <glib.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "gradcheck.h"
#include "internal.h"

/* In random.c, not in a header: checked against Random123's known answers. */

/* ---- helpers ------------------------------------------------------------------ */
static gboolean same_values(tw_tensor *a, tw_tensor *b)
{
    g_assert_nonnull(a);
    g_assert_nonnull(b);
    if (tw_tensor_dtype(a) != tw_tensor_dtype(b) || tw_tensor_numel(a) != tw_tensor_numel(b))
        return FALSE;
    size_t bytes = (size_t)tw_tensor_numel(a) * tw_dtype_size(tw_tensor_dtype(a));
    return memcmp(tw_tensor_data(a), tw_tensor_data(b), bytes) == 0;
}

static double value_at(tw_tensor *t, int64_t i)
{
    if (tw_tensor_dtype(t) == TW_FLOAT32)
        return ((const float *)tw_tensor_data(t))[i];
    return ((const double *)tw_tensor_data(t))[i];
}

static void moments(tw_tensor *t, double *mean, double *std)
{
    int64_t n = tw_tensor_numel(t);
    double s = 0, s2 = 0;
    for (int64_t i = 0; i < n; i++)
        s += value_at(t, i);
    *mean = s / (double)n;
    for (int64_t i = 0; i < n; i++) {
        double d = value_at(t, i) - *mean;
        s2 += d * d;
    }
    *std = sqrt(s2 / (double)n);
}

static void assert_error(const char *expected)
{
    g_assert_true(tw_error_pending());
    g_assert_cmpstr(tw_last_error(), ==, expected);
    tw_error_clear();
}

static void assert_prints(tw_tensor *t, const char *expected)
{
    g_assert_nonnull(t);
    char *text = tw_tensor_to_string(t);
    g_assert_cmpstr(text, ==, expected);
    free(text);
}

/* ---- Philox ------------------------------------------------------------------- */
static void test_philox_known_answers(void)
{
    /* Random123's kat_vectors for philox4x32 with 10 rounds. */
    static const struct {
        uint32_t ctr[4], key[2], out[4];
    } kat[] = {
        {{0, 0, 0, 0}, {0, 0}, {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
        {{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff},
         {0xffffffff, 0xffffffff},
         {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
        {{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344},
         {0xa4093822, 0x299f31d0},
         {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
    };
    for (size_t k = 0; k < G_N_ELEMENTS(kat); k++) {
        uint32_t out[4];
        tw__philox4x32_10(kat[k].ctr, kat[k].key, out);
        for (int i = 0; i < 4; i++)
            g_assert_cmphex(out[i], ==, kat[k].out[i]);
    }
}

/* ---- the generator ------------------------------------------------------------ */
static void test_same_seed_same_values(void)
{
    tw_scope_begin();
    tw_rng *a = tw_rng_new(42), *b = tw_rng_new(42);
    g_assert_cmpuint(tw_rng_seed(a), ==, 42);
    g_assert_true(same_values(tw_random_normal(a, TW_FLOAT32, TW_SHAPE(3, 5), 0, 1),
                              tw_random_normal(b, TW_FLOAT32, TW_SHAPE(3, 5), 0, 1)));
    g_assert_true(same_values(tw_random_uniform(a, TW_FLOAT64, TW_SHAPE(7), -1, 1),
                              tw_random_uniform(b, TW_FLOAT64, TW_SHAPE(7), -1, 1)));
    g_assert_true(same_values(tw_random_truncated_normal(a, TW_FLOAT64, TW_SHAPE(4, 4), 2, 3),
                              tw_random_truncated_normal(b, TW_FLOAT64, TW_SHAPE(4, 4), 2, 3)));
    g_assert_true(same_values(tw_random_permutation(a, 50), tw_random_permutation(b, 50)));
    tw_rng_free(a);
    tw_rng_free(b);
    tw_scope_end();
}

static void test_different_seeds_differ(void)
{
    tw_scope_begin();
    tw_rng *a = tw_rng_new(1), *b = tw_rng_new(2);
    tw_tensor *x = tw_random_normal(a, TW_FLOAT64, TW_SHAPE(100), 0, 1);
    tw_tensor *y = tw_random_normal(b, TW_FLOAT64, TW_SHAPE(100), 0, 1);
    int equal = 0;
    for (int i = 0; i < 100; i++)
        equal += value_at(x, i) == value_at(y, i);
    g_assert_cmpint(equal, ==, 0);
    g_assert_false(same_values(tw_random_permutation(a, 100), tw_random_permutation(b, 100)));
    tw_rng_free(a);
    tw_rng_free(b);
    tw_scope_end();
}

static void test_sequence_of_draws(void)
{
    tw_scope_begin();
    tw_rng *rng = tw_rng_new(7);
    tw_tensor *first = tw_random_uniform(rng, TW_FLOAT32, TW_SHAPE(64), 0, 1);
    tw_tensor *second = tw_random_uniform(rng, TW_FLOAT32, TW_SHAPE(64), 0, 1);
    g_assert_false(same_values(first, second));
    /* The counter advances by the values drawn: two draws of 10 are one of 20. */
    tw_rng *split = tw_rng_new(7), *whole = tw_rng_new(7);
    tw_tensor *p = tw_random_normal(split, TW_FLOAT64, TW_SHAPE(10), 0, 1);
    tw_tensor *q = tw_random_normal(split, TW_FLOAT64, TW_SHAPE(2, 5), 0, 1);
    tw_tensor *all = tw_random_normal(whole, TW_FLOAT64, TW_SHAPE(20), 0, 1);
    for (int i = 0; i < 10; i++) {
        g_assert_cmpfloat(value_at(p, i), ==, value_at(all, i));
        g_assert_cmpfloat(value_at(q, i), ==, value_at(all, 10 + i));
    }
    /* Permutations drawn one after the other differ. */
    g_assert_false(same_values(tw_random_permutation(rng, 100), tw_random_permutation(rng, 100)));
    tw_rng_free(rng);
    tw_rng_free(split);
    tw_rng_free(whole);
    tw_scope_end();
}

typedef tw_tensor *(*draw_fn)(tw_rng *rng);
static tw_tensor *draw_normal(tw_rng *rng) { return tw_random_normal(rng, TW_FLOAT32, TW_SHAPE(300, 401), 0, 1); }
static tw_tensor *draw_uniform(tw_rng *rng) { return tw_random_uniform(rng, TW_FLOAT64, TW_SHAPE(120001), -2, 5); }
static tw_tensor *draw_truncated(tw_rng *rng)
{
    return tw_random_truncated_normal(rng, TW_FLOAT64, TW_SHAPE(100003), 1, 2);
}

static void test_thread_count_independent(void)
{
    const draw_fn draws[] = {draw_normal, draw_uniform, draw_truncated};
    int saved = omp_get_max_threads();
    tw_scope_begin();
    for (size_t k = 0; k < G_N_ELEMENTS(draws); k++) {
        omp_set_num_threads(1);
        tw_rng *a = tw_rng_new(2024);
        tw_tensor *one = draws[k](a);
        omp_set_num_threads(2);
        tw_rng *b = tw_rng_new(2024);
        tw_tensor *two = draws[k](b);
        g_assert_true(same_values(one, two));
        tw_rng_free(a);
        tw_rng_free(b);
    }
    tw_scope_end();
    omp_set_num_threads(saved);
}

static void test_normal_moments(void)
{
    tw_scope_begin();
    tw_rng *rng = tw_rng_new(11);
    double mean, std;
    moments(tw_random_normal(rng, TW_FLOAT32, TW_SHAPE(100000), 1.5, 2.0), &mean, &std);
    /* standard error of the mean: 2 / sqrt(1e5) = 0.0063 */
    g_assert_cmpfloat_with_epsilon(mean, 1.5, 0.03);
    g_assert_cmpfloat_with_epsilon(std, 2.0, 0.03);
    moments(tw_random_normal(rng, TW_FLOAT64, TW_SHAPE(100000), -3.0, 0.5), &mean, &std);
    g_assert_cmpfloat_with_epsilon(mean, -3.0, 0.008);
    g_assert_cmpfloat_with_epsilon(std, 0.5, 0.008);
    /* stddev 0 is allowed: every value is the mean */
    tw_tensor *constant = tw_random_normal(rng, TW_FLOAT64, TW_SHAPE(10), 4.0, 0.0);
    for (int i = 0; i < 10; i++)
        g_assert_cmpfloat(value_at(constant, i), ==, 4.0);
    tw_rng_free(rng);
    tw_scope_end();
}

static void test_uniform_bounds_and_moments(void)
{
    tw_scope_begin();
    tw_rng *rng = tw_rng_new(12);
    for (int dt = 0; dt < 2; dt++) {
        tw_dtype dtype = dt ? TW_FLOAT64 : TW_FLOAT32;
        tw_tensor *u = tw_random_uniform(rng, dtype, TW_SHAPE(100000), -1.0, 3.0);
        double lo = INFINITY, hi = -INFINITY;
        for (int64_t i = 0; i < 100000; i++) {
            lo = fmin(lo, value_at(u, i));
            hi = fmax(hi, value_at(u, i));
        }
        g_assert_cmpfloat(lo, >=, -1.0);
        g_assert_cmpfloat(hi, <, 3.0);
        g_assert_cmpfloat(lo, <, -0.99);
        g_assert_cmpfloat(hi, >, 2.99);
        double mean, std;
        moments(u, &mean, &std);
        g_assert_cmpfloat_with_epsilon(mean, 1.0, 0.02);
        g_assert_cmpfloat_with_epsilon(std, 4.0 / sqrt(12.0), 0.02);
    }
    /* A range narrower than float32 can resolve still stays in [low, high). */
    tw_tensor *narrow = tw_random_uniform(rng, TW_FLOAT32, TW_SHAPE(10000), 1.0, 1.0 + 3e-7);
    for (int64_t i = 0; i < 10000; i++) {
        g_assert_cmpfloat(value_at(narrow, i), >=, 1.0);
        g_assert_cmpfloat(value_at(narrow, i), <, (float)(1.0 + 3e-7));
    }
    tw_rng_free(rng);
    tw_scope_end();
}

static void test_truncated_normal(void)
{
    tw_scope_begin();
    tw_rng *rng = tw_rng_new(13);
    for (int dt = 0; dt < 2; dt++) {
        tw_dtype dtype = dt ? TW_FLOAT64 : TW_FLOAT32;
        tw_tensor *t = tw_random_truncated_normal(rng, dtype, TW_SHAPE(100000), 0.5, 3.0);
        double far = 0;
        for (int64_t i = 0; i < 100000; i++)
            far = fmax(far, fabs(value_at(t, i) - 0.5));
        g_assert_cmpfloat(far, <=, 6.0 * (1 + 1e-6));
        g_assert_cmpfloat(far, >, 5.9); /* the tails are there, just cut */
        double mean, std;
        moments(t, &mean, &std);
        /* N(0, 1) cut at +-2 has standard deviation 0.8796 */
        g_assert_cmpfloat_with_epsilon(mean, 0.5, 0.04);
        g_assert_cmpfloat_with_epsilon(std, 3.0 * 0.87962, 0.04);
    }
    tw_rng_free(rng);
    tw_scope_end();
}

static void test_permutation(void)
{
    tw_scope_begin();
    tw_rng *rng = tw_rng_new(14);
    const int64_t n = 1000;
    tw_tensor *p = tw_random_permutation(rng, n);
    g_assert_nonnull(p);
    g_assert_cmpint(tw_tensor_dtype(p), ==, TW_INT64);
    g_assert_cmpint(tw_tensor_ndim(p), ==, 1);
    g_assert_cmpint(tw_tensor_dim(p, 0), ==, n);
    const int64_t *v = tw_tensor_data(p);
    gboolean *seen = g_new0(gboolean, n);
    int64_t fixed = 0;
    for (int64_t i = 0; i < n; i++) {
        g_assert_cmpint(v[i], >=, 0);
        g_assert_cmpint(v[i], <, n);
        g_assert_false(seen[v[i]]);
        seen[v[i]] = TRUE;
        fixed += v[i] == i;
    }
    g_free(seen);
    g_assert_cmpint(fixed, <, 10); /* about 1 expected */
    /* Each position is roughly uniform: where does 0 go over many draws? */
    int64_t first_half = 0;
    for (int k = 0; k < 400; k++) {
        const int64_t *w = tw_tensor_data(tw_random_permutation(rng, 10));
        for (int i = 0; i < 5; i++)
            first_half += w[i] == 0;
    }
    g_assert_cmpint(first_half, >, 140);
    g_assert_cmpint(first_half, <, 260);
    g_assert_cmpint(tw_tensor_numel(tw_random_permutation(rng, 0)), ==, 0);
    g_assert_cmpint(((const int64_t *)tw_tensor_data(tw_random_permutation(rng, 1)))[0], ==, 0);
    tw_rng_free(rng);
    tw_scope_end();
}

static void test_random_errors(void)
{
    tw_rng *rng = tw_rng_new(1);
    g_assert_null(tw_random_normal(rng, TW_INT32, TW_SHAPE(2), 0, 1));
    assert_error("random_normal: dtype int32 is not a float type");
    g_assert_null(tw_random_uniform(rng, TW_BOOL, TW_SHAPE(2), 0, 1));
    assert_error("random_uniform: dtype bool is not a float type");
    g_assert_null(tw_random_truncated_normal(rng, TW_INT64, TW_SHAPE(2), 0, 1));
    assert_error("random_truncated_normal: dtype int64 is not a float type");
    g_assert_null(tw_random_uniform(rng, TW_FLOAT32, TW_SHAPE(2), 1, 1));
    assert_error("random_uniform: low 1 is not less than high 1");
    g_assert_null(tw_random_uniform(rng, TW_FLOAT32, TW_SHAPE(2), 2, -1));
    assert_error("random_uniform: low 2 is not less than high -1");
    g_assert_null(tw_random_normal(rng, TW_FLOAT32, TW_SHAPE(2), 0, -0.5));
    assert_error("random_normal: stddev -0.5 is negative");
    g_assert_null(tw_random_truncated_normal(rng, TW_FLOAT64, TW_SHAPE(2), 0, -1));
    assert_error("random_truncated_normal: stddev -1 is negative");
    g_assert_null(tw_random_normal(NULL, TW_FLOAT32, TW_SHAPE(2), 0, 1));
    assert_error("random_normal: rng is NULL");
    g_assert_null(tw_random_permutation(NULL, 3));
    assert_error("random_permutation: rng is NULL");
    g_assert_null(tw_random_permutation(rng, -2));
    assert_error("random_permutation: n -2 is negative");
    g_assert_null(tw_random_uniform(rng, TW_FLOAT32, TW_SHAPE(2, -3), 0, 1));
    assert_error("random_uniform: negative dimension in shape (2, -3)");
    /* A failed draw leaves the counter where it was. */
    tw_rng *fresh = tw_rng_new(1);
    tw_tensor *a = tw_random_uniform(rng, TW_FLOAT64, TW_SHAPE(4), 0, 1);
    tw_tensor *b = tw_random_uniform(fresh, TW_FLOAT64, TW_SHAPE(4), 0, 1);
    g_assert_true(same_values(a, b));
    tw_tensor_unref(a);
    tw_tensor_unref(b);
    tw_rng_free(rng);
    tw_rng_free(fresh);
}

/* ---- dropout ------------------------------------------------------------------ */
static void test_dropout_statistics(void)
{
    tw_scope_begin();
    tw_rng *rng = tw_rng_new(21);
    const double rate = 0.3;
    tw_tensor *x = tw_full(2.0, TW_FLOAT32, TW_SHAPE(200, 500));
    tw_tensor *y = tw_dropout(x, rate, rng);
    g_assert_nonnull(y);
    g_assert_cmpint(tw_tensor_dtype(y), ==, TW_FLOAT32);
    g_assert_cmpint(tw_tensor_dim(y, 0), ==, 200);
    g_assert_cmpint(tw_tensor_dim(y, 1), ==, 500);
    const float *v = tw_tensor_data(y);
    const float survivor = (float)(2.0f / (float)(1.0 - rate));
    int64_t zeros = 0;
    for (int64_t i = 0; i < 100000; i++) {
        if (v[i] == 0.0f)
            zeros++;
        else
            g_assert_cmpfloat_with_epsilon(v[i], survivor, 1e-6);
    }
    /* binomial standard deviation sqrt(1e5 * 0.21) = 145 */
    g_assert_cmpint(zeros, >, 30000 - 1000);
    g_assert_cmpint(zeros, <, 30000 + 1000);
    /* The expected value is kept: mean(y) is close to mean(x). */
    g_assert_cmpfloat_with_epsilon(tw_tensor_item(tw_mean_all(y)), 2.0, 0.02);
    tw_rng_free(rng);
    tw_scope_end();
}

static void test_dropout_reproducible(void)
{
    tw_scope_begin();
    tw_tensor *x = gc_tensor(3, -1, 1, TW_SHAPE(8, 9));
    tw_rng *a = tw_rng_new(99), *b = tw_rng_new(99);
    tw_tensor *ya = tw_dropout(x, 0.5, a), *yb = tw_dropout(x, 0.5, b);
    g_assert_true(same_values(ya, yb));
    /* the next call draws a new mask */
    g_assert_false(same_values(tw_dropout(x, 0.5, a), ya));
    tw_rng_free(a);
    tw_rng_free(b);
    tw_scope_end();
}

static void test_dropout_rate_zero_and_errors(void)
{
    tw_rng *rng = tw_rng_new(5);
    tw_tensor *x = tw_ones(TW_FLOAT32, TW_SHAPE(3));
    tw_tensor *y = tw_dropout(x, 0.0, rng);
    g_assert_true(y == x);
    tw_tensor_unref(y); /* a new reference */
    g_assert_null(tw_dropout(x, 1.5, rng));
    assert_error("dropout: rate 1.5 is outside [0, 1)");
    g_assert_null(tw_dropout(x, 1.0, rng));
    assert_error("dropout: rate 1 is outside [0, 1)");
    g_assert_null(tw_dropout(x, -0.1, rng));
    assert_error("dropout: rate -0.1 is outside [0, 1)");
    g_assert_null(tw_dropout(x, NAN, rng));
    assert_error("dropout: rate nan is outside [0, 1)");
    g_assert_null(tw_dropout(x, 0.5, NULL));
    assert_error("dropout: rng is NULL");
    tw_tensor *ints = tw_ones(TW_INT32, TW_SHAPE(3));
    g_assert_null(tw_dropout(ints, 0.5, rng));
    assert_error("dropout: dtype int32 is not a float type");
    g_assert_null(tw_dropout(NULL, 0.5, rng));
    assert_error("dropout: input 0 is NULL");
    tw_tensor_unref(ints);
    tw_tensor_unref(x);
    tw_rng_free(rng);
}

static void test_dropout_gradient_is_mask(void)
{
    tw_scope_begin();
    const double rate = 0.25;
    tw_rng *rng = tw_rng_new(31);
    tw_tensor *x = gc_tensor(4, 1, 2, TW_SHAPE(20, 30)); /* no zeros in x */
    tw_tape *tape = tw_tape_begin(false);
    g_assert_cmpint(tw_tape_watch(tape, x), ==, 0);
    tw_tensor *y = tw_dropout(x, rate, rng);
    tw_tensor *loss = tw_sum_all(y);
    tw_tape_end(tape);
    tw_tensor *grad = NULL;
    g_assert_cmpint(tw_tape_gradient(tape, loss, TW_TENSORS(x), &grad), ==, 0);
    g_assert_nonnull(grad);
    int64_t kept = 0;
    for (int64_t i = 0; i < 600; i++) {
        double yi = value_at(y, i), gi = value_at(grad, i);
        if (yi == 0.0) {
            g_assert_cmpfloat(gi, ==, 0.0);
        } else {
            kept++;
            g_assert_cmpfloat_with_epsilon(gi, 1.0 / (1.0 - rate), 1e-12);
            g_assert_cmpfloat_with_epsilon(yi, value_at(x, i) / (1.0 - rate), 1e-12);
        }
    }
    g_assert_cmpint(kept, >, 350);
    g_assert_cmpint(kept, <, 550);
    tw_tape_free(tape);
    tw_rng_free(rng);
    tw_scope_end();
}

/* A fresh generator each call: the same mask, so finite differences apply. */
static tw_tensor *dropout_fixed_mask(tw_tensor *const *inputs, void *data)
{
    tw_rng *rng = tw_rng_new(77);
    tw_tensor *y = tw_dropout(inputs[0], 0.4, rng);
    tw_rng_free(rng);
    return y;
}

static void test_dropout_gradcheck(void)
{
    tw_scope_begin();
    tw_tensor *x = gc_tensor(5, -1, 1, TW_SHAPE(6, 7));
    gc_check("dropout", dropout_fixed_mask, 1, &x, NULL);
    gc_check_second("dropout", dropout_fixed_mask, 1, &x, NULL);
    tw_scope_end();
}

/* ---- printing ---------------------------------------------------------------- */
static void test_print_int_matrix(void)
{
    tw_scope_begin();
    const int32_t v[] = {1, 2, 3, 4};
    assert_prints(tw_tensor_from_data(v, TW_INT32, TW_SHAPE(2, 2)), "tw.Tensor(\n"
                                                                   "[[1 2]\n"
                                                                   " [3 4]], shape=(2, 2), dtype=int32)");
    const int32_t w[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, -11};
    assert_prints(tw_tensor_from_data(w, TW_INT32, TW_SHAPE(2, 2, 3)), "tw.Tensor(\n"
                                                                      "[[[  0   1   2]\n"
                                                                      "  [  3   4   5]]\n"
                                                                      "\n"
                                                                      " [[  6   7   8]\n"
                                                                      "  [  9  10 -11]]], shape=(2, 2, 3), dtype=int32)");
    tw_scope_end();
}

static void test_print_float_scalars(void)
{
    tw_scope_begin();
    assert_prints(tw_scalar_of(6.0, TW_FLOAT32), "tw.Tensor(6.0, shape=(), dtype=float32)");
    assert_prints(tw_scalar_of(0.1, TW_FLOAT32), "tw.Tensor(0.1, shape=(), dtype=float32)");
    assert_prints(tw_scalar_of(1e-5, TW_FLOAT64), "tw.Tensor(1e-05, shape=(), dtype=float64)");
    assert_prints(tw_scalar_of(-2.5e20, TW_FLOAT32), "tw.Tensor(-2.5e+20, shape=(), dtype=float32)");
    assert_prints(tw_scalar_of(7, TW_INT64), "tw.Tensor(7, shape=(), dtype=int64)");
    assert_prints(tw_scalar_of(1, TW_BOOL), "tw.Tensor(True, shape=(), dtype=bool)");
    tw_scope_end();
}

static void test_print_float_vectors(void)
{
    tw_scope_begin();
    const float a[] = {1, 2, 3};
    assert_prints(tw_tensor_from_data(a, TW_FLOAT32, TW_SHAPE(3)), "tw.Tensor([1. 2. 3.], shape=(3,), dtype=float32)");
    const float b[] = {1.5f, 2.25f, -3};
    assert_prints(tw_tensor_from_data(b, TW_FLOAT32, TW_SHAPE(3)),
                  "tw.Tensor([ 1.5   2.25 -3.  ], shape=(3,), dtype=float32)");
    const float c[] = {0.1f, 0.2f, 0.3f};
    assert_prints(tw_tensor_from_data(c, TW_FLOAT32, TW_SHAPE(3)), "tw.Tensor([0.1 0.2 0.3], shape=(3,), dtype=float32)");
    const double d[] = {0.1 + 0.2, 1.0 / 3.0};
    assert_prints(tw_tensor_from_data(d, TW_FLOAT64, TW_SHAPE(2)),
                  "tw.Tensor([0.3        0.33333333], shape=(2,), dtype=float64)");
    const float e[] = {1e-5f, 1};
    assert_prints(tw_tensor_from_data(e, TW_FLOAT32, TW_SHAPE(2)), "tw.Tensor([1.e-05 1.e+00], shape=(2,), dtype=float32)");
    const float f[] = {1, NAN, -INFINITY};
    assert_prints(tw_tensor_from_data(f, TW_FLOAT32, TW_SHAPE(3)),
                  "tw.Tensor([  1.  nan -inf], shape=(3,), dtype=float32)");
    /* a line of 75 characters at most, continued under the first value */
    assert_prints(tw_arange(0, 45, 1.5, TW_FLOAT64),
                  "tw.Tensor(\n"
                  "[ 0.   1.5  3.   4.5  6.   7.5  9.  10.5 12.  13.5 15.  16.5 18.  19.5\n"
                  " 21.  22.5 24.  25.5 27.  28.5 30.  31.5 33.  34.5 36.  37.5 39.  40.5\n"
                  " 42.  43.5], shape=(30,), dtype=float64)");
    assert_prints(tw_zeros(TW_FLOAT32, TW_SHAPE(2, 0)), "tw.Tensor([], shape=(2, 0), dtype=float32)");
    tw_scope_end();
}

static void test_print_bool(void)
{
    tw_scope_begin();
    const uint8_t v[] = {1, 0, 1};
    assert_prints(tw_tensor_from_data(v, TW_BOOL, TW_SHAPE(3)), "tw.Tensor([ True False  True], shape=(3,), dtype=bool)");
    tw_scope_end();
}

static void test_print_elided(void)
{
    tw_scope_begin();
    assert_prints(tw_arange(0, 2000, 1, TW_INT32),
                  "tw.Tensor([   0    1    2 ... 1997 1998 1999], shape=(2000,), dtype=int32)");
    assert_prints(tw_reshape(tw_arange(0, 2000, 1, TW_FLOAT32), TW_SHAPE(50, 40)),
                  "tw.Tensor(\n"
                  "[[0.000e+00 1.000e+00 2.000e+00 ... 3.700e+01 3.800e+01 3.900e+01]\n"
                  " [4.000e+01 4.100e+01 4.200e+01 ... 7.700e+01 7.800e+01 7.900e+01]\n"
                  " [8.000e+01 8.100e+01 8.200e+01 ... 1.170e+02 1.180e+02 1.190e+02]\n"
                  " ...\n"
                  " [1.880e+03 1.881e+03 1.882e+03 ... 1.917e+03 1.918e+03 1.919e+03]\n"
                  " [1.920e+03 1.921e+03 1.922e+03 ... 1.957e+03 1.958e+03 1.959e+03]\n"
                  " [1.960e+03 1.961e+03 1.962e+03 ... 1.997e+03 1.998e+03 1.999e+03]], "
                  "shape=(50, 40), dtype=float32)");
    /* 1000 elements are printed in full */
    char *full = tw_tensor_to_string(tw_arange(0, 1000, 1, TW_INT32));
    g_assert_null(strstr(full, "..."));
    g_assert_nonnull(strstr(full, " 500 "));
    free(full);
    tw_scope_end();
}

static void test_print_views(void)
{
    tw_scope_begin();
    tw_tensor *m = tw_reshape(tw_arange(0, 6, 1, TW_INT32), TW_SHAPE(2, 3));
    tw_tensor *t = tw_transpose(m);
    g_assert_false(tw_tensor_is_contiguous(t));
    assert_prints(t, "tw.Tensor(\n"
                     "[[0 3]\n"
                     " [1 4]\n"
                     " [2 5]], shape=(3, 2), dtype=int32)");
    tw_tensor *r = tw_slice(tw_arange(0, 10, 1, TW_FLOAT64), 0, TW_END, TW_END, -3);
    g_assert_nonnull(r);
    assert_prints(r, "tw.Tensor([9. 6. 3. 0.], shape=(4,), dtype=float64)");
    tw_scope_end();
}

static void test_print_to_stream(void)
{
    tw_scope_begin();
    char *buf = NULL;
    size_t size = 0;
    FILE *out = open_memstream(&buf, &size);
    g_assert_cmpint(tw_tensor_print(tw_scalar_of(2.5, TW_FLOAT64), out), ==, 0);
    fclose(out);
    g_assert_cmpstr(buf, ==, "tw.Tensor(2.5, shape=(), dtype=float64)\n");
    free(buf);
    g_assert_null(tw_tensor_to_string(NULL));
    assert_error("tensor_to_string: input 0 is NULL");
    tw_scope_end();
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/random/philox-known-answers", test_philox_known_answers);
    g_test_add_func("/random/same-seed-same-values", test_same_seed_same_values);
    g_test_add_func("/random/different-seeds-differ", test_different_seeds_differ);
    g_test_add_func("/random/sequence-of-draws", test_sequence_of_draws);
    g_test_add_func("/random/thread-count-independent", test_thread_count_independent);
    g_test_add_func("/random/normal-moments", test_normal_moments);
    g_test_add_func("/random/uniform-bounds", test_uniform_bounds_and_moments);
    g_test_add_func("/random/truncated-normal", test_truncated_normal);
    g_test_add_func("/random/permutation", test_permutation);
    g_test_add_func("/random/errors", test_random_errors);
    g_test_add_func("/dropout/statistics", test_dropout_statistics);
    g_test_add_func("/dropout/reproducible", test_dropout_reproducible);
    g_test_add_func("/dropout/rate-zero-and-errors", test_dropout_rate_zero_and_errors);
    g_test_add_func("/dropout/gradient-is-mask", test_dropout_gradient_is_mask);
    g_test_add_func("/dropout/gradcheck", test_dropout_gradcheck);
    g_test_add_func("/print/int-matrix", test_print_int_matrix);
    g_test_add_func("/print/float-scalars", test_print_float_scalars);
    g_test_add_func("/print/float-vectors", test_print_float_vectors);
    g_test_add_func("/print/bool", test_print_bool);
    g_test_add_func("/print/elided", test_print_elided);
    g_test_add_func("/print/views", test_print_views);
    g_test_add_func("/print/to-stream", test_print_to_stream);
    int rc = g_test_run();
    tw__pool_trim();
    return rc;
}
