#version 450
#include "common.glsl"
#include "pointCloudPoints.glsl"
// Compute point rasterizer, 32-bit fallback, pass 1: the nearest depth key per pixel in
// frame.words[pixel] (keys for W·H pixels, then colors for W·H pixels).
layout(set = 2, binding = 0) buffer Frame { uint words[]; } frame;

void main() {
    DL_FOR_EACH_POINT(atomicMin(frame.words[pixel], key);)
}
