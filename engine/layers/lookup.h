/* What StringLookup and IntegerLookup share: their typed parameters, and
 * the tokens Keras keeps in the config as free text (the vocabulary, the
 * mask and OOV tokens), which no parameter type holds. The tokens live in
 * the layer's state (lookup_state first in each class's state), set through
 * tw_lookup_* (tw/layers.h) and copied by clone_extra. */
#ifndef TW_LOOKUP_H
#define TW_LOOKUP_H

#include "layer_internal.h"

/* Keras' key order; classes list these, then their own. */
enum { LOOKUP_MAX_TOKENS, LOOKUP_NUM_OOV, LOOKUP_OUTPUT_MODE, LOOKUP_INVERT, LOOKUP_SPARSE, LOOKUP_PAD, LOOKUP_NPARAMS };
extern const tw_param_def lookup_params[LOOKUP_NPARAMS];

typedef struct {
    bool ready;              /* set up by the first configure */
    bool integer;            /* IntegerLookup: tokens are decimal int64 */
    int n;                   /* vocabulary, without mask and OOV tokens */
    char **tokens;
    int64_t *values;         /* IntegerLookup: the tokens' values ... */
    int *order;              /* ... and their indices sorted by value, for lookups */
    char *mask_token;        /* NULL: None */
    char *oov_token;
} lookup_state;

/* A class's state set up with its default OOV token ("[UNK]", "-1"). */
int lookup_configure(tw_layer *self, bool integer, const char *default_oov);
void lookup_finalize(tw_layer *self);
int lookup_clone_extra(tw_layer *copy, const tw_layer *layer);
/* Output shape: the input's (output_mode "int"); no weights. */
int lookup_infer(const tw_layer *self, const tw_shape *input, tw_shape *output, tw_weight_spec *w, int *nw);

/* The first index of the vocabulary: the mask's 0 and the OOV indices come first. */
int64_t lookup_first_index(const tw_layer *self);

#endif
