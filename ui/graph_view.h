/* TwGraphView: the window's Graph page. A toolbar (the source: the
 * designer's model or a graph stored in the run database; for a stored
 * graph with a profile, Colour by op kind or by measured time; search by
 * name or op; zoom, fit; export PNG and SVG), the graph (graph_canvas.h)
 * with a legend of the op kinds' colours or the heat scale of the times, and the selected box's details
 * (graph_inspector.h). Tracing, parsing, layout and reading the run
 * database happen in worker threads; only their results reach the main
 * loop. When a graph cannot be shown, the page says why in plain words. */
#ifndef TW_UI_GRAPH_VIEW_H
#define TW_UI_GRAPH_VIEW_H

#include <gtk/gtk.h>

#include "graph_canvas.h"
#include "model_doc.h"

G_BEGIN_DECLS

#define TW_TYPE_GRAPH_VIEW (tw_graph_view_get_type())
G_DECLARE_FINAL_TYPE(TwGraphView, tw_graph_view, TW, GRAPH_VIEW, GtkWidget)

GtkWidget *tw_graph_view_new(TwModelDoc *doc);
/* The designer's document (followed while the page is shown). */
void tw_graph_view_set_doc(TwGraphView *view, TwModelDoc *doc);
/* The run database whose graphs are listed (NULL: none). */
void tw_graph_view_set_logdb(TwGraphView *view, const char *path);

/* Sources: 0 is the designer's model, then one per stored graph. */
guint tw_graph_view_n_sources(TwGraphView *view);
char *tw_graph_view_source_label(TwGraphView *view, guint index);
void tw_graph_view_select_source(TwGraphView *view, guint index);

/* TRUE once the current source is shown (its graph laid out and drawn, or
 * its message); "ready" is notified. */
gboolean tw_graph_view_ready(TwGraphView *view);
/* What the page says instead of a graph, or NULL when it shows one. */
const char *tw_graph_view_message(TwGraphView *view);
TwGraphCanvas *tw_graph_view_canvas(TwGraphView *view);
GtkWidget *tw_graph_view_inspector(TwGraphView *view);
/* The Colour drop-down (0: op kind, 1: time; tw_graph_color_mode); its
 * row is visible only while the graph shown has a profile. */
GtkWidget *tw_graph_view_color_control(TwGraphView *view);
/* The toolbar's message line (why the graph's profile cannot be read, or
 * where an export went); "" when it says nothing. */
const char *tw_graph_view_note(TwGraphView *view);

/* Open or close a scope (laid out again in a thread, the view kept centred
 * on it). */
void tw_graph_view_toggle_scope(TwGraphView *view, int scope);
/* Select graph node `node`, opening the scopes around it when needed. */
void tw_graph_view_select_node(TwGraphView *view, int node);
/* The next node whose name or op holds text (any case), after the
 * selection, selected as above; the status ("3 of 12", "No match") is
 * returned. Enter in the search entry does this. */
const char *tw_graph_view_find_next(TwGraphView *view, const char *text);

/* The whole graph at life size through the renderer. */
gboolean tw_graph_view_export_png(TwGraphView *view, const char *path, GError **error);
gboolean tw_graph_view_export_svg(TwGraphView *view, const char *path, GError **error);

G_END_DECLS

#endif
