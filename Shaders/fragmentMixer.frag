#version 450
// fragmentMixer: out = mix(a, b, mixFactor) at a's size; b is sampled bilinearly (clamp to edge)
// at a's pixel centers. Rounded to nearest in 8 bits here so the UNORM store is exact.
layout(set = 0, binding = 0) uniform sampler2D textureA;
layout(set = 1, binding = 0) uniform sampler2D textureB;
layout(push_constant) uniform Params { vec2 sizeA; float mixFactor; float pad; } params;
layout(location = 0) out vec4 color;

void main() {
    vec4 a = texelFetch(textureA, ivec2(gl_FragCoord.xy), 0);
    vec4 b = texture(textureB, gl_FragCoord.xy / params.sizeA);
    float f = params.mixFactor;
    vec4 v = floor(a * 255.0 * (1.0 - f) + b * 255.0 * f + 0.5);
    color = v / 255.0;
}
