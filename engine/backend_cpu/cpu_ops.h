/* The CPU backend's kernels, one per op of the table (op_ids.h) that
 * computes: tw__cpu_NAME for op NAME. They unpack a tw_op_call into the raw
 * loops of kernels/cpu; backend_cpu.c indexes them by op number. The view
 * ops (op_ids.h's TW_VIEW_OPS) have none on any device. */
#ifndef TW_CPU_OPS_H
#define TW_CPU_OPS_H

#include "backend.h"

#define TW__CPU_DECLARE(name, ...) int tw__cpu_##name(const tw_op_call *call, tw_tensor *const *outs);
TWK_BINARY_OPS(TW__CPU_DECLARE)
TWK_UNARY_OPS(TW__CPU_DECLARE)
TW_OPS(TW__CPU_DECLARE)
#undef TW__CPU_DECLARE

#endif
