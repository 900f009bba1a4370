/* TwTagSections (tag_sections.h). Each section is a GtkExpander holding a
 * GtkFlowBox of fixed-size slots (GtkFlowBoxChild); a slot's content is
 * built once the slot's allocation lies within half a page of the
 * scrolled view. Allocations, scrolling, expanding and new cards each
 * schedule that check on the frame clock; a frame builds one card, so it
 * holds one chart's first drawing, never a whole page of them. */
#include "tag_sections.h"

#include <string.h>

#define SPACING 12

typedef struct Section Section;

typedef struct {
    char *key, *tag;
    GtkWidget *slot;
    gboolean built, matches;
    Section *section;
} Card;

struct Section {
    char *name;
    GtkWidget *expander, *flow, *count;
    GPtrArray *cards; /* Card*, in display order */
    int n_matching;
};

struct _TwTagSections {
    GtkWidget parent_instance;
    GtkWidget *stack, *scrolled, *box, *empty;
    int card_width, card_height;
    TwCardFactory factory;
    gpointer factory_data;
    GPtrArray *sections; /* Section*, by name */
    GHashTable *cards;   /* key -> Card* (owned) */
    GRegex *filter;
    char *no_cards, *none_match;
    guint tick;
    gboolean dirty; /* a check is due: something may be on screen unbuilt */
    int n_built;
};

G_DEFINE_FINAL_TYPE(TwTagSections, tw_tag_sections, GTK_TYPE_WIDGET)

enum { PROP_0, PROP_CARD_WIDTH, PROP_CARD_HEIGHT, PROP_NO_CARDS_TEXT, PROP_NONE_MATCH_TEXT, N_PROPS };
static GParamSpec *props[N_PROPS];

static void schedule_check(TwTagSections *s);

/* "train/loss" -> "train"; "loss" -> "loss". */
static char *group_of(const char *tag)
{
    const char *slash = strchr(tag, '/');
    return slash && slash != tag ? g_strndup(tag, slash - tag) : g_strdup(tag);
}

static void card_free(gpointer data)
{
    Card *card = data;
    g_free(card->key);
    g_free(card->tag);
    g_free(card);
}

static void section_free(gpointer data)
{
    Section *section = data;
    g_ptr_array_free(section->cards, TRUE);
    g_free(section->name);
    g_free(section);
}

/* ---- building what is on screen ---------------------------------------------- */
static void build(TwTagSections *s, Card *card)
{
    GtkWidget *content = s->factory(card->key, card->tag, s->factory_data);
    gtk_flow_box_child_set_child(GTK_FLOW_BOX_CHILD(card->slot), content);
    card->built = TRUE;
    s->n_built++;
}

static gboolean near_view(TwTagSections *s, Card *card, double top, double bottom)
{
    graphene_rect_t b;
    if (!gtk_widget_compute_bounds(card->slot, s->box, &b) || b.size.height <= 0)
        return FALSE;
    return b.origin.y < bottom && b.origin.y + b.size.height > top;
}

/* Builds the first unbuilt card near the view; TRUE when it did. */
static gboolean build_one(TwTagSections *s)
{
    GtkAdjustment *v = gtk_scrolled_window_get_vadjustment(GTK_SCROLLED_WINDOW(s->scrolled));
    double page = gtk_adjustment_get_page_size(v), value = gtk_adjustment_get_value(v);
    double top = value - page / 2, bottom = value + page * 1.5;
    for (guint i = 0; i < s->sections->len; i++) {
        Section *section = s->sections->pdata[i];
        if (!section->n_matching || !gtk_expander_get_expanded(GTK_EXPANDER(section->expander)))
            continue;
        for (guint j = 0; j < section->cards->len; j++) {
            Card *card = section->cards->pdata[j];
            if (!card->built && card->matches && near_view(s, card, top, bottom)) {
                build(s, card);
                return TRUE;
            }
        }
    }
    return FALSE;
}

