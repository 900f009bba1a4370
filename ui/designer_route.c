/* Edge routing of the designer's canvas (designer_route.h). */
#include "designer_route.h"

#include <math.h>
#include <stdlib.h>

#define M TW_DESIGNER_ROUTE_MARGIN
#define S TW_DESIGNER_ROUTE_STUB
/* A bend costs as much as this much length: routes prefer few corners. */
#define BEND 60.0

gboolean tw_designer_segment_crosses(double ax, double ay, double bx, double by, double x, double y, double w,
                                     double h)
{
    /* Liang-Barsky: clip the segment to the rectangle; it crosses when a
     * piece of positive length remains whose middle is inside. */
    double t0 = 0, t1 = 1, dx = bx - ax, dy = by - ay;
    double p[4] = {-dx, dx, -dy, dy}, q[4] = {ax - x, x + w - ax, ay - y, y + h - ay};
    for (int k = 0; k < 4; k++) {
        if (p[k] == 0) {
            if (q[k] <= 0)
                return FALSE; /* parallel to this side, on or outside it */
            continue;
        }
        double t = q[k] / p[k];
        if (p[k] < 0)
            t0 = MAX(t0, t);
        else
            t1 = MIN(t1, t);
    }
    if (t1 - t0 <= 1e-9)
        return FALSE;
    double mx = ax + dx * (t0 + t1) / 2, my = ay + dy * (t0 + t1) / 2;
    return mx > x && mx < x + w && my > y && my < y + h;
}

static double box_h(const tw_designer_boxes *b, int i)
{
    return b->heights ? b->heights[i] : b->h;
}

/* Whether the segment keeps `inflate` away from every box. */
static gboolean free_segment(const tw_designer_boxes *b, double ax, double ay, double bx, double by, double inflate)
{
    for (int i = 0; i < b->n; i++)
        if (tw_designer_segment_crosses(ax, ay, bx, by, b->xy[2 * i] - inflate, b->xy[2 * i + 1] - inflate,
                                        b->w + 2 * inflate, box_h(b, i) + 2 * inflate))
            return FALSE;
    return TRUE;
}

static void push(GArray *points, double x, double y)
{
    /* Drop repeated points and the middle one of three in a line. */
    double *p = (double *)points->data;
    guint n = points->len / 2;
    if (n >= 1 && fabs(p[2 * n - 2] - x) < 1e-6 && fabs(p[2 * n - 1] - y) < 1e-6)
        return;
    if (n >= 2) {
        double ax = p[2 * n - 4], ay = p[2 * n - 3], bx = p[2 * n - 2], by = p[2 * n - 1];
        if ((fabs(ax - bx) < 1e-6 && fabs(bx - x) < 1e-6) || (fabs(ay - by) < 1e-6 && fabs(by - y) < 1e-6)) {
            p[2 * n - 2] = x;
            p[2 * n - 1] = y;
            return;
        }
    }
    double xy[2] = {x, y};
    g_array_append_vals(points, xy, 2);
}

/* The plain step: down from the port, across at ym, down into the port. */
static gboolean step(const tw_designer_boxes *b, double x0, double y0, double x1, double y1, double ym,
                     gboolean check)
{
    if (!check)
        return TRUE;
    return free_segment(b, x0, y0 + S, x0, ym, M) && free_segment(b, x0, ym, x1, ym, M) &&
           free_segment(b, x1, ym, x1, y1 - S, M);
}

/* ---- the grid search ------------------------------------------------------ */
static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Sorted, without repeats, with the middle of each gap added (routes then
 * run along the middle of a channel between boxes). */
static double *grid_axis(GArray *c, int *count)
{
    g_array_sort(c, cmp_double);
    double *v = (double *)c->data;
    int n = 0;
    for (guint i = 0; i < c->len; i++)
        if (n == 0 || v[i] - v[n - 1] > 1e-6)
            v[n++] = v[i];
    double *out = g_new(double, 2 * n);
    int k = 0;
    for (int i = 0; i < n; i++) {
        if (i > 0)
            out[k++] = (v[i - 1] + v[i]) / 2;
        out[k++] = v[i];
    }
    *count = k;
    return out;
}

