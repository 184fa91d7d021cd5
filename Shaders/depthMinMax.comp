#version 450
#include "common.glsl"
// Min and max of valid depth. Workgroup g covers rows [g·DL_REDUCE_ROWS, (g+1)·DL_REDUCE_ROWS);
// each invocation loops over every DL_REDUCE_SIZE-th pixel of those rows, then adds its own
// result with one atomic each: no barriers or shared memory (expensive on CPU drivers).
// Positive floats order like their bit patterns, so uint atomics suffice.
layout(local_size_x = DL_REDUCE_SIZE) in;
layout(set = 0, binding = 0) uniform sampler2D depthTexture;
layout(set = 1, binding = 0) buffer Stats { uint minBits; uint maxBits; uint count; } stats;
layout(push_constant) uniform Params { ivec2 size; } params;

void main() {
    int x0 = int(gl_LocalInvocationID.x);
    int y0 = int(gl_WorkGroupID.x) * DL_REDUCE_ROWS;
    int y1 = min(y0 + DL_REDUCE_ROWS, params.size.y);
    uint lo = 0xFFFFFFFFu, hi = 0u, n = 0u;
    for (int y = y0; y < y1; y++) {
        for (int x = x0; x < params.size.x; x += DL_REDUCE_SIZE) {
            float d = texelFetch(depthTexture, ivec2(x, y), 0).r;
            if (dl_validDepth(d)) {
                uint b = floatBitsToUint(d);
                lo = min(lo, b); hi = max(hi, b); n++;
            }
        }
    }
    if (n > 0u) {
        atomicMin(stats.minBits, lo);
        atomicMax(stats.maxBits, hi);
        atomicAdd(stats.count, n);
    }
}
