/* Philox4x32-10 and the uniform draws of engine/random.c, for the device:
 * dropout on CUDA keeps the elements the CPU keeps for the same generator
 * state. Element i of a draw from (seed, position) is block (position + i,
 * attempt 0, stream 0) and its uniform is word 0's top 24 bits (float32) or
 * words 0-1's top 53 bits (float64), as random.c's KIND_UNIFORM.
 * tests/test_cuda_index.c checks these against tw__philox4x32_10 and
 * tw_random_uniform on the CPU. */
#ifndef TWC_PHILOX_H
#define TWC_PHILOX_H

#include "twc_index.h"

TWC_HD void twc_philox4x32_10(uint32_t c0, uint32_t c1, uint32_t c2, uint32_t c3, uint32_t k0, uint32_t k1,
                              uint32_t out[4])
{
    for (int round = 0; round < 10; round++) {
        if (round > 0) {
            k0 += 0x9E3779B9u;
            k1 += 0xBB67AE85u;
        }
        uint64_t p0 = (uint64_t)0xD2511F53u * c0;
        uint64_t p1 = (uint64_t)0xCD9E8D57u * c2;
        uint32_t hi0 = (uint32_t)(p0 >> 32), lo0 = (uint32_t)p0;
        uint32_t hi1 = (uint32_t)(p1 >> 32), lo1 = (uint32_t)p1;
        c0 = hi1 ^ c1 ^ k0;
        c1 = lo1;
        c2 = hi0 ^ c3 ^ k1;
        c3 = lo0;
    }
    out[0] = c0;
    out[1] = c1;
    out[2] = c2;
    out[3] = c3;
}

/* The uniform stream's block at position. */
TWC_HD void twc_uniform_block(uint64_t seed, uint64_t position, uint32_t w[4])
{
    twc_philox4x32_10((uint32_t)position, (uint32_t)(position >> 32), 0, 0, (uint32_t)seed,
                      (uint32_t)(seed >> 32), w);
}

/* Uniform in [0, 1) as tw_random_uniform(rng, float32, ..., 0, 1) draws it. */
TWC_HD float twc_uniform_f32(uint64_t seed, uint64_t position)
{
    uint32_t w[4];
    twc_uniform_block(seed, position, w);
    return (float)(w[0] >> 8) * 0x1.0p-24f;
}

TWC_HD double twc_uniform_f64(uint64_t seed, uint64_t position)
{
    uint32_t w[4];
    twc_uniform_block(seed, position, w);
    return (double)((((uint64_t)w[0] << 32) | w[1]) >> 11) * 0x1.0p-53;
}

#endif
