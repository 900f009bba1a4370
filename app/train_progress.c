/* Training progress for the terminal, as Keras prints it:
 *
 *     Epoch 1/5
 *     938/938 [==============================] - 4s 4ms/step - loss: 0.5012 - accuracy: 0.8231
 *
 * On a terminal the bar is redrawn in place (at most ten times a second,
 * with the ETA while the epoch runs); otherwise one plain line per epoch, so
 * logs stay readable. */
#include "train_progress.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define BAR_WIDTH 30

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void twb_progress_init(twb_progress *p, FILE *out)
{
    memset(p, 0, sizeof *p);
    p->out = out;
    p->tty = isatty(fileno(out));
}

static void print_logs(FILE *out, const tw_logs *logs)
{
    for (int i = 0; i < logs->n; i++)
        fprintf(out, " - %s: %.4f", logs->names[i], logs->values[i]);
}

static void format_seconds(double s, char *buf, size_t size)
{
    if (s >= 3600)
        snprintf(buf, size, "%d:%02d:%02d", (int)(s / 3600), (int)fmod(s / 60, 60), (int)fmod(s, 60));
    else if (s >= 60)
        snprintf(buf, size, "%d:%02d", (int)(s / 60), (int)fmod(s, 60));
    else
        snprintf(buf, size, "%ds", (int)lround(s));
}

static void draw_bar(twb_progress *p, const tw_progress *pr, const tw_logs *logs, bool final)
{
    int64_t done = pr->step + 1 > pr->steps ? pr->steps : pr->step + 1;
    int filled = pr->steps ? (int)(BAR_WIDTH * done / pr->steps) : BAR_WIDTH;
    char bar[BAR_WIDTH + 1];
    for (int i = 0; i < BAR_WIDTH; i++)
        bar[i] = i < filled ? '=' : '.';
    if (!final && filled < BAR_WIDTH)
        bar[filled] = '>';
    bar[BAR_WIDTH] = '\0';
    int width = snprintf(NULL, 0, "%lld", (long long)pr->steps);
    char time_text[32];
    double per_step = done ? pr->elapsed / (double)done : 0;
    if (final)
        format_seconds(pr->elapsed, time_text, sizeof time_text);
    else
        format_seconds(per_step * (double)(pr->steps - done), time_text, sizeof time_text);
    fprintf(p->out, "\r%*lld/%lld [%s] - %s%s %.0fms/step", width, (long long)done, (long long)pr->steps, bar,
            final ? "" : "ETA: ", time_text, 1000 * per_step);
    print_logs(p->out, logs);
    fputs(final ? "\n" : "\033[K", p->out);
    fflush(p->out);
}

void twb_progress_batch(twb_progress *p, const tw_progress *pr, const tw_logs *logs)
{
    if (pr->step == 0 || (p->tty && p->epoch_started != pr->epoch + 1)) {
        if (p->epoch_started != pr->epoch + 1 && p->tty)
            fprintf(p->out, "Epoch %d/%d\n", pr->epoch + 1, pr->epochs);
        p->epoch_started = pr->epoch + 1;
    }
    if (!p->tty)
        return;
    double t = now();
    if (t - p->last_draw < 0.1 && pr->step + 1 < pr->steps)
        return;
    p->last_draw = t;
    draw_bar(p, pr, logs, false);
}

void twb_progress_epoch(twb_progress *p, const tw_progress *pr, const tw_logs *logs)
{
    if (p->tty) {
        draw_bar(p, pr, logs, true);
        return;
    }
    fprintf(p->out, "epoch %d/%d: %lld steps, %.1f s, %.0f samples/s", pr->epoch + 1, pr->epochs,
            (long long)pr->steps, pr->elapsed, pr->samples_per_second);
    print_logs(p->out, logs);
    fputc('\n', p->out);
    fflush(p->out);
}
