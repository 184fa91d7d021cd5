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

// Colormaps (DL_COLORMAP_* of dl_codes.h): the formulas of dl_colormap.h, which the C kernels and
// DepthKit's Colormap.color use too; t clamped to [0, 1], then each channel.
#include "dl_colormap.h"

vec3 dl_colormap(uint map, float t) {
    return clamp(dl_colormap_rgb(map, clamp(t, 0.0, 1.0)), 0.0, 1.0);
}

