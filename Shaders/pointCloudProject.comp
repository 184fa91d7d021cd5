#version 450
#extension GL_ARB_gpu_shader_int64 : require
#extension GL_EXT_shader_atomic_int64 : require
#include "common.glsl"
#include "pointCloudPoints.glsl"
// Compute point rasterizer, one pass (shaderBufferInt64Atomics): atomicMin of
// (depth key << 32 | rgba8) per output pixel keeps the nearest point and its color together.
layout(set = 2, binding = 0) buffer Frame { uint64_t pixels[]; } frame;

void main() {
    DL_FOR_EACH_POINT(atomicMin(frame.pixels[pixel], (uint64_t(key) << 32) | uint64_t(color));)
}
