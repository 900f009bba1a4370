/* TwGraphInspector (see graph_inspector.h). */
#include "graph_inspector.h"

#include "graph_profile.h"

struct _TwGraphInspector {
    GtkWidget parent_instance;
    GtkWidget *scroller, *content, *trace;
};

enum { PROP_0, PROP_TRACE_INPUTS, N_PROPS };
static GParamSpec *props[N_PROPS];
enum { SIGNAL_NODE_ACTIVATED, N_SIGNALS };
static guint signals[N_SIGNALS];

G_DEFINE_FINAL_TYPE(TwGraphInspector, tw_graph_inspector, GTK_TYPE_WIDGET)

static GtkWidget *add_label(TwGraphInspector *self, const char *text, const char *css_class)
{
    GtkWidget *label = gtk_label_new(text);
    gtk_label_set_xalign(GTK_LABEL(label), 0);
    gtk_label_set_wrap(GTK_LABEL(label), TRUE);
    gtk_label_set_wrap_mode(GTK_LABEL(label), PANGO_WRAP_WORD_CHAR);
    gtk_label_set_selectable(GTK_LABEL(label), TRUE);
    if (css_class)
        gtk_widget_add_css_class(label, css_class);
    gtk_box_append(GTK_BOX(self->content), label);
    return label;
}

static void add_field(TwGraphInspector *self, const char *key, const char *value)
{
    add_label(self, key, "graph-inspector-key");
    add_label(self, value, NULL);
}

static char *tensor_text(const tw_graph_tensor *t)
{
    char shape[160]; /* a layer graph's tensors have no dtype written */
    tw_graph_tensor_format(t, shape, sizeof shape);
    return t->dtype[0] ? g_strdup_printf("%s %s", shape, t->dtype) : g_strdup(shape);
}

static void on_input_clicked(GtkButton *button, TwGraphInspector *self)
{
    int node = GPOINTER_TO_INT(g_object_get_data(G_OBJECT(button), "tw-node"));
    g_signal_emit(self, signals[SIGNAL_NODE_ACTIVATED], 0, node);
}

static void add_inputs(TwGraphInspector *self, const tw_graph_model *m, const tw_graph_node *n)
{
    add_label(self, n->ninputs ? "Inputs" : "Inputs: none", "graph-inspector-key");
    for (int k = 0; k < n->ninputs; k++) {
        const tw_graph_node *from = &m->nodes[n->input_node[k]];
        char *tensor = tensor_text(&from->outputs[n->input_output[k]]);
        char *text = g_strdup_printf("%d: %s  ← %s (%s)", k, tensor, from->name, from->op);
        GtkWidget *button = gtk_button_new_with_label(text);
        gtk_label_set_xalign(GTK_LABEL(gtk_button_get_child(GTK_BUTTON(button))), 0);
        gtk_label_set_ellipsize(GTK_LABEL(gtk_button_get_child(GTK_BUTTON(button))), PANGO_ELLIPSIZE_MIDDLE);
        gtk_widget_set_tooltip_text(button, "Select the node that feeds this input");
        gtk_widget_add_css_class(button, "flat");
        gtk_widget_add_css_class(button, "graph-inspector-input");
        g_object_set_data(G_OBJECT(button), "tw-node", GINT_TO_POINTER(n->input_node[k]));
        g_signal_connect(button, "clicked", G_CALLBACK(on_input_clicked), self);
        gtk_box_append(GTK_BOX(self->content), button);
        g_free(text), g_free(tensor);
    }
}

/* The box's measured time when the graph has a profile. */
static void add_time(TwGraphInspector *self, const tw_graph_model *m, const tw_visible_node *v)
{
    if (!m->node_us)
        return;
    double us = tw_graph_visible_us(m, v);
    if (us < 0) {
        add_field(self, "Time", "not measured (no work of its own in the profile)");
        return;
    }
    char time[32], *text;
    tw_graph_format_us(us, time, sizeof time);
    if (m->step_us > 0)
        text = g_strdup_printf("%s per run (%.1f%% of the step)", time, 100 * us / m->step_us);
    else
        text = g_strdup_printf("%s per run", time);
    add_field(self, "Time", text);
    g_free(text);
}