/* In a frame's update phase: the card built is laid out and drawn in it. */
static gboolean on_tick(GtkWidget *widget, GdkFrameClock *clock, gpointer data)
{
    TwTagSections *s = TW_TAG_SECTIONS(widget);
    if (gtk_widget_get_mapped(widget)) { /* else map schedules it again */
        s->dirty = build_one(s);
        if (s->dirty)
            return G_SOURCE_CONTINUE;
    }
    s->tick = 0;
    return G_SOURCE_REMOVE;
}

static void schedule_check(TwTagSections *s)
{
    s->dirty = TRUE;
    if (!s->tick)
        s->tick = gtk_widget_add_tick_callback(GTK_WIDGET(s), on_tick, NULL, NULL);
}

/* ---- sections -------------------------------------------------------------------- */
static gboolean slot_matches(GtkFlowBoxChild *slot, gpointer data)
{
    Card *card = g_object_get_data(G_OBJECT(slot), "card");
    return card && card->matches;
}

static Section *section_new(TwTagSections *s, const char *name)
{
    Section *section = g_new0(Section, 1);
    section->name = g_strdup(name);
    section->cards = g_ptr_array_new();
    GtkWidget *label = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 8);
    GtkWidget *title = gtk_label_new(name);
    gtk_widget_add_css_class(title, "section-title");
    section->count = gtk_label_new(NULL);
    gtk_widget_add_css_class(section->count, "dim-label");
    gtk_box_append(GTK_BOX(label), title);
    gtk_box_append(GTK_BOX(label), section->count);
    section->flow = gtk_flow_box_new();
    GtkFlowBox *flow = GTK_FLOW_BOX(section->flow);
    gtk_flow_box_set_selection_mode(flow, GTK_SELECTION_NONE);
    gtk_flow_box_set_homogeneous(flow, TRUE);
    gtk_flow_box_set_max_children_per_line(flow, 16);
    gtk_flow_box_set_column_spacing(flow, SPACING);
    gtk_flow_box_set_row_spacing(flow, SPACING);
    gtk_flow_box_set_filter_func(flow, slot_matches, NULL, NULL);
    gtk_widget_set_valign(section->flow, GTK_ALIGN_START);
    section->expander = gtk_expander_new(NULL);
    gtk_expander_set_label_widget(GTK_EXPANDER(section->expander), label);
    gtk_expander_set_child(GTK_EXPANDER(section->expander), section->flow);
    gtk_expander_set_expanded(GTK_EXPANDER(section->expander), TRUE);
    gtk_widget_add_css_class(section->expander, "tag-section");
    g_signal_connect_swapped(section->expander, "notify::expanded", G_CALLBACK(schedule_check), s);
    return section;
}

/* The section for name, created in its alphabetical place. */
static Section *section_for(TwTagSections *s, const char *name)
{
    guint i = 0;
    for (; i < s->sections->len; i++) {
        Section *section = s->sections->pdata[i];
        int order = strcmp(section->name, name);
        if (order == 0)
            return section;
        if (order > 0)
            break;
    }
    Section *section = section_new(s, name);
    GtkWidget *before = i > 0 ? ((Section *)s->sections->pdata[i - 1])->expander : NULL;
    gtk_box_insert_child_after(GTK_BOX(s->box), section->expander, before);
    g_ptr_array_insert(s->sections, i, section);
    return section;
}

static void remove_card(TwTagSections *s, Card *card)
{
    Section *section = card->section;
    gtk_flow_box_remove(GTK_FLOW_BOX(section->flow), card->slot);
    g_ptr_array_remove(section->cards, card);
    if (card->built)
        s->n_built--;
    g_hash_table_remove(s->cards, card->key);
}

static Card *card_new(TwTagSections *s, Section *section, const char *key, const char *tag, guint position)
{
    Card *card = g_new0(Card, 1);
    card->key = g_strdup(key);
    card->tag = g_strdup(tag);
    card->section = section;
    card->slot = gtk_flow_box_child_new();
    gtk_widget_set_size_request(card->slot, s->card_width, s->card_height);
    gtk_widget_add_css_class(card->slot, "dashboard-card");
    g_object_set_data(G_OBJECT(card->slot), "card", card);
    gtk_flow_box_insert(GTK_FLOW_BOX(section->flow), card->slot, (int)position);
    g_ptr_array_insert(section->cards, position, card);
    g_hash_table_insert(s->cards, card->key, card);
    return card;
}

