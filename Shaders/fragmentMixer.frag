#version 450
// fragmentMixer: out = mix(a, b, mixFactor) at a's size; b is sampled bilinearly with clamp to
// edge at a's pixel centers: u = (x + 0.5)·Wb/Wa − 0.5. The four texels are fetched and weighted
// here in full float precision: a sampler's filtering weights may have as few as 4 fractional
// bits (subTexelPrecisionBits), which can move results by several LSB against the CPU.
// Rounded to nearest in 8 bits here so the UNORM store is exact.
layout(set = 0, binding = 0) uniform sampler2D textureA;
layout(set = 1, binding = 0) uniform sampler2D textureB;
layout(push_constant) uniform Params { vec2 sizeA; vec2 sizeB; float mixFactor; float pad; } params;
layout(location = 0) out vec4 color;

vec4 texelB(ivec2 p) {
    return texelFetch(textureB, clamp(p, ivec2(0), ivec2(params.sizeB) - 1), 0);
}

void main() {
    ivec2 pa = ivec2(gl_FragCoord.xy);
    vec4 a = texelFetch(textureA, pa, 0);
    vec2 u = (vec2(pa) + 0.5) * params.sizeB / params.sizeA - 0.5;
    vec2 fl = floor(u);
    vec2 w = u - fl;
    ivec2 i0 = ivec2(fl);
    vec4 top = texelB(i0) * (1.0 - w.x) + texelB(i0 + ivec2(1, 0)) * w.x;
    vec4 bottom = texelB(i0 + ivec2(0, 1)) * (1.0 - w.x) + texelB(i0 + ivec2(1, 1)) * w.x;
    vec4 b = top * (1.0 - w.y) + bottom * w.y;
    float f = params.mixFactor;
    vec4 v = floor(a * 255.0 * (1.0 - f) + b * 255.0 * f + 0.5);
    color = v / 255.0;
}
