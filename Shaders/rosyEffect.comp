#version 450
#include "common.glsl"
// rosyEffect: out = (R, 0, B, 255).
layout(local_size_x = DL_LOCAL_SIZE_X, local_size_y = DL_LOCAL_SIZE_Y) in;
layout(set = 0, binding = 0) uniform sampler2D inputTexture;
layout(set = 1, binding = 0, r32ui) uniform writeonly uimage2D outputImage;
layout(push_constant) uniform Params { ivec2 size; uint swapRB; } params;

void main() {
    ivec2 p = ivec2(gl_GlobalInvocationID.xy);
    if (p.x >= params.size.x || p.y >= params.size.y) return;  // partial tiles
    vec4 c = texelFetch(inputTexture, p, 0);
    imageStore(outputImage, p, uvec4(dl_pack(vec4(c.r, 0.0, c.b, 1.0), params.swapRB)));
}
