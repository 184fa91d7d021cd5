#version 450
#include "common.glsl"
#include "depthMask.glsl"
// highpass / bandpass: the depth mask at the output size as gray (R = G = B = unorm8(m), A = 255).
layout(local_size_x = DL_LOCAL_SIZE_X, local_size_y = DL_LOCAL_SIZE_Y) in;
layout(set = 0, binding = 0) uniform sampler2D depthTexture;
layout(set = 1, binding = 0, r32ui) uniform writeonly uimage2D outputImage;
layout(set = 2, binding = 0) readonly buffer Stats { uint minBits; uint maxBits; uint count; } stats;
layout(push_constant) uniform Params {
    ivec2 outSize; ivec2 depthSize;
    uint kind; float focus; float slope; float width;
} params;

void main() {
    int y = int(gl_GlobalInvocationID.y);
    int x0 = int(gl_GlobalInvocationID.x) * DL_PIXELS_PER_INVOCATION;
    if (x0 >= params.outSize.x || y >= params.outSize.y) return;
    int x1 = min(x0 + DL_PIXELS_PER_INVOCATION, params.outSize.x);
    DLMaskRange r = dl_maskRange(stats.minBits, stats.maxBits, stats.count);
    DLMaskParams m = DLMaskParams(params.kind, params.focus, params.slope, params.width);
    for (int x = x0; x < x1; x++) {
        ivec2 p = ivec2(x, y);
        uint v = dl_unorm8Precise(dl_maskAt(depthTexture, p, params.outSize, params.depthSize, r, m));
        imageStore(outputImage, p, uvec4(v | (v << 8) | (v << 16) | 0xFF000000u));
    }
}
