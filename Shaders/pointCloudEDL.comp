#version 450
#include "common.glsl"
// Eye-dome lighting of the compute point rasterizer's picture (DepthKit's EyeDomeLighting; points.c's
// edl_row, the same float operations): for a covered pixel p with log2 view depth L(p) (written by
// pointCloudResolve.comp at word 2·W·H + i, +Inf where background), sum = Σ max(0, L(p) − L(q))
// over the neighbours q at (±r, 0), (0, ±r), (±d, ±d) in that order, skipping those outside the
// picture or background; shade = exp(−sum · factor); rgb = ⌊rgb · shade + ½⌋, alpha kept.
layout(local_size_x = DL_LOCAL_SIZE_X, local_size_y = DL_LOCAL_SIZE_Y) in;
layout(set = 0, binding = 0) readonly buffer Frame { uint words[]; } frame;
layout(set = 1, binding = 0, r32ui) uniform uimage2D outputImage;
layout(push_constant) uniform Params {
    ivec2 size;
    int r;          // axis neighbours' distance
    int d;          // diagonal neighbours' offset
    float factor;   // 300 · strength / 8
} params;

float depthAt(int x, int y) {
    return uintBitsToFloat(frame.words[2u * uint(params.size.x * params.size.y) + uint(y * params.size.x + x)]);
}

void main() {
    ivec2 p = ivec2(gl_GlobalInvocationID.xy);
    if (p.x >= params.size.x || p.y >= params.size.y) return;
    float lp = depthAt(p.x, p.y);
    if (!(lp < 3.0e38)) return;
    int r = params.r, d = params.d;
    ivec2 offsets[8] = ivec2[8](ivec2(r, 0), ivec2(-r, 0), ivec2(0, r), ivec2(0, -r),
                                ivec2(d, d), ivec2(-d, d), ivec2(d, -d), ivec2(-d, -d));
    float sum = 0.0;
    for (int k = 0; k < 8; k++) {
        ivec2 q = p + offsets[k];
        if (q.x < 0 || q.y < 0 || q.x >= params.size.x || q.y >= params.size.y) continue;
        float lq = depthAt(q.x, q.y);
        if (!(lq < 3.0e38)) continue;
        float diff = lp - lq;
        sum = sum + (0.0 < diff ? diff : 0.0);
    }
    if (sum == 0.0) return;   // shade 1: unchanged
    float shade = exp(-(sum * params.factor));
    uint c = imageLoad(outputImage, p).r;
    uint cr = uint(float(c & 255u) * shade + 0.5);
    uint cg = uint(float((c >> 8) & 255u) * shade + 0.5);
    uint cb = uint(float((c >> 16) & 255u) * shade + 0.5);
    imageStore(outputImage, p, uvec4((c & 0xFF000000u) | (cb << 16) | (cg << 8) | cr));
}
