#version 450
#include "common.glsl"
// depthToGrayscale: v = clamp((d − offset)/range), out = (v, v, v, 1); range ≤ 0 → v = 0;
// invalid depth → black. offset/range come from the push constants or the min/max pass.
layout(local_size_x = DL_LOCAL_SIZE_X, local_size_y = DL_LOCAL_SIZE_Y) in;
layout(set = 0, binding = 0) uniform sampler2D depthTexture;
layout(set = 1, binding = 0, r32ui) uniform writeonly uimage2D outputImage;
layout(set = 2, binding = 0) readonly buffer Stats { uint minBits; uint maxBits; uint count; } stats;
layout(push_constant) uniform Params {
    ivec2 size;
    float offset; float range;
    uint useStatsOffset; uint useStatsRange;
} params;

void main() {
    int y = int(gl_GlobalInvocationID.y);
    int x0 = int(gl_GlobalInvocationID.x) * DL_PIXELS_PER_INVOCATION;
    if (x0 >= params.size.x || y >= params.size.y) return;
    int x1 = min(x0 + DL_PIXELS_PER_INVOCATION, params.size.x);
    float lo = stats.count > 0u ? uintBitsToFloat(stats.minBits) : 0.0;
    float hi = stats.count > 0u ? uintBitsToFloat(stats.maxBits) : 0.0;
    float off = params.useStatsOffset != 0u ? lo : params.offset;
    float rng = params.useStatsRange != 0u ? hi - lo : params.range;
    bool positive = rng > 0.0;
    float divisor = positive ? rng : 1.0;
    float scale = positive ? 1.0 : 0.0;
    for (int x = x0; x < x1; x++) {
        ivec2 p = ivec2(x, y);
        float d = texelFetch(depthTexture, p, 0).r;
        float v = dl_validDepth(d) ? ((d - off) * scale) / divisor : 0.0;
        imageStore(outputImage, p, uvec4(dl_pack(vec4(v, v, v, 1.0), 0u)));
    }
}
