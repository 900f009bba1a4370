/* The Dashboard's Images and Text tabs under Xvfb (tests/meson.build), on
 * runs written with tw_summary_image / tw_summary_text: a card per run and
 * tag, the step slider (newest first, each step's pixels decoded back as
 * written, new images followed live), whole-factor zoom, an image that is
 * not one named with its run, tag and step; markdown rendered into labels
 * and tables; and the markdown parser's blocks and markup by hand. */
#include <glib/gstdio.h>
#include <gtk/gtk.h>
#include <sqlite3.h>
#include <string.h>

#include <tw/summary.h>

#include "dashboard_view.h"
#include "image_card.h"
#include "markdown.h"
#include "tag_sections.h"
#include "text_card.h"
#include "gui_helpers.h"

/* ---- a window on a scratch database ------------------------------------------- */
typedef struct {
    GtkWidget *window, *view;
    char *dir, *logdb;
} fixture;

static void fixture_init(fixture *f)
{
    memset(f, 0, sizeof *f);
    f->logdb = scratch_logdb("twb-media-XXXXXX", &f->dir);
}

static void fixture_show(fixture *f, const char *tab)
{
    f->window = dashboard_window_open(f->logdb, tab, &f->view);
}

static void fixture_close(fixture *f)
{
    scratch_close(f->window, f->dir, f->logdb);
}

/* ---- images -------------------------------------------------------------------------- */
/* A 4x3 RGB image whose pixels say the step and run. */
static void image_pixels(uint8_t *p, int64_t step, int run)
{
    for (int i = 0; i < 4 * 3 * 3; i++)
        p[i] = (uint8_t)(step * 40 + run * 7 + i);
}

static void write_image(tw_summary_writer *w, int64_t step, int run)
{
    uint8_t pixels[4 * 3 * 3];
    image_pixels(pixels, step, run);
    tw_tensor *t = tw_tensor_from_data(pixels, TW_UINT8, TW_SHAPE(4, 3, 3));
    g_assert_cmpint(tw_summary_image(w, "samples/digits", t, step), ==, 0);
    tw_tensor_unref(t);
}

static gboolean card_loaded(gpointer card)
{
    return tw_image_card_loaded(card);
}

static void assert_pixels(TwImageCard *card, int64_t step, int run)
{
    wait_until(card_loaded, card, 10, "the image decoded");
    g_assert_null(tw_image_card_error(card));
    GdkPixbuf *pb = tw_image_card_pixbuf(card);
    g_assert_nonnull(pb);
    g_assert_cmpint(gdk_pixbuf_get_width(pb), ==, 3);
    g_assert_cmpint(gdk_pixbuf_get_height(pb), ==, 4);
    uint8_t want[4 * 3 * 3];
    image_pixels(want, step, run);
    const guint8 *px = gdk_pixbuf_read_pixels(pb);
    int stride = gdk_pixbuf_get_rowstride(pb), nc = gdk_pixbuf_get_n_channels(pb);
    for (int y = 0; y < 4; y++)
        for (int x = 0; x < 3; x++)
            g_assert_cmpmem(px + y * stride + x * nc, 3, want + (y * 3 + x) * 3, 3);
}

typedef struct {
    TwImageCard *card;
    int n;
} count_wait;

static gboolean has_n_images(gpointer data)
{
    count_wait *c = data;
    return tw_image_card_n_images(c->card) == c->n;
}

static gboolean drawn_at(gpointer data)
{
    count_wait *c = data;
    return tw_image_card_drawn_scale(c->card) == c->n;
}

static gboolean drawn_whole(gpointer card)
{
    double s = tw_image_card_drawn_scale(card);
    return s >= 1 && s == (int)s;
}

