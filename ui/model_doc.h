/* TwModelDoc: the model being designed — a graph of layer calls (nodes,
 * each an unbuilt engine layer with its config and its place on the
 * canvas; edges from one node's output port to another's input port), with
 * every edit undoable and the engine's own shape inference rerun after each
 * one. A Sequential model is the special case of a chain: node i feeds node
 * i + 1, and the stack's index-based edits (insert, remove, move,
 * duplicate) apply to it. The designer's widgets show the document and edit
 * it only through these functions; "changed" tells them to refresh.
 *
 * Undo and redo restore exact states: each edit records the document's
 * state (tw_model_doc_state: the graph with every layer's Keras JSON and
 * every position) before and after it.
 *
 * Read-only properties "path", "modified",
 * "can-undo" and "can-redo", notified when they may have changed (a save
 * changes "modified" without a "changed" signal); and "changing", emitted
 * before every edit, undo, redo or load touches the model, so that a
 * widget holding an edit not yet made (text typed in a field) can make it
 * first, as an edit of its own.
 */
#ifndef TW_UI_MODEL_DOC_H
#define TW_UI_MODEL_DOC_H

#include <glib-object.h>

#include <tw/model.h>

G_BEGIN_DECLS

#define TW_TYPE_MODEL_DOC (tw_model_doc_get_type())
G_DECLARE_FINAL_TYPE(TwModelDoc, tw_model_doc, TW, MODEL_DOC, GObject)

/* A new, empty model named "model" with an InputLayer of shape (None, 28, 28). */
TwModelDoc *tw_model_doc_new(void);

/* Replace the model (not undoable; clears the history and the modified
 * flag). tw_model_doc_load takes every file tw_model_open takes (Keras
 * JSON, .keras, .h5; the architecture, not the weights). Errors name the
 * file and the place, as tw_model_open does. Box positions come from the
 * file's "twb_designer" key when it has one, else from auto-arrange; those
 * inside nested models from the same key in their entries
 * (nested_positions.h), kept for drill-down. */
gboolean tw_model_doc_load(TwModelDoc *doc, const char *path, GError **error);
gboolean tw_model_doc_load_json(TwModelDoc *doc, const char *json, const char *source_name, GError **error);
/* Save as Keras JSON (atomically): Sequential while the document is a
 * Sequential model's chain, else Functional; the box positions go under a
 * top-level "twb_designer" key, which Keras ignores, and those inside a
 * nested model under the same key in its entry. Sets the path and
 * clears modified. Refused, with the reason, while the graph is not a
 * model (tw_model_doc_model is NULL). */
gboolean tw_model_doc_save(TwModelDoc *doc, const char *path, GError **error);
/* What a save writes; while the graph is not a model, the state
 * (tw_model_doc_state), which model readers refuse. */
char *tw_model_doc_to_json(TwModelDoc *doc);
/* The document's own JSON: exactly what undo and redo restore. */
char *tw_model_doc_state(TwModelDoc *doc);
const char *tw_model_doc_path(TwModelDoc *doc); /* NULL until loaded or saved */
const char *tw_model_doc_name(TwModelDoc *doc); /* the model's name */
gboolean tw_model_doc_modified(TwModelDoc *doc);

/* The model (borrowed, unbuilt, rebuilt after every edit; do not edit it):
 * NULL while the graph is not a model (a dangling input, an unused input,
 * a layer that does not fit in a graph that is not a chain). */
tw_model *tw_model_doc_model(TwModelDoc *doc);
int tw_model_doc_n_layers(TwModelDoc *doc); /* nodes: one per layer call */
/* Not a chain: the stack's edits (insert, move, remove, duplicate by
 * index) do not apply; the canvas edits it. */
gboolean tw_model_doc_is_graph(TwModelDoc *doc);
tw_layer *tw_model_doc_layer(TwModelDoc *doc, int index); /* borrowed */

/* Whether the node, a nested model (a pretrained base, a repeated block),
 * is shown open with its layers, and opening or closing it. View state
 * only: not an edit, not saved, kept by layer name across edits, undo
 * and redo. FALSE for a node that is not a nested model. */
gboolean tw_model_doc_node_expanded(TwModelDoc *doc, int node);
gboolean tw_model_doc_set_node_expanded(TwModelDoc *doc, int node, gboolean expanded);

