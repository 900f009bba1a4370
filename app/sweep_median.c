/* The median stopping rule (sweep_median.h). */
#include "sweep_median.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <glib.h>

#include <tw/error.h>
#include <tw/run_store.h>

struct twb_median_stop {
    char *logdb, *sweep, *run_name;
    const char *key, *tag; /* "val_loss" and "validation/loss", or "loss" and "epoch/loss" */
    GArray *monitored;     /* double per finished epoch */
    char *reason;
};

twb_median_stop *twb_median_stop_new(const tw_train_settings *settings, const char *sweep)
{
    twb_median_stop *m = g_new0(twb_median_stop, 1);
    m->logdb = g_strdup(settings->logdb);
    m->sweep = g_strdup(sweep);
    m->run_name = g_strdup(settings->run_name);
    bool validation = settings->validation_split > 0;
    m->key = validation ? "val_loss" : "loss";
    m->tag = validation ? "validation/loss" : "epoch/loss"; /* the summary logger's names for them */
    m->monitored = g_array_new(FALSE, FALSE, sizeof(double));
    return m;
}

void twb_median_stop_free(twb_median_stop *m)
{
    if (!m)
        return;
    g_free(m->logdb);
    g_free(m->sweep);
    g_free(m->run_name);
    g_array_free(m->monitored, TRUE);
    g_free(m->reason);
    g_free(m);
}

const char *twb_median_stop_reason(const twb_median_stop *m)
{
    return m->reason;
}

int twb_median_stop_epochs(const twb_median_stop *m)
{
    return (int)m->monitored->len;
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The run's mean of its first e+1 monitored values (one per epoch), NAN
 * when it has fewer or one is not finite. */
static double running_mean(tw_run_store *store, int64_t run_id, const char *tag, int e)
{
    int64_t tag_id = tw_run_store_find_tag(store, run_id, tag);
    tw_series_cursor cursor = {0};
    tw_scalar_point *points = NULL;
    int64_t n = 0;
    if (tag_id < 0 || tw_run_store_read_scalars(store, tag_id, &cursor, e + 1, &points, &n) || n < e + 1) {
        free(points);
        return NAN;
    }
    double sum = 0;
    for (int k = 0; k <= e; k++)
        sum += points[k].value;
    free(points);
    return isfinite(sum) ? sum / (e + 1) : NAN;
}

/* The median of the sweep's other trials' running means up to epoch e;
 * NAN when fewer than two reached it (or the file cannot be read). */
static double median_of_others(const twb_median_stop *m, int e)
{
    tw_run_store *store = tw_run_store_open(m->logdb, TW_STORE_READ_ONLY);
    tw_run_info *runs = NULL;
    int n = 0;
    if (!store || tw_run_store_list_runs(store, &runs, &n)) {
        tw_run_store_close(store);
        tw_error_clear();
        return NAN;
    }
    double *means = g_new(double, n + 1);
    int k = 0;
    for (int i = 0; i < n; i++) {
        if (g_strcmp0(runs[i].sweep, m->sweep) || !g_strcmp0(runs[i].name, m->run_name))
            continue;
        double mean = running_mean(store, runs[i].id, m->tag, e);
        if (!isnan(mean))
            means[k++] = mean;
    }
    tw_run_info_free(runs, n);
    tw_run_store_close(store);
    tw_error_clear();
    double median = NAN;
    if (k >= 2) {
        qsort(means, (size_t)k, sizeof *means, compare_doubles);
        median = k % 2 ? means[k / 2] : (means[k / 2 - 1] + means[k / 2]) / 2;
    }
    g_free(means);
    return median;
}

static int on_epoch_end(tw_model *model, const tw_progress *p, const tw_logs *logs, void *user_data)
{
    (void)model;
    (void)p;
    twb_median_stop *m = user_data;
    double value = tw_logs_get(logs, m->key);
    g_array_append_val(m->monitored, value);
    int e = (int)m->monitored->len - 1;
    double best = INFINITY;
    for (int k = 0; k <= e; k++)
        best = fmin(best, g_array_index(m->monitored, double, k));
    double median = median_of_others(m, e);
    if (!(best > median))
        return 0;
    g_free(m->reason);
    m->reason = g_strdup_printf("stopped by the median stopping rule after epoch %d: best %s %.4g is worse than "
                                "the median %.4g of the other trials' running means",
                                e + 1, m->key, best, median);
    return 1;
}

tw_callback twb_median_stop_callback(twb_median_stop *m)
{
    return (tw_callback){.on_epoch_end = on_epoch_end, .user_data = m};
}
