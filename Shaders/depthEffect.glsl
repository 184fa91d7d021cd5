// What the depth-masked effects share (comicEffect, greenscreenEffect, blurEffect): the color
// image, the depth map and its stats, the output, one extra set, and the mask parameters.
// out = round(effect·(1 − m) + image·m) per channel, m the mask at the color size (DepthEffect).
// Needs common.glsl and depthMask.glsl.
layout(local_size_x = DL_LOCAL_SIZE_X, local_size_y = DL_LOCAL_SIZE_Y) in;
layout(set = 0, binding = 0) uniform sampler2D colorTexture;
layout(set = 1, binding = 0) uniform sampler2D depthTexture;
layout(set = 2, binding = 0, r32ui) uniform writeonly uimage2D outputImage;
layout(set = 3, binding = 0) readonly buffer Stats { uint minBits; uint maxBits; uint count; } stats;
layout(push_constant) uniform Params {
    ivec2 size; ivec2 depthSize; ivec2 extraSize;
    uint kind; float focus; float slope; float width;
    uint swapRB; uint useExtra;
} params;

DLMaskRange effectRange() { return dl_maskRange(stats.minBits, stats.maxBits, stats.count); }
DLMaskParams effectMaskParams() { return DLMaskParams(params.kind, params.focus, params.slope, params.width); }

float effectMask(ivec2 p, DLMaskRange r, DLMaskParams m) {
    return dl_effectMask(dl_maskAt(depthTexture, p, params.size, params.depthSize, r, m));
}

void storePixel(ivec2 p, vec4 v) { imageStore(outputImage, p, uvec4(dl_packBytes(v, params.swapRB))); }