/* ---- filter and the empty state ------------------------------------------------- */
static void apply_filter(TwTagSections *s)
{
    int total = 0;
    for (guint i = 0; i < s->sections->len; i++) {
        Section *section = s->sections->pdata[i];
        section->n_matching = 0;
        for (guint j = 0; j < section->cards->len; j++) {
            Card *card = section->cards->pdata[j];
            card->matches = !s->filter || g_regex_match(s->filter, card->tag, 0, NULL);
            section->n_matching += card->matches;
        }
        char *count = g_strdup_printf("%d", section->n_matching);
        gtk_label_set_text(GTK_LABEL(section->count), count);
        g_free(count);
        gtk_flow_box_invalidate_filter(GTK_FLOW_BOX(section->flow));
        gtk_widget_set_visible(section->expander, section->n_matching > 0);
        total += section->n_matching;
    }
    gboolean none = g_hash_table_size(s->cards) == 0;
    gtk_label_set_markup(GTK_LABEL(s->empty), none ? s->no_cards : s->none_match);
    gtk_stack_set_visible_child_name(GTK_STACK(s->stack), total ? "cards" : "empty");
    schedule_check(s);
}

/* ---- tag_sections.h --------------------------------------------------------------- */
void tw_tag_sections_set_cards(TwTagSections *s, int n, const char *const *keys, const char *const *tags)
{
    g_return_if_fail(TW_IS_TAG_SECTIONS(s));
    GHashTable *wanted = g_hash_table_new(g_str_hash, g_str_equal);
    for (int i = 0; i < n; i++)
        g_hash_table_add(wanted, (gpointer)keys[i]);
    GList *stale = NULL;
    GHashTableIter iter;
    gpointer card;
    g_hash_table_iter_init(&iter, s->cards);
    while (g_hash_table_iter_next(&iter, NULL, &card))
        if (!g_hash_table_contains(wanted, ((Card *)card)->key))
            stale = g_list_prepend(stale, card);
    for (GList *l = stale; l; l = l->next)
        remove_card(s, l->data);
    g_list_free(stale);
    g_hash_table_unref(wanted);

    /* Existing cards keep their relative order; new ones go in at theirs. */
    GHashTable *next_position = g_hash_table_new(g_direct_hash, g_direct_equal);
    for (int i = 0; i < n; i++) {
        char *group = group_of(tags[i]);
        Section *section = section_for(s, group);
        g_free(group);
        guint position = GPOINTER_TO_UINT(g_hash_table_lookup(next_position, section));
        if (!g_hash_table_contains(s->cards, keys[i]))
            card_new(s, section, keys[i], tags[i], MIN(position, section->cards->len));
        g_hash_table_insert(next_position, section, GUINT_TO_POINTER(position + 1));
    }
    g_hash_table_unref(next_position);
    for (guint i = s->sections->len; i-- > 0;) {
        Section *section = s->sections->pdata[i];
        if (section->cards->len == 0) {
            gtk_box_remove(GTK_BOX(s->box), section->expander);
            g_ptr_array_remove_index(s->sections, i);
        }
    }
    apply_filter(s);
}

void tw_tag_sections_set_filter(TwTagSections *s, GRegex *regex)
{
    g_return_if_fail(TW_IS_TAG_SECTIONS(s));
    if (regex)
        g_regex_ref(regex);
    if (s->filter)
        g_regex_unref(s->filter);
    s->filter = regex;
    apply_filter(s);
}

void tw_tag_sections_set_factory(TwTagSections *s, TwCardFactory factory, gpointer user_data)
{
    g_return_if_fail(TW_IS_TAG_SECTIONS(s));
    s->factory = factory;
    s->factory_data = user_data;
}

