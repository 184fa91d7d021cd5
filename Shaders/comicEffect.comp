#version 450
#include "common.glsl"
#include "depthMask.glsl"
#include "depthEffect.glsl"
// comic: each of R, G, B posterized to round(c·3/255)·85, black where the luma's Sobel
// magnitude² exceeds 128² (luma L = (77R + 150G + 29B + 128) >> 8, read clamp to edge); alpha kept.

uint lumaAt(int x, int y) {
    uvec3 c = uvec3(texelFetch(colorTexture, ivec2(x, y), 0).rgb * 255.0 + 0.5);
    return (77u * c.r + 150u * c.g + 29u * c.b + 128u) >> 8;
}

// Lumas of column x at rows y − 1, y, y + 1 (clamped).
ivec3 column(int x, int ym, int y, int yp) { return ivec3(lumaAt(x, ym), lumaAt(x, y), lumaAt(x, yp)); }

void main() {
    int y = int(gl_GlobalInvocationID.y);
    int x0 = int(gl_GlobalInvocationID.x) * DL_PIXELS_PER_INVOCATION;
    ivec2 size = params.size;
    if (x0 >= size.x || y >= size.y) return;
    int x1 = min(x0 + DL_PIXELS_PER_INVOCATION, size.x);
    DLMaskRange r = effectRange();
    DLMaskParams mp = effectMaskParams();
    int ym = max(y - 1, 0), yp = min(y + 1, size.y - 1);
    ivec3 left = column(max(x0 - 1, 0), ym, y, yp), mid = column(x0, ym, y, yp);
    for (int x = x0; x < x1; x++) {
        ivec3 right = column(min(x + 1, size.x - 1), ym, y, yp);
        int gx = (right.x + 2 * right.y + right.z) - (left.x + 2 * left.y + left.z);
        int gy = (left.z + 2 * mid.z + right.z) - (left.x + 2 * mid.x + right.x);
        float keep = gx * gx + gy * gy > 128 * 128 ? 0.0 : 1.0;
        ivec2 p = ivec2(x, y);
        vec4 px = dl_bytes(texelFetch(colorTexture, p, 0));
        vec3 level = vec3((uvec3(px.rgb) * 3u + 127u) / 255u * 85u);
        precise float mv = effectMask(p, r, mp);
        precise float e = 1.0 - mv;
        precise vec3 v = level * keep * e + px.rgb * mv + 0.5;
        storePixel(p, vec4(v, px.a + 0.5));
        left = mid; mid = right;
    }
}
