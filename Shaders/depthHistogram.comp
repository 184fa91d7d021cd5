#version 450
#include "common.glsl"
// Histogram of valid depth: bin = int(clamp((d − minDepth)·binsPerMeter, 0, bins − 1)).
layout(local_size_x = DL_LOCAL_SIZE_X, local_size_y = DL_LOCAL_SIZE_Y) in;
layout(set = 0, binding = 0) uniform sampler2D depthTexture;
layout(set = 1, binding = 0) buffer Histogram { uint counts[]; } histogram;
layout(push_constant) uniform Params { ivec2 size; float minDepth; float binsPerMeter; uint bins; } params;

void main() {
    ivec2 p = ivec2(gl_GlobalInvocationID.xy);
    if (p.x >= params.size.x || p.y >= params.size.y) return;
    float d = texelFetch(depthTexture, p, 0).r;
    if (!dl_validDepth(d)) return;
    uint bin = uint(clamp((d - params.minDepth) * params.binsPerMeter, 0.0, float(params.bins - 1u)));
    atomicAdd(histogram.counts[bin], 1u);
}
