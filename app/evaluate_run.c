/* Evaluations stored in runs: predict, compare with the labels, write
 * (tw/evaluation.h does the counting and the summaries). */
#include <tw/error.h>
#include <tw/evaluation.h>
#include <tw/optimizers.h>
#include <tw/run_store.h>

#include "evaluate_run.h"

/* Predictions are made in batches of this many examples. */
#define PREDICT_BATCH 256

int twb_evaluation_write(tw_summary_writer *w, tw_model *model, tw_tensor *x, tw_tensor *y, const twb_data *data,
                         int64_t step)
{
    if (!twb_evaluation_applies(data))
        return 1;
    tw_tensor *out = tw_model_predict(model, x, PREDICT_BATCH);
    if (!out)
        return -1;
    tw_evaluation e;
    int rc = tw_evaluation_compute(out, y, TW_EVALUATION_PER_CELL, &e);
    tw_tensor_unref(out);
    if (rc)
        return -1;
    /* The names only when they name every class the evaluation counts. */
    const char *const *names = data->class_names && data->class_count == e.classes ? data->class_names : NULL;
    rc = tw_evaluation_log(w, &e, x, names, step);
    tw_evaluation_clear(&e);
    return rc;
}

bool twb_evaluation_applies(const twb_data *data)
{
    return data->classes > 0 && data->ninputs == 1 && tw_tensor_ndim(data->y) == 1;
}

/* The step the run's logs reached (its last epoch's end): a model read
 * back from a checkpoint has no optimizer, and its evaluation belongs
 * there, not at step 0. The model's own count when the run logged nothing
 * (or the file cannot be read: the writer's open says why). */
static int64_t run_last_step(const char *logdb, const char *run, tw_model *model)
{
    tw_optimizer *opt = tw_model_optimizer(model);
    int64_t step = opt ? tw_optimizer_iterations(opt) : 0;
    tw_run_store *store = tw_run_store_open(logdb, TW_STORE_READ_ONLY);
    tw_run_info info;
    if (store && tw_run_store_get_run(store, run, &info) == 0) {
        tw_tag_info *tags;
        int n;
        if (tw_run_store_list_tags(store, info.id, &tags, &n) == 0) {
            for (int i = 0; i < n; i++)
                if (tags[i].count > 0 && tags[i].last_step > step)
                    step = tags[i].last_step;
            tw_tag_info_free(tags, n);
        }
        tw_run_info_clear(&info);
    }
    tw_run_store_close(store);
    tw_error_clear();
    return step;
}

int twb_evaluation_store(const char *logdb, const char *run, tw_model *model, const twb_data *data)
{
    if (!twb_evaluation_applies(data))
        return 1;
    int64_t step = run_last_step(logdb, run, model);
    tw_summary_writer *w = tw_summary_writer_open(logdb, run, &(tw_summary_run_options){.annotate = true});
    if (!w)
        return -1;
    tw_tensor *x, *y;
    twb_fit_inputs(model, data, true, &x, &y);
    int rc = x ? twb_evaluation_write(w, model, x, y, data, step) : -1;
    tw_tensor_unref(x);
    /* The writer's own failure (a read-only file) is the message then. */
    int closed = tw_summary_writer_close(w, TW_RUN_FINISHED);
    return rc ? rc : closed;
}
