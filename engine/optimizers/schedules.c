/* Learning-rate schedules, as Keras' LearningRateSchedule classes compute
 * them from the optimizer's iteration count (0 for the first update). NaN
 * for a decaying schedule without positive decay_steps (optimizers refuse
 * such a configuration). */
#include <math.h>

#include "tw/optimizers.h"

/* keras.optimizers.schedules.CosineDecay (no warmup): from the initial
 * rate down to alpha times it over decay_steps, then flat. */
static double cosine_decay(const tw_lr_schedule *s, double step)
{
    double fraction = fmin(step, (double)s->decay_steps) / (double)s->decay_steps;
    double cosine = 0.5 * (1 + cos(M_PI * fraction));
    return s->initial_learning_rate * ((1 - s->alpha) * cosine + s->alpha);
}

double tw_lr_schedule_at(const tw_lr_schedule *schedule, int64_t step)
{
    if (!schedule || (schedule->kind != TW_SCHEDULE_CONSTANT && schedule->decay_steps <= 0))
        return NAN;
    double p = step > 0 ? (double)step : 0;
    switch (schedule->kind) {
    case TW_SCHEDULE_EXPONENTIAL_DECAY:
        p /= (double)schedule->decay_steps;
        return schedule->initial_learning_rate * pow(schedule->decay_rate, schedule->staircase ? floor(p) : p);
    case TW_SCHEDULE_COSINE_DECAY:
        return cosine_decay(schedule, p);
    case TW_SCHEDULE_STEP_DECAY:
        return schedule->initial_learning_rate * pow(schedule->decay_rate, floor(p / (double)schedule->decay_steps));
    default:
        return schedule->initial_learning_rate;
    }
}