GtkWidget *tw_tag_sections_card(TwTagSections *s, const char *key)
{
    Card *card = g_hash_table_lookup(s->cards, key);
    return card && card->built ? gtk_flow_box_child_get_child(GTK_FLOW_BOX_CHILD(card->slot)) : NULL;
}

void tw_tag_sections_foreach(TwTagSections *s, void (*func)(const char *key, GtkWidget *content, gpointer user_data),
                             gpointer user_data)
{
    for (guint i = 0; i < s->sections->len; i++) {
        Section *section = s->sections->pdata[i];
        for (guint j = 0; j < section->cards->len; j++) {
            Card *card = section->cards->pdata[j];
            if (card->built)
                func(card->key, gtk_flow_box_child_get_child(GTK_FLOW_BOX_CHILD(card->slot)), user_data);
        }
    }
}

int tw_tag_sections_n_groups(TwTagSections *s)
{
    return (int)s->sections->len;
}

const char *tw_tag_sections_group(TwTagSections *s, int index)
{
    g_return_val_if_fail(index >= 0 && index < (int)s->sections->len, NULL);
    return ((Section *)s->sections->pdata[index])->name;
}

GtkExpander *tw_tag_sections_expander(TwTagSections *s, int index)
{
    g_return_val_if_fail(index >= 0 && index < (int)s->sections->len, NULL);
    return GTK_EXPANDER(((Section *)s->sections->pdata[index])->expander);
}

gboolean tw_tag_sections_settled(TwTagSections *s)
{
    return !s->dirty;
}

int tw_tag_sections_n_built(TwTagSections *s)
{
    return s->n_built;
}

/* ---- the widget ------------------------------------------------------------------------ */
static void tw_tag_sections_measure(GtkWidget *widget, GtkOrientation orientation, int for_size, int *min, int *nat,
                                    int *min_baseline, int *nat_baseline)
{
    gtk_widget_measure(TW_TAG_SECTIONS(widget)->stack, orientation, for_size, min, nat, min_baseline, nat_baseline);
}

/* A new allocation may bring slots into view. */
static void tw_tag_sections_size_allocate(GtkWidget *widget, int width, int height, int baseline)
{
    TwTagSections *s = TW_TAG_SECTIONS(widget);
    gtk_widget_allocate(s->stack, width, height, baseline, NULL);
    schedule_check(s);
}

static void tw_tag_sections_map(GtkWidget *widget)
{
    GTK_WIDGET_CLASS(tw_tag_sections_parent_class)->map(widget);
    schedule_check(TW_TAG_SECTIONS(widget));
}

static void tw_tag_sections_dispose(GObject *object)
{
    TwTagSections *s = TW_TAG_SECTIONS(object);
    if (s->tick)
        gtk_widget_remove_tick_callback(GTK_WIDGET(s), s->tick);
    s->tick = 0;
    g_clear_pointer(&s->stack, gtk_widget_unparent);
    g_clear_pointer(&s->sections, g_ptr_array_unref);
    g_clear_pointer(&s->cards, g_hash_table_unref);
    g_clear_pointer(&s->filter, g_regex_unref);
    G_OBJECT_CLASS(tw_tag_sections_parent_class)->dispose(object);
}

static void tw_tag_sections_finalize(GObject *object)
{
    TwTagSections *s = TW_TAG_SECTIONS(object);
    g_free(s->no_cards);
    g_free(s->none_match);
    G_OBJECT_CLASS(tw_tag_sections_parent_class)->finalize(object);
}

static void tw_tag_sections_set_property(GObject *object, guint id, const GValue *value, GParamSpec *pspec)
{
    TwTagSections *s = TW_TAG_SECTIONS(object);
    switch (id) {
    case PROP_CARD_WIDTH:
        s->card_width = g_value_get_int(value);
        break;
    case PROP_CARD_HEIGHT:
        s->card_height = g_value_get_int(value);
        break;
    case PROP_NO_CARDS_TEXT:
    case PROP_NONE_MATCH_TEXT: {
        char **text = id == PROP_NO_CARDS_TEXT ? &s->no_cards : &s->none_match;
        g_free(*text);
        *text = g_value_dup_string(value);
        apply_filter(s);
        break;
    }
    default:
        G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec);
    }
}

