/* The window's training data: each data choice loaded once, on a thread of
 * its own, and kept for the next check of model against data and the next
 * run. The last few choices stay loaded (Fashion-MNIST takes 220 MB as
 * float32); a file is known by its path and its size and time on disk, so
 * a rewritten file loads again. Main thread only. */
#ifndef TWB_TRAIN_DATA_CACHE_H
#define TWB_TRAIN_DATA_CACHE_H

#include <glib.h>

#include "train_data.h"

typedef enum {
    TWB_DATA_ABSENT,  /* not asked for yet */
    TWB_DATA_LOADING, /* on its thread */
    TWB_DATA_READY,
    TWB_DATA_FAILED,
} twb_data_state;

typedef struct twb_data_cache twb_data_cache;

/* loaded(user_data) runs on the main loop whenever a load ends. */
twb_data_cache *twb_data_cache_new(void (*loaded)(gpointer user_data), gpointer user_data);
/* Loads still going end on their threads and are dropped. */
void twb_data_cache_free(twb_data_cache *cache);

/* The state of the data the spec names: READY with *data, FAILED with
 * *error (the loader's message naming the file); both borrowed until the
 * next load ends. Starts nothing. */
twb_data_state twb_data_cache_lookup(twb_data_cache *cache, const twb_data_spec *spec, const twb_data **data,
                                     const char **error);
/* Start loading the data the spec names unless it is loaded or loading. */
void twb_data_cache_load(twb_data_cache *cache, const twb_data_spec *spec);

#endif
