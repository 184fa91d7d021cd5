#version 450
// The GPU blend drawn straight into the swapchain image: color (a) and the colormapped depth (b)
// are each sampled at the window pixel's spot of the letterbox rectangle (linear, clamp to edge)
// and mixed there, so there is no intermediate image at the color size and no second pass.
// Mixing is linear, so this is the offscreen mix (fragmentMixer.frag) then present.frag's
// scaling, up to rounding; a snapshot still runs fragmentMixer for its exact bytes.
layout(set = 0, binding = 0) uniform sampler2D imageA;
layout(set = 0, binding = 1) uniform sampler2D imageB;
layout(push_constant) uniform Params { float mixFactor; } params;
layout(location = 0) in vec2 uv;
layout(location = 0) out vec4 color;
void main() {
    vec3 a = texture(imageA, uv).rgb;
    vec3 b = texture(imageB, uv).rgb;
    color = vec4(mix(a, b, params.mixFactor), 1.0);
}
