// Depth aligned to color: librealsense's `align` to color (see dl_align.h for the method).
// Phase 1's row loop is compiled for baseline x86-64, AVX2 and AVX-512 and picked by
// `dl_kernels_path()` like kernels.c's loops; every path computes the same floats in the same
// order, unfused, as librealsense's x86-64 `image_transform` (deprojection tables
// (x ∓ 0.5 − c)/f, z·table, r0·x + (r1·y + (r2·z + t)), x/z·f + c, + 0.5, truncation).
#include "dl_kernels.h"
#include "dl_align.h"
#include <string.h>
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

// a·b + c is never fused: librealsense's SSE code rounds every product and sum, and so does
// the GPU port (`precise`).
#pragma STDC FP_CONTRACT OFF

#if defined(__x86_64__) || defined(__i386__)
#define DL_AVX2 __attribute__((target("avx2")))
#define DL_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq"), min_vector_width(512)))
#else
#define DL_AVX2
#define DL_AVX512
#endif
#define INLINE static inline __attribute__((always_inline))

/// d > 0 && d < ∞ (false for NaN): depth that is valid (as kernels.c's valid_depth).
INLINE int valid_depth(float d) {
    uint32_t bits;
    memcpy(&bits, &d, 4);
    return (int32_t)(bits + 0x7FFFFFFFu) < (int32_t)0xFF7FFFFFu;
}

static size_t round64(size_t n) { return (n + 63) & ~(size_t)63; }

size_t dl_align_scratch_bytes(int32_t w, int32_t h) {
    size_t n = (size_t)w * (size_t)h;
    return 2 * round64((size_t)w * 4) + 2 * round64((size_t)h * 4) + 4 * round64(n * 2) + round64((size_t)h * 8);
}

void dl_align_prepare(dl_align_job *job) {
    int32_t w = job->depth_width, h = job->depth_height;
    size_t n = (size_t)w * (size_t)h;
    uint8_t *p = (uint8_t *)job->scratch;
    job->xs0 = (float *)p; p += round64((size_t)w * 4);
    job->xs1 = (float *)p; p += round64((size_t)w * 4);
    job->ys0 = (float *)p; p += round64((size_t)h * 4);
    job->ys1 = (float *)p; p += round64((size_t)h * 4);
    job->rx0 = (int16_t *)p; p += round64(n * 2);
    job->ry0 = (int16_t *)p; p += round64(n * 2);
    job->rx1 = (int16_t *)p; p += round64(n * 2);
    job->ry1 = (int16_t *)p; p += round64(n * 2);
    job->span = (int32_t *)p;
    // rs2_deproject_pixel_to_point's (pixel − ppx) / fx for the corners depth_x ∓ 0.5f.
    for (int32_t x = 0; x < w; x++) {
        job->xs0[x] = ((float)x - 0.5f - job->dcx) / job->dfx;
        job->xs1[x] = ((float)x + 0.5f - job->dcx) / job->dfx;
    }
    for (int32_t y = 0; y < h; y++) {
        job->ys0[y] = ((float)y - 0.5f - job->dcy) / job->dfy;
        job->ys1[y] = ((float)y + 0.5f - job->dcy) / job->dfy;
    }
}

