#version 450
#include "common.glsl"
// depthToJET and friends: t = 1 − cdf(d) (equalized, from the prefix-summed histogram) or
// t = 1 − clamp((d − min)/(max − min)) (fixed); color = dl_colormap(map, t); invalid → black.
layout(local_size_x = DL_LOCAL_SIZE_X, local_size_y = DL_LOCAL_SIZE_Y) in;
layout(set = 0, binding = 0) uniform sampler2D depthTexture;
layout(set = 1, binding = 0, r32ui) uniform writeonly uimage2D outputImage;
layout(set = 2, binding = 0) readonly buffer Cumulative { uint counts[]; } cumulative;
layout(push_constant) uniform Params {
    ivec2 size;
    uint colormap; uint equalized;
    float minDepth; float maxDepth; float binsPerMeter; uint bins;
} params;

uint colorOf(float d) {
    if (!dl_validDepth(d)) return 0xFF000000u;
    float t;
    if (params.equalized != 0u) {
        uint bin = uint(clamp((d - params.minDepth) * params.binsPerMeter, 0.0, float(params.bins - 1u)));
        t = 1.0 - float(cumulative.counts[bin]) / float(cumulative.counts[params.bins - 1u]);
    } else {
        t = 1.0 - clamp((d - params.minDepth) / (params.maxDepth - params.minDepth), 0.0, 1.0);
    }
    return dl_pack(vec4(dl_colormap(params.colormap, t), 1.0), 0u);
}

void main() {
    int y = int(gl_GlobalInvocationID.y);
    int x0 = int(gl_GlobalInvocationID.x) * DL_PIXELS_PER_INVOCATION;
    if (x0 >= params.size.x || y >= params.size.y) return;
    int x1 = min(x0 + DL_PIXELS_PER_INVOCATION, params.size.x);
    for (int x = x0; x < x1; x++) {
        ivec2 p = ivec2(x, y);
        imageStore(outputImage, p, uvec4(colorOf(texelFetch(depthTexture, p, 0).r)));
    }
}
