/* TwPlaceholderView (placeholder_view.h): a centred column of an icon, a
 * title, a body and a hint; properties so that .ui files can set them. */
#include "placeholder_view.h"

struct _TwPlaceholderView {
    GtkWidget parent_instance;
    GtkWidget *column, *icon, *title, *body, *hint;
};

enum { PROP_0, PROP_ICON_NAME, PROP_TITLE, PROP_BODY, PROP_HINT, N_PROPS };
static GParamSpec *props[N_PROPS];

G_DEFINE_FINAL_TYPE(TwPlaceholderView, tw_placeholder_view, GTK_TYPE_WIDGET)

static void set_markup(GtkWidget *label, const char *markup)
{
    gtk_label_set_markup(GTK_LABEL(label), markup ? markup : "");
    gtk_widget_set_visible(label, markup && *markup);
}

void tw_placeholder_view_set_body(TwPlaceholderView *self, const char *body)
{
    g_return_if_fail(TW_IS_PLACEHOLDER_VIEW(self));
    set_markup(self->body, body);
    g_object_notify_by_pspec(G_OBJECT(self), props[PROP_BODY]);
}

void tw_placeholder_view_set_hint(TwPlaceholderView *self, const char *hint)
{
    g_return_if_fail(TW_IS_PLACEHOLDER_VIEW(self));
    set_markup(self->hint, hint);
    g_object_notify_by_pspec(G_OBJECT(self), props[PROP_HINT]);
}

const char *tw_placeholder_view_title(TwPlaceholderView *self)
{
    return gtk_label_get_text(GTK_LABEL(self->title));
}

const char *tw_placeholder_view_body(TwPlaceholderView *self)
{
    return gtk_label_get_text(GTK_LABEL(self->body));
}

const char *tw_placeholder_view_hint(TwPlaceholderView *self)
{
    return gtk_label_get_text(GTK_LABEL(self->hint));
}

static void tw_placeholder_view_set_property(GObject *object, guint id, const GValue *value, GParamSpec *pspec)
{
    TwPlaceholderView *self = TW_PLACEHOLDER_VIEW(object);
    switch (id) {
    case PROP_ICON_NAME:
        gtk_image_set_from_icon_name(GTK_IMAGE(self->icon), g_value_get_string(value));
        break;
    case PROP_TITLE:
        gtk_label_set_text(GTK_LABEL(self->title), g_value_get_string(value));
        break;
    case PROP_BODY:
        tw_placeholder_view_set_body(self, g_value_get_string(value));
        break;
    case PROP_HINT:
        tw_placeholder_view_set_hint(self, g_value_get_string(value));
        break;
    default:
        G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec);
    }
}

static void tw_placeholder_view_get_property(GObject *object, guint id, GValue *value, GParamSpec *pspec)
{
    TwPlaceholderView *self = TW_PLACEHOLDER_VIEW(object);
    switch (id) {
    case PROP_ICON_NAME:
        g_value_set_string(value, gtk_image_get_icon_name(GTK_IMAGE(self->icon)));
        break;
    case PROP_TITLE:
        g_value_set_string(value, tw_placeholder_view_title(self));
        break;
    case PROP_BODY:
        g_value_set_string(value, gtk_label_get_label(GTK_LABEL(self->body)));
        break;
    case PROP_HINT:
        g_value_set_string(value, gtk_label_get_label(GTK_LABEL(self->hint)));
        break;
    default:
        G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec);
    }
}

static void tw_placeholder_view_dispose(GObject *object)
{
    g_clear_pointer(&TW_PLACEHOLDER_VIEW(object)->column, gtk_widget_unparent);
    G_OBJECT_CLASS(tw_placeholder_view_parent_class)->dispose(object);
}

static void tw_placeholder_view_class_init(TwPlaceholderViewClass *klass)
{
    GObjectClass *object_class = G_OBJECT_CLASS(klass);
    object_class->set_property = tw_placeholder_view_set_property;
    object_class->get_property = tw_placeholder_view_get_property;
    object_class->dispose = tw_placeholder_view_dispose;
    GParamFlags flags = G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS;
    props[PROP_ICON_NAME] = g_param_spec_string("icon-name", NULL, NULL, NULL, flags);
    props[PROP_TITLE] = g_param_spec_string("title", NULL, NULL, NULL, flags);
    props[PROP_BODY] = g_param_spec_string("body", NULL, NULL, NULL, flags | G_PARAM_EXPLICIT_NOTIFY);
    props[PROP_HINT] = g_param_spec_string("hint", NULL, NULL, NULL, flags | G_PARAM_EXPLICIT_NOTIFY);
    g_object_class_install_properties(object_class, N_PROPS, props);
    gtk_widget_class_set_layout_manager_type(GTK_WIDGET_CLASS(klass), GTK_TYPE_BIN_LAYOUT);
    gtk_widget_class_set_css_name(GTK_WIDGET_CLASS(klass), "placeholderview");
}

/* A wrapped, centred label: one line in a 1280-pixel window when it can. */
static GtkWidget *paragraph(const char *css_class)
{
    GtkWidget *label = gtk_label_new(NULL);
    gtk_label_set_wrap(GTK_LABEL(label), TRUE);
    gtk_label_set_justify(GTK_LABEL(label), GTK_JUSTIFY_CENTER);
    gtk_label_set_max_width_chars(GTK_LABEL(label), 90);
    /* Commands can be copied; not focusable, so that showing the view does
     * not select the whole paragraph. */
    gtk_label_set_selectable(GTK_LABEL(label), TRUE);
    gtk_widget_set_focusable(label, FALSE);
    gtk_widget_add_css_class(label, css_class);
    return label;
}

static void tw_placeholder_view_init(TwPlaceholderView *self)
{
    self->column = gtk_box_new(GTK_ORIENTATION_VERTICAL, 6);
    gtk_widget_set_valign(self->column, GTK_ALIGN_CENTER);
    gtk_widget_set_halign(self->column, GTK_ALIGN_CENTER);
    gtk_widget_set_margin_start(self->column, 36);
    gtk_widget_set_margin_end(self->column, 36);
    self->icon = gtk_image_new();
    gtk_image_set_pixel_size(GTK_IMAGE(self->icon), 96);
    gtk_widget_add_css_class(self->icon, "placeholder-icon");
    self->title = gtk_label_new(NULL);
    gtk_label_set_wrap(GTK_LABEL(self->title), TRUE);
    gtk_label_set_justify(GTK_LABEL(self->title), GTK_JUSTIFY_CENTER);
    gtk_widget_add_css_class(self->title, "placeholder-title");
    self->body = paragraph("placeholder-body");
    self->hint = paragraph("placeholder-hint");
    gtk_box_append(GTK_BOX(self->column), self->icon);
    gtk_box_append(GTK_BOX(self->column), self->title);
    gtk_box_append(GTK_BOX(self->column), self->body);
    gtk_box_append(GTK_BOX(self->column), self->hint);
    set_markup(self->body, NULL);
    set_markup(self->hint, NULL);
    gtk_widget_set_parent(self->column, GTK_WIDGET(self));
}

GtkWidget *tw_placeholder_view_new(const char *icon_name, const char *title, const char *body, const char *hint)
{
    return g_object_new(TW_TYPE_PLACEHOLDER_VIEW, "icon-name", icon_name, "title", title, "body", body, "hint",
                        hint, NULL);
}
