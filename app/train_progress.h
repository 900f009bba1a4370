/* Keras-style training progress on a terminal, plain lines elsewhere. */
#ifndef TWB_TRAIN_PROGRESS_H
#define TWB_TRAIN_PROGRESS_H

#include <stdbool.h>
#include <stdio.h>

#include <tw/model.h>

typedef struct {
    FILE *out;
    bool tty;
    int epoch_started; /* 1-based epoch whose header is printed */
    double last_draw;
} twb_progress;

void twb_progress_init(twb_progress *p, FILE *out);
void twb_progress_batch(twb_progress *p, const tw_progress *progress, const tw_logs *logs);
void twb_progress_epoch(twb_progress *p, const tw_progress *progress, const tw_logs *logs);

#endif
