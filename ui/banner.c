/* TwBanner (banner.h): a GtkRevealer holding an icon, the message and a
 * close button. The "error" style class turns it red (resources/style.css). */
#include "banner.h"

/* How long a message that is not an error stays up. */
#define INFO_SECONDS 5

struct _TwBanner {
    GtkWidget parent_instance;
    GtkWidget *revealer, *icon, *label;
    char *message; /* NULL while hidden */
    gboolean is_error;
    guint hide_source;
};

G_DEFINE_FINAL_TYPE(TwBanner, tw_banner, GTK_TYPE_WIDGET)

static void cancel_hide_timer(TwBanner *self)
{
    if (self->hide_source) {
        g_source_remove(self->hide_source);
        self->hide_source = 0;
    }
}

static gboolean hide_timeout(gpointer data)
{
    TwBanner *self = data;
    self->hide_source = 0;
    tw_banner_hide(self);
    return G_SOURCE_REMOVE;
}

void tw_banner_show(TwBanner *self, const char *message, gboolean is_error)
{
    g_return_if_fail(TW_IS_BANNER(self) && message);
    cancel_hide_timer(self);
    g_free(self->message);
    self->message = g_strdup(message);
    self->is_error = is_error;
    gtk_label_set_text(GTK_LABEL(self->label), message);
    gtk_image_set_from_icon_name(GTK_IMAGE(self->icon),
                                 is_error ? "dialog-error-symbolic" : "dialog-information-symbolic");
    if (is_error)
        gtk_widget_add_css_class(GTK_WIDGET(self), "error");
    else
        gtk_widget_remove_css_class(GTK_WIDGET(self), "error");
    gtk_revealer_set_reveal_child(GTK_REVEALER(self->revealer), TRUE);
    if (!is_error)
        self->hide_source = g_timeout_add_seconds(INFO_SECONDS, hide_timeout, self);
}

void tw_banner_hide(TwBanner *self)
{
    g_return_if_fail(TW_IS_BANNER(self));
    cancel_hide_timer(self);
    g_clear_pointer(&self->message, g_free);
    gtk_revealer_set_reveal_child(GTK_REVEALER(self->revealer), FALSE);
}

const char *tw_banner_message(TwBanner *self)
{
    g_return_val_if_fail(TW_IS_BANNER(self), NULL);
    return self->message;
}

gboolean tw_banner_is_error(TwBanner *self)
{
    g_return_val_if_fail(TW_IS_BANNER(self), FALSE);
    return self->message && self->is_error;
}

static void tw_banner_dispose(GObject *object)
{
    TwBanner *self = TW_BANNER(object);
    cancel_hide_timer(self);
    g_clear_pointer(&self->revealer, gtk_widget_unparent);
    G_OBJECT_CLASS(tw_banner_parent_class)->dispose(object);
}

static void tw_banner_finalize(GObject *object)
{
    g_free(TW_BANNER(object)->message);
    G_OBJECT_CLASS(tw_banner_parent_class)->finalize(object);
}

static void tw_banner_class_init(TwBannerClass *klass)
{
    G_OBJECT_CLASS(klass)->dispose = tw_banner_dispose;
    G_OBJECT_CLASS(klass)->finalize = tw_banner_finalize;
    gtk_widget_class_set_layout_manager_type(GTK_WIDGET_CLASS(klass), GTK_TYPE_BIN_LAYOUT);
    gtk_widget_class_set_css_name(GTK_WIDGET_CLASS(klass), "banner");
}

static void tw_banner_init(TwBanner *self)
{
    GtkWidget *box = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 10);
    self->icon = gtk_image_new();
    self->label = gtk_label_new(NULL);
    gtk_label_set_wrap(GTK_LABEL(self->label), TRUE);
    gtk_label_set_wrap_mode(GTK_LABEL(self->label), PANGO_WRAP_WORD_CHAR);
    gtk_label_set_selectable(GTK_LABEL(self->label), TRUE); /* a message can be copied */
    gtk_widget_set_focusable(self->label, FALSE);            /* without being selected on show */
    gtk_label_set_xalign(GTK_LABEL(self->label), 0);
    gtk_widget_set_hexpand(self->label, TRUE);
    gtk_widget_add_css_class(self->label, "banner-message");
    GtkWidget *close = gtk_button_new_from_icon_name("window-close-symbolic");
    gtk_widget_set_valign(close, GTK_ALIGN_CENTER);
    gtk_widget_set_tooltip_text(close, "Close");
    gtk_widget_add_css_class(close, "flat");
    gtk_widget_add_css_class(close, "circular");
    gtk_widget_add_css_class(close, "banner-close");
    g_signal_connect_swapped(close, "clicked", G_CALLBACK(tw_banner_hide), self);
    gtk_box_append(GTK_BOX(box), self->icon);
    gtk_box_append(GTK_BOX(box), self->label);
    gtk_box_append(GTK_BOX(box), close);

    self->revealer = gtk_revealer_new();
    gtk_revealer_set_transition_type(GTK_REVEALER(self->revealer), GTK_REVEALER_TRANSITION_TYPE_SLIDE_DOWN);
    gtk_revealer_set_child(GTK_REVEALER(self->revealer), box);
    gtk_widget_set_parent(self->revealer, GTK_WIDGET(self));
}

GtkWidget *tw_banner_new(void)
{
    return g_object_new(TW_TYPE_BANNER, NULL);
}
