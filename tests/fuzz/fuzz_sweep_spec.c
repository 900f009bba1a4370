/* libFuzzer target for `twb sweep`'s value parser (app/sweep_spec.c): the
 * input's lines are the values of --learning-rate, --batch-size,
 * --optimizer, --epochs and --seed, then texts of --set
 * (LAYER.PROPERTY=VALUES); a first byte's low bits pick random search and
 * a number of trials. Each refusal names its option; accepted specs give
 * trials whose values lie in what was asked. The --set texts are then
 * checked against a model holding a nested one (tw_model_find_layer_path's
 * paths and bare names, each layer's own rules). */
#include <math.h>
#include <string.h>

#include <glib.h>

#include "fuzz_check.h"
#include "sweep_spec.h"

/* outer: block (Sequential: dense, hidden, dropout), dense, dense_1 — "dense"
 * names two layers, "hidden" one nested layer. */
static tw_model *nested_model(void)
{
    static tw_model *model;
    if (model)
        return model;
    tw_model *block = tw_sequential_new("block");
    tw_model_add(block, tw_dense(8, "relu"));
    tw_layer *hidden = tw_dense(4, NULL);
    tw_layer_set_name(hidden, "hidden");
    tw_model_add(block, hidden);
    tw_model_add(block, tw_layer_new("Dropout", "dropout"));
    model = tw_sequential_new("outer");
    tw_model_add(model, block);
    tw_model_add(model, tw_dense(3, NULL));
    tw_model_add(model, tw_dense(2, NULL));
    return model;
}

static void check_trial(const twb_sweep_spec *spec, const tw_train_settings *t)
{
    const twb_sweep_axis *lr = &spec->axes[TWB_SWEEP_LEARNING_RATE], *bs = &spec->axes[TWB_SWEEP_BATCH_SIZE];
    if (lr->given && lr->range)
        FUZZ_ASSERT(t->learning_rate >= lr->min && t->learning_rate <= lr->max);
    if (lr->given)
        FUZZ_ASSERT(t->learning_rate > 0 && isfinite(t->learning_rate));
    if (bs->given && bs->range)
        FUZZ_ASSERT(t->batch_size >= bs->min && t->batch_size <= bs->max);
    FUZZ_ASSERT(t->batch_size >= 1 && t->epochs >= 1 && t->optimizer);
    FUZZ_ASSERT(t->nlayer_values == spec->nlayers);
    for (int i = 0; i < spec->nlayers; i++) {
        const twb_sweep_axis *axis = &spec->layers[i].axis;
        double v = t->layer_values[i].value;
        FUZZ_ASSERT(isfinite(v) && !strcmp(t->layer_values[i].layer, spec->layers[i].layer));
        if (axis->range)
            FUZZ_ASSERT(v >= axis->min && v <= axis->max);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    twb_sweep_spec spec = {.random = data[0] & 1, .trials = (data[0] >> 1) & 15};
    char *text = g_strndup((const char *)data + 1, size - 1);
    char **lines = g_strsplit(text, "\n", TWB_SWEEP_NPARAMS + 4);
    int rc = 0;
    for (int p = 0; lines[p] && p < TWB_SWEEP_NPARAMS && !rc; p++) {
        rc = twb_sweep_spec_set(&spec, (twb_sweep_param)p, lines[p]);
        if (rc)
            fuzz_check_failure(twb_sweep_param_option((twb_sweep_param)p));
    }
    for (int i = TWB_SWEEP_NPARAMS; !rc && i < (int)g_strv_length(lines); i++) {
        rc = twb_sweep_spec_set_layer(&spec, lines[i]);
        if (rc)
            fuzz_check_failure("--set");
    }
    if (!rc && spec.nlayers && twb_sweep_spec_check_model(&spec, nested_model()))
        fuzz_check_failure("--set"); /* and the sweep goes on: the trials need no model */
    tw_train_settings base = tw_train_settings_defaults(), *trials = NULL;
    int n = 0;
    if (!rc && twb_sweep_spec_trials(&spec, &base, &trials, &n) == 0) {
        FUZZ_ASSERT(n >= 1 && n <= TWB_SWEEP_MAX_TRIALS);
        for (int i = 0; i < n; i++)
            check_trial(&spec, &trials[i]);
    } else if (!rc)
        fuzz_check_failure("twb sweep");
    g_free(trials);
    twb_sweep_spec_clear(&spec);
    g_strfreev(lines);
    g_free(text);
    return 0;
}