static void show_node(TwGraphInspector *self, const tw_graph_model *m, const tw_visible_node *v)
{
    const tw_graph_node *n = &m->nodes[v->index];
    add_label(self, n->name, "graph-inspector-title");
    if (m->layer_level) { /* a layer graph: a box is a layer call, its op the class */
        add_field(self, "Layer", n->op);
        if (n->cannot_run) {
            add_label(self, "Cannot run here", "graph-inspector-key");
            add_label(self, n->cannot_run, "graph-inspector-warning");
        }
        add_inputs(self, m, n);
        add_label(self, "Outputs", "graph-inspector-key");
        for (int k = 0; k < n->noutputs; k++) {
            char shape[160], *text = g_strdup_printf("%d: %s", k,
                                                     tw_graph_tensor_format(&n->outputs[k], shape, sizeof shape));
            add_label(self, text, NULL);
            g_free(text);
        }
        return;
    }
    add_field(self, "Op", n->op);
    add_time(self, m, v);
    add_field(self, "Scope", n->scope[0] ? n->scope : "(top level)");
    GPtrArray *attrs = tw_graph_node_attr_fields(n);
    add_label(self, attrs->len ? "Attributes" : "Attributes: none", "graph-inspector-key");
    for (guint k = 0; k + 1 < attrs->len; k += 2) {
        char *text = g_strdup_printf("%s: %s", (char *)attrs->pdata[k], (char *)attrs->pdata[k + 1]);
        add_label(self, text, "graph-inspector-attr");
        g_free(text);
    }
    g_ptr_array_unref(attrs);
    add_inputs(self, m, n);
    add_label(self, n->noutputs ? "Outputs" : "Outputs: none (it writes its first input)", "graph-inspector-key");
    for (int k = 0; k < n->noutputs; k++) {
        char *tensor = tensor_text(&n->outputs[k]), *text = g_strdup_printf("%d: %s", k, tensor);
        add_label(self, text, NULL);
        g_free(text), g_free(tensor);
    }
    if (v->nparams)
        add_label(self, "Parameters (drawn inside the box)", "graph-inspector-key");
    for (int p = 0; p < v->nparams; p++) {
        const tw_graph_node *param = &m->nodes[v->params[p]];
        char *tensor = tensor_text(&param->outputs[0]);
        char *text = g_strdup_printf("%s (%s): %s", param->name, param->op, tensor);
        add_label(self, text, NULL);
        g_free(text), g_free(tensor);
    }
}

/* One of the function's outputs: what it is and the node that computes it. */
static void show_output(TwGraphInspector *self, const tw_graph_model *m, const tw_visible_node *v)
{
    char *title = g_strdup_printf("Output %d of %s", v->output, m->function);
    add_label(self, title, "graph-inspector-title");
    const tw_graph_node *n = &m->nodes[v->index];
    tw_graph_node reader = {.ninputs = 1, .input_node = (int[]){v->index},
                            .input_output = (int[]){m->output_output[v->output]}};
    add_field(self, "Computed by", n->name);
    add_inputs(self, m, &reader);
    g_free(title);
}

static void show_scope(TwGraphInspector *self, const tw_graph_model *m, const tw_visible_node *v)
{
    const tw_graph_scope *s = &m->scopes[v->index];
    add_label(self, s->path, "graph-inspector-title");
    char *ops = g_strdup_printf("%d op%s, %d nested scope%s", s->nops, s->nops == 1 ? "" : "s", s->nchildren,
                                s->nchildren == 1 ? "" : "s");
    add_field(self, "Scope", ops);
    if (s->layer_class) {
        add_field(self, "Layer", s->layer_class);
        add_label(self, "Configuration", "graph-inspector-key");
        for (char **f = s->layer_fields; *f; f++)
            add_label(self, *f, "graph-inspector-attr");
    }
    add_time(self, m, v);
    add_label(self, "Double-click the box, or click its ⊕, to open it.", "dim-label");
    g_free(ops);
}

