/* A generated 1,002-layer Functional model of NASNet's size, for the
 * frame-time cases of the graph view and the designer. */
#ifndef TW_TESTS_NASNET_SIZE_H
#define TW_TESTS_NASNET_SIZE_H

#include <glib.h>

/* Its Keras JSON (g_free): a stem and 125 cells of 8 layers. */
char *nasnet_size_json(void);

#endif
