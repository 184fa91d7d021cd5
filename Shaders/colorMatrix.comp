#version 450
#include "common.glsl"
// CIColorMatrix: out = clamp(M·(R,G,B,A) + bias).
layout(local_size_x = DL_LOCAL_SIZE_X, local_size_y = DL_LOCAL_SIZE_Y) in;
layout(set = 0, binding = 0) uniform sampler2D inputTexture;
layout(set = 1, binding = 0, r32ui) uniform writeonly uimage2D outputImage;
layout(push_constant) uniform Params {
    vec4 r; vec4 g; vec4 b; vec4 a; vec4 bias;
    ivec2 size; uint swapRB;
} params;

void main() {
    int y = int(gl_GlobalInvocationID.y);
    int x0 = int(gl_GlobalInvocationID.x) * DL_PIXELS_PER_INVOCATION;
    if (x0 >= params.size.x || y >= params.size.y) return;
    int x1 = min(x0 + DL_PIXELS_PER_INVOCATION, params.size.x);
    for (int x = x0; x < x1; x++) {
        ivec2 p = ivec2(x, y);
        vec4 c = texelFetch(inputTexture, p, 0);
        vec4 v = params.bias + vec4(params.r.x, params.g.x, params.b.x, params.a.x) * c.r
                             + vec4(params.r.y, params.g.y, params.b.y, params.a.y) * c.g
                             + vec4(params.r.z, params.g.z, params.b.z, params.a.z) * c.b
                             + vec4(params.r.w, params.g.w, params.b.w, params.a.w) * c.a;
        imageStore(outputImage, p, uvec4(dl_pack(v, params.swapRB)));
    }
}
