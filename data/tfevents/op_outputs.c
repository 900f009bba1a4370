/* The output arguments of TensorFlow's ops that have several, or a list
 * (op_def.proto's OpDef.output_arg, as each op's REGISTER_OP declares
 * them). A function body names a node's output as "node:arg:k", the k-th
 * tensor of output argument "arg"; the graph view numbers a node's outputs
 * flat, so it needs the arguments in order and how long each is. An event
 * file holds no OpDef of the ops it uses: this table is that knowledge for
 * the common ops; graph_def_read.c says so when a graph reads an op not
 * here through several argument names. An op with one output of one
 * tensor needs no entry ("MatMul:product:0" is output 0 either way). */
#include <string.h>

#include "tfevents_internal.h"

typedef struct {
    const char *op;
    tw_tb_output_arg args[TW_TB_MAX_OUTPUT_ARGS];
} op_outputs;

#define ONE(name) {name, NULL, NULL}
#define NUMBER(name, attr) {name, attr, NULL}
#define TYPES(name, attr) {name, NULL, attr}

static const op_outputs ops[] = {
    {"BroadcastGradientArgs", {ONE("r0"), ONE("r1")}},
    {"CudnnRNN", {ONE("output"), ONE("output_h"), ONE("output_c"), ONE("reserve_space")}},
    {"CudnnRNNV2", {ONE("output"), ONE("output_h"), ONE("output_c"), ONE("reserve_space"), ONE("host_reserved")}},
    {"CudnnRNNV3", {ONE("output"), ONE("output_h"), ONE("output_c"), ONE("reserve_space"), ONE("host_reserved")}},
    {"DecodeCSV", {TYPES("output", "OUT_TYPE")}},
    {"DynamicPartition", {NUMBER("outputs", "num_partitions")}},
    {"FusedBatchNorm",
     {ONE("y"), ONE("batch_mean"), ONE("batch_variance"), ONE("reserve_space_1"), ONE("reserve_space_2")}},
    {"FusedBatchNormGrad",
     {ONE("x_backprop"), ONE("scale_backprop"), ONE("offset_backprop"), ONE("reserve_space_3"),
      ONE("reserve_space_4")}},
    {"FusedBatchNormGradV2",
     {ONE("x_backprop"), ONE("scale_backprop"), ONE("offset_backprop"), ONE("reserve_space_3"),
      ONE("reserve_space_4")}},
    {"FusedBatchNormGradV3",
     {ONE("x_backprop"), ONE("scale_backprop"), ONE("offset_backprop"), ONE("reserve_space_4"),
      ONE("reserve_space_5")}},
    {"FusedBatchNormV2",
     {ONE("y"), ONE("batch_mean"), ONE("batch_variance"), ONE("reserve_space_1"), ONE("reserve_space_2")}},
    {"FusedBatchNormV3",
     {ONE("y"), ONE("batch_mean"), ONE("batch_variance"), ONE("reserve_space_1"), ONE("reserve_space_2"),
      ONE("reserve_space_3")}},
    {"IdentityN", {TYPES("output", "T")}},
    {"If", {TYPES("output", "Tout")}},
    {"IteratorGetNext", {TYPES("components", "output_types")}},
    {"IteratorGetNextSync", {TYPES("components", "output_types")}},
    {"ListDiff", {ONE("out"), ONE("idx")}},
    {"MaxPoolWithArgmax", {ONE("output"), ONE("argmax")}},
    {"Merge", {ONE("output"), ONE("value_index")}},
    {"NonMaxSuppressionV4", {ONE("selected_indices"), ONE("valid_outputs")}},
    {"NonMaxSuppressionV5", {ONE("selected_indices"), ONE("selected_scores"), ONE("valid_outputs")}},
    {"OptionalGetValue", {TYPES("components", "output_types")}},
    {"ParseExampleV2",
     {NUMBER("sparse_indices", "num_sparse"), TYPES("sparse_values", "sparse_types"),
      NUMBER("sparse_shapes", "num_sparse"), TYPES("dense_values", "Tdense"),
      TYPES("ragged_values", "ragged_value_types"), TYPES("ragged_row_splits", "ragged_split_types")}},
    {"ParseSingleExample",
     {NUMBER("sparse_indices", "num_sparse"), TYPES("sparse_values", "sparse_types"),
      NUMBER("sparse_shapes", "num_sparse"), TYPES("dense_values", "Tdense")}},
    {"PartitionedCall", {TYPES("output", "Tout")}},
    {"Qr", {ONE("q"), ONE("r")}},
    {"QuantizeV2", {ONE("output"), ONE("output_min"), ONE("output_max")}},
    {"RefMerge", {ONE("output"), ONE("value_index")}},
    {"RefSwitch", {ONE("output_false"), ONE("output_true")}},
    {"SelfAdjointEigV2", {ONE("e"), ONE("v")}},
    {"ShapeN", {NUMBER("output", "N")}},
    {"SoftmaxCrossEntropyWithLogits", {ONE("loss"), ONE("backprop")}},
    {"SparseFillEmptyRows",
     {ONE("output_indices"), ONE("output_values"), ONE("empty_row_indicator"), ONE("reverse_index_map")}},
    {"SparseSoftmaxCrossEntropyWithLogits", {ONE("loss"), ONE("backprop")}},
    {"Split", {NUMBER("output", "num_split")}},
    {"SplitV", {NUMBER("output", "num_split")}},
    {"StatefulPartitionedCall", {TYPES("output", "Tout")}},
    {"StatelessIf", {TYPES("output", "Tout")}},
    {"StatelessWhile", {TYPES("output", "T")}},
    {"Svd", {ONE("s"), ONE("u"), ONE("v")}},
    {"Switch", {ONE("output_false"), ONE("output_true")}},
    {"TensorListPopBack", {ONE("output_handle"), ONE("tensor")}},
    {"TopK", {ONE("values"), ONE("indices")}},
    {"TopKV2", {ONE("values"), ONE("indices")}},
    {"Unique", {ONE("y"), ONE("idx")}},
    {"UniqueV2", {ONE("y"), ONE("idx")}},
    {"UniqueWithCounts", {ONE("y"), ONE("idx"), ONE("count")}},
    {"UniqueWithCountsV2", {ONE("y"), ONE("idx"), ONE("count")}},
    {"Unpack", {NUMBER("output", "num")}},
    {"While", {TYPES("output", "T")}},
};

const tw_tb_output_arg *tw__tb_op_output_args(const char *op, int *n)
{
    for (size_t i = 0; op && i < sizeof ops / sizeof ops[0]; i++)
        if (!strcmp(ops[i].op, op)) {
            for (*n = 0; *n < TW_TB_MAX_OUTPUT_ARGS && ops[i].args[*n].name; ++*n) {
            }
            return ops[i].args;
        }
    *n = 0;
    return NULL;
}
