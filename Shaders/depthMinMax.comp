#version 450
#include "common.glsl"
// Min and max of valid depth: a workgroup reduction in shared memory, then one atomic per group.
// Positive floats order like their bit patterns, so uint atomics suffice.
layout(local_size_x = DL_LOCAL_SIZE_X, local_size_y = DL_LOCAL_SIZE_Y) in;
layout(set = 0, binding = 0) uniform sampler2D depthTexture;
layout(set = 1, binding = 0) buffer Stats { uint minBits; uint maxBits; uint count; } stats;
layout(push_constant) uniform Params { ivec2 size; } params;

shared uint sMin[DL_LOCAL_SIZE_X * DL_LOCAL_SIZE_Y];
shared uint sMax[DL_LOCAL_SIZE_X * DL_LOCAL_SIZE_Y];
shared uint sCount[DL_LOCAL_SIZE_X * DL_LOCAL_SIZE_Y];

void main() {
    ivec2 p = ivec2(gl_GlobalInvocationID.xy);
    uint i = gl_LocalInvocationIndex;
    uint lo = 0xFFFFFFFFu, hi = 0u, n = 0u;
    if (p.x < params.size.x && p.y < params.size.y) {
        float d = texelFetch(depthTexture, p, 0).r;
        if (dl_validDepth(d)) { lo = floatBitsToUint(d); hi = lo; n = 1u; }
    }
    sMin[i] = lo; sMax[i] = hi; sCount[i] = n;
    barrier();
    for (uint s = (DL_LOCAL_SIZE_X * DL_LOCAL_SIZE_Y) / 2u; s > 0u; s >>= 1) {
        if (i < s) {
            sMin[i] = min(sMin[i], sMin[i + s]);
            sMax[i] = max(sMax[i], sMax[i + s]);
            sCount[i] += sCount[i + s];
        }
        barrier();
    }
    if (i == 0u && sCount[0] > 0u) {
        atomicMin(stats.minBits, sMin[0]);
        atomicMax(stats.maxBits, sMax[0]);
        atomicAdd(stats.count, sCount[0]);
    }
}
