// Shared by every depthlens shader. The codes and sizes Swift also uses live in dl_codes.h.
#include "dl_codes.h"

// Valid depth is finite and > 0. Bit tests, not isnan/isinf: drivers may fold those away.
// Sign bit set → negative or -0; exponent all ones → ±Inf or NaN; all zero → +0.
bool dl_validDepth(float d) {
    uint b = floatBitsToUint(d);
    return (b & 0x80000000u) == 0u && (b & 0x7F800000u) != 0x7F800000u && b != 0u;
}

// [0, 1] → 8 bits rounded to nearest, exactly like DepthKit's unorm8.
uint dl_unorm8(float v) {
    return uint(clamp(v, 0.0, 1.0) * 255.0 + 0.5);
}

// Packs a color for an R32_UINT view of an rgba8 image; swapRB writes bgra8 memory order.
uint dl_pack(vec4 c, uint swapRB) {
    uint r = dl_unorm8(c.r), g = dl_unorm8(c.g), b = dl_unorm8(c.b), a = dl_unorm8(c.a);
    if (swapRB != 0u) { uint t = r; r = b; b = t; }
    return r | (g << 8) | (b << 16) | (a << 24);
}

// Colormaps (DL_COLORMAP_* of dl_codes.h): the exact formulas of DepthKit's Colormap.color(t).

vec3 dl_colormap(uint map, float t) {
    float x = clamp(t, 0.0, 1.0);
    if (map == DL_COLORMAP_JET) {
        return clamp(vec3(min(4.0 * x - 1.5, 4.5 - 4.0 * x),
                          min(4.0 * x - 0.5, 3.5 - 4.0 * x),
                          min(4.0 * x + 0.5, 2.5 - 4.0 * x)), 0.0, 1.0);
    } else if (map == DL_COLORMAP_TURBO) {
        vec4 v4 = vec4(1.0, x, x * x, x * x * x);
        vec2 v2 = vec2(v4.z * v4.z, v4.z * v4.w);
        const vec4 r4 = vec4(0.13572138, 4.61539260, -42.66032258, 132.13108234);
        const vec4 g4 = vec4(0.09140261, 2.19418839, 4.84296658, -14.18503333);
        const vec4 b4 = vec4(0.10667330, 12.64194608, -60.58204836, 110.36276771);
        const vec2 r2 = vec2(-152.94239396, 59.28637943);
        const vec2 g2 = vec2(4.27729857, 2.82956604);
        const vec2 b2 = vec2(-89.90310912, 27.34824973);
        return clamp(vec3(dot(v4, r4) + dot(v2, r2), dot(v4, g4) + dot(v2, g2), dot(v4, b4) + dot(v2, b2)), 0.0, 1.0);
    } else if (map == DL_COLORMAP_VIRIDIS) {
        const vec3 c0 = vec3(0.2777273272234177, 0.005407344544966578, 0.3340998053353061);
        const vec3 c1 = vec3(0.1050930431085774, 1.404613529898575, 1.384590162594685);
        const vec3 c2 = vec3(-0.3308618287255563, 0.214847559468213, 0.09509516302823659);
        const vec3 c3 = vec3(-4.634230498983486, -5.799100973351585, -19.33244095627987);
        const vec3 c4 = vec3(6.228269936347081, 14.17993336680509, 56.69055260068105);
        const vec3 c5 = vec3(4.776384997670288, -13.74514537774601, -65.35303263337234);
        const vec3 c6 = vec3(-5.435455855934631, 4.645852612178535, 26.3124352495832);
        vec3 v = c6;
        v = c5 + x * v;
        v = c4 + x * v;
        v = c3 + x * v;
        v = c2 + x * v;
        v = c1 + x * v;
        v = c0 + x * v;
        return clamp(v, 0.0, 1.0);
    }
    return vec3(x);
}

