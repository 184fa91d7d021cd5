#ifndef DL_KERNELS_H
#define DL_KERNELS_H
// The CPU kernels' inner loops, in C because Swift cannot compile one function for several
// instruction sets and pick one at run time. Each loop is compiled three times from one body:
// for baseline x86-64 (SSE2), with `target("avx2")` and with AVX-512 (F, BW, VL, DQ; 512-bit
// vectors); `dl_kernels_set_path` picks which one runs. All give the same bytes: the same float
// operations in the same order, and nothing contracted into an FMA (`FP_CONTRACT OFF`).
// Every function works on `n` contiguous samples (one row, or a band of packed rows).

#include <stddef.h>
#include <stdint.h>
#include "../../../Shaders/dl_codes.h"  // DL_COLORMAP_*: the code table Swift and GLSL use
#include "../../../Shaders/dl_colormap.h"  // the colormaps' formulas, shared with GLSL (and Swift's Colormap)

#ifdef __cplusplus
extern "C" {
#endif

/// The compiled copies of the loops (the order of `CPUVectorPath`).
enum { DL_PATH_BASELINE = 0, DL_PATH_AVX2 = 1, DL_PATH_AVX512 = 2 };
/// 1 when the CPU and OS can run that path's loops (`__builtin_cpu_supports`).
int dl_kernels_path_supported(int path);
/// The widest path the CPU can run.
int dl_kernels_best_path(void);
/// Which loops run from now on; a path the CPU cannot run gives baseline. Returns the new setting.
int dl_kernels_set_path(int path);
/// The path that runs: on first use the widest the CPU has, or a narrower one that
/// `DEPTHLENS_CPU_PATH=baseline|avx2|avx512` names.
int dl_kernels_path(void);

/// Color matrix: out = unorm8(((((bias + m0·p0) + m1·p1) + m2·p2) + m3·p3)) per channel, p = byte·(1/255).
/// `m` is 20 floats: bias (4), then columns 0–3 (4 each), all in memory channel order.
void dl_k_color_matrix(const uint8_t *src, uint8_t *dst, size_t n, const float *m);

/// Valid depth (finite, > 0) statistics: adds to `*count`, lowers `*lo`, raises `*hi`.
void dl_k_depth_range(const float *src, size_t n, int64_t *count, float *lo, float *hi);

/// Grayscale: v = valid ? ((d − off)·scale)/divisor : 0, out = (g, g, g, 255), g = unorm8(v).
void dl_k_grayscale(const float *src, uint32_t *dst, size_t n, float off, float scale, float divisor);

/// Equalized colormaps, pass 1: bins[i] = valid ? floor(clamp((d − lo)·perMeter, 0, last)) : invalid.
void dl_k_depth_bins(const float *src, uint16_t *bins, size_t n, float lo, float perMeter, float last, uint16_t invalid);
/// Pass 2: counts each bin, even samples in `hist0`, odd ones in `hist1` (sum them).
void dl_k_histogram16(const uint16_t *bins, size_t n, uint32_t *hist0, uint32_t *hist1);
/// Pass 3: out = lut[bin], one lookup a pixel (the LUT's `invalid` entry is black).
void dl_k_lut16(const uint16_t *bins, uint32_t *dst, size_t n, const uint32_t *lut);

/// For ranges of more than 65,535 bins, no plane: for valid d, hist[bin(d)] += 1, bin(d) =
/// floor(clamp((d − lo)·perMeter, 0, last)); then out = valid ? lut[bin(d)] : black.
void dl_k_histogram(const float *src, size_t n, uint32_t *hist, float lo, float perMeter, float last);
void dl_k_lut_lookup(const float *src, uint32_t *dst, size_t n, const uint32_t *lut,
                     float lo, float perMeter, float last, uint32_t black);

/// Fixed range (`map`: DL_COLORMAP_* of dl_codes.h, Swift's `Colormap.code`): t = 1 − clamp01((d − lo)/span), out = map(t) as RGBA (unorm8), invalid → black.
/// Needs 0 < span < ∞ (`DepthRange.validatedBinCount` checks it).
void dl_k_colormap_fixed(const float *src, uint32_t *dst, size_t n, float lo, float span, int map, uint32_t black);

/// Mix of same-size bytes: out = floor(a·g + b·f + 0.5).
void dl_k_mix(const uint8_t *a, const uint8_t *b, uint8_t *dst, size_t n, float f, float g);

/// Mix with b scaled bilinearly to a's size, rows y0..<y1: per output row y, rows r0[y] and
/// r1[y] of b are interpolated across (columns x0, x1, weights fx; h = p·(1 − fx) + q·fx), then
/// bv = h0·(1 − fy[y]) + h1·fy[y] and out = floor(a·g + bv·f + 0.5). `scratch` holds 8·w floats
/// (two interpolated rows, reused while consecutive output rows share them).
void dl_k_mix_scaled(const uint8_t *a, size_t aStride, const uint8_t *b, size_t bStride,
                     uint8_t *dst, size_t dstStride, size_t w, int32_t y0, int32_t y1,
                     const int32_t *x0, const int32_t *x1, const float *fx,
                     const int32_t *r0, const int32_t *r1, const float *fy,
                     float *scratch, float f, float g);

/// Scale of rgba8 pixels (b) to another size, rows y0..<y1 of the output: as dl_k_mix_scaled's
/// b (rows r0[y] and r1[y] interpolated across with x0, x1, fx, then blended by fy[y]), out =
/// floor(bv + 0.5). With `swap`, the first and third channels are exchanged (RGBA ↔ BGRA).
/// `scratch` holds 8·w floats.
void dl_k_scale(const uint8_t *b, size_t bStride, uint8_t *dst, size_t dstStride, size_t w,
                int32_t y0, int32_t y1, const int32_t *x0, const int32_t *x1, const float *fx,
                const int32_t *r0, const int32_t *r1, const float *fy, float *scratch, int swap);
/// n pixel words copied, with their first and third bytes exchanged when `swap` is set.
void dl_k_copy_pixels(const uint32_t *src, uint32_t *dst, size_t n, int swap);

/// Depth mask (p = clamp(((1/d − invMax)·numScale)/div + pBias), m = clamp(0.5 + s·(p − f)) for
/// high-pass, clamp(0.5 + s·(hb − |p − f|)) for band-pass, invalid → 0). Writes floats to
/// `fdst`, or unorm8 bytes to `bdst` when that is not NULL.
void dl_k_depth_mask(const float *src, size_t n, int bandpass, float invMax, float numScale, float div,
                     float pBias, float focus, float slope, float halfWidth, float *fdst, uint8_t *bdst);

/// One band of a parallel job: `band` in 0..<bands.
typedef void (*dl_band_fn)(void *ctx, int32_t band);
/// Runs fn(ctx, 0..<bands) on a pool of cores − 1 worker threads plus the caller, returning when
/// all are done; allocates nothing after the pool's first use. A call made while another runs
/// (another thread, or from inside a band) runs its bands on the calling thread instead.
void dl_parallel_run(int32_t bands, dl_band_fn fn, void *ctx);
/// The pool's worker threads (starting it): 0 on one core.
int dl_parallel_workers(void);

#ifdef __cplusplus
}
#endif
#endif
