#version 450
#include "common.glsl"
// rosyEffect: out = (R, 0, B, 255).
layout(local_size_x = DL_LOCAL_SIZE_X, local_size_y = DL_LOCAL_SIZE_Y) in;
layout(set = 0, binding = 0) uniform sampler2D inputTexture;
layout(set = 1, binding = 0, r32ui) uniform writeonly uimage2D outputImage;
layout(push_constant) uniform Params { ivec2 size; uint swapRB; } params;

void main() {
    int y = int(gl_GlobalInvocationID.y);
    int x0 = int(gl_GlobalInvocationID.x) * DL_PIXELS_PER_INVOCATION;
    if (x0 >= params.size.x || y >= params.size.y) return;  // partial tiles
    int x1 = min(x0 + DL_PIXELS_PER_INVOCATION, params.size.x);
    for (int x = x0; x < x1; x++) {
        ivec2 p = ivec2(x, y);
        vec4 c = texelFetch(inputTexture, p, 0);
        imageStore(outputImage, p, uvec4(dl_pack(vec4(c.r, 0.0, c.b, 1.0), params.swapRB)));
    }
}