static void test_images(void)
{
    fixture f;
    fixture_init(&f);
    tw_summary_writer *a = tw_summary_writer_open(f.logdb, "a", NULL), *b = tw_summary_writer_open(f.logdb, "b", NULL);
    for (int s = 0; s < 5; s++)
        write_image(a, s, 0);
    write_image(b, 0, 1);
    g_assert_cmpint(tw_summary_writer_close(b, TW_RUN_FINISHED), ==, 0);
    g_assert_cmpint(tw_summary_flush(a), ==, 0);

    fixture_show(&f, "images");
    TwTagSections *sections = TW_TAG_SECTIONS(find_named(f.view, "images"));
    g_assert_nonnull(sections);
    g_assert_cmpint(tw_tag_sections_n_groups(sections), ==, 1);
    g_assert_cmpstr(tw_tag_sections_group(sections, 0), ==, "samples");
    char *key_a = g_strdup_printf("samples/digits\n%" G_GINT64_FORMAT, run_id_of(f.logdb, "a"));
    char *key_b = g_strdup_printf("samples/digits\n%" G_GINT64_FORMAT, run_id_of(f.logdb, "b"));
    TwImageCard *card = TW_IMAGE_CARD(tw_tag_sections_card(sections, key_a));
    g_assert_nonnull(card);
    g_assert_nonnull(tw_tag_sections_card(sections, key_b));
    g_assert_cmpint(tw_image_card_n_images(card), ==, 5);
    g_assert_cmpint(tw_image_card_selected(card), ==, 4); /* the newest first */
    assert_pixels(card, 4, 0);
    assert_pixels(TW_IMAGE_CARD(tw_tag_sections_card(sections, key_b)), 0, 1);

    /* The slider: step 1's pixels. */
    tw_image_card_select(card, 1);
    assert_pixels(card, 1, 0);

    /* Fit draws a whole factor (a 3x4 image in a card hundreds wide). */
    wait_until(drawn_whole, card, 10, "the image drawn at a whole factor");
    count_wait zoom = {card, 3};
    tw_image_card_set_zoom(card, 3);
    wait_until(drawn_at, &zoom, 10, "the image drawn at 3x");

    /* Live: a new step appears on the next listing; the slider stays on
     * step 1 (it was not on the newest). */
    write_image(a, 5, 0);
    g_assert_cmpint(tw_summary_flush(a), ==, 0);
    count_wait more = {card, 6};
    wait_until(has_n_images, &more, 10, "the sixth image listed");
    g_assert_cmpint(tw_image_card_selected(card), ==, 1);
    tw_image_card_select(card, 5);
    assert_pixels(card, 5, 0);

    /* Bytes that are not an image: a message naming run, tag and step. */
    sqlite3 *db;
    g_assert_cmpint(sqlite3_open(f.logdb, &db), ==, SQLITE_OK);
    char *sql = g_strdup_printf("INSERT INTO images (run_id, tag, step, sample, wall_time, width, height, format, data) "
                                "VALUES (%" G_GINT64_FORMAT ", 'samples/digits', 9, 0, 1.0, 3, 4, 'png', x'00112233')",
                                run_id_of(f.logdb, "a"));
    g_assert_cmpint(sqlite3_exec(db, sql, NULL, NULL, NULL), ==, SQLITE_OK);
    g_free(sql);
    sqlite3_close(db);
    count_wait seven = {card, 7};
    wait_until(has_n_images, &seven, 10, "the damaged image listed");
    tw_image_card_select(card, 6);
    wait_until(card_loaded, card, 10, "the damaged image tried");
    g_assert_null(tw_image_card_pixbuf(card));
    const char *error = tw_image_card_error(card);
    g_assert_nonnull(error);
    g_assert_nonnull(strstr(error, "run “a”"));
    g_assert_nonnull(strstr(error, "tag “samples/digits”"));
    g_assert_nonnull(strstr(error, "step 9"));

    g_assert_cmpint(tw_summary_writer_close(a, TW_RUN_FINISHED), ==, 0);
    g_free(key_a);
    g_free(key_b);
    fixture_close(&f);
}

