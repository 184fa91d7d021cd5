#version 450
#include "common.glsl"
// The summed-area table of an 8-bit color image, 4 channels, for blurEffect.comp:
// S[y][x] = sum over rows < y, columns < x; (w + 1) × (h + 1) entries, row 0 filled with 0 by
// the caller. pass 0: one invocation per image row writes that row's prefix sums into row y + 1;
// pass 1: one invocation per column adds each row to the next. uint with wrapping, like DepthKit.
layout(local_size_x = DL_REDUCE_SIZE) in;
layout(set = 0, binding = 0) uniform sampler2D colorTexture;
layout(set = 1, binding = 0) buffer SummedArea { uvec4 s[]; } sat;
layout(push_constant) uniform Params { ivec2 size; uint pass; } params;

void main() {
    int i = int(gl_GlobalInvocationID.x);
    int sw = params.size.x + 1;
    if (params.pass == 0u) {
        if (i >= params.size.y) return;
        int row = (i + 1) * sw;
        uvec4 acc = uvec4(0u);
        sat.s[row] = acc;
        for (int x = 0; x < params.size.x; x++) {
            acc += uvec4(texelFetch(colorTexture, ivec2(x, i), 0) * 255.0 + 0.5);
            sat.s[row + x + 1] = acc;
        }
    } else {
        if (i >= sw) return;
        uvec4 acc = sat.s[sw + i];
        for (int y = 2; y <= params.size.y; y++) {
            acc += sat.s[y * sw + i];
            sat.s[y * sw + i] = acc;
        }
    }
}
