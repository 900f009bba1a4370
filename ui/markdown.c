/* Markdown into Pango-markup blocks (markdown.h). Lines are sorted into
 * blocks first, then each block's text goes through the inline rules.
 *
 * Inline emphasis finds its closing delimiter by searching ahead; a search
 * that fails remembers where it started, so a line of ten thousand lone
 * '*' is not searched ten thousand times (the parse stays near linear),
 * and nesting stops at MAX_NESTING (deeper delimiters are text). */
#include "markdown.h"

#include <string.h>

#define MAX_NESTING 8

static void block_free(gpointer data)
{
    TwMdBlock *b = data;
    g_free(b->marker);
    g_free(b->text);
    for (int i = 0; b->cells && i < b->nrows * b->ncols; i++)
        g_free(b->cells[i]);
    g_free(b->cells);
    g_free(b);
}

/* ---- inline ------------------------------------------------------------------ */
static void escape_char(GString *out, char c)
{
    switch (c) {
    case '<': g_string_append(out, "&lt;"); break;
    case '>': g_string_append(out, "&gt;"); break;
    case '&': g_string_append(out, "&amp;"); break;
    case '"': g_string_append(out, "&quot;"); break;
    case '\'': g_string_append(out, "&apos;"); break;
    default: g_string_append_c(out, c);
    }
}

static void escape_range(GString *out, const char *s, const char *end)
{
    for (; s < end; s++)
        escape_char(out, *s);
}

static gboolean word_char(const char *p, const char *start, const char *end)
{
    return p >= start && p < end && (g_ascii_isalnum(*p) || (*p & 0x80));
}

typedef struct {
    const char *start, *end;
    /* Per searched pattern: no match at or after this place (NULL: not known). */
    const char *fails[6];
} span;

enum { PAT_STRONG_STAR, PAT_STRONG_UNDER, PAT_EM_STAR, PAT_EM_UNDER, PAT_BRACKET, PAT_PAREN };

/* The first closing delimiter delim (length d) at or after from: content
 * before it not ending in a space; for '_', not inside a word. */
static const char *find_closer(span *sp, int pattern, const char *from, const char *delim, size_t d)
{
    if (sp->fails[pattern] && from >= sp->fails[pattern])
        return NULL;
    for (const char *q = from; q + d <= sp->end; q++) {
        if (memcmp(q, delim, d) != 0)
            continue;
        if (d == 1 && q + 1 < sp->end && q[1] == delim[0])
            { q++; continue; } /* a single closer is not half of a double */
        if (q[-1] == ' ')
            continue;
        if (delim[0] == '_' && word_char(q + d, sp->start, sp->end))
            continue;
        return q;
    }
    sp->fails[pattern] = from;
    return NULL;
}

static const char *find_char(span *sp, int pattern, const char *from, char c)
{
    if (sp->fails[pattern] && from >= sp->fails[pattern])
        return NULL;
    const char *q = memchr(from, c, (size_t)(sp->end - from));
    if (!q)
        sp->fails[pattern] = from;
    return q;
}

static void inline_md(GString *out, const char *s, const char *end, int depth, gboolean in_link);

static gboolean safe_url(const char *s, const char *end)
{
    size_t n = (size_t)(end - s);
    return (n > 7 && !g_ascii_strncasecmp(s, "http://", 7)) || (n > 8 && !g_ascii_strncasecmp(s, "https://", 8)) ||
           (n > 7 && !g_ascii_strncasecmp(s, "mailto:", 7));
}

