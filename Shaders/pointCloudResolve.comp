#version 450
#include "common.glsl"
// Compute point rasterizer, resolve: output pixel = the color of the nearest point (smallest depth
// key) that lands on it or, for point size s > 1, in the s×s window [−⌊(s−1)/2⌋, ⌊s/2⌋] on both
// axes around it (a point landed at x covers [x − ⌊s/2⌋, x + ⌊(s−1)/2⌋]: for even s, with
// landing on the nearest pixel, the pixel centers within s/2 of it), else the background: the depth test of s×s squares, as the raster path's point
// sprites get it (a nearer point's square hides a farther point's own pixel). Reads keys and colors as 32-bit
// words: 64-bit layout (little endian) key of pixel i at 2i+1, color at 2i; 32-bit layout key at
// i, color at W·H + i. Variants (ShaderLibrary's "name:DEFINE,…"; the plain one runs neither):
// DL_RESOLVE_EDL also writes each pixel's log2 view depth L = log2(b / (ndc.z − a)) (+Inf for
// background) as float bits at word 2·W·H + i, for pointCloudEDL.comp (DepthKit's EyeDomeLighting;
// points.c's log_depth); DL_RESOLVE_ADAPTIVE takes each point's own size from its color's alpha
// byte (pointCloudPoints.glsl's DL_POINTS_ADAPTIVE).
layout(local_size_x = DL_LOCAL_SIZE_X, local_size_y = DL_LOCAL_SIZE_Y) in;
#ifdef DL_RESOLVE_EDL
layout(set = 0, binding = 0) buffer Frame { uint words[]; } frame;
#else
layout(set = 0, binding = 0) readonly buffer Frame { uint words[]; } frame;
#endif
layout(set = 1, binding = 0, r32ui) uniform writeonly uimage2D outputImage;
layout(push_constant) uniform Params {
    ivec2 size;
    int radius;        // window [-radius, reach] on both axes: an s-px point covers s pixels
    uint background;   // packed rgba8
    uint wide;         // 1: 64-bit layout
    int reach;
#ifdef DL_RESOLVE_EDL
    float a, b;        // ndc.z = a + b / w
#endif
} params;

uint keyAt(uint i) { return params.wide != 0u ? frame.words[2u * i + 1u] : frame.words[i]; }
uint colorAt(uint i) {
    return params.wide != 0u ? frame.words[2u * i] : frame.words[uint(params.size.x * params.size.y) + i];
}

void main() {
    ivec2 p = ivec2(gl_GlobalInvocationID.xy);
    if (p.x >= params.size.x || p.y >= params.size.y) return;
    uint i = uint(p.y * params.size.x + p.x);
    uint best = keyAt(i), at = i;
#ifdef DL_RESOLVE_ADAPTIVE
    {
        // Adaptive sizes: the window of the largest size; a neighbour at offset (dx, dy) covers
        // this pixel when both lie in its own size's window [−⌊(s−1)/2⌋, ⌊s/2⌋]; neighbours
        // outside the picture are skipped (no clamping: offsets must be true).
        for (int dy = -params.radius; dy <= params.reach; dy++) {
            int y = p.y + dy;
            if (y < 0 || y >= params.size.y) continue;
            for (int dx = -params.radius; dx <= params.reach; dx++) {
                int x = p.x + dx;
                if (x < 0 || x >= params.size.x) continue;
                uint j = uint(y * params.size.x + x);
                uint k = keyAt(j);
                if (k < best) {
                    int s = int(colorAt(j) >> 24);
                    if (dx >= -((s - 1) / 2) && dx <= s / 2 && dy >= -((s - 1) / 2) && dy <= s / 2) { best = k; at = j; }
                }
            }
        }
    }
#else
    if (params.radius == 0 && params.reach == 1) {
        // Point size 2 (the default): the window is the pixel and its right and lower neighbors,
        // read unrolled in the general loop's order (rows top to bottom, left to right), so ties
        // resolve alike.
        uint down = uint(min(p.y + 1, params.size.y - 1) * params.size.x), row = uint(p.y * params.size.x);
        uint right = uint(min(p.x + 1, params.size.x - 1)), x = uint(p.x);
        uint k = keyAt(row + right);
        if (k < best) { best = k; at = row + right; }
        k = keyAt(down + x);
        if (k < best) { best = k; at = down + x; }
        k = keyAt(down + right);
        if (k < best) { best = k; at = down + right; }
    } else if (params.radius > 0 || params.reach > 0) {
        // Neighbors clamped to the image: a clamped one is still within the radius, so no branches.
        int r = params.radius;
        ivec2 hi = params.size - 1;
        for (int dy = -r; dy <= params.reach; dy++) {
            int row = clamp(p.y + dy, 0, hi.y) * params.size.x;
            for (int dx = -r; dx <= params.reach; dx++) {
                uint j = uint(row + clamp(p.x + dx, 0, hi.x));
                uint k = keyAt(j);
                if (k < best) { best = k; at = j; }
            }
        }
    }
#endif
#ifdef DL_RESOLVE_ADAPTIVE
    imageStore(outputImage, p, uvec4(best == 0xFFFFFFFFu ? params.background : colorAt(at) | 0xFF000000u));
#else
    imageStore(outputImage, p, uvec4(best == 0xFFFFFFFFu ? params.background : colorAt(at)));
#endif
#ifdef DL_RESOLVE_EDL
    float l = best == 0xFFFFFFFFu ? uintBitsToFloat(0x7F800000u)
                                  : log2(params.b / (uintBitsToFloat(best) - params.a));
    frame.words[2u * uint(params.size.x * params.size.y) + i] = floatBitsToUint(l);
#endif
}
