#version 450
#include "common.glsl"
// Depth smoothing, stages 1 (temporal) and 2 (hole filling): the operations of DepthKit's
// DepthSmoother.temporalStep in the same order; `precise` keeps the compiler from fusing
// v + alpha·(d − v) into an FMA, so the state matches the CPU bit for bit.
layout(local_size_x = DL_LOCAL_SIZE_X, local_size_y = DL_LOCAL_SIZE_Y) in;
layout(set = 0, binding = 0) readonly buffer Depth { float depth[]; };
struct State { float value; uint age; };
layout(set = 1, binding = 0) buffer History { State state[]; };
layout(set = 2, binding = 0) writeonly buffer Stage { float stageOut[]; };
layout(push_constant) uniform Params {
    ivec2 size;
    float alpha;
    float threshold;
    uint temporal;
    uint holeFill;
    uint holeFrames;
} params;

void main() {
    ivec2 p = ivec2(gl_GlobalInvocationID.xy);
    if (p.x >= params.size.x || p.y >= params.size.y) return;
    int i = p.y * params.size.x + p.x;
    float d = depth[i];
    precise float v = state[i].value;
    uint a = state[i].age;
    float result;
    if (dl_validDepth(d)) {
        precise float diff = d - v;
        precise float limit = params.threshold * v;
        if (params.temporal != 0u && v > 0.0 && abs(diff) <= limit) {
            precise float step = params.alpha * diff;
            v = v + step;
        } else {
            v = d;
        }
        a = 0u;
        result = v;
    } else if (params.holeFill != 0u && v > 0.0 && a < params.holeFrames) {
        a += 1u;
        result = v;
    } else {
        v = 0.0;
        a = 0u;
        result = 0.0;
    }
    state[i].value = v;
    state[i].age = a;
    stageOut[i] = result;
}
