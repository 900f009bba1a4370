/* One row function per dtype for the elementwise kernels (unary.c,
 * binary.c), read once by each: the includer defines ROW_FUNCTION(NAME,
 * CASE), FLOAT_CASE and INT_CASE, each expanded here with TWK_T and
 * TWK__SFX (kernels/include/elementwise.h) set to the dtype, and calls the
 * functions through ROW_DISPATCH(dtype, arguments). */
#define TWK_T float
#define TWK__SFX _f32
ROW_FUNCTION(row_f32, FLOAT_CASE)
#undef TWK_T
#undef TWK__SFX
#define TWK_T double
#define TWK__SFX _f64
ROW_FUNCTION(row_f64, FLOAT_CASE)
#undef TWK_T
#undef TWK__SFX
#define TWK_T int32_t
#define TWK__SFX _i32
ROW_FUNCTION(row_i32, INT_CASE)
#undef TWK_T
#undef TWK__SFX
#define TWK_T int64_t
#define TWK__SFX _i64
ROW_FUNCTION(row_i64, INT_CASE)
#undef TWK_T
#undef TWK__SFX
#define TWK_T uint8_t
#define TWK__SFX _u8
ROW_FUNCTION(row_u8, INT_CASE)
#undef TWK_T
#undef TWK__SFX

/* Bool is stored as uint8. */
#define ROW_DISPATCH(dtype, ...)                                                                             \
    switch (dtype) {                                                                                         \
    case TWK_FLOAT32: row_f32(__VA_ARGS__); return;                                                          \
    case TWK_FLOAT64: row_f64(__VA_ARGS__); return;                                                          \
    case TWK_INT32: row_i32(__VA_ARGS__); return;                                                            \
    case TWK_INT64: row_i64(__VA_ARGS__); return;                                                            \
    case TWK_UINT8:                                                                                          \
    case TWK_BOOL: row_u8(__VA_ARGS__); return;                                                              \
    default: return;                                                                                         \
    }