/* ---- text ----------------------------------------------------------------------------- */
static const char notes[] = "# Run notes\n"
                            "\n"
                            "Trained with **Adam** at *lr=1e-3*; see `a<b` and snake_case_name.\n"
                            "\n"
                            "| epoch | loss |\n"
                            "|---|---|\n"
                            "| 1 | **0.81** |\n"
                            "| 2 | 0.88 |\n";

static void test_text(void)
{
    fixture f;
    fixture_init(&f);
    tw_summary_writer *w = tw_summary_writer_open(f.logdb, "t", NULL);
    g_assert_cmpint(tw_summary_text(w, "notes", notes, 1), ==, 0);
    g_assert_cmpint(tw_summary_text(w, "notes", "second", 2), ==, 0);
    g_assert_cmpint(tw_summary_writer_close(w, TW_RUN_FINISHED), ==, 0);

    fixture_show(&f, "text");
    TwTagSections *sections = TW_TAG_SECTIONS(find_named(f.view, "text"));
    char *key = g_strdup_printf("notes\n%" G_GINT64_FORMAT, run_id_of(f.logdb, "t"));
    TwTextCard *card = TW_TEXT_CARD(tw_tag_sections_card(sections, key));
    g_assert_nonnull(card);
    g_assert_true(tw_text_card_loaded(card));
    g_assert_cmpint(tw_text_card_n_records(card), ==, 2);

    GPtrArray *found = g_ptr_array_new();
    collect_class(GTK_WIDGET(card), "text-paragraph", found);
    g_assert_cmpuint(found->len, ==, 2);
    g_assert_cmpstr(gtk_label_get_text(found->pdata[0]), ==, "Trained with Adam at lr=1e-3; see a<b and snake_case_name.");
    g_assert_cmpstr(gtk_label_get_label(found->pdata[0]), ==,
                    "Trained with <b>Adam</b> at <i>lr=1e-3</i>; see <tt>a&lt;b</tt> and snake_case_name.");
    g_ptr_array_set_size(found, 0);
    collect_class(GTK_WIDGET(card), "text-table", found);
    g_assert_cmpuint(found->len, ==, 1);
    GtkGrid *grid = found->pdata[0];
    g_assert_cmpstr(gtk_label_get_text(GTK_LABEL(gtk_grid_get_child_at(grid, 1, 0))), ==, "loss");
    g_assert_cmpstr(gtk_label_get_text(GTK_LABEL(gtk_grid_get_child_at(grid, 1, 1))), ==, "0.81");
    g_assert_cmpstr(gtk_label_get_label(GTK_LABEL(gtk_grid_get_child_at(grid, 1, 1))), ==, "<b>0.81</b>");
    g_assert_cmpstr(gtk_label_get_text(GTK_LABEL(gtk_grid_get_child_at(grid, 0, 2))), ==, "2");
    g_assert_null(gtk_grid_get_child_at(grid, 2, 0));
    g_ptr_array_set_size(found, 0);
    collect_class(GTK_WIDGET(card), "text-heading", found);
    g_assert_cmpuint(found->len, ==, 1);
    g_assert_cmpstr(gtk_label_get_text(found->pdata[0]), ==, "Run notes");
    g_ptr_array_free(found, TRUE);
    g_free(key);
    fixture_close(&f);
}

/* ---- the parser, by hand -------------------------------------------------------------- */
static GPtrArray *parse(const char *text)
{
    return tw_markdown_parse(text, strlen(text));
}

static const TwMdBlock *block(GPtrArray *blocks, guint i)
{
    g_assert_cmpuint(i, <, blocks->len);
    return blocks->pdata[i];
}

