#version 450
#include "common.glsl"
// The plane-fit reductions of the depth-quality metrics (DepthKit's CPUPlaneMoments, two passes):
// mode 0 sums the count and the deprojected points, mode 1 the centered second moments about
// the centroid the host computed from mode 0. The input is the ROI's depth, row-major. Workgroup
// g covers ROI rows [g·DL_REDUCE_ROWS, (g+1)·DL_REDUCE_ROWS); invocation i of it every
// DL_REDUCE_SIZE-th column of those rows, summing in float, and writes its 8 partial sums to its
// own slot (no float atomics in core Vulkan); the host adds the slots in double.
// Deprojection as rs2_deproject_pixel_to_point: ((u − cx) / fx) · z. `precise` keeps the
// products and differences unfused, as the CPU forms them.
layout(local_size_x = DL_REDUCE_SIZE) in;
layout(set = 0, binding = 0) readonly buffer Depth { float depth[]; };
layout(set = 1, binding = 0) writeonly buffer Partials { float partials[]; };
layout(push_constant) uniform Params {
    ivec2 origin;      // the ROI's first pixel in the image
    ivec2 size;        // the ROI's size
    vec4 intrinsics;   // fx, fy, cx, cy
    vec3 center;       // mode 1: the centroid
    uint mode;
} params;

void main() {
    int x0 = int(gl_LocalInvocationID.x);
    int y0 = int(gl_WorkGroupID.x) * DL_REDUCE_ROWS;
    int y1 = min(y0 + DL_REDUCE_ROWS, params.size.y);
    float s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0, s4 = 0.0, s5 = 0.0;
    uint n = 0u;
    for (int y = y0; y < y1; y++) {
        for (int x = x0; x < params.size.x; x += DL_REDUCE_SIZE) {
            float z = depth[y * params.size.x + x];
            if (!dl_validDepth(z)) continue;
            precise float px = (float(params.origin.x + x) - params.intrinsics.z) / params.intrinsics.x * z;
            precise float py = (float(params.origin.y + y) - params.intrinsics.w) / params.intrinsics.y * z;
            n++;
            if (params.mode == 0u) {
                s0 += px; s1 += py; s2 += z;
            } else {
                precise float tx = px - params.center.x;
                precise float ty = py - params.center.y;
                precise float tz = z - params.center.z;
                s0 += tx * tx; s1 += tx * ty; s2 += tx * tz;
                s3 += ty * ty; s4 += ty * tz; s5 += tz * tz;
            }
        }
    }
    uint slot = (gl_WorkGroupID.x * uint(DL_REDUCE_SIZE) + gl_LocalInvocationID.x) * 8u;
    partials[slot] = uintBitsToFloat(n);
    partials[slot + 1u] = s0; partials[slot + 2u] = s1; partials[slot + 3u] = s2;
    partials[slot + 4u] = s3; partials[slot + 5u] = s4; partials[slot + 6u] = s5;
    partials[slot + 7u] = 0.0;
}