/* A nested model's own Keras JSON (g_free), which a document of its own
 * loads to edit it (drill-down), with the box positions kept inside it as
 * a file of ours has them; NULL when node is not a nested model. */
char *tw_model_doc_nested_json(TwModelDoc *doc, int node);
/* The nested model at node replaced by the model of json (Keras JSON, as
 * tw_model_doc_to_json writes it): one edit. The layer keeps its name,
 * whether it is frozen, its inbound edges and its position, and takes the
 * positions json keeps (its own and its nested models'); every call of
 * a shared nested model takes the new one. Refused, the document
 * unchanged, with the engine's message when the new model does not fit
 * the inputs it is called on (and the old one did). The document holds
 * no weights, so there are none to keep or lose. */
gboolean tw_model_doc_replace_nested(TwModelDoc *doc, int node, const char *json, GError **error);

/* ---- the graph ------------------------------------------------------------ */
/* Connected inputs of node, in port order, and the output each comes from. */
int tw_model_doc_node_ninputs(TwModelDoc *doc, int node);
gboolean tw_model_doc_node_input(TwModelDoc *doc, int node, int input, int *from, int *port);
/* How many inputs the node's class takes: 0 (InputLayer), 1, or
 * TW_MAX_LAYER_IO for merges and other layers of several inputs (the
 * class's inference then says how many fit). */
int tw_model_doc_node_max_inputs(TwModelDoc *doc, int node);
/* Output ports (from inference; 1 while unknown) and their shapes (NULL
 * while unknown). */
int tw_model_doc_node_noutputs(TwModelDoc *doc, int node);
const tw_shape *tw_model_doc_node_output(TwModelDoc *doc, int node, int port);
/* The engine's message or the graph's ("dangling input ...") for this
 * node, or NULL. */
const char *tw_model_doc_node_error(TwModelDoc *doc, int node);
/* That message when it says why the node's layer cannot run here (a
 * Lambda's Python code, tw_layer_check_runnable), or NULL. The model is
 * still valid: it summarizes and saves, but cannot train. */
const char *tw_model_doc_node_cannot_run(TwModelDoc *doc, int node);
void tw_model_doc_node_position(TwModelDoc *doc, int node, double *x, double *y);
/* Whether the positions came from the user (a file's twb_designer key, or
 * edits) rather than the automatic placement of a load. */
gboolean tw_model_doc_has_user_positions(TwModelDoc *doc);

/* ---- edits: each is one undo step and emits "changed" -------------------- */
/* A new layer of that class with Keras' defaults at index (0..n). */
gboolean tw_model_doc_insert(TwModelDoc *doc, int index, const char *class_name, GError **error);
gboolean tw_model_doc_remove(TwModelDoc *doc, int index, GError **error);
/* Move the layer at from so it ends up at index to. */
gboolean tw_model_doc_move(TwModelDoc *doc, int from, int to, GError **error);
gboolean tw_model_doc_duplicate(TwModelDoc *doc, int index, GError **error);
/* A parameter in tw_layer_set's text form; the error is the engine's
 * message ("units: expected a positive integer, got \"abc\""). */
gboolean tw_model_doc_set_param(TwModelDoc *doc, int index, const char *key, const char *text, GError **error);
gboolean tw_model_doc_rename_layer(TwModelDoc *doc, int index, const char *name, GError **error);
/* The input shape on the layer at index (normally 0, the InputLayer);
 * text like "28,28,1" (the batch axis is implied). */
gboolean tw_model_doc_set_input_shape(TwModelDoc *doc, int index, const char *text, GError **error);

/* Graph edits. A new node of that class at (x, y), unconnected; returns its
 * index or -1. */
int tw_model_doc_add_node(TwModelDoc *doc, const char *class_name, double x, double y, GError **error);
/* The same, fed by from's first output (from -1: unconnected); one step. */
int tw_model_doc_add_node_after(TwModelDoc *doc, const char *class_name, int from, double x, double y,
                                GError **error);
/* A new node on the edge into node's input `input`: from -> new -> node.
 * Returns the new node's index or -1. */