static void inline_md(GString *out, const char *s, const char *end, int depth, gboolean in_link)
{
    span sp = {.start = s, .end = end};
    const char *tick_fails[17] = {0};
    const char *p = s;
    while (p < end) {
        char c = *p;
        if (c == '\\' && p + 1 < end && g_ascii_ispunct(p[1])) {
            escape_char(out, p[1]);
            p += 2;
            continue;
        }
        if (c == '`') {
            size_t k = 0;
            while (p + k < end && p[k] == '`')
                k++;
            const char *q = p + k, *close = NULL;
            /* A run of k with no closer after p has none after any later p. */
            gboolean hopeless = k >= G_N_ELEMENTS(tick_fails) || (tick_fails[k] && q >= tick_fails[k]);
            for (; !hopeless && q + k <= end; q++) {
                if (*q != '`')
                    continue;
                size_t run = 0;
                while (q + run < end && q[run] == '`')
                    run++;
                if (run == k) {
                    close = q;
                    break;
                }
                q += run - 1;
            }
            if (!close) {
                if (k < G_N_ELEMENTS(tick_fails) && !hopeless)
                    tick_fails[k] = p + k;
                g_string_append_len(out, p, (gssize)k);
                p += k;
                continue;
            }
            const char *a = p + k, *b = close;
            if (b - a >= 2 && *a == ' ' && b[-1] == ' ')
                a++, b--;
            g_string_append(out, "<tt>");
            escape_range(out, a, b);
            g_string_append(out, "</tt>");
            p = close + k;
            continue;
        }
        if ((c == '*' || c == '_') && depth < MAX_NESTING && !(c == '_' && word_char(p - 1, s, end))) {
            gboolean strong = p + 1 < end && p[1] == c;
            size_t d = strong ? 2 : 1;
            const char *delim = strong ? (c == '*' ? "**" : "__") : (c == '*' ? "*" : "_");
            int pattern = strong ? (c == '*' ? PAT_STRONG_STAR : PAT_STRONG_UNDER) : (c == '*' ? PAT_EM_STAR : PAT_EM_UNDER);
            const char *close = p + d < end && p[d] != ' ' ? find_closer(&sp, pattern, p + d + 1, delim, d) : NULL;
            if (close) {
                g_string_append(out, strong ? "<b>" : "<i>");
                inline_md(out, p + d, close, depth + 1, in_link);
                g_string_append(out, strong ? "</b>" : "</i>");
                p = close + d;
            } else {
                g_string_append_len(out, p, (gssize)d);
                p += d;
            }
            continue;
        }
        if (c == '[' && depth < MAX_NESTING && !in_link) { /* Pango takes no link inside a link */
            const char *bracket = find_char(&sp, PAT_BRACKET, p + 1, ']');
            const char *paren = bracket && bracket + 1 < end && bracket[1] == '(' ? find_char(&sp, PAT_PAREN, bracket + 2, ')')
                                                                                  : NULL;
            if (paren) {
                const char *url = bracket + 2;
                if (safe_url(url, paren)) {
                    g_string_append(out, "<a href=\"");
                    escape_range(out, url, paren);
                    g_string_append(out, "\">");
                    inline_md(out, p + 1, bracket, depth + 1, TRUE);
                    g_string_append(out, "</a>");
                } else {
                    inline_md(out, p + 1, bracket, depth + 1, TRUE);
                }
                p = paren + 1;
                continue;
            }
        }
        escape_char(out, c);
        p++;
    }
}

static char *inline_markup(const char *s, const char *end)
{
    GString *out = g_string_sized_new((gsize)(end - s) + 16);
    inline_md(out, s, end, 0, FALSE);
    return g_string_free(out, FALSE);
}

/* ---- lines ---------------------------------------------------------------------- */
typedef struct {
    const char *s;
    size_t n;
} line;

static int indent_of(const line *l)
{
    int n = 0;
    for (size_t i = 0; i < l->n && (l->s[i] == ' ' || l->s[i] == '\t'); i++)
        n += l->s[i] == '\t' ? 4 - n % 4 : 1;
    return n;
}

static const char *skip_spaces(const char *s, const char *end)
{
    while (s < end && (*s == ' ' || *s == '\t'))
        s++;
    return s;
}

