/* The designer's channel ordering (tw_designer_routes_order_channels):
 * plain steps that cross one gap between two rows get tracks of their own,
 * in the order that leaves only the crossings their ends force, and keep
 * clear of boxes. Pure geometry: no display. */
#include <glib.h>

#include "designer_route.h"

#define W 100.0
#define H 60.0

/* Crossings between different routes (one horizontal segment passing
 * strictly through a vertical one), and horizontal runs of different
 * routes that share a line over some length. */
static void count(const GArray *points, const GArray *starts, int *crossings, int *overlaps)
{
    const double *p = (const double *)points->data;
    int n = (int)starts->len - 1;
    *crossings = *overlaps = 0;
    for (int a = 0; a < n; a++)
        for (int b = a + 1; b < n; b++)
            for (int i = g_array_index(starts, int, a); i + 1 < g_array_index(starts, int, a + 1); i++)
                for (int j = g_array_index(starts, int, b); j + 1 < g_array_index(starts, int, b + 1); j++) {
                    const double *s = p + 2 * i, *t = p + 2 * j;
                    gboolean sh = s[1] == s[3], th = t[1] == t[3];
                    if (sh && th && s[1] == t[1] &&
                        MIN(MAX(s[0], s[2]), MAX(t[0], t[2])) > MAX(MIN(s[0], s[2]), MIN(t[0], t[2])))
                        (*overlaps)++;
                    if (sh == th)
                        continue;
                    const double *h = sh ? s : t, *v = sh ? t : s;
                    if (v[0] > MIN(h[0], h[2]) && v[0] < MAX(h[0], h[2]) && h[1] > MIN(v[1], v[3]) &&
                        h[1] < MAX(v[1], v[3]))
                        (*crossings)++;
                }
}

/* The fewest crossings over every order of n steps' runs on n tracks
 * spread evenly over the channel (ay, by), as the ordering spreads them. */
static int least_crossings(const GArray *points, const GArray *starts, int n, double ay, double by)
{
    GArray *copy = g_array_copy((GArray *)points);
    double *p = (double *)copy->data;
    int order[8], fewest = G_MAXINT;
    for (int i = 0; i < n; i++)
        order[i] = i;
    for (;;) {
        for (int t = 0; t < n; t++) {
            double *q = p + 2 * g_array_index(starts, int, order[t]);
            q[3] = q[5] = ay + (by - ay) / (n + 1) * (t + 1);
        }
        int crossings, overlaps;
        count(copy, starts, &crossings, &overlaps);
        fewest = MIN(fewest, crossings);
        /* the next permutation in lexicographic order */
        int i = n - 2;
        while (i >= 0 && order[i] > order[i + 1])
            i--;
        if (i < 0)
            break;
        int j = n - 1;
        while (order[j] < order[i])
            j--;
        int swap = order[i];
        order[i] = order[j];
        order[j] = swap;
        for (int l = i + 1, r = n - 1; l < r; l++, r--) {
            swap = order[l];
            order[l] = order[r];
            order[r] = swap;
        }
    }
    g_array_free(copy, TRUE);
    return fewest;
}

/* Route edges (x0, y0, x1, y1 each) one by one, as the canvas does. */
static void route_all(const tw_designer_boxes *b, const double *ends, int n, GArray *points, GArray *starts)
{
    GArray *one = g_array_new(FALSE, FALSE, sizeof(double));
    g_array_set_size(points, 0);
    g_array_set_size(starts, 0);
    for (int e = 0; e < n; e++) {
        int start = points->len / 2;
        g_array_append_val(starts, start);
        tw_designer_route(b, ends[4 * e], ends[4 * e + 1], ends[4 * e + 2], ends[4 * e + 3], one);
        g_array_append_vals(points, one->data, one->len);
    }
    int end = points->len / 2;
    g_array_append_val(starts, end);
    g_array_free(one, TRUE);
}

static void test_channel(void)
{
    /* A row of three boxes over a row of three, 100 apart: four edges
     * across the gap, two going right whose runs overlap, one going left,
     * one from the same port as the first but further. */
    double xy[12] = {0, 0, 150, 0, 300, 0, 0, 160, 150, 160, 300, 160};
    tw_designer_boxes boxes = {6, xy, W, H, NULL};
    double ends[] = {
        30, H, 180, 160,  /* right */
        170, H, 330, 160, /* right, starting inside the first's run */
        330, H, 50, 160,  /* left, across both */
        30, H, 360, 160,  /* right, from the first's port, further */
    };
    GArray *points = g_array_new(FALSE, FALSE, sizeof(double)), *starts = g_array_new(FALSE, FALSE, sizeof(int));
    route_all(&boxes, ends, 4, points, starts);
    int crossings, overlaps;
    count(points, starts, &crossings, &overlaps);
    g_test_message("each at the channel's middle: %d crossings, %d overlapping runs", crossings, overlaps);
    g_assert_cmpint(overlaps, >, 0); /* every run on the middle line */

    tw_designer_routes_order_channels(&boxes, points, starts);
    count(points, starts, &crossings, &overlaps);
    g_test_message("ordered: %d crossings, %d overlapping runs", crossings, overlaps);
    g_assert_cmpint(overlaps, ==, 0);
    /* As few as any order of the four tracks gives. */
    int fewest = least_crossings(points, starts, 4, ends[1] + TW_DESIGNER_ROUTE_STUB, ends[3] - TW_DESIGNER_ROUTE_STUB);
    g_test_message("the best order of tracks: %d crossings", fewest);
    g_assert_cmpint(crossings, ==, fewest);
    /* Still steps from port to port, clear of every box. */
    const double *p = (const double *)points->data;
    for (int e = 0; e < 4; e++) {
        int at = g_array_index(starts, int, e), np = g_array_index(starts, int, e + 1) - at;
        g_assert_cmpint(np, ==, 4);
        g_assert_cmpfloat(p[2 * at], ==, ends[4 * e]);
        g_assert_cmpfloat(p[2 * at + 7], ==, ends[4 * e + 3]);
        for (int s = at; s + 1 < at + np; s++)
            for (int k = 0; k < 6; k++)
                g_assert_false(tw_designer_segment_crosses(p[2 * s], p[2 * s + 1], p[2 * s + 2], p[2 * s + 3],
                                                           xy[2 * k], xy[2 * k + 1], W, H));
    }
    g_array_free(points, TRUE);
    g_array_free(starts, TRUE);
}

/* A channel too narrow for its edges' tracks stays as it was. */
static void test_narrow_channel(void)
{
    double xy[8] = {0, 0, 150, 0, 0, H + 2 * TW_DESIGNER_ROUTE_STUB + 4, 150, H + 2 * TW_DESIGNER_ROUTE_STUB + 4};
    tw_designer_boxes boxes = {4, xy, W, H, NULL};
    double y1 = xy[5];
    double ends[] = {30, H, 180, y1, 170, H, 230, y1};
    GArray *points = g_array_new(FALSE, FALSE, sizeof(double)), *starts = g_array_new(FALSE, FALSE, sizeof(int));
    route_all(&boxes, ends, 2, points, starts);
    g_assert_cmpint(points->len, ==, 2 * 8); /* two steps of four points */
    GArray *before = g_array_copy(points);
    tw_designer_routes_order_channels(&boxes, points, starts);
    g_assert_cmpmem(points->data, points->len * sizeof(double), before->data, before->len * sizeof(double));
    g_array_free(before, TRUE);
    g_array_free(points, TRUE);
    g_array_free(starts, TRUE);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/designer_route/channel", test_channel);
    g_test_add_func("/designer_route/narrow-channel", test_narrow_channel);
    return g_test_run();
}
