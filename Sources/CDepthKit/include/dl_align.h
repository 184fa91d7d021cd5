#ifndef DL_ALIGN_H
#define DL_ALIGN_H
// Depth aligned to color (align.c): librealsense's `align` to color as librealsense 2.59 runs it
// on x86-64 (its `image_transform`, src/proc/sse/sse-align.cpp; pyrealsense2 2.59.1 gives the
// same bytes on the shared D435 bag). Each valid depth pixel (x, y) with depth z (meters) is
// deprojected at its corners (x − 0.5, y − 0.5) and (x + 0.5, y + 0.5) with the depth
// intrinsics, moved by the depth→color extrinsics (p_color = R·p + t, R row-major, summed as
// r0·x + (r1·y + (r2·z + t))) and projected with the color intrinsics; the corners' pixels
// x0 = (int)(u + 0.5) … (C truncation) bound a rectangle of color pixels, clipped to the image,
// that all take z where they hold 0 or a larger depth (the nearest wins). When the depth camera
// has at least as many pixels per degree as the color camera in both directions (rs2_fov), only
// the top-left corner is used (`both_corners` 0): each depth pixel writes one color pixel.
// Holes stay 0.
//
// Two phases, both in bands on the worker pool (`dl_parallel_run`):
//  1. `dl_align_rects_band`: depth rows → each pixel's rectangle (4 int16 planes) and each depth
//     row's span of color rows. Float operations in librealsense's order, nothing fused
//     (FP_CONTRACT OFF), compiled for baseline x86-64, AVX2 and AVX-512 (same bytes on each).
//  2. `dl_align_scatter_band`: color rows → clears its rows, then writes the rectangles of the
//     depth rows whose span meets them, clipped to its rows. Each color pixel is written by one
//     band only, and the minimum does not depend on the order of the writes, so the result equals
//     the serial one exactly, with no atomics.

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// One alignment: inputs, output and scratch. Strides are in floats. Color sizes ≤ 32767.
typedef struct dl_align_job {
    const float *depth;
    int64_t depth_stride;
    int32_t depth_width, depth_height;
    float *out;
    int64_t out_stride;
    int32_t color_width, color_height;
    /// Depth intrinsics (fx, fy, cx, cy), color intrinsics (fx, fy, cx, cy).
    float dfx, dfy, dcx, dcy;
    float cfx, cfy, ccx, ccy;
    /// Depth→color rotation, row-major, and translation (meters).
    float r[9];
    float t[3];
    /// Scratch from `dl_align_scratch_bytes` (aligned to 64 bytes), laid out by `dl_align_prepare`.
    void *scratch;
    /// Bands of phase 1 (depth rows) and of phase 2 (color rows).
    int32_t rect_bands, scatter_bands;
    /// 1: rectangles between both corners; 0: the top-left corner's pixel only.
    int32_t both_corners;
    // Set by dl_align_prepare: the scratch's parts.
    float *xs0, *xs1, *ys0, *ys1;          // (col − 0.5 − cx)/fx, (col + 0.5 − cx)/fx, rows likewise
    int16_t *rx0, *ry0, *rx1, *ry1;        // per depth pixel (packed rows of depth_width)
    int32_t *span;                         // per depth row: min y0, max y1 of its rectangles
} dl_align_job;

/// Bytes of scratch a job of this depth size needs.
size_t dl_align_scratch_bytes(int32_t depth_width, int32_t depth_height);
/// Lays out the scratch and fills the deprojection tables (serial, width + height divisions).
void dl_align_prepare(dl_align_job *job);
/// Phase 1, band `band` of `rect_bands` (ctx: dl_align_job).
void dl_align_rects_band(void *ctx, int32_t band);
/// Phase 2, band `band` of `scatter_bands` (ctx: dl_align_job).
void dl_align_scatter_band(void *ctx, int32_t band);
/// Both phases, serially, on the calling thread (tests, and a single core).
void dl_align_run_serial(dl_align_job *job);

#ifdef __cplusplus
}
#endif
#endif