/// One depth row: each pixel's rectangle of color pixels, clipped to the image (empty:
/// x0 = 1 > x1 = 0 and y0 = 32767 > y1 = −32768), and the row's span [min y0, max y1].
INLINE void rects_row_body(const dl_align_job *j, const float *d, float ys0, float ys1,
                           int16_t *rx0, int16_t *ry0, int16_t *rx1, int16_t *ry1, int32_t *span) {
    const int32_t n = j->depth_width;
    const float *xs0 = j->xs0, *xs1 = j->xs1;
    const float r0 = j->r[0], r1 = j->r[1], r2 = j->r[2], r3 = j->r[3], r4 = j->r[4], r5 = j->r[5];
    const float r6 = j->r[6], r7 = j->r[7], r8 = j->r[8], t0 = j->t[0], t1 = j->t[1], t2 = j->t[2];
    const float fx = j->cfx, fy = j->cfy, cx = j->ccx, cy = j->ccy;
    const float W = (float)j->color_width, H = (float)j->color_height;
    const int32_t wmax = j->color_width - 1, hmax = j->color_height - 1;
    const int both = j->both_corners;
    int32_t lo = 32767, hi = -32768;
    for (int32_t i = 0; i < n; i++) {
        const float z = d[i];
        // Top-left corner: deproject (z·(x − c)/f), transform (librealsense's order:
        // r0·x + (r1·y + (r2·z + t)), R row-major here), project (x/z·f + c), + 0.5.
        float px = z * xs0[i], py = z * ys0;
        float qx = r0 * px + (r1 * py + (r2 * z + t0));
        float qy = r3 * px + (r4 * py + (r5 * z + t1));
        float qz = r6 * px + (r7 * py + (r8 * z + t2));
        float u0 = qx / qz * fx + cx + 0.5f;
        float v0 = qy / qz * fy + cy + 0.5f;
        // Bottom-right corner.
        px = z * xs1[i]; py = z * ys1;
        qx = r0 * px + (r1 * py + (r2 * z + t0));
        qy = r3 * px + (r4 * py + (r5 * z + t1));
        qz = r6 * px + (r7 * py + (r8 * z + t2));
        float u1 = qx / qz * fx + cx + 0.5f;
        float v1 = qy / qz * fy + cy + 0.5f;
        u1 = both ? u1 : u0;
        v1 = both ? v1 : v0;
        // NaN anywhere: nothing (u == u is false for NaN).
        const int ok = valid_depth(z) & (u0 == u0) & (v0 == v0) & (u1 == u1) & (v1 == v1);
        // Clamp to [−1, W] before converting (an out-of-range conversion is undefined; (int)
        // truncates toward zero, so −1 < u < 0 gives 0 as in librealsense), then clip to the image.
        u0 = u0 > -1.0f ? (u0 < W ? u0 : W) : -1.0f;
        v0 = v0 > -1.0f ? (v0 < H ? v0 : H) : -1.0f;
        u1 = u1 > -1.0f ? (u1 < W ? u1 : W) : -1.0f;
        v1 = v1 > -1.0f ? (v1 < H ? v1 : H) : -1.0f;
        u0 = ok ? u0 : 1.0f;
        u1 = ok ? u1 : 0.0f;
        v0 = ok ? v0 : 32767.0f;
        v1 = ok ? v1 : -32768.0f;
        int32_t X0 = (int32_t)u0, Y0 = (int32_t)v0, X1 = (int32_t)u1, Y1 = (int32_t)v1;
        X0 = X0 > 0 ? X0 : 0;
        X1 = X1 < wmax ? X1 : wmax;
        Y1 = Y1 < hmax ? Y1 : hmax;
        Y0 = ok ? (Y0 > 0 ? Y0 : 0) : Y0;
        rx0[i] = (int16_t)X0; ry0[i] = (int16_t)Y0; rx1[i] = (int16_t)X1; ry1[i] = (int16_t)Y1;
        lo = Y0 < lo ? Y0 : lo;
        hi = Y1 > hi ? Y1 : hi;
    }
    span[0] = lo;
    span[1] = hi;
}

#define RECTS_PARAMS (const dl_align_job *j, const float *d, float ys0, float ys1, int16_t *rx0, int16_t *ry0, int16_t *rx1, int16_t *ry1, int32_t *span)
#define RECTS_ARGS (j, d, ys0, ys1, rx0, ry0, rx1, ry1, span)
static void rects_row_base RECTS_PARAMS { rects_row_body RECTS_ARGS; }
DL_AVX2 static void rects_row_avx2 RECTS_PARAMS { rects_row_body RECTS_ARGS; }
DL_AVX512 static void rects_row_avx512 RECTS_PARAMS { rects_row_body RECTS_ARGS; }

static void rects_rows(const dl_align_job *j, int32_t y0, int32_t y1) {
    const int path = dl_kernels_path();
    for (int32_t y = y0; y < y1; y++) {
        const float *d = j->depth + (int64_t)y * j->depth_stride;
        size_t o = (size_t)y * (size_t)j->depth_width;
        int16_t *rx0 = j->rx0 + o, *ry0 = j->ry0 + o, *rx1 = j->rx1 + o, *ry1 = j->ry1 + o;
        int32_t *span = j->span + 2 * y;
        float ys0 = j->ys0[y], ys1 = j->ys1[y];
        switch (path) {
        case DL_PATH_AVX512: rects_row_avx512 RECTS_ARGS; break;
        case DL_PATH_AVX2: rects_row_avx2 RECTS_ARGS; break;
        default: rects_row_base RECTS_ARGS; break;
        }
    }
}

void dl_align_rects_band(void *ctx, int32_t band) {
    const dl_align_job *j = (const dl_align_job *)ctx;
    int64_t h = j->depth_height, bands = j->rect_bands > 0 ? j->rect_bands : 1;
    rects_rows(j, (int32_t)(h * band / bands), (int32_t)(h * (band + 1) / bands));
}

