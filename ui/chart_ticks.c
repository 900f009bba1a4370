/* Axis ticks (chart_render.h): 1/2/5 steps on linear axes (whole ones on
 * an integer axis), decades on log axes, clock units on time axes, with
 * compact labels. Linear tick values
 * are whole multiples of the step computed as i * m / 10^k (not i * 0.1),
 * so the tick at 0.3 is the double nearest 0.3; labels show the step's
 * decimals and no more. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "chart_render.h"

static int clamp_target(int target)
{
    return target < 2 ? 2 : target > TW_MAX_TICKS - 1 ? TW_MAX_TICKS - 1 : target;
}

/* A 1/2/5 step m * 10^e. */
typedef struct {
    int m, e;
} nice_step;

static double nice_value(nice_step s, double i)
{
    return s.e >= 0 ? i * s.m * pow(10, s.e) : i * s.m / pow(10, -s.e);
}

/* The smallest 1/2/5 step not below x (x > 0). */
static nice_step nice_step_up(double x)
{
    nice_step s = {1, (int)floor(log10(x))};
    static const int mults[] = {1, 2, 5, 10};
    for (int k = 0; k < 4; k++) {
        nice_step c = mults[k] == 10 ? (nice_step){1, s.e + 1} : (nice_step){mults[k], s.e};
        if (nice_value(c, 1) >= x * (1 - 1e-12))
            return c;
    }
    return (nice_step){1, s.e + 1};
}

/* The fewest decimals d (at most 12) that show multiples of step exactly. */
static int decimals_for(double step)
{
    for (int d = 0; d < 12; d++) {
        double scaled = step * pow(10, d);
        if (fabs(scaled - round(scaled)) <= 1e-6 * fmax(1, fabs(scaled)))
            return d;
    }
    return 12;
}

/* "1.500" -> "1.5", "2.0" -> "2", "-0" -> "0". */
static void trim_zeros(char *s)
{
    if (strchr(s, '.')) {
        size_t n = strlen(s);
        while (n > 0 && s[n - 1] == '0')
            s[--n] = '\0';
        if (n > 0 && s[n - 1] == '.')
            s[--n] = '\0';
    }
    if (strcmp(s, "-0") == 0)
        strcpy(s, "0");
}

/* v shown to the given resolution: "2.5e-6" (scientific), "1.5k", "2M",
 * "0.25". */
static void format_number(char *buf, size_t size, double v, double resolution, int scientific)
{
    if (fabs(v) < resolution * 1e-9 || v == 0) {
        snprintf(buf, size, "0");
        return;
    }
    if (scientific) {
        int e = (int)floor(log10(fabs(v)));
        int d = decimals_for(resolution / pow(10, e));
        d = d > 6 ? 6 : d;
        double mantissa = v / pow(10, e);
        if (fabs(mantissa) * (1 + 1e-12) >= 10 - 0.5 * pow(10, -d)) /* rounds up to 10 */
            mantissa /= 10, e++;
        char m[24];
        snprintf(m, sizeof m, "%.*f", d, mantissa);
        trim_zeros(m);
        snprintf(buf, size, "%se%d", m, e);
        return;
    }
    static const struct {
        double unit;
        const char *suffix;
    } units[] = {{1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}, {1, ""}};
    /* The largest unit the value reaches, unless the step would need more
     * than one decimal in it: "1010" rather than "1.01k". */
    int u = 0;
    while (units[u].unit > 1 && (fabs(v) < units[u].unit * (1 - 1e-12) || resolution / units[u].unit < 0.1 - 1e-12))
        u++;
    char m[24];
    snprintf(m, sizeof m, "%.*f", decimals_for(resolution / units[u].unit), v / units[u].unit);
    trim_zeros(m);
    snprintf(buf, size, "%s%s", m, units[u].suffix);
}

