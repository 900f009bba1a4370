/* The designer palette's blocks: a residual block, a U-Net down step and
 * up step, an Inception-style branch and a transformer encoder block. Each
 * inserts as ordinary, editable layers after a chosen layer, sized from its
 * output (the residual block keeps its channels, the encoder block its
 * features), as one undo step (tw_model_doc_add_block). */
#ifndef TW_UI_DESIGNER_BLOCKS_H
#define TW_UI_DESIGNER_BLOCKS_H

#include "model_doc.h"

typedef struct {
    const char *name;    /* "Residual block": never a layer class's name */
    const char *summary; /* one line for the palette */
} tw_designer_block;

int tw_designer_block_count(void);
const tw_designer_block *tw_designer_block_at(int i);
/* The block of that name, or NULL (a layer class's name). */
const tw_designer_block *tw_designer_block_find(const char *name);

/* The block's layers after node `from` (its first output), in the chain:
 * what followed from follows the block's last layer, and the boxes below
 * from move down to make room (with nothing after from, the block goes
 * below every box); returns the first new node or -1 with the reason ("select
 * the layer the block follows", the engine's message). */
int tw_designer_block_insert(TwModelDoc *doc, const char *name, int from, GError **error);

#endif