static int index_of(const double *v, int n, double x)
{
    int lo = 0, hi = n - 1;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (v[mid] < x - 1e-6)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

typedef struct {
    double cost;
    int state;
} heap_item;

static void heap_push(GArray *heap, double cost, int state)
{
    heap_item item = {cost, state};
    g_array_append_val(heap, item);
    heap_item *h = (heap_item *)heap->data;
    int i = heap->len - 1;
    while (i > 0 && h[(i - 1) / 2].cost > h[i].cost) {
        heap_item t = h[i];
        h[i] = h[(i - 1) / 2];
        h[(i - 1) / 2] = t;
        i = (i - 1) / 2;
    }
}

static heap_item heap_pop(GArray *heap)
{
    heap_item *h = (heap_item *)heap->data, top = h[0];
    h[0] = h[heap->len - 1];
    g_array_set_size(heap, heap->len - 1);
    int n = heap->len, i = 0;
    for (;;) {
        int l = 2 * i + 1, r = l + 1, m = i;
        if (l < n && h[l].cost < h[m].cost)
            m = l;
        if (r < n && h[r].cost < h[m].cost)
            m = r;
        if (m == i)
            break;
        heap_item t = h[i];
        h[i] = h[m];
        h[m] = t;
        i = m;
    }
    return top;
}

/* Directions: right, left, down, up. */
static const int DX[4] = {1, -1, 0, 0}, DY[4] = {0, 0, 1, -1};

/* The cheapest path from a = (ax, ay) (leaving downwards) to b (arriving
 * downwards) inside the rectangle r (x0, y0, x1, y1), keeping the margin
 * from every box; appended to points (a and b included). */
static gboolean search(const tw_designer_boxes *b, double ax, double ay, double bx, double by, const double *r,
                       GArray *points)
{
    GArray *cx = g_array_new(FALSE, FALSE, sizeof(double)), *cy = g_array_new(FALSE, FALSE, sizeof(double));
    double fixed_x[3] = {r[0], r[2], ax}, fixed_y[4] = {r[1], r[3], ay, by};
    g_array_append_vals(cx, fixed_x, 3);
    g_array_append_val(cx, bx);
    g_array_append_vals(cy, fixed_y, 4);
    for (int i = 0; i < b->n; i++) {
        double x0 = b->xy[2 * i] - M, y0 = b->xy[2 * i + 1] - M, x1 = x0 + b->w + 2 * M, y1 = y0 + box_h(b, i) + 2 * M;
        if (x1 < r[0] || x0 > r[2] || y1 < r[1] || y0 > r[3])
            continue;
        if (x0 > r[0])
            g_array_append_val(cx, x0);
        if (x1 < r[2])
            g_array_append_val(cx, x1);
        if (y0 > r[1])
            g_array_append_val(cy, y0);
        if (y1 < r[3])
            g_array_append_val(cy, y1);
    }
    int nx, ny;
    double *xs = grid_axis(cx, &nx), *ys = grid_axis(cy, &ny);
    g_array_free(cx, TRUE);
    g_array_free(cy, TRUE);

    /* Blocked unit segments: hblock from (i, j) to (i + 1, j), vblock from
     * (i, j) to (i, j + 1); blocked when the middle is inside a box's
     * margin. */
    int cells = nx * ny;
    guint8 *hblock = g_new0(guint8, cells), *vblock = g_new0(guint8, cells);
    for (int k = 0; k < b->n; k++) {
        double x0 = b->xy[2 * k] - M, y0 = b->xy[2 * k + 1] - M, x1 = x0 + b->w + 2 * M, y1 = y0 + box_h(b, k) + 2 * M;
        if (x1 < r[0] || x0 > r[2] || y1 < r[1] || y0 > r[3])
            continue;
        int i0 = index_of(xs, nx, MAX(x0, r[0])), i1 = index_of(xs, nx, MIN(x1, r[2]));
        int j0 = index_of(ys, ny, MAX(y0, r[1])), j1 = index_of(ys, ny, MIN(y1, r[3]));
        for (int j = j0; j <= j1; j++)
            for (int i = i0; i <= i1; i++) {
                if (i + 1 < nx) {
                    double mx = (xs[i] + xs[i + 1]) / 2;
                    if (mx > x0 && mx < x1 && ys[j] > y0 && ys[j] < y1)
                        hblock[j * nx + i] = 1;
                }
                if (j + 1 < ny) {
                    double my = (ys[j] + ys[j + 1]) / 2;
                    if (xs[i] > x0 && xs[i] < x1 && my > y0 && my < y1)
                        vblock[j * nx + i] = 1;
                }
            }
    }

    int si = index_of(xs, nx, ax), sj = index_of(ys, ny, ay), ti = index_of(xs, nx, bx), tj = index_of(ys, ny, by);
    double *dist = g_new(double, cells * 4);
    int *prev = g_new(int, cells * 4);
    for (int s = 0; s < cells * 4; s++) {
        dist[s] = INFINITY;
        prev[s] = -1;
    }
    GArray *heap = g_array_new(FALSE, FALSE, sizeof(heap_item));
    int start = (sj * nx + si) * 4 + 2, goal = -1;
    dist[start] = 0;
    heap_push(heap, fabs(bx - ax) + fabs(by - ay), start);
    while (heap->len) {
        heap_item item = heap_pop(heap);
        int state = item.state, cell = state / 4, dir = state % 4, i = cell % nx, j = cell / nx;
        double d = dist[state];
        if (item.cost > d + fabs(bx - xs[i]) + fabs(by - ys[j]) + 1e-9)
            continue; /* stale */
        if (cell == tj * nx + ti && dir == 2) {
            goal = state;
            break;
        }
        for (int nd = 0; nd < 4; nd++) {
            if (DX[nd] == -DX[dir] && DY[nd] == -DY[dir])
                continue;
            int ni = i + DX[nd], nj = j + DY[nd];
            if (ni < 0 || ni >= nx || nj < 0 || nj >= ny)
                continue;
            gboolean blocked = DY[nd] == 0 ? hblock[j * nx + MIN(i, ni)] : vblock[MIN(j, nj) * nx + i];
            if (blocked)
                continue;
            double nd_cost = d + fabs(xs[ni] - xs[i]) + fabs(ys[nj] - ys[j]) + (nd != dir ? BEND : 0);
            int ns = (nj * nx + ni) * 4 + nd;
            if (nd_cost < dist[ns] - 1e-9) {
                dist[ns] = nd_cost;
                prev[ns] = state;
                heap_push(heap, nd_cost + fabs(bx - xs[ni]) + fabs(by - ys[nj]), ns);
            }
        }
    }
    if (goal >= 0) {
        int len = 0;
        for (int s = goal; s >= 0; s = prev[s])
            len++;
        int *path = g_new(int, len), k = len;
        for (int s = goal; s >= 0; s = prev[s])
            path[--k] = s / 4;
        for (k = 0; k < len; k++)
            push(points, xs[path[k] % nx], ys[path[k] / nx]);
        g_free(path);
    }
    g_array_free(heap, TRUE);
    g_free(dist);
    g_free(prev);
    g_free(hblock);
    g_free(vblock);
    g_free(xs);
    g_free(ys);
    return goal >= 0;
}

int tw_designer_route(const tw_designer_boxes *b, double x0, double y0, double x1, double y1, GArray *points)
{
    g_array_set_size(points, 0);
    guint first = 0;
    push(points, x0, y0);
    double ax = x0, ay = y0 + S, bx = x1, by = y1 - S;
    if (fabs(x0 - x1) < 1e-6 && y1 > y0 && (by <= ay || free_segment(b, ax, ay, bx, by, M))) {
        push(points, x1, y1); /* straight down */
        return (points->len - first) / 2;
    }
    if (by >= ay) {
        double mid = (ay + by) / 2, tries[3] = {mid, ay, by};
        for (int t = 0; t < 3; t++)
            if (step(b, x0, y0, x1, y1, tries[t], TRUE)) {
                push(points, x0, tries[t]);
                push(points, x1, tries[t]);
                push(points, x1, y1);
                return (points->len - first) / 2;
            }
    }
    /* Around the boxes: first near the two ports, then over the whole
     * canvas. */
    double near[4] = {MIN(ax, bx) - b->w - 4 * M, MIN(ay, by) - b->h - 4 * M, MAX(ax, bx) + b->w + 4 * M,
                      MAX(ay, by) + b->h + 4 * M};
    double all[4] = {MIN(ax, bx), MIN(ay, by), MAX(ax, bx), MAX(ay, by)};
    for (int i = 0; i < b->n; i++) {
        all[0] = MIN(all[0], b->xy[2 * i]);
        all[1] = MIN(all[1], b->xy[2 * i + 1]);
        all[2] = MAX(all[2], b->xy[2 * i] + b->w);
        all[3] = MAX(all[3], b->xy[2 * i + 1] + box_h(b, i));
    }
    for (int k = 0; k < 4; k++)
        all[k] += k < 2 ? -4 * M : 4 * M;
    guint before = points->len;
    if (search(b, ax, ay, bx, by, near, points) || search(b, ax, ay, bx, by, all, points)) {
        push(points, x1, y1);
        return (points->len - first) / 2;
    }
    g_array_set_size(points, before);
    double ym = by >= ay ? (ay + by) / 2 : ay;
    push(points, x0, ym);
    push(points, x1, ym);
    push(points, x1, y1);
    return (points->len - first) / 2;
}

/* ---- channels ------------------------------------------------------------- */

/* The least room between two tracks of a channel worth spreading into. */
#define TRACK_GAP 3.0

typedef struct {
    int edge;
    double ay, by;   /* the channel: below the source's stub, above the target's */
    double k1, k2;   /* the order, top track first */
} step_edge;

static int cmp_step(const void *pa, const void *pb)
{
    const step_edge *a = pa, *b = pb;
    if (a->ay != b->ay)
        return a->ay < b->ay ? -1 : 1;
    if (a->by != b->by)
        return a->by < b->by ? -1 : 1;
    if (a->k1 != b->k1)
        return a->k1 < b->k1 ? -1 : 1;
    if (a->k2 != b->k2)
        return a->k2 < b->k2 ? -1 : 1;
    return a->edge - b->edge;
}

void tw_designer_routes_order_channels(const tw_designer_boxes *b, GArray *points, const GArray *starts)
{
    double *p = (double *)points->data;
    int nedges = (int)starts->len - 1;
    step_edge *steps = g_new(step_edge, MAX(nedges, 1));
    int n = 0;
    for (int e = 0; e < nedges; e++) {
        int at = g_array_index(starts, int, e), np = g_array_index(starts, int, e + 1) - at;
        const double *q = p + 2 * at;
        if (np != 4 || q[0] != q[2] || q[3] != q[5] || q[4] != q[6] || q[2] == q[4])
            continue;
        gboolean right = q[6] > q[0];
        /* Two edges going right cross needlessly when the one starting
         * further left runs above (it crosses the other's way down); the
         * mirror for edges going left; from one port, the one going further
         * runs above. An edge going right and one going left cross as often
         * whatever their order. */
        steps[n++] = (step_edge){e, q[1] + S, q[7] - S, right ? -q[0] : q[0], right ? -q[6] : q[6]};
    }
    qsort(steps, (size_t)n, sizeof *steps, cmp_step);
    for (int first = 0, last; first < n; first = last) {
        for (last = first + 1; last < n && steps[last].ay == steps[first].ay && steps[last].by == steps[first].by;)
            last++;
        int k = last - first;
        double gap = (steps[first].by - steps[first].ay) / (k + 1);
        if (k < 2 || gap < TRACK_GAP)
            continue;
        gboolean free = TRUE;
        for (int t = 0; t < k && free; t++) {
            const double *q = p + 2 * g_array_index(starts, int, steps[first + t].edge);
            free = step(b, q[0], q[1], q[6], q[7], steps[first].ay + gap * (t + 1), TRUE);
        }
        for (int t = 0; t < k && free; t++) {
            double *q = p + 2 * g_array_index(starts, int, steps[first + t].edge);
            q[3] = q[5] = steps[first].ay + gap * (t + 1);
        }
    }
    g_free(steps);
}