static const char *trim_end(const char *s, const char *end)
{
    while (end > s && (end[-1] == ' ' || end[-1] == '\t'))
        end--;
    return end;
}

static gboolean blank(const line *l)
{
    return skip_spaces(l->s, l->s + l->n) == l->s + l->n;
}

static const char *line_end(const line *l)
{
    return l->s + l->n;
}

/* "```" or "~~~" (three or more), indented at most three: its length, else 0. */
static size_t fence_of(const line *l)
{
    if (indent_of(l) > 3)
        return 0;
    const char *p = skip_spaces(l->s, line_end(l));
    size_t k = 0;
    while (p + k < line_end(l) && p[k] == (p[0] == '~' ? '~' : '`') && (p[0] == '`' || p[0] == '~'))
        k++;
    return k >= 3 ? k : 0;
}

static int heading_of(const line *l, const char **text)
{
    if (indent_of(l) > 3)
        return 0;
    const char *p = skip_spaces(l->s, line_end(l)), *end = line_end(l);
    int level = 0;
    while (p < end && *p == '#' && level < 7)
        p++, level++;
    if (level < 1 || level > 6 || (p < end && *p != ' ' && *p != '\t'))
        return 0;
    *text = p;
    return level;
}

static gboolean rule_of(const line *l)
{
    if (indent_of(l) > 3)
        return FALSE;
    char mark = 0;
    int count = 0;
    for (const char *p = l->s; p < line_end(l); p++) {
        if (*p == ' ' || *p == '\t')
            continue;
        if ((*p != '-' && *p != '*' && *p != '_') || (mark && *p != mark))
            return FALSE;
        mark = *p;
        count++;
    }
    return count >= 3;
}

/* A list item's marker: the text after it, its marker, its level. */
static gboolean list_item_of(const line *l, const char **text, char **marker, int *level)
{
    const char *p = skip_spaces(l->s, line_end(l)), *end = line_end(l);
    const char *m = p;
    if (p < end && (*p == '-' || *p == '*' || *p == '+'))
        p++;
    else {
        while (p < end && g_ascii_isdigit(*p) && p - m < 9)
            p++;
        if (p == m || p >= end || (*p != '.' && *p != ')'))
            return FALSE;
        p++;
    }
    if (p < end && *p != ' ' && *p != '\t')
        return FALSE;
    if (p == end && (*m == '-' || *m == '*' || *m == '+'))
        return FALSE;
    if (marker)
        *marker = g_ascii_isdigit(*m) ? g_strndup(m, (gsize)(p - m)) : g_strdup("•");
    *text = skip_spaces(p, end);
    *level = MIN(indent_of(l) / 2, 8);
    return TRUE;
}

static gboolean quote_of(const line *l)
{
    return indent_of(l) <= 3 && *skip_spaces(l->s, line_end(l)) == '>' && skip_spaces(l->s, line_end(l)) < line_end(l);
}

/* A table row's cells: split on '|' outside backticks and not escaped,
 * the outer pipes dropped. */
static GPtrArray *cells_of(const line *l)
{
    const char *s = skip_spaces(l->s, line_end(l)), *end = trim_end(s, line_end(l));
    if (s < end && *s == '|')
        s++;
    if (end > s && end[-1] == '|' && (end - 1 == s || end[-2] != '\\'))
        end--;
    GPtrArray *cells = g_ptr_array_new_with_free_func(g_free);
    const char *start = s;
    gboolean code = FALSE;
    for (const char *p = s; p <= end; p++) {
        if (p < end && *p == '\\' && p + 1 < end) {
            p++;
            continue;
        }
        if (p < end && *p == '`')
            code = !code;
        if (p == end || (*p == '|' && !code)) {
            const char *a = skip_spaces(start, p), *b = trim_end(a, p);
            g_ptr_array_add(cells, g_strndup(a, (gsize)(b - a)));
            start = p + 1;
        }
    }
    return cells;
}

