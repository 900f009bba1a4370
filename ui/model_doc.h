/* TwModelDoc: the model being designed — a Keras Sequential model held as
 * unbuilt engine layers, with every edit undoable and the engine's own
 * shape inference rerun after each one. The designer's widgets show it and
 * edit it only through these functions; "changed" tells them to refresh.
 *
 * Undo and redo restore exact states: each edit records the model's JSON
 * (tw_model_to_json) before and after it.
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
 * flag). Errors name the file and the place, as tw_model_load does. */
gboolean tw_model_doc_load(TwModelDoc *doc, const char *path, GError **error);
gboolean tw_model_doc_load_json(TwModelDoc *doc, const char *json, const char *source_name, GError **error);
/* Save as Keras JSON (atomically); sets the path and clears modified. */
gboolean tw_model_doc_save(TwModelDoc *doc, const char *path, GError **error);
char *tw_model_doc_to_json(TwModelDoc *doc);
const char *tw_model_doc_path(TwModelDoc *doc); /* NULL until loaded or saved */
gboolean tw_model_doc_modified(TwModelDoc *doc);

/* The model itself (borrowed, unbuilt; do not edit it directly). */
tw_model *tw_model_doc_model(TwModelDoc *doc);
int tw_model_doc_n_layers(TwModelDoc *doc);
/* A Functional model: its layers are listed in call order, but the stack's
 * edits (insert, move, remove, duplicate) do not apply to a graph. */
gboolean tw_model_doc_is_graph(TwModelDoc *doc);
tw_layer *tw_model_doc_layer(TwModelDoc *doc, int index); /* borrowed */

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

gboolean tw_model_doc_can_undo(TwModelDoc *doc);
gboolean tw_model_doc_can_redo(TwModelDoc *doc);
gboolean tw_model_doc_undo(TwModelDoc *doc);
gboolean tw_model_doc_redo(TwModelDoc *doc);

/* ---- what the engine infers (recomputed on every change) ---------------- */
/* Per layer: output shape, parameter counts and, for the first layer whose
 * input cannot work, the engine's message; layers after it have no info
 * (ndim 0). */
const tw_layer_info *tw_model_doc_info(TwModelDoc *doc, int index);
/* -1 when the model is valid, else the index of the failing layer (or the
 * number of layers when the problem is the model's, e.g. no input shape or
 * no layers). */
int tw_model_doc_error_index(TwModelDoc *doc);
/* Why the model cannot train ("conv2d: expected input of rank 4 ..."), or NULL. */
const char *tw_model_doc_error(TwModelDoc *doc);
void tw_model_doc_totals(TwModelDoc *doc, int64_t *trainable, int64_t *non_trainable);

/* A fresh, independent copy of the model for training (a new reference). */
tw_model *tw_model_doc_copy_model(TwModelDoc *doc, GError **error);

G_END_DECLS

#endif
