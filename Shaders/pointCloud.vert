#version 450
#include "common.glsl"
// pointCloud: one point per depth pixel, no vertex buffer. gl_VertexIndex → (u, v) in row-major
// order; the depth is fetched here and unprojected with the depth camera's intrinsics (DESIGN.md,
// Point cloud): z = d, x = (u − cx)·z/fx, y = (v − cy)·z/fy. Invalid depth (0, NaN, ±Inf,
// negative; tested on the bits) puts the point outside the clip volume, so it is never drawn.
layout(set = 0, binding = 0) uniform sampler2D depthMap;
layout(push_constant) uniform Params {
    mat4 viewProjection;   // depth-camera frame → clip space
    vec4 intrinsics;       // fx, fy, cx, cy in pixels of the depth map
    ivec4 sizes;           // depth width, height; color width, height
    float pointSize;       // pixels, already clamped to the device's range
} params;
// The color texel the fragment shader fetches: (⌊u·Wc/Wd⌋, ⌊v·Hc/Hd⌋), nearest, as on the CPU.
layout(location = 0) flat out ivec2 colorTexel;

void main() {
    int wd = params.sizes.x, hd = params.sizes.y;
    int u = gl_VertexIndex % wd, v = gl_VertexIndex / wd;
    colorTexel = min(ivec2(u * params.sizes.z / wd, v * params.sizes.w / hd), params.sizes.zw - 1);
    gl_PointSize = params.pointSize;
    float z = texelFetch(depthMap, ivec2(u, v), 0).r;
    if (!dl_validDepth(z)) {
        gl_Position = vec4(2.0, 2.0, 2.0, 1.0);   // outside the clip volume: the point is discarded
        return;
    }
    vec3 p = vec3((float(u) - params.intrinsics.z) * z / params.intrinsics.x,
                  (float(v) - params.intrinsics.w) * z / params.intrinsics.y, z);
    gl_Position = params.viewProjection * vec4(p, 1.0);
}
