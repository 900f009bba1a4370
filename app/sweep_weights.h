/* A sweep trial's model when the model file holds weights (a .keras, .h5
 * or safetensors checkpoint): the layer values change its architecture,
 * and as in Keras a changed architecture means fresh weights, but only
 * where the shapes changed. The trial's model is a copy of the file's
 * (tw_layer_clone) with the trial's layer values set, built with the
 * trial's seed as fit builds an unbuilt model, holding every weight of
 * the file whose path and shape are still there (Keras' load_weights with
 * skip_mismatch): `--set dense.units=32` over a file with 16 gives fresh
 * dense/kernel, dense/bias and the next layer's kernel, and keeps the
 * rest; `--set dropout.rate=0.3` keeps them all (fine-tuning under the
 * sweep). The notice names each fresh weight with both shapes, for the
 * trial's line and its run (the text tag TWB_SWEEP_WEIGHTS_TAG).
 *
 *     char *notice = NULL;
 *     tw_model *m = twb_sweep_trial_model("model.keras", &trial, &notice);
 *     if (!m) ... tw_last_error()
 *     if (notice) ... log it; g_free(notice)
 */
#ifndef TWB_SWEEP_WEIGHTS_H
#define TWB_SWEEP_WEIGHTS_H

#include <tw/model.h>
#include <tw/train_settings.h>

/* The run's text tag holding the notice. */
#define TWB_SWEEP_WEIGHTS_TAG "sweep/weights"

/* The model file opened for the trial: without weights in the file, with
 * the trial's values set (twb_model_with_layer_values); with them, as the
 * file has it when every layer value is the file's already, otherwise the
 * copy described above, and
 * *notice the fresh weights (g_free; NULL when every weight was kept).
 * NULL with a message naming the file or the layer. */
tw_model *twb_sweep_trial_model(const char *path, const tw_train_settings *trial, char **notice);

#endif
