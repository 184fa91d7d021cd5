#version 450
#include "common.glsl"
#include "depthMask.glsl"
#include "depthEffect.glsl"
// greenscreen: the effect is the background (set 4, extraSize, scaled bilinearly to the image
// size with clamp to edge at pixel centers) when useExtra, else solid green (0, 255, 0, 255).
layout(set = 4, binding = 0) uniform sampler2D backgroundTexture;

void main() {
    int y = int(gl_GlobalInvocationID.y);
    int x0 = int(gl_GlobalInvocationID.x) * DL_PIXELS_PER_INVOCATION;
    ivec2 size = params.size;
    if (x0 >= size.x || y >= size.y) return;
    int x1 = min(x0 + DL_PIXELS_PER_INVOCATION, size.x);
    DLMaskRange r = effectRange();
    DLMaskParams mp = effectMaskParams();
    int by0, by1;
    float fy;
    dl_bilinearAxis(y, params.extraSize.y, size.y, by0, by1, fy);
    for (int x = x0; x < x1; x++) {
        ivec2 p = ivec2(x, y);
        vec4 px = dl_bytes(texelFetch(colorTexture, p, 0));
        precise vec4 e = vec4(0.0, 255.0, 0.0, 255.0);
        if (params.useExtra != 0u) {
            int bx0, bx1;
            float wx;
            dl_bilinearAxis(x, params.extraSize.x, size.x, bx0, bx1, wx);
            vec4 b00 = dl_bytes(texelFetch(backgroundTexture, ivec2(bx0, by0), 0));
            vec4 b01 = dl_bytes(texelFetch(backgroundTexture, ivec2(bx1, by0), 0));
            vec4 b10 = dl_bytes(texelFetch(backgroundTexture, ivec2(bx0, by1), 0));
            vec4 b11 = dl_bytes(texelFetch(backgroundTexture, ivec2(bx1, by1), 0));
            precise vec4 top = b00 * (1.0 - wx) + b01 * wx;
            precise vec4 bottom = b10 * (1.0 - wx) + b11 * wx;
            e = top * (1.0 - fy) + bottom * fy;
        }
        precise float mv = effectMask(p, r, mp);
        precise vec4 v = e * (1.0 - mv) + px * mv + 0.5;
        storePixel(p, v);
    }
}