int tw_model_doc_insert_on_edge(TwModelDoc *doc, const char *class_name, int node, int input, GError **error);
/* A block of new layers (a residual block, an Inception branch...) as
 * one edit: layers[k] is a new layer of that class with Keras' defaults
 * and these parameters (key, text pairs as tw_model_doc_set_param takes),
 * named as the palette names layers, at (x + dx, y + dy), its inputs in
 * port order each an earlier layer of the block, TW_MODEL_DOC_BLOCK_FROM
 * (from's first output) or TW_MODEL_DOC_BLOCK_OPEN (left free for the
 * user to connect). What fed on from's first output is fed by the last
 * layer of the block instead (the block goes into the chain), and the
 * boxes below from move down by room. Returns the index of the
 * first new node (they are the last ones) or -1, the document unchanged. */
#define TW_MODEL_DOC_BLOCK_FROM (-1)
#define TW_MODEL_DOC_BLOCK_OPEN (-2)
#define TW_MODEL_DOC_BLOCK_MAX_PARAMS 4
typedef struct {
    const char *class_name;
    const char *params[2 * TW_MODEL_DOC_BLOCK_MAX_PARAMS]; /* key, text; NULL ends */
    int ninputs, inputs[TW_MAX_LAYER_IO];
    double dx, dy;
} tw_model_doc_block_layer;
int tw_model_doc_add_block(TwModelDoc *doc, const tw_model_doc_block_layer *layers, int n, int from, double x,
                           double y, double room, GError **error);
/* Output `port` of from into the next free input of to; refused when to
 * takes no more inputs or the edge would close a cycle. */
gboolean tw_model_doc_connect(TwModelDoc *doc, int from, int port, int to, GError **error);
gboolean tw_model_doc_disconnect(TwModelDoc *doc, int node, int input, GError **error);
/* Delete nodes (with their edges). One node of one input is bridged: what
 * it fed is fed by its source, as when a layer leaves a stack. */
gboolean tw_model_doc_delete_nodes(TwModelDoc *doc, const int *nodes, int n, GError **error);
gboolean tw_model_doc_move_nodes(TwModelDoc *doc, const int *nodes, int n, double dx, double dy, GError **error);
/* Every node's position (xy: 2 x n_layers); one undo step. */
gboolean tw_model_doc_set_positions(TwModelDoc *doc, const double *xy, GError **error);
/* The selected nodes with the edges among them, as text for the clipboard
 * (g_free), and that text pasted as new nodes (new names) moved by dx, dy;
 * returns the index of the first new node (they are the last ones) or -1.
 * A nested model's copy keeps the box positions inside it under its new
 * name, as tw_model_doc_duplicate's does. */
char *tw_model_doc_copy_nodes(TwModelDoc *doc, const int *nodes, int n);
int tw_model_doc_paste(TwModelDoc *doc, const char *text, double dx, double dy, GError **error);

/* The edits from begin to end make one undo step: the first makes it, each
 * later one changes what it leads to (redo restores the last), and one
 * that brings the document back to where the group began takes the step
 * away. An undo, a redo or a load in between ends the step: the group's
 * next edit makes a new one. The designer groups the edits made inside a
 * nested model, written into its parent as they are made (one visit, one
 * step of the parent). */
void tw_model_doc_begin_group(TwModelDoc *doc);
void tw_model_doc_end_group(TwModelDoc *doc);

gboolean tw_model_doc_can_undo(TwModelDoc *doc);
gboolean tw_model_doc_can_redo(TwModelDoc *doc);
gboolean tw_model_doc_undo(TwModelDoc *doc);
gboolean tw_model_doc_redo(TwModelDoc *doc);

/* ---- what the engine infers (recomputed on every change) ---------------- */
/* Per node: output shape, parameter counts and, where its input cannot
 * work, the engine's message; nodes after a failing one have no info
 * (ndim 0). */
const tw_layer_info *tw_model_doc_info(TwModelDoc *doc, int index);
/* -1 when the model is valid, else the index of the first failing node (or
 * the number of nodes when the problem is the model's, e.g. no input shape
 * or no layers). */
int tw_model_doc_error_index(TwModelDoc *doc);
/* Why the model cannot train ("conv2d: expected input of rank 4 ...", or
 * a layer that cannot run here while the error index is -1), or NULL. */
const char *tw_model_doc_error(TwModelDoc *doc);
void tw_model_doc_totals(TwModelDoc *doc, int64_t *trainable, int64_t *non_trainable);

/* A fresh, independent copy of the model for training (a new reference). */
tw_model *tw_model_doc_copy_model(TwModelDoc *doc, GError **error);

G_END_DECLS

#endif