/* 1/2/5 ticks no closer than min_step (0: any). */
static void ticks_linear(double lo, double hi, int target, double min_step, tw_ticks *out)
{
    out->n = 0;
    if (!isfinite(lo) || !isfinite(hi))
        return;
    if (lo > hi) {
        double t = lo;
        lo = hi, hi = t;
    }
    if (hi == lo) {
        double pad = lo == 0 || min_step > 0 ? fmax(1, min_step) : fabs(lo) * 0.1;
        lo -= pad, hi += pad;
    }
    if (!isfinite(hi - lo)) /* wider than the doubles reach */
        return;
    nice_step step = nice_step_up(fmax((hi - lo) / clamp_target(target), min_step));
    double size = nice_value(step, 1);
    double i0 = ceil(lo / size - 1e-9), i1 = floor(hi / size + 1e-9);
    for (double i = i0; i <= i1 && out->n < TW_MAX_TICKS; i++)
        out->values[out->n++] = nice_value(step, i);
    double largest = fmax(fabs(lo), fabs(hi));
    int scientific = largest < 1e-3 || largest >= 1e15;
    for (int k = 0; k < out->n; k++)
        format_number(out->labels[k], sizeof out->labels[k], out->values[k], size, scientific);
}

void tw_ticks_linear(double lo, double hi, int target, tw_ticks *out)
{
    ticks_linear(lo, hi, target, 0, out);
}

void tw_ticks_integer(double lo, double hi, int target, tw_ticks *out)
{
    ticks_linear(lo, hi, target, 1, out);
}

static void add_log_tick(tw_ticks *out, double v, double lo, double hi)
{
    if (out->n >= TW_MAX_TICKS || v < lo * (1 - 1e-9) || v > hi * (1 + 1e-9))
        return;
    out->values[out->n] = v;
    /* "1e-3" below a hundredth, "0.01", "1", "100", "1k", "1M" above. */
    format_number(out->labels[out->n], sizeof out->labels[out->n], v, v, v < 0.01 * (1 - 1e-9) || v >= 1e15);
    out->n++;
}

static double decade(int e)
{
    return e >= 0 ? pow(10, e) : 1 / pow(10, -e);
}

void tw_ticks_log(double lo, double hi, int target, tw_ticks *out)
{
    out->n = 0;
    if (!isfinite(lo) || !isfinite(hi) || lo <= 0 || hi <= 0)
        return;
    if (lo > hi) {
        double t = lo;
        lo = hi, hi = t;
    }
    target = clamp_target(target);
    int e0 = (int)ceil(log10(lo) - 1e-9), e1 = (int)floor(log10(hi) + 1e-9);
    int decades = e1 - e0 + 1;
    if (decades * 3 <= target) {
        /* Few decades: 1, 2 and 5 of each, the ones below e0 included. */
        static const int mults[] = {1, 2, 5};
        for (int e = e0 - 1; e <= e1; e++)
            for (int k = 0; k < 3; k++)
                add_log_tick(out, mults[k] * decade(e), lo, hi);
    } else {
        int stride = (decades + target - 1) / target;
        int first = (int)ceil((double)e0 / stride) * stride;
        for (int e = first; e <= e1; e += stride)
            add_log_tick(out, decade(e), lo, hi);
    }
    /* Inside one decade there is no power of ten to show: 1/2/5 steps. */
    if (out->n < 2)
        tw_ticks_linear(lo, hi, target, out);
}

/* ---- time ------------------------------------------------------------------ */
static const double clock_steps[] = {1,    2,    5,     10,    15,    30,    60,    120,    300,    600,
                                     900,  1800, 3600,  7200,  10800, 21600, 43200, 86400,  172800, 604800};

/* "1m30s", "1h30m", "2d", "0.5s": the parts that are not zero. */
static void format_duration(char *buf, size_t size, double v, double step)
{
    int d = step < 1 ? decimals_for(step) : 0;
    double a = round(fabs(v) * pow(10, d)) / pow(10, d);
    if (a == 0 || !(a < 1e15)) { /* zero, or more days than a label can hold */
        format_number(buf, size, v, step, a != 0);
        return;
    }
    long long whole = (long long)floor(a);
    double fraction = a - (double)whole;
    long long days = whole / 86400, hours = whole / 3600 % 24, minutes = whole / 60 % 60;
    double seconds = (double)(whole % 60) + fraction;
    size_t n = (size_t)snprintf(buf, size, "%s", v < 0 ? "-" : "");
    if (days && n < size)
        n += (size_t)snprintf(buf + n, size - n, "%lldd", days);
    if (hours && n < size)
        n += (size_t)snprintf(buf + n, size - n, "%lldh", hours);
    if (minutes && n < size)
        n += (size_t)snprintf(buf + n, size - n, "%lldm", minutes);
    if (seconds > 0 && n < size) {
        char s[24];
        snprintf(s, sizeof s, "%.*f", d, seconds);
        trim_zeros(s);
        snprintf(buf + n, size - n, "%ss", s);
    }
}