static void tw_tag_sections_get_property(GObject *object, guint id, GValue *value, GParamSpec *pspec)
{
    TwTagSections *s = TW_TAG_SECTIONS(object);
    switch (id) {
    case PROP_CARD_WIDTH:
        g_value_set_int(value, s->card_width);
        break;
    case PROP_CARD_HEIGHT:
        g_value_set_int(value, s->card_height);
        break;
    case PROP_NO_CARDS_TEXT:
        g_value_set_string(value, s->no_cards);
        break;
    case PROP_NONE_MATCH_TEXT:
        g_value_set_string(value, s->none_match);
        break;
    default:
        G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec);
    }
}

static void tw_tag_sections_class_init(TwTagSectionsClass *klass)
{
    GObjectClass *object_class = G_OBJECT_CLASS(klass);
    GtkWidgetClass *widget_class = GTK_WIDGET_CLASS(klass);
    object_class->dispose = tw_tag_sections_dispose;
    object_class->finalize = tw_tag_sections_finalize;
    object_class->set_property = tw_tag_sections_set_property;
    object_class->get_property = tw_tag_sections_get_property;
    /* A card's slot size is fixed once the sections exist. */
    GParamFlags size = G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS;
    props[PROP_CARD_WIDTH] = g_param_spec_int("card-width", NULL, NULL, 1, G_MAXINT, 420, size);
    props[PROP_CARD_HEIGHT] = g_param_spec_int("card-height", NULL, NULL, 1, G_MAXINT, 300, size);
    props[PROP_NO_CARDS_TEXT] = g_param_spec_string("no-cards-text", NULL, NULL, "",
                                                    G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS);
    props[PROP_NONE_MATCH_TEXT] = g_param_spec_string("none-match-text", NULL, NULL, "",
                                                      G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS);
    g_object_class_install_properties(object_class, N_PROPS, props);
    widget_class->measure = tw_tag_sections_measure;
    widget_class->size_allocate = tw_tag_sections_size_allocate;
    widget_class->map = tw_tag_sections_map;
    gtk_widget_class_set_css_name(widget_class, "tagsections");
}

static void tw_tag_sections_init(TwTagSections *s)
{
    s->sections = g_ptr_array_new_with_free_func(section_free);
    s->cards = g_hash_table_new_full(g_str_hash, g_str_equal, NULL, card_free);
    s->no_cards = g_strdup("");
    s->none_match = g_strdup("");
    s->box = gtk_box_new(GTK_ORIENTATION_VERTICAL, 6);
    gtk_widget_add_css_class(s->box, "tag-sections");
    s->scrolled = gtk_scrolled_window_new();
    gtk_scrolled_window_set_policy(GTK_SCROLLED_WINDOW(s->scrolled), GTK_POLICY_NEVER, GTK_POLICY_AUTOMATIC);
    gtk_scrolled_window_set_child(GTK_SCROLLED_WINDOW(s->scrolled), s->box);
    GtkAdjustment *v = gtk_scrolled_window_get_vadjustment(GTK_SCROLLED_WINDOW(s->scrolled));
    g_signal_connect_swapped(v, "value-changed", G_CALLBACK(schedule_check), s);
    s->empty = gtk_label_new(NULL);
    gtk_label_set_wrap(GTK_LABEL(s->empty), TRUE);
    gtk_label_set_justify(GTK_LABEL(s->empty), GTK_JUSTIFY_CENTER);
    gtk_label_set_max_width_chars(GTK_LABEL(s->empty), 60);
    gtk_widget_add_css_class(s->empty, "dashboard-empty");
    s->stack = gtk_stack_new();
    gtk_stack_add_named(GTK_STACK(s->stack), s->scrolled, "cards");
    gtk_stack_add_named(GTK_STACK(s->stack), s->empty, "empty");
    gtk_widget_set_parent(s->stack, GTK_WIDGET(s));
}
