/* TwEvaluationView: the Dashboard's Evaluation tab. For one run with a
 * stored evaluation (tw/evaluation.h: after training a classifier with a
 * run database, or `twb evaluate --logdb F --run NAME`): the confusion
 * matrix (evaluation_render.c: counts, row-normalised colours), the
 * per-class precision, recall, F1 and support, and the stored examples
 * with their true and predicted classes and confidence, misclassified
 * first. Clicking a cell shows only that cell's examples (again, or
 * "All examples", shows all). Image data shows each example's image;
 * other data a row of its first values.
 *
 * The run is chosen from the runs that have an evaluation; which they are
 * and the chosen one's evaluation are read off the main loop (a GTask on a
 * read-only store) after each tw_evaluation_view_sync. */
#ifndef TW_UI_EVALUATION_VIEW_H
#define TW_UI_EVALUATION_VIEW_H

#include <gtk/gtk.h>

#include "dashboard_data.h"

G_BEGIN_DECLS

#define TW_TYPE_EVALUATION_VIEW (tw_evaluation_view_get_type())
G_DECLARE_FINAL_TYPE(TwEvaluationView, tw_evaluation_view, TW, EVALUATION_VIEW, GtkWidget)

GtkWidget *tw_evaluation_view_new(void);
/* Read again which runs have an evaluation, and the shown one's (after
 * "runs-changed", when the tab is shown). */
void tw_evaluation_view_sync(TwEvaluationView *view, TwDashboardData *data);
/* Show this run's evaluation (when it has one; a later sync keeps it). */
void tw_evaluation_view_show_run(TwEvaluationView *view, gint64 run_id);
/* The run whose evaluation is shown, or -1; TRUE while reading. */
gint64 tw_evaluation_view_run(TwEvaluationView *view);
gboolean tw_evaluation_view_loading(TwEvaluationView *view);
/* The shown matrix: classes and a cell's count (-1 outside). */
int tw_evaluation_view_classes(TwEvaluationView *view);
double tw_evaluation_view_count(TwEvaluationView *view, int row, int col);
/* Show only the examples of a cell, as a click on it does (-1, -1: all). */
void tw_evaluation_view_select_cell(TwEvaluationView *view, int row, int col);
/* The examples on screen. */
int tw_evaluation_view_n_examples_shown(TwEvaluationView *view);

G_END_DECLS

#endif