static gboolean separator_row(const line *l, guint *ncells)
{
    if (!memchr(l->s, '-', l->n) || blank(l))
        return FALSE;
    GPtrArray *cells = cells_of(l);
    gboolean ok = cells->len > 0;
    for (guint i = 0; ok && i < cells->len; i++) {
        const char *c = cells->pdata[i];
        size_t n = strlen(c);
        if (n && c[0] == ':')
            c++, n--;
        if (n && c[n - 1] == ':')
            n--;
        ok = n > 0 && strspn(c, "-") == n;
    }
    *ncells = cells->len;
    g_ptr_array_free(cells, TRUE);
    return ok;
}

static gboolean table_at(const line *lines, size_t n, size_t i)
{
    guint header, sep;
    if (i + 1 >= n || !memchr(lines[i].s, '|', lines[i].n) || !separator_row(&lines[i + 1], &sep))
        return FALSE;
    GPtrArray *cells = cells_of(&lines[i]);
    header = cells->len;
    g_ptr_array_free(cells, TRUE);
    return header == sep;
}

static gboolean starts_block(const line *lines, size_t n, size_t i)
{
    const char *text;
    int level;
    return fence_of(&lines[i]) || heading_of(&lines[i], &text) || rule_of(&lines[i]) || quote_of(&lines[i]) ||
           list_item_of(&lines[i], &text, NULL, &level) || table_at(lines, n, i);
}

/* ---- blocks --------------------------------------------------------------------- */
static TwMdBlock *add(GPtrArray *blocks, TwMdKind kind, char *text)
{
    TwMdBlock *b = g_new0(TwMdBlock, 1);
    b->kind = kind;
    b->text = text;
    g_ptr_array_add(blocks, b);
    return b;
}

/* Lines from..to-1 trimmed and joined with spaces (a soft line break). */
static char *joined(const line *lines, size_t from, size_t to, size_t skip_first)
{
    GString *s = g_string_new(NULL);
    for (size_t i = from; i < to; i++) {
        const char *a = skip_spaces(lines[i].s + (i == from ? skip_first : 0), line_end(&lines[i]));
        const char *b = trim_end(a, line_end(&lines[i]));
        if (s->len && b > a)
            g_string_append_c(s, ' ');
        g_string_append_len(s, a, b - a);
    }
    return g_string_free(s, FALSE);
}

static size_t table_block(GPtrArray *blocks, const line *lines, size_t n, size_t i)
{
    GPtrArray *header = cells_of(&lines[i]);
    size_t end = i + 2;
    while (end < n && !blank(&lines[end]) && memchr(lines[end].s, '|', lines[end].n))
        end++;
    TwMdBlock *b = add(blocks, TW_MD_TABLE, NULL);
    b->ncols = (int)header->len;
    b->nrows = (int)(end - i - 1);
    b->cells = g_new0(char *, (gsize)b->nrows * (gsize)b->ncols);
    for (int r = 0; r < b->nrows; r++) {
        GPtrArray *cells = r == 0 ? header : cells_of(&lines[i + 1 + (size_t)r]);
        for (int c = 0; c < b->ncols; c++) {
            const char *cell = (guint)c < cells->len ? cells->pdata[c] : "";
            b->cells[r * b->ncols + c] = inline_markup(cell, cell + strlen(cell));
        }
        if (r)
            g_ptr_array_free(cells, TRUE);
    }
    g_ptr_array_free(header, TRUE);
    return end;
}

