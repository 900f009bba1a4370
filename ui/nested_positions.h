/* Box positions inside nested models, kept in a Keras model's JSON.
 *
 * The designer keeps a model's box positions under a key of its own,
 * TW_DESIGNER_KEY, beside "class_name" and "config" in the model's object:
 * at the top of a file, and, for a nested model, in that model's entry in
 * its parent's "layers" list — the same object form, which Keras reads
 * through the same code and whose extra keys it ignores just the same.
 * Each holds {"positions": {layer name: [[x, y], ...one per call]}}.
 *
 * A document holds the positions of its nested models as a tree keyed by
 * layer name: {name: {"positions": {...}, "nested": {name: ...}}}, a level
 * for every nested model with positions somewhere inside it. */
#ifndef TW_UI_NESTED_POSITIONS_H
#define TW_UI_NESTED_POSITIONS_H

#include <json-glib/json-glib.h>

G_BEGIN_DECLS

#define TW_DESIGNER_KEY "twb_designer"

/* The tree of a Keras model object (a file's root, or a nested model's
 * entry): {"positions": its own, "nested": its nested models' trees},
 * each part left out when there is none; NULL when there is neither. */
JsonObject *tw_nested_positions_tree(JsonNode *model);
/* The Keras JSON text model_json (as tw_model_to_json writes it) with the
 * positions of tree (as tw_nested_positions_tree gives) written into it,
 * the model's own and every nested model's at every depth; g_free. The
 * rest of the text stays as it was. NULL when model_json does not parse. */
char *tw_nested_positions_apply(const char *model_json, JsonObject *tree);

G_END_DECLS

#endif
