#version 450
#include "common.glsl"
#include "pointCloudPoints.glsl"
// Compute point rasterizer, 32-bit fallback, pass 2: the points whose key is the pixel's nearest
// write their color (atomicMin among equal depths, so ties resolve as in the 64-bit pass).
layout(set = 2, binding = 0) buffer Frame { uint words[]; } frame;

void main() {
    uint n = uint(params.target.x * params.target.y);
    DL_FOR_EACH_POINT(if (frame.words[pixel] == key) atomicMin(frame.words[n + pixel], color);)
}
