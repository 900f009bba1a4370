/* The built-in data sets of two inputs, for the siamese and the seq2seq
 * templates (examples/models/siamese_fashion_mnist.json,
 * seq2seq_lstm.json), as Keras' fit([x1, x2], y) takes them. */
#ifndef TWB_MULTI_INPUT_SETS_H
#define TWB_MULTI_INPUT_SETS_H

#include <stdint.h>

#include "train_data.h"

/* fashion-mnist-pairs: data's one input of images with class labels (its
 * training and test splits, float32 and int32) becomes two inputs of
 * (N, 28, 28, 1) images and float32 labels (N, 1): 1.0 when the two
 * images are of the same class, else 0.0. Every image of a split is the
 * first of one pair (in an order drawn from seed), paired alternately with
 * another image of its class and one of another class, so a split keeps
 * its size and half its pairs are "same". 0, or -1 with a message. */
int twb_pairs_of_classes(twb_data *data, uint64_t seed);

/* reverse-sequences, in the seq2seq template's shapes: the encoder reads a
 * sequence of TWB_SEQ_SOURCE_LEN tokens of TWB_SEQ_SOURCE_TOKENS (one-hot);
 * the target is that sequence reversed, then an end token up to
 * TWB_SEQ_TARGET_LEN positions, as classes of TWB_SEQ_TARGET_TOKENS (0:
 * start, 1: end, source token t: t + 2); the decoder reads the target
 * shifted by one behind a start token, one-hot (teacher forcing). */
#define TWB_SEQ_SOURCE_LEN 10
#define TWB_SEQ_SOURCE_TOKENS 20
#define TWB_SEQ_TARGET_LEN 12
#define TWB_SEQ_TARGET_TOKENS 24
/* The set's training and test sizes. */
#define TWB_SEQ_TRAIN 10000
#define TWB_SEQ_TEST 1000
/* drawn from seed into out (cleared first). 0, or -1 with a message. */
int twb_reverse_sequences(uint64_t seed, twb_data *out);

#endif
