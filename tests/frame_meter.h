/* Frame times of a GTK window, for the GUI suites (catastrophic bounds) and
 * bench/run ui_frames (the 16 ms target).
 *
 * A meter times every frame of a widget's frame clock from before-paint to
 * after-paint (update, layout, paint), and turns of a 1 ms high-priority
 * timer on the main loop between frames. On a shared machine wall-clock time
 * also holds the main thread's waits for a CPU behind other processes and
 * threads; the kernel counts those per thread (/proc/thread-self/schedstat),
 * so each figure comes as wall clock, as "own" time (wall clock less those
 * waits: work, and waits on locks or I/O) and as the main thread's CPU time.
 *
 * With TW_FRAME_LOG=FILE in the environment, frame_meter_stop appends the
 * meter's frames to FILE as one JSON line, {"what": ..., "wall_ms": [...],
 * "own_ms": [...], "cpu_ms": [...], "longest_block_ms": ..., ...}, which
 * bench/run ui_frames reads. */
#ifndef TW_TESTS_FRAME_METER_H
#define TW_TESTS_FRAME_METER_H

#include <gtk/gtk.h>

typedef struct frame_meter frame_meter;

typedef struct {
    int frames;
    double median_ms, p99_ms, longest_ms;    /* wall clock per frame */
    double median_own_ms, p99_own_ms;        /* per frame, less the waits for a CPU */
    double longest_cpu_ms;                   /* the main thread's CPU time in one frame */
    /* Between two turns of the 1 ms timer: the main thread's CPU time, the
     * gap less the waits for a CPU (the main loop blocked), the raw gap. */
    double longest_stall_cpu_ms, longest_block_ms, longest_gap_ms;
} frame_stats;

/* Starts timing the frames of widget's frame clock (widget realized) and the
 * main loop's turns; `what` names the measurement in the report. */
frame_meter *frame_meter_start(GtkWidget *widget, const char *what);
/* Frames timed so far. */
int frame_meter_frames(const frame_meter *m);
/* Stops, prints the figures on stderr ("# what: ..."), logs the frames to
 * $TW_FRAME_LOG when set, frees the meter. */
frame_stats frame_meter_stop(frame_meter *m);

/* Each field's median over n rounds: a round that shared the cores with a
 * busy neighbour does not decide. */
frame_stats frame_stats_median(const frame_stats *rounds, int n);

/* The calling thread's CPU time in ms. */
double frame_meter_thread_cpu_ms(void);

#endif