static size_t code_block(GPtrArray *blocks, const line *lines, size_t n, size_t i, gboolean fenced)
{
    GString *code = g_string_new(NULL);
    size_t fence = fenced ? fence_of(&lines[i]) : 0, j = fenced ? i + 1 : i;
    for (; j < n; j++) {
        if (fenced && fence_of(&lines[j]) >= fence && *skip_spaces(lines[j].s, line_end(&lines[j])) ==
                                                          *skip_spaces(lines[i].s, line_end(&lines[i]))) {
            j++;
            break;
        }
        if (!fenced && !blank(&lines[j]) && indent_of(&lines[j]) < 4)
            break;
        const char *s = lines[j].s, *end = line_end(&lines[j]);
        for (int k = 0; !fenced && k < 4 && s < end && *s == ' '; k++)
            s++;
        if (!fenced && s < end && *s == '\t')
            s++;
        if (code->len || j > (fenced ? i + 1 : i))
            g_string_append_c(code, '\n');
        g_string_append_len(code, s, end - s);
    }
    while (code->len && code->str[code->len - 1] == '\n') /* an indented block's trailing blank lines */
        g_string_truncate(code, code->len - 1);
    add(blocks, TW_MD_CODE, g_string_free(code, FALSE));
    return j;
}

GPtrArray *tw_markdown_parse(const char *text, gsize len)
{
    GPtrArray *blocks = g_ptr_array_new_with_free_func(block_free);
    char *valid = g_utf8_make_valid(text ? text : "", text ? (gssize)len : 0);
    GArray *array = g_array_new(FALSE, FALSE, sizeof(line));
    for (const char *p = valid;;) {
        const char *nl = strchr(p, '\n');
        line l = {p, nl ? (size_t)(nl - p) : strlen(p)};
        if (l.n && l.s[l.n - 1] == '\r')
            l.n--;
        g_array_append_val(array, l);
        if (!nl)
            break;
        p = nl + 1;
    }
    const line *lines = (const line *)array->data;
    size_t n = array->len;
    for (size_t i = 0; i < n;) {
        const line *l = &lines[i];
        const char *rest;
        char *marker = NULL;
        int level;
        if (blank(l)) {
            i++;
        } else if (fence_of(l)) {
            i = code_block(blocks, lines, n, i, TRUE);
        } else if ((level = heading_of(l, &rest))) {
            const char *end = trim_end(rest, line_end(l));
            while (end > rest && end[-1] == '#')
                end--;
            rest = skip_spaces(rest, end);
            add(blocks, TW_MD_HEADING, inline_markup(rest, trim_end(rest, end)))->level = level;
            i++;
        } else if (rule_of(l)) {
            add(blocks, TW_MD_RULE, NULL);
            i++;
        } else if (table_at(lines, n, i)) {
            i = table_block(blocks, lines, n, i);
        } else if (quote_of(l)) {
            GString *q = g_string_new(NULL);
            for (; i < n && quote_of(&lines[i]); i++) {
                const char *a = skip_spaces(lines[i].s, line_end(&lines[i])) + 1;
                a = skip_spaces(a, line_end(&lines[i]));
                if (q->len)
                    g_string_append_c(q, ' ');
                g_string_append_len(q, a, trim_end(a, line_end(&lines[i])) - a);
            }
            add(blocks, TW_MD_QUOTE, inline_markup(q->str, q->str + q->len));
            g_string_free(q, TRUE);
        } else if (list_item_of(l, &rest, &marker, &level)) {
            size_t j = i + 1;
            while (j < n && !blank(&lines[j]) && !starts_block(lines, n, j))
                j++;
            char *body = joined(lines, i, j, (size_t)(rest - l->s));
            TwMdBlock *b = add(blocks, TW_MD_LIST_ITEM, inline_markup(body, body + strlen(body)));
            b->marker = marker;
            b->level = level;
            g_free(body);
            i = j;
        } else if (indent_of(l) >= 4) {
            i = code_block(blocks, lines, n, i, FALSE);
        } else {
            size_t j = i + 1;
            while (j < n && !blank(&lines[j]) && !starts_block(lines, n, j))
                j++;
            char *body = joined(lines, i, j, 0);
            add(blocks, TW_MD_PARAGRAPH, inline_markup(body, body + strlen(body)));
            g_free(body);
            i = j;
        }
    }
    g_array_free(array, TRUE);
    g_free(valid);
    return blocks;
}
