/* The rule of kernels/cpu/parallel.h: an op too small for a team, or a
 * thread allowed only one thread, runs without entering an OpenMP parallel
 * region at all (libgomp ends even a region of one thread with a futex
 * system call), while a large op with threads to spare still gets a team.
 * This program counts the regions by defining GOMP_parallel, the entry
 * GCC's `omp parallel` compiles to, ahead of libgomp's: the engine is
 * linked in statically, so its regions come here and are passed on. */
#include <dlfcn.h>
#include <omp.h>

#include <glib.h>

#include <tw/engine.h>
#include <tw/ops.h>
#include <tw/optimizers.h>

static int regions;

void GOMP_parallel(void (*fn)(void *), void *data, unsigned num_threads, unsigned flags);
void GOMP_parallel(void (*fn)(void *), void *data, unsigned num_threads, unsigned flags)
{
    static void (*next)(void (*)(void *), void *, unsigned, unsigned);
    if (!next)
        next = (void (*)(void (*)(void *), void *, unsigned, unsigned))dlsym(RTLD_NEXT, "GOMP_parallel");
    g_assert_nonnull(next);
    regions++;
    next(fn, data, num_threads, flags);
}

/* One training step's kinds of op on bench/run sweep_overhead's sizes (a
 * batch of 32, 64 hidden units): a bias add, relu, a comparison and where,
 * a sum over the batch, a gather and an Adam update. */
static void tiny_step(void)
{
    tw_scope_begin();
    tw_tensor *h = tw_ones(TW_FLOAT32, 2, (int64_t[]){32, 64});
    tw_tensor *b = tw_ones(TW_FLOAT32, 1, (int64_t[]){64});
    tw_tensor *y = tw_relu(tw_add(h, b));
    tw_tensor *mask = tw_greater(y, tw_scalar(0.5));
    g_assert_nonnull(tw_where(mask, y, h));
    g_assert_nonnull(tw_sum(y, 1, (int[]){0}, false));
    tw_tensor *rows = tw_cast(tw_ones(TW_INT32, 1, (int64_t[]){32}), TW_INT64);
    g_assert_nonnull(tw_gather(h, rows, 0));
    tw_tensor *w = tw_variable(tw_ones(TW_FLOAT32, 2, (int64_t[]){2, 64}), "w", true);
    tw_tensor *grad = tw_ones(TW_FLOAT32, 2, (int64_t[]){2, 64});
    tw_optimizer *opt = tw_optimizer_new_named("adam", 0.001);
    g_assert_cmpint(tw_optimizer_apply_gradients(opt, 1, &w, &grad), ==, 0);
    tw_optimizer_free(opt);
    tw_scope_end();
}

/* An elementwise add of 2 x 2^16 elements: well above TWK_PARALLEL_MIN. */
static void large_add(void)
{
    tw_scope_begin();
    tw_tensor *x = tw_ones(TW_FLOAT32, 2, (int64_t[]){2, 65536});
    g_assert_nonnull(tw_add(x, tw_ones(TW_FLOAT32, 1, (int64_t[]){65536})));
    tw_scope_end();
}

static void test_tiny_ops_stay_on_the_caller(void)
{
    tw_set_num_threads(2);
    tiny_step(); /* first calls: lazy initialisation stays out of the count */
    regions = 0;
    for (int i = 0; i < 10; i++)
        tiny_step();
    g_assert_cmpint(regions, ==, 0);
}

static void test_large_op_gets_a_team(void)
{
    tw_set_num_threads(2);
    regions = 0;
    large_add();
    g_assert_cmpint(regions, >, 0);
}

static void test_one_thread_enters_no_region(void)
{
    tw_set_num_threads(1);
    regions = 0;
    large_add();
    g_assert_cmpint(regions, ==, 0);
    tw_set_num_threads(0);
}

int main(int argc, char **argv)
{
    /* the counts asked for, not fewer because the machine is busy */
    g_setenv("TW_ADAPTIVE_THREADS", "0", TRUE);
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/parallel_rule/tiny_ops_stay_on_the_caller", test_tiny_ops_stay_on_the_caller);
    g_test_add_func("/parallel_rule/large_op_gets_a_team", test_large_op_gets_a_team);
    g_test_add_func("/parallel_rule/one_thread_enters_no_region", test_one_thread_enters_no_region);
    return g_test_run();
}
