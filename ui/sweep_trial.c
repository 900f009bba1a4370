/* TwSweepTrial (see sweep_trial.h). */
#include "sweep_trial.h"

struct _TwSweepTrial {
    GObject parent_instance;
    char *run_name, *values, *reason;
    TwSweepTrialStatus status;
};

G_DEFINE_FINAL_TYPE(TwSweepTrial, tw_sweep_trial, G_TYPE_OBJECT)

enum { PROP_0, PROP_STATUS, N_PROPS };
static GParamSpec *props[N_PROPS];

static void tw_sweep_trial_get_property(GObject *object, guint id, GValue *value, GParamSpec *pspec)
{
    TwSweepTrial *self = TW_SWEEP_TRIAL(object);
    if (id == PROP_STATUS)
        g_value_set_int(value, self->status);
    else
        G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec);
}

static void tw_sweep_trial_finalize(GObject *object)
{
    TwSweepTrial *self = TW_SWEEP_TRIAL(object);
    g_free(self->run_name);
    g_free(self->values);
    g_free(self->reason);
    G_OBJECT_CLASS(tw_sweep_trial_parent_class)->finalize(object);
}

static void tw_sweep_trial_class_init(TwSweepTrialClass *klass)
{
    GObjectClass *object_class = G_OBJECT_CLASS(klass);
    object_class->get_property = tw_sweep_trial_get_property;
    object_class->finalize = tw_sweep_trial_finalize;
    props[PROP_STATUS] = g_param_spec_int("status", NULL, NULL, TW_SWEEP_TRIAL_PENDING, TW_SWEEP_TRIAL_CANCELLED,
                                          TW_SWEEP_TRIAL_PENDING, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
    g_object_class_install_properties(object_class, N_PROPS, props);
}

static void tw_sweep_trial_init(TwSweepTrial *self)
{
}

TwSweepTrial *tw_sweep_trial_new(const char *run_name, const char *values)
{
    TwSweepTrial *self = g_object_new(TW_TYPE_SWEEP_TRIAL, NULL);
    self->run_name = g_strdup(run_name);
    self->values = g_strdup(values);
    return self;
}

const char *tw_sweep_trial_run_name(TwSweepTrial *self)
{
    return self->run_name;
}

const char *tw_sweep_trial_values(TwSweepTrial *self)
{
    return self->values;
}

TwSweepTrialStatus tw_sweep_trial_status(TwSweepTrial *self)
{
    return self->status;
}

const char *tw_sweep_trial_reason(TwSweepTrial *self)
{
    return self->reason;
}

void tw_sweep_trial_set_status(TwSweepTrial *self, TwSweepTrialStatus status, const char *reason)
{
    g_return_if_fail(TW_IS_SWEEP_TRIAL(self));
    g_free(self->reason);
    self->reason = g_strdup(reason);
    self->status = status;
    g_object_notify_by_pspec(G_OBJECT(self), props[PROP_STATUS]);
}

const char *tw_sweep_trial_status_name(TwSweepTrialStatus status)
{
    static const char *const names[] = {"pending", "running", "finished", "stopped", "failed", "cancelled"};
    return status <= TW_SWEEP_TRIAL_CANCELLED ? names[status] : "?";
}

gboolean tw_sweep_trial_is_open(TwSweepTrial *self)
{
    return self->status == TW_SWEEP_TRIAL_PENDING || self->status == TW_SWEEP_TRIAL_RUNNING;
}