static void test_markdown(void)
{
    GPtrArray *b = parse("para one\nstill one\n\n## Two ##\n\n- a *b*\n  c\n3. d\n\n```\nx < y\n```\n"
                         "    indented\n\n> quoted **q**\n\n***\n<i>html</i> & [t](https://e.org/?a=1&b=2) "
                         "[js](javascript:x) \\*lit\\* snake_case_x __s__ _e_");
    g_assert_cmpuint(b->len, ==, 9);
    g_assert_cmpint(block(b, 0)->kind, ==, TW_MD_PARAGRAPH);
    g_assert_cmpstr(block(b, 0)->text, ==, "para one still one");
    g_assert_cmpint(block(b, 1)->kind, ==, TW_MD_HEADING);
    g_assert_cmpint(block(b, 1)->level, ==, 2);
    g_assert_cmpstr(block(b, 1)->text, ==, "Two");
    g_assert_cmpint(block(b, 2)->kind, ==, TW_MD_LIST_ITEM);
    g_assert_cmpstr(block(b, 2)->marker, ==, "•");
    g_assert_cmpstr(block(b, 2)->text, ==, "a <i>b</i> c");
    g_assert_cmpstr(block(b, 3)->marker, ==, "3.");
    g_assert_cmpint(block(b, 4)->kind, ==, TW_MD_CODE);
    g_assert_cmpstr(block(b, 4)->text, ==, "x < y");
    g_assert_cmpint(block(b, 5)->kind, ==, TW_MD_CODE);
    g_assert_cmpstr(block(b, 5)->text, ==, "indented");
    g_assert_cmpint(block(b, 6)->kind, ==, TW_MD_QUOTE);
    g_assert_cmpstr(block(b, 6)->text, ==, "quoted <b>q</b>");
    g_assert_cmpint(block(b, 7)->kind, ==, TW_MD_RULE);
    g_assert_cmpstr(block(b, 8)->text, ==,
                    "&lt;i&gt;html&lt;/i&gt; &amp; <a href=\"https://e.org/?a=1&amp;b=2\">t</a> js *lit* "
                    "snake_case_x <b>s</b> <i>e</i>");
    g_ptr_array_free(b, TRUE);

    /* A table: alignment colons, a short row padded, a pipe in code kept. */
    b = parse("| a | b |\n|:--|--:|\n| `x|y` |\n| 1 | 2 | 3 |\n");
    g_assert_cmpuint(b->len, ==, 1);
    g_assert_cmpint(block(b, 0)->kind, ==, TW_MD_TABLE);
    g_assert_cmpint(block(b, 0)->nrows, ==, 3);
    g_assert_cmpint(block(b, 0)->ncols, ==, 2);
    g_assert_cmpstr(block(b, 0)->cells[2], ==, "<tt>x|y</tt>");
    g_assert_cmpstr(block(b, 0)->cells[3], ==, "");
    g_assert_cmpstr(block(b, 0)->cells[5], ==, "2");
    g_ptr_array_free(b, TRUE);

    /* Not a table: the separator's cells do not match the header's. */
    b = parse("a | b\n---\n");
    g_assert_cmpint(block(b, 0)->kind, ==, TW_MD_PARAGRAPH);
    g_ptr_array_free(b, TRUE);

    /* Unclosed delimiters stay text; invalid UTF-8 is replaced. */
    b = parse("**open *and `tick [link](x \xff");
    g_assert_cmpstr(block(b, 0)->text, ==, "**open *and `tick [link](x \xef\xbf\xbd");
    g_ptr_array_free(b, TRUE);

    /* Long runs of delimiters parse (near-linear: no closer is searched for twice). */
    GString *s = g_string_new(NULL);
    for (int i = 0; i < 200000; i++)
        g_string_append(s, i % 3 ? "*" : "[`_");
    b = tw_markdown_parse(s->str, s->len);
    g_assert_cmpuint(b->len, ==, 1);
    g_ptr_array_free(b, TRUE);
    g_string_free(s, TRUE);
}

int main(int argc, char **argv)
{
    gtk_test_init(&argc, &argv, NULL);
    g_test_add_func("/ui/dashboard-media/images", test_images);
    g_test_add_func("/ui/dashboard-media/text", test_text);
    g_test_add_func("/ui/dashboard-media/markdown", test_markdown);
    return g_test_run();
}
