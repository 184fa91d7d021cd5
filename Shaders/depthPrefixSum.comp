#version 450
#include "common.glsl"
// Inclusive prefix sum of the histogram in place (one workgroup): counts[b] becomes the number
// of valid pixels whose bin ≤ b; counts[bins − 1] is the number of valid pixels.
layout(local_size_x = DL_SCAN_SIZE) in;
layout(set = 0, binding = 0) buffer Histogram { uint counts[]; } histogram;
layout(push_constant) uniform Params { uint bins; } params;

shared uint partial[DL_SCAN_SIZE];

void main() {
    uint t = gl_LocalInvocationID.x;
    uint chunk = (params.bins + DL_SCAN_SIZE - 1u) / DL_SCAN_SIZE;
    uint begin = min(t * chunk, params.bins), end = min(begin + chunk, params.bins);
    uint sum = 0u;
    for (uint b = begin; b < end; b++) sum += histogram.counts[b];
    partial[t] = sum;
    barrier();
    if (t == 0u) {
        uint running = 0u;
        for (uint i = 0u; i < DL_SCAN_SIZE; i++) { uint v = partial[i]; partial[i] = running; running += v; }
    }
    barrier();
    uint running = partial[t];
    for (uint b = begin; b < end; b++) { running += histogram.counts[b]; histogram.counts[b] = running; }
}
