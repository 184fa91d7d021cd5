#ifndef DL_POINTS_H
#define DL_POINTS_H
// The CPU point renderer (points.c; DepthKit's `CPUPointRenderer`): the compute path's semantics
// (Shaders/pointCloudPoints.glsl, pointCloudProject.comp, pointCloudResolve.comp) on the CPU.
// A point lands on output pixel ⌊(ndc·½ + ½)·size⌋ (⌊· + ½⌋ for even point sizes) with the
// 64-bit value (floatBits(ndc.z) << 32 | rgba8); each pixel keeps the smallest value (the nearest
// point; equal depths: the smaller color, as the compute path's atomicMin). The resolve then takes,
// per output pixel, the nearest key in the s×s window [−back, reach]² (own pixel first, then rows
// top to bottom, left to right; strictly nearer replaces) or the background. The float operations
// are the shader's, in the order Mesa's lavapipe runs them (mat4·vec4 as ((c3 + c2·z) + c1·y) +
// c0·x, nothing fused: FP_CONTRACT OFF), so points land on the same pixels with the same keys.
//
// Three phases, each on the worker pool (`dl_parallel_run`), nothing allocated:
//  1. `dl_points_project_chunk`: chunk c of DL_POINTS_CHUNK points → its entries (pixel, value),
//     grouped by the row band of their pixel (a counting sort in the chunk's own part of the
//     scratch), and where each band's entries start (`offsets`).
//  2. `dl_points_apply_band`: row band b → clears its keys, then takes the minimum of every
//     chunk's entries for the band. Each pixel has one writer and min does not depend on order:
//     the result equals the serial one, with no atomics.
//  3. `dl_points_resolve_band`: row band b → output rows (reads the keys of neighbour bands);
//     with eye-dome lighting also each pixel's log2 view depth.
//  4. `dl_points_edl_band` (eye-dome lighting only): row band b's output rows shaded from the
//     log depths of phase 3 (reads neighbour bands').

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Points a chunk of phase 1 (its entries are sorted on the stack: 16 bytes a point).
#define DL_POINTS_CHUNK 2048
/// At most this many row bands.
#define DL_POINTS_MAX_BANDS 64

typedef struct dl_points_job {
    /// DL_POINT_SOURCE_DEPTH (depth + color) or DL_POINT_SOURCE_BUFFER (points).
    uint32_t source;
    /// Depth frame: meters (0/NaN/±Inf/negative invalid), stride in floats.
    const float *depth;
    int64_t depth_stride;
    int32_t depth_width, depth_height;
    /// Its color, rgba8 (or bgra8 with `color_bgra` 1), any size, stride in bytes.
    const uint8_t *color;
    int64_t color_stride;
    int32_t color_width, color_height, color_bgra;
    /// Depth intrinsics at the depth's size.
    float fx, fy, cx, cy;
    /// Point buffer: 4 floats a point (x, y, z, rgba8 bits r | g<<8 | b<<16 | a<<24).
    const float *points;
    /// Source points (depth frames: width·height).
    int64_t count;
    /// Every `stride`-th point of a point buffer (1…16; depth frames draw every point).
    int32_t stride;
    /// World → clip space, column-major (GLSL mat4).
    float m[16];
    /// Output size; `out` rgba8 words, stride in words.
    int32_t width, height;
    uint32_t *out;
    int64_t out_stride;
    /// DL_COLOR_BY_*, DL_COLORMAP_*, color-by range in meters.
    uint32_t color_by, colormap;
    float range_lo, range_hi;
    /// 1: land on the nearest pixel ⌊f + ½⌋ (even point sizes).
    int32_t nearest_pixel;
    /// The resolve window [−back, reach] on both axes.
    int32_t back, reach;
    /// rgba8 of empty pixels.
    uint32_t background;
    /// Eye-dome lighting (DepthKit's `EyeDomeLighting`): 1 on. Neighbours at (±r, 0), (0, ±r),
    /// (±d, ±d); ndc.z = a + b / w; shade = exp(−Σ max(0, L(p) − L(q)) · factor), L = log2 w.
    int32_t edl, edl_r, edl_d;
    float edl_a, edl_b, edl_factor;
    /// Adaptive point size (adapt_max > 0): each point's size ⌈adapt_scale·z / w⌉ (depth frames) or
    /// ⌈adapt_scale / w⌉ (point buffers), w its view depth, clamped to 1…adapt_max, kept in its
    /// color's alpha byte; the resolve's window is adapt_max's and a neighbour counts where its
    /// own size's square reaches the pixel. Output alpha is 255.
    float adapt_scale;
    int32_t adapt_max;
    /// Phases' split: row bands (1…DL_POINTS_MAX_BANDS) and point chunks.
    int32_t bands, chunks;
    /// Points drawn: ⌈count / stride⌉ (depth frames: count).
    int64_t drawn;
    /// Scratch of `dl_points_scratch_bytes` (64-byte aligned); laid out by `dl_points_prepare`.
    void *scratch;
    // Set by dl_points_prepare:
    uint64_t *keys;          // width·height values; all ones: empty
    uint32_t *entry_pixel;   // chunks·DL_POINTS_CHUNK
    uint64_t *entry_value;
    int32_t *offsets;        // chunks·(bands + 1): absolute entry index where each band starts
    uint8_t *row_band;       // height: the band of each output row
    float *log_depth;        // width·height: L of each resolved pixel, +Inf where background (EDL)
} dl_points_job;

/// Bytes of scratch for this output size, point count and band count.
size_t dl_points_scratch_bytes(int32_t width, int32_t height, int64_t drawn, int32_t bands);
/// Fills `chunks`, `drawn`, and lays out the scratch (serial, height steps). Call after setting
/// the rest; `bands` must already be set.
void dl_points_prepare(dl_points_job *job);
/// Phase 1, chunk `chunk` of `chunks` (ctx: dl_points_job).
void dl_points_project_chunk(void *ctx, int32_t chunk);
/// Phase 2, band `band` of `bands`.
void dl_points_apply_band(void *ctx, int32_t band);
/// Phase 3, band `band` of `bands`.
void dl_points_resolve_band(void *ctx, int32_t band);
/// Phase 4 (EDL on only; after every band's phase 3): band `band`'s output rows shaded.
void dl_points_edl_band(void *ctx, int32_t band);
/// All phases, serially on the calling thread (tests).
void dl_points_run_serial(dl_points_job *job);

#ifdef __cplusplus
}
#endif
#endif
