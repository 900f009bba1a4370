/* TwPropertyEditor: the selected layer's name, class and summary, its input
 * shape (for an InputLayer or the first layer), then one typed field per
 * parameter of its class — numbers within the parameter's range, switches,
 * drop-downs of the choices, tuples such as kernel_size as one number per
 * element — with Keras' default beside each and a reset button where the
 * value differs. Edits go through the TwModelDoc; a value the engine
 * refuses shows its message under the field, and the layer keeps its old
 * value. Text typed and not yet committed is committed before any other
 * edit of the doc (its "changing" signal), so nothing typed is lost. */
#ifndef TW_UI_PROPERTY_EDITOR_H
#define TW_UI_PROPERTY_EDITOR_H

#include <gtk/gtk.h>

#include "model_doc.h"

G_BEGIN_DECLS

#define TW_TYPE_PROPERTY_EDITOR (tw_property_editor_get_type())
G_DECLARE_FINAL_TYPE(TwPropertyEditor, tw_property_editor, TW, PROPERTY_EDITOR, GtkWidget)

GtkWidget *tw_property_editor_new(TwModelDoc *doc);
/* The layer to edit; -1 for none. */
void tw_property_editor_set_index(TwPropertyEditor *editor, int index);
int tw_property_editor_get_index(TwPropertyEditor *editor);

/* The field editing a parameter key, "name" or "input_shape" (NULL when not
 * shown): a GtkSpinButton, GtkSwitch, GtkDropDown, GtkEntry, or for a tuple
 * a GtkBox of GtkSpinButtons. */
GtkWidget *tw_property_editor_field(TwPropertyEditor *editor, const char *key);
/* The message shown under that field, or NULL. */
const char *tw_property_editor_message(TwPropertyEditor *editor, const char *key);
/* Whether the focus is in a field holding text typed and not yet committed
 * (Ctrl+Z then undoes the typing, not the model's last edit). */
gboolean tw_property_editor_editing(TwPropertyEditor *editor);
/* What the field's reset button does (FALSE when the value is the default). */
gboolean tw_property_editor_reset(TwPropertyEditor *editor, const char *key);

G_END_DECLS

#endif
