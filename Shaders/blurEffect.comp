#version 450
#include "common.glsl"
#include "depthMask.glsl"
#include "depthEffect.glsl"
// blur: r = ⌊10·(1 − m) + 0.5⌋; the effect is each channel's mean over the box
// [x − r, x + r] × [y − r, y + r] intersected with the image, from the summed-area table of
// summedArea.comp (set 4: S[y][x] = sum over rows < y, columns < x, (w + 1) entries a row,
// uint with wrapping: box sums are exact).
layout(set = 4, binding = 0) readonly buffer SummedArea { uvec4 s[]; } sat;

void main() {
    int y = int(gl_GlobalInvocationID.y);
    int x0 = int(gl_GlobalInvocationID.x) * DL_PIXELS_PER_INVOCATION;
    ivec2 size = params.size;
    if (x0 >= size.x || y >= size.y) return;
    int x1 = min(x0 + DL_PIXELS_PER_INVOCATION, size.x);
    DLMaskRange r = effectRange();
    DLMaskParams mp = effectMaskParams();
    int sw = size.x + 1;
    for (int x = x0; x < x1; x++) {
        ivec2 p = ivec2(x, y);
        vec4 px = dl_bytes(texelFetch(colorTexture, p, 0));
        precise float mv = effectMask(p, r, mp);
        precise float rf = 10.0 * (1.0 - mv) + 0.5;
        int rad = int(floor(rf));
        int bx0 = max(x - rad, 0), bx1 = min(x + rad, size.x - 1) + 1;
        int by0 = max(y - rad, 0), by1 = min(y + rad, size.y - 1) + 1;
        uvec4 sum = sat.s[by1 * sw + bx1] - sat.s[by0 * sw + bx1] - sat.s[by1 * sw + bx0] + sat.s[by0 * sw + bx0];
        float count = float((bx1 - bx0) * (by1 - by0));
        precise vec4 e = vec4(sum) / count;
        precise vec4 v = e * (1.0 - mv) + px * mv + 0.5;
        storePixel(p, v);
    }
}
