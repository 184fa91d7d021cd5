// The one definition of every code shared by Swift, C and GLSL: GLSL shaders #include it (through
// common.glsl; ShaderLibrary expands includes), and CShim's umbrella header includes it, so Swift
// sees each #define as a constant (DL_COLOR_BY_DEPTH is a UInt32 in Swift). Plain integer #defines
// only: the one syntax all three languages read. Change a value here and every side follows.
#ifndef DL_CODES_H
#define DL_CODES_H

// Workgroup sizes and work per invocation (GPUKit sizes its dispatches from these).
// On a CPU driver (lavapipe) invocations run 8 at a time in SIMD, so barriers, shared memory and
// atomics are what cost; the kernels loop over several pixels per invocation instead.
#define DL_LOCAL_SIZE_X 16
#define DL_LOCAL_SIZE_Y 16
#define DL_SCAN_SIZE 256
// Color passes: each invocation writes this many consecutive pixels of a row.
#define DL_PIXELS_PER_INVOCATION 16
// depthMinMax: one 1-D workgroup of DL_REDUCE_SIZE invocations per band of DL_REDUCE_ROWS rows.
#define DL_REDUCE_SIZE 64
#define DL_REDUCE_ROWS 32
// depthHistogram: each invocation counts a run of DL_HISTOGRAM_RUN consecutive pixels of a row
// and adds to a bin only when the bin changes; DL_RUN_GROUP_X × DL_RUN_GROUP_Y invocations a group.
#define DL_HISTOGRAM_RUN 32
#define DL_RUN_GROUP_X 8
#define DL_RUN_GROUP_Y 8
// Compute point rasterizer: invocations a workgroup, points an invocation.
#define DL_POINT_GROUP 64
#define DL_POINTS_PER_INVOCATION 16

// Colormaps (DepthKit's Colormap, GLSL dl_colormap).
#define DL_COLORMAP_JET 0u
#define DL_COLORMAP_TURBO 1u
#define DL_COLORMAP_VIRIDIS 2u
#define DL_COLORMAP_GRAYSCALE 3u

// Depth masks (depthMask.glsl).
#define DL_MASK_HIGHPASS 0u
#define DL_MASK_BANDPASS 1u

// Point colors (GPUKit's PointCloudColorBy).
#define DL_COLOR_BY_COLOR 0u
#define DL_COLOR_BY_DEPTH 1u
#define DL_COLOR_BY_HEIGHT 2u

// The point rasterizer's flags word: 4-bit fields at these shifts, and one bit.
#define DL_POINT_FIELD_MASK 15u
#define DL_POINT_SOURCE_SHIFT 0u      // 0 a depth frame, 1 a point buffer
#define DL_POINT_SOURCE_DEPTH 0u
#define DL_POINT_SOURCE_BUFFER 1u
#define DL_POINT_COLOR_BY_SHIFT 4u    // DL_COLOR_BY_*
#define DL_POINT_COLORMAP_SHIFT 8u    // DL_COLORMAP_*
#define DL_POINT_STRIDE_SHIFT 12u     // point stride − 1 (progressive subsets of point buffers)
// Even point size: land on the nearest pixel ⌊f + ½⌋ (the resolve's square [−s/2, s/2 − 1] around
// it then covers the pixel centers within s/2, as raster does).
#define DL_POINT_NEAREST_PIXEL_BIT 65536u

#endif