/// z into color pixels (x0…x1, y0…y1) where they hold 0 or a larger depth, one at a time: the
/// rectangles the blocks below do not take (wide ones, at the right edge). Kept out of line so
/// the hot loops keep their registers.
__attribute__((noinline, cold))
static void fill_rect_scalar(float *out, int64_t stride, int32_t x0, int32_t x1, int32_t y0, int32_t y1, float z) {
    for (int32_t y = y0; y <= y1; y++) {
        float *row = out + (int64_t)y * stride;
        for (int32_t u = x0; u <= x1; u++) {
            const float c = row[u];
            row[u] = (c == 0.0f || z < c) ? z : c;
        }
    }
}

/// z into color pixels (x0…x1, y0…y1) where they hold 0 or a larger depth.
INLINE void fill_rect(float *out, int64_t stride, int32_t cw, int32_t x0, int32_t x1, int32_t y0, int32_t y1, float z) {
#if defined(__SSE2__)
    // A depth pixel covers 3–4 columns and rows when color has about twice depth's resolution,
    // and a loop over the columns mispredicts its exit at nearly every pixel. Instead: the two
    // blocks of four columns from x0 rounded down to a multiple of four, with lane masks. The
    // next pixel's rectangle starts where this one ends, in the same blocks: loading exactly what
    // was just stored lets the store forward (a half-overlapping load would wait for it). Lanes
    // outside x0…x1 are written back unchanged (this band's rows only).
    const int32_t b = x0 & ~3;
    if (x1 >= x0 && x1 - x0 <= 4 && b + 8 <= cw) {
        const __m128i lane = _mm_set_epi32(3, 2, 1, 0);
        const __m128i lo = _mm_set1_epi32(x0 - 1 - b), hi = _mm_set1_epi32(x1 + 1 - b);
        const __m128i four = _mm_set1_epi32(4);
        const __m128i l1 = _mm_add_epi32(lane, four);
        const __m128 m0 = _mm_castsi128_ps(_mm_and_si128(_mm_cmpgt_epi32(lane, lo), _mm_cmplt_epi32(lane, hi)));
        const __m128 m1 = _mm_castsi128_ps(_mm_and_si128(_mm_cmpgt_epi32(l1, lo), _mm_cmplt_epi32(l1, hi)));
        const __m128 zv = _mm_set1_ps(z), zero = _mm_setzero_ps();
        for (int32_t y = y0; y <= y1; y++) {
            float *p = out + (int64_t)y * stride + b;
            const __m128 c0 = _mm_loadu_ps(p), c1 = _mm_loadu_ps(p + 4);
            const __m128 t0 = _mm_and_ps(m0, _mm_or_ps(_mm_cmpeq_ps(c0, zero), _mm_cmplt_ps(zv, c0)));
            const __m128 t1 = _mm_and_ps(m1, _mm_or_ps(_mm_cmpeq_ps(c1, zero), _mm_cmplt_ps(zv, c1)));
            _mm_storeu_ps(p, _mm_or_ps(_mm_and_ps(t0, zv), _mm_andnot_ps(t0, c0)));
            _mm_storeu_ps(p + 4, _mm_or_ps(_mm_and_ps(t1, zv), _mm_andnot_ps(t1, c1)));
        }
        return;
    }
#endif
    (void)cw;
    fill_rect_scalar(out, stride, x0, x1, y0, y1, z);
}

#if defined(__x86_64__) || defined(__i386__)
/// 12 zeros then 8 ones: the 4 lanes loaded from `lane_window + 12 − k` are (lane ≥ k) for k in −4…8.
static const int32_t lane_window[20] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, -1, -1, -1, -1, -1, -1, -1, -1};