/* The local time of day of t ("14:05", "14:05:30", "14:05:30.5" as the step
 * needs); a date ("Nov 26") when the ticks are days apart, or at a
 * midnight when the range spans days. */
static void format_clock(char *buf, size_t size, double t, double step, bool spans_days)
{
    time_t seconds = (time_t)floor(t);
    struct tm tm;
    if (!(fabs(t) < 1e15) || !localtime_r(&seconds, &tm)) { /* past the calendar's years */
        snprintf(buf, size, "%.0f", t);
        return;
    }
    bool midnight = tm.tm_hour == 0 && tm.tm_min == 0 && tm.tm_sec == 0 && t == floor(t);
    if (step >= 86400 || (spans_days && midnight)) {
        strftime(buf, size, "%b %d", &tm);
        return;
    }
    strftime(buf, size, step >= 60 ? "%H:%M" : "%H:%M:%S", &tm);
    if (step < 1) {
        char fraction[24];
        int d = decimals_for(step);
        snprintf(fraction, sizeof fraction, "%.*f", d, t - floor(t));
        size_t n = strlen(buf);
        snprintf(buf + n, size - n, "%s", fraction + 1); /* ".5" */
    }
}

/* Whether lo and hi fall on different local days. */
static bool spans_days(double lo, double hi)
{
    time_t a = (time_t)floor(lo), b = (time_t)floor(hi);
    struct tm ta, tb;
    if (!(fabs(lo) < 1e15 && fabs(hi) < 1e15) || !localtime_r(&a, &ta) || !localtime_r(&b, &tb))
        return true;
    return ta.tm_year != tb.tm_year || ta.tm_yday != tb.tm_yday;
}

void tw_ticks_time(double lo, double hi, int target, bool wall_clock, tw_ticks *out)
{
    out->n = 0;
    if (!isfinite(lo) || !isfinite(hi))
        return;
    if (lo > hi) {
        double t = lo;
        lo = hi, hi = t;
    }
    if (hi == lo)
        lo -= 1, hi += 1;
    if (!isfinite(hi - lo))
        return;
    double raw = (hi - lo) / clamp_target(target);
    double step;
    if (raw <= 1) {
        step = nice_value(nice_step_up(raw), 1);
    } else if (raw > clock_steps[sizeof clock_steps / sizeof clock_steps[0] - 1]) {
        step = 86400 * nice_value(nice_step_up(raw / 86400), 1);
    } else {
        size_t k = 0;
        while (clock_steps[k] < raw)
            k++;
        step = clock_steps[k];
    }
    /* Wall-clock ticks fall on whole local hours and midnights. */
    double offset = 0;
    if (wall_clock) {
        time_t t = (time_t)floor(lo);
        struct tm tm;
        if (fabs(lo) < 1e15 && localtime_r(&t, &tm))
            offset = (double)tm.tm_gmtoff;
    }
    bool days = wall_clock && spans_days(lo, hi);
    double i0 = ceil((lo + offset) / step - 1e-9), i1 = floor((hi + offset) / step + 1e-9);
    for (double i = i0; i <= i1 && out->n < TW_MAX_TICKS; i++) {
        double v = i * step - offset;
        out->values[out->n] = v;
        if (wall_clock)
            format_clock(out->labels[out->n], sizeof out->labels[out->n], v, step, days);
        else
            format_duration(out->labels[out->n], sizeof out->labels[out->n], v, step);
        out->n++;
    }
}
