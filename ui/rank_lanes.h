/* TwRankLanes: the Dashboard's lanes for runs trained on several MPI ranks
 * (tags dist/rank_N/step_ms and dist/rank_N/allreduce_ms, written by a
 * data-parallel `twb train`): one lane per run and rank, a bar of the
 * rank's step time split into compute and the wait for the gradients'
 * allreduce, on one time scale. A straggler shows as the lane with the
 * long compute part while the others wait. Each value is the mean over up
 * to LANE_SAMPLES points spread over the run (the last point of each
 * column of a level-of-detail view). Hidden when no shown run has the
 * tags. */
#ifndef TW_UI_RANK_LANES_H
#define TW_UI_RANK_LANES_H

#include <gtk/gtk.h>

#include "dashboard_data.h"

G_BEGIN_DECLS

#define TW_TYPE_RANK_LANES (tw_rank_lanes_get_type())
G_DECLARE_FINAL_TYPE(TwRankLanes, tw_rank_lanes, TW, RANK_LANES, GtkWidget)

GtkWidget *tw_rank_lanes_new(void);
/* The runs shown (their ids); the lanes are those of them with rank tags. */
void tw_rank_lanes_set_runs(TwRankLanes *self, TwDashboardData *data, int n, const gint64 *run_ids);
/* What each lane says, for tests and the tooltip: "RUN rank N: step X ms,
 * allreduce Y ms" once both values are read, else "RUN rank N: reading". */
int tw_rank_lanes_n_lanes(TwRankLanes *self);
char *tw_rank_lanes_lane_text(TwRankLanes *self, int lane); /* g_free */

G_END_DECLS

#endif