void tw_graph_inspector_show(TwGraphInspector *self, const tw_graph_arrangement *a, int visible)
{
    GtkWidget *child;
    while ((child = gtk_widget_get_first_child(self->content)))
        gtk_box_remove(GTK_BOX(self->content), child);
    gboolean selected = a && visible >= 0 && visible < a->graph->nnodes;
    gtk_widget_set_sensitive(self->trace, selected);
    if (a && a->model->profile_error)
        add_label(self, a->model->profile_error, "graph-inspector-warning");
    if (a && a->model->note)
        add_label(self, a->model->note, "graph-inspector-warning");
    if (!selected) {
        add_label(self, "Click a box to see its op, attributes, and its inputs' and outputs' shapes.", "dim-label");
        return;
    }
    const tw_visible_node *v = &a->graph->nodes[visible];
    if (v->is_scope)
        show_scope(self, a->model, v);
    else if (v->output >= 0)
        show_output(self, a->model, v);
    else
        show_node(self, a->model, v);
}

gboolean tw_graph_inspector_trace_inputs(TwGraphInspector *self)
{
    return gtk_toggle_button_get_active(GTK_TOGGLE_BUTTON(self->trace));
}

static void on_trace_toggled(GtkToggleButton *button, TwGraphInspector *self)
{
    g_object_notify_by_pspec(G_OBJECT(self), props[PROP_TRACE_INPUTS]);
}

static void tw_graph_inspector_get_property(GObject *object, guint id, GValue *value, GParamSpec *pspec)
{
    if (id == PROP_TRACE_INPUTS)
        g_value_set_boolean(value, tw_graph_inspector_trace_inputs(TW_GRAPH_INSPECTOR(object)));
    else
        G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec);
}

static void tw_graph_inspector_dispose(GObject *object)
{
    TwGraphInspector *self = TW_GRAPH_INSPECTOR(object);
    g_clear_pointer(&self->scroller, gtk_widget_unparent);
    G_OBJECT_CLASS(tw_graph_inspector_parent_class)->dispose(object);
}

static void tw_graph_inspector_class_init(TwGraphInspectorClass *klass)
{
    GObjectClass *object_class = G_OBJECT_CLASS(klass);
    object_class->dispose = tw_graph_inspector_dispose;
    object_class->get_property = tw_graph_inspector_get_property;
    props[PROP_TRACE_INPUTS] = g_param_spec_boolean("trace-inputs", NULL, NULL, FALSE,
                                                    G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
    g_object_class_install_properties(object_class, N_PROPS, props);
    signals[SIGNAL_NODE_ACTIVATED] = g_signal_new("node-activated", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0,
                                                  NULL, NULL, NULL, G_TYPE_NONE, 1, G_TYPE_INT);
    gtk_widget_class_set_layout_manager_type(GTK_WIDGET_CLASS(klass), GTK_TYPE_BIN_LAYOUT);
    gtk_widget_class_set_css_name(GTK_WIDGET_CLASS(klass), "graphinspector");
}

static void tw_graph_inspector_init(TwGraphInspector *self)
{
    GtkWidget *box = gtk_box_new(GTK_ORIENTATION_VERTICAL, 6);
    self->trace = gtk_toggle_button_new_with_label("Trace inputs");
    gtk_widget_set_tooltip_text(self->trace, "Highlight everything the selected box depends on");
    g_signal_connect(self->trace, "toggled", G_CALLBACK(on_trace_toggled), self);
    gtk_box_append(GTK_BOX(box), self->trace);
    self->content = gtk_box_new(GTK_ORIENTATION_VERTICAL, 4);
    gtk_box_append(GTK_BOX(box), self->content);
    self->scroller = gtk_scrolled_window_new();
    gtk_scrolled_window_set_policy(GTK_SCROLLED_WINDOW(self->scroller), GTK_POLICY_NEVER, GTK_POLICY_AUTOMATIC);
    gtk_scrolled_window_set_child(GTK_SCROLLED_WINDOW(self->scroller), box);
    gtk_widget_set_parent(self->scroller, GTK_WIDGET(self));
    gtk_widget_set_name(GTK_WIDGET(self), "graph-inspector");
    tw_graph_inspector_show(self, NULL, -1);
}

GtkWidget *tw_graph_inspector_new(void)
{
    return g_object_new(TW_TYPE_GRAPH_INSPECTOR, NULL);
}
