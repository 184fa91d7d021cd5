#version 450
#include "common.glsl"
// Histogram of valid depth: bin = int(clamp((d − minDepth)·binsPerMeter, 0, bins − 1)).
// Invocation (r, y) counts pixels [r·DL_HISTOGRAM_RUN, (r+1)·DL_HISTOGRAM_RUN) of row y and adds
// a run of equal bins with one atomic when the bin changes (smooth depth: few atomics).
layout(local_size_x = DL_RUN_GROUP_X, local_size_y = DL_RUN_GROUP_Y) in;
layout(set = 0, binding = 0) uniform sampler2D depthTexture;
layout(set = 1, binding = 0) buffer Histogram { uint counts[]; } histogram;
layout(push_constant) uniform Params { ivec2 size; float minDepth; float binsPerMeter; uint bins; } params;

void main() {
    int y = int(gl_GlobalInvocationID.y);
    int x0 = int(gl_GlobalInvocationID.x) * DL_HISTOGRAM_RUN;
    if (y >= params.size.y || x0 >= params.size.x) return;
    int x1 = min(x0 + DL_HISTOGRAM_RUN, params.size.x);
    uint current = 0u, run = 0u;
    for (int x = x0; x < x1; x++) {
        float d = texelFetch(depthTexture, ivec2(x, y), 0).r;
        if (dl_validDepth(d)) {
            uint bin = uint(clamp((d - params.minDepth) * params.binsPerMeter, 0.0, float(params.bins - 1u)));
            if (bin != current) {
                if (run > 0u) atomicAdd(histogram.counts[current], run);
                current = bin; run = 0u;
            }
            run++;
        }
    }
    if (run > 0u) atomicAdd(histogram.counts[current], run);
}
