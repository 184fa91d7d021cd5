#version 450
#include "common.glsl"
// Depth smoothing, stage 3: an invalid pixel takes the mean of the valid pixels of its
// (2r+1)² window (summed row by row, as DepthSmoother.spatialStep does) when there are at least
// minNeighbours and max − min ≤ threshold·min, so it never fills across a depth step.
layout(local_size_x = DL_LOCAL_SIZE_X, local_size_y = DL_LOCAL_SIZE_Y) in;
layout(set = 0, binding = 0) readonly buffer Stage { float stageIn[]; };
layout(set = 1, binding = 0) writeonly buffer Smoothed { float smoothed[]; };
layout(push_constant) uniform Params {
    ivec2 size;
    float threshold;
    uint spatial;
    int radius;
    uint minNeighbours;
} params;

void main() {
    ivec2 p = ivec2(gl_GlobalInvocationID.xy);
    if (p.x >= params.size.x || p.y >= params.size.y) return;
    int w = params.size.x;
    float c = stageIn[p.y * w + p.x];
    if (c > 0.0 || params.spatial == 0u) { smoothed[p.y * w + p.x] = c; return; }
    uint n = 0u;
    precise float sum = 0.0;
    float lo = 3.4e38, hi = 0.0;
    int r = params.radius;
    for (int y = max(0, p.y - r); y <= min(params.size.y - 1, p.y + r); y++) {
        for (int x = max(0, p.x - r); x <= min(w - 1, p.x + r); x++) {
            float q = stageIn[y * w + x];
            if (q > 0.0) {
                n++;
                sum = sum + q;
                lo = min(lo, q);
                hi = max(hi, q);
            }
        }
    }
    precise float spread = hi - lo;
    precise float limit = params.threshold * lo;
    smoothed[p.y * w + p.x] = (n >= params.minNeighbours && spread <= limit) ? sum / float(n) : 0.0;
}