/// fill_rect with SSE4.1's unsigned minimum: positive floats order like their bits, and
/// min(c − 1, z − 1) + 1 on the bits (wrapping) is z where c is 0 (empty), else min(c, z); a lane
/// outside the rectangle takes min(c − 1, 0xFFFFFFFF) + 1 = c. Three operations a block, where
/// the float compares and selects take seven.
DL_AVX2 static inline __attribute__((always_inline))
void fill_rect_avx2(float *out, int64_t stride, int32_t cw, int32_t x0, int32_t x1, int32_t y0, int32_t y1, float z) {
    const int32_t b = x0 & ~3;
    if (x1 >= x0 && x1 - x0 <= 4 && b + 8 <= cw) {
        // Lanes x0 − b … x1 − b of the eight: lane ≥ first and not lane ≥ first + count.
        const int32_t first = x0 - b, count = x1 - x0 + 1;
        const __m128i ones0 = _mm_loadu_si128((const __m128i *)(lane_window + 12 - first));
        const __m128i ones1 = _mm_loadu_si128((const __m128i *)(lane_window + 16 - first));
        const __m128i end0 = _mm_loadu_si128((const __m128i *)(lane_window + 12 - first - count));
        const __m128i end1 = _mm_loadu_si128((const __m128i *)(lane_window + 16 - first - count));
        const __m128i m0 = _mm_andnot_si128(end0, ones0), m1 = _mm_andnot_si128(end1, ones1);
        uint32_t zb;
        memcpy(&zb, &z, 4);
        const __m128i all = _mm_set1_epi32(-1), zm = _mm_set1_epi32((int32_t)(zb - 1));
        const __m128i z0 = _mm_blendv_epi8(all, zm, m0), z1 = _mm_blendv_epi8(all, zm, m1);
        for (int32_t y = y0; y <= y1; y++) {
            __m128i *p = (__m128i *)(out + (int64_t)y * stride + b);
            const __m128i c0 = _mm_loadu_si128(p), c1 = _mm_loadu_si128(p + 1);
            _mm_storeu_si128(p, _mm_sub_epi32(_mm_min_epu32(_mm_add_epi32(c0, all), z0), all));
            _mm_storeu_si128(p + 1, _mm_sub_epi32(_mm_min_epu32(_mm_add_epi32(c1, all), z1), all));
        }
        return;
    }
    fill_rect_scalar(out, stride, x0, x1, y0, y1, z);
}
#endif

/// One depth row's rectangles that meet color rows [c0, c1), clipped to them. A function of its
/// own (not inlined into the loop over rows), so that its loop keeps everything in registers.
#define SCATTER_ROW_BODY(FILL)                                                                      \
    for (int32_t x = 0; x < dw; x++) {                                                               \
        int32_t y0 = ry0[x], y1 = ry1[x];                                                            \
        if (y1 < c0 || y0 >= c1) continue;                                                           \
        y0 = y0 < c0 ? c0 : y0;                                                                      \
        y1 = y1 >= c1 ? c1 - 1 : y1;                                                                 \
        FILL(out, stride, cw, rx0[x], rx1[x], y0, y1, d[x]);                                         \
    }
#define SCATTER_ROW_PARAMS (float *out, int64_t stride, int32_t cw, int32_t c0, int32_t c1, const int16_t *rx0, \
                            const int16_t *ry0, const int16_t *rx1, const int16_t *ry1, const float *d, int32_t dw)
__attribute__((noinline)) static void scatter_row_base SCATTER_ROW_PARAMS { SCATTER_ROW_BODY(fill_rect) }
#if defined(__x86_64__) || defined(__i386__)
__attribute__((noinline)) DL_AVX2 static void scatter_row_avx2 SCATTER_ROW_PARAMS { SCATTER_ROW_BODY(fill_rect_avx2) }
#endif

/// Color rows [c0, c1): cleared, then every rectangle that meets them, clipped to them.
static void scatter_rows(const dl_align_job *j, int32_t c0, int32_t c1) {
    if (c0 >= c1) return;
    const int32_t cw = j->color_width, dw = j->depth_width, dh = j->depth_height;
    const int64_t stride = j->out_stride;
    for (int32_t y = c0; y < c1; y++) memset(j->out + (int64_t)y * stride, 0, (size_t)cw * 4);
#if defined(__x86_64__) || defined(__i386__)
    const int wide = dl_kernels_path() >= DL_PATH_AVX2;
#endif
    for (int32_t dy = 0; dy < dh; dy++) {
        if (j->span[2 * dy + 1] < c0 || j->span[2 * dy] >= c1) continue;
        const size_t o = (size_t)dy * (size_t)dw;
        const float *d = j->depth + (int64_t)dy * j->depth_stride;
#if defined(__x86_64__) || defined(__i386__)
        if (wide) {
            scatter_row_avx2(j->out, stride, cw, c0, c1, j->rx0 + o, j->ry0 + o, j->rx1 + o, j->ry1 + o, d, dw);
            continue;
        }
#endif
        scatter_row_base(j->out, stride, cw, c0, c1, j->rx0 + o, j->ry0 + o, j->rx1 + o, j->ry1 + o, d, dw);
    }
}

void dl_align_scatter_band(void *ctx, int32_t band) {
    const dl_align_job *j = (const dl_align_job *)ctx;
    int64_t h = j->color_height, bands = j->scatter_bands > 0 ? j->scatter_bands : 1;
    scatter_rows(j, (int32_t)(h * band / bands), (int32_t)(h * (band + 1) / bands));
}

void dl_align_run_serial(dl_align_job *job) {
    dl_align_prepare(job);
    rects_rows(job, 0, job->depth_height);
    scatter_rows(job, 0, job->color_height);
}
