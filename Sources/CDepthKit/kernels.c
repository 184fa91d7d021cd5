// CPU kernel loops, each body compiled for baseline x86-64, for AVX2 and for AVX-512 (see
// dl_kernels.h). The bodies are plain loops that clang vectorizes; selects mirror Swift's `min`/`max`
// (`y < x ? y : x`, `y >= x ? y : x`) so NaN and ±0 behave as in the Swift reference.
#include "dl_kernels.h"
#include <stdlib.h>
#include <string.h>
#include <math.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

// No a·b + c is ever fused, on any path (AVX-512 implies FMA): every path rounds the same
// products and sums, so every path gives the same bytes.
#pragma STDC FP_CONTRACT OFF

#if defined(__x86_64__) || defined(__i386__)
#define DL_X86 1
#define DL_AVX2 __attribute__((target("avx2")))
// 512-bit vectors (clang otherwise prefers 256-bit ones on AVX-512 targets); F for the
// arithmetic, BW for byte and word lanes, VL and DQ for the conversions clang picks.
#define DL_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq"), min_vector_width(512)))
#else
#define DL_AVX2
#define DL_AVX512
#endif

static int active_path = -1;

int dl_kernels_path_supported(int path) {
    switch (path) {
    case DL_PATH_BASELINE: return 1;
#if DL_X86
    case DL_PATH_AVX2:
        __builtin_cpu_init();
        return __builtin_cpu_supports("avx2") ? 1 : 0;
    case DL_PATH_AVX512:
        // compiler-rt reports AVX-512 features only when the OS saves the ZMM registers too.
        __builtin_cpu_init();
        return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
               __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") ? 1 : 0;
#endif
    default: return 0;
    }
}

int dl_kernels_best_path(void) {
    for (int p = DL_PATH_AVX512; p > DL_PATH_BASELINE; p--)
        if (dl_kernels_path_supported(p)) return p;
    return DL_PATH_BASELINE;
}

int dl_kernels_set_path(int path) {
    active_path = dl_kernels_path_supported(path) ? path : DL_PATH_BASELINE;
    return active_path;
}

int dl_kernels_path(void) {
    // First use: the widest path the CPU has, unless DEPTHLENS_CPU_PATH names a narrower one.
    if (active_path < 0) {
        const char *env = getenv("DEPTHLENS_CPU_PATH");
        int best = dl_kernels_best_path();
        int want = best;
        if (env && strcmp(env, "baseline") == 0) want = DL_PATH_BASELINE;
        else if (env && strcmp(env, "avx2") == 0) want = DL_PATH_AVX2;
        else if (env && strcmp(env, "avx512") == 0) want = DL_PATH_AVX512;
        dl_kernels_set_path(want <= best ? want : best);
    }
    return active_path;
}

#define INLINE static inline __attribute__((always_inline))

INLINE float smax(float x, float y) { return y >= x ? y : x; }
INLINE float smin(float x, float y) { return y < x ? y : x; }
INLINE float clamp01(float v) { return smin(smax(v, 0.0f), 1.0f); }
/// unorm8 of v: clamp to [0, 1], ·255, + 0.5, floor (truncation: the value is ≥ 0.5).
INLINE uint32_t unorm8(float v) { return (uint32_t)(int32_t)(clamp01(v) * 255.0f + 0.5f); }
/// d > 0 && d < ∞ (false for NaN), on the bits: positive finite floats are exactly the patterns
/// 1…0x7F7FFFFF, so bits − 1 < 0x7F7FFFFF unsigned. Flipping the sign bit of both sides makes it
/// a signed compare, which SSE2 and AVX2 have (they have no unsigned one): (bits − 1) ^ 2³¹ is
/// bits + 0x7FFFFFFF, and 0x7F7FFFFF ^ 2³¹ is 0xFF7FFFFF. Two vector instructions, not three.
INLINE int valid_depth(float d) {
    uint32_t bits;
    memcpy(&bits, &d, 4);
    return (int32_t)(bits + 0x7FFFFFFFu) < (int32_t)0xFF7FFFFFu;
}
/// clamp01 for values that are never NaN (or where NaN may become 0): `v > 0 ? v : 0` and
/// `v < 1 ? v : 1` are exactly x86's maxps/minps, one instruction each; smax/smin's NaN order
/// needs a compare and a mask. Equal to clamp01 for every non-NaN v, ±0 and ±∞ included.
INLINE float clamp01_fast(float v) {
    v = v > 0.0f ? v : 0.0f;
    return v < 1.0f ? v : 1.0f;
}
/// unorm8 of v already in [0, 1] (the clamp inside unorm8 would change nothing).
INLINE uint32_t unorm8_unit(float v) { return (uint32_t)(int32_t)(v * 255.0f + 0.5f); }
INLINE uint32_t load32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return v; }
INLINE void store32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }

/// Declares `name(params)` dispatching to `name_base`, `name_avx2` and `name_avx512`, whose
/// bodies are `base` and `wide` compiled for their instruction sets.
#define DL_DISPATCH_CALLS(name, params, args, base, wide)                \
    static void name##_base params { base; }                             \
    DL_AVX2 static void name##_avx2 params { wide; }                      \
    DL_AVX512 static void name##_avx512 params { wide; }                  \
    void name params {                                                    \
        switch (dl_kernels_path()) {                                      \
        case DL_PATH_AVX512: name##_avx512 args; break;                   \
        case DL_PATH_AVX2: name##_avx2 args; break;                       \
        default: name##_base args; break;                                 \
        }                                                                 \
    }

/// Each path runs `name_body(args)`, compiled for its instruction set.
#define DL_DISPATCH(name, params, args) DL_DISPATCH_CALLS(name, params, args, name##_body args, name##_body args)

#define DL_UNPAREN(...) __VA_ARGS__
/// As DL_DISPATCH, for bodies whose first parameter `wide` says whether 256-bit helpers (compiled
/// for AVX2 on their own, called rather than inlined) may run: 0 on the baseline path.
#define DL_DISPATCH_WIDE(name, params, args) \
    DL_DISPATCH_CALLS(name, params, args, name##_body(0, DL_UNPAREN args), name##_body(1, DL_UNPAREN args))

// MARK: Color matrix

INLINE void dl_k_color_matrix_body(const uint8_t *src, uint8_t *dst, size_t n, const float *m) {
    const float inv = 1.0f / 255.0f;
    const float b0 = m[0], b1 = m[1], b2 = m[2], b3 = m[3];
    const float m00 = m[4], m10 = m[5], m20 = m[6], m30 = m[7];
    const float m01 = m[8], m11 = m[9], m21 = m[10], m31 = m[11];
    const float m02 = m[12], m12 = m[13], m22 = m[14], m32 = m[15];
    const float m03 = m[16], m13 = m[17], m23 = m[18], m33 = m[19];
    for (size_t i = 0; i < n; i++) {
        uint32_t p = load32(src + 4 * i);
        float p0 = (float)(int32_t)(p & 255) * inv, p1 = (float)(int32_t)((p >> 8) & 255) * inv;
        float p2 = (float)(int32_t)((p >> 16) & 255) * inv, p3 = (float)(int32_t)(p >> 24) * inv;
        uint32_t o0 = unorm8(b0 + m00 * p0 + m01 * p1 + m02 * p2 + m03 * p3);
        uint32_t o1 = unorm8(b1 + m10 * p0 + m11 * p1 + m12 * p2 + m13 * p3);
        uint32_t o2 = unorm8(b2 + m20 * p0 + m21 * p1 + m22 * p2 + m23 * p3);
        uint32_t o3 = unorm8(b3 + m30 * p0 + m31 * p1 + m32 * p2 + m33 * p3);
        store32(dst + 4 * i, o0 | o1 << 8 | o2 << 16 | o3 << 24);
    }
}
DL_DISPATCH(dl_k_color_matrix, (const uint8_t *src, uint8_t *dst, size_t n, const float *m), (src, dst, n, m))

// MARK: Depth statistics

INLINE void dl_k_depth_range_body(const float *src, size_t n, int64_t *count, float *lo, float *hi) {
    // Valid depths are positive finite floats, whose bit patterns order like the values: integer
    // min and max (which vectorize, unlike float min/max reductions) give the same result.
    int32_t c = 0;
    uint32_t l = 0x7F800000u, h = 0;
    for (size_t i = 0; i < n; i++) {
        float d = src[i];
        uint32_t bits;
        memcpy(&bits, &d, 4);
        int v = valid_depth(d);
        c += v;
        uint32_t bl = v ? bits : 0x7F800000u, bh = v ? bits : 0;
        l = bl < l ? bl : l;
        h = bh > h ? bh : h;
    }
    *count += c;
    if (c > 0) {
        float fl, fh;
        memcpy(&fl, &l, 4);
        memcpy(&fh, &h, 4);
        *lo = fl < *lo ? fl : *lo;
        *hi = fh > *hi ? fh : *hi;
    }
}
DL_DISPATCH(dl_k_depth_range, (const float *src, size_t n, int64_t *count, float *lo, float *hi),
            (src, n, count, lo, hi))

// MARK: Grayscale

INLINE void dl_k_grayscale_body(const float *src, uint32_t *dst, size_t n, float off, float scale, float divisor) {
    // The same bytes as unorm8(valid ? ((d − off)·scale)/divisor : 0) for every input: the value
    // is clamped with maxps/minps (a NaN quotient, possible only from ∞·0, gives 0, which is what
    // unorm8's vector conversion made of it too: black), and g·0x010101 spreads g over R, G, B
    // in one multiply instead of two shifts and two ors.
    for (size_t i = 0; i < n; i++) {
        float d = src[i];
        uint32_t g = unorm8_unit(clamp01_fast(((d - off) * scale) / divisor));
        g = valid_depth(d) ? g : 0;
        dst[i] = g * 0x010101u | 0xFF000000u;
    }
}
DL_DISPATCH(dl_k_grayscale, (const float *src, uint32_t *dst, size_t n, float off, float scale, float divisor),
            (src, dst, n, off, scale, divisor))

// MARK: Equalized colormap: histogram and lookup

INLINE void dl_k_depth_bins_body(const float *src, uint16_t *bins, size_t n, float lo, float perMeter, float last,
                                 uint16_t invalid) {
    for (size_t i = 0; i < n; i++) {
        float d = src[i];
        int v = valid_depth(d);
        float dd = v ? d : lo;
        uint32_t b = (uint32_t)(int32_t)smin(smax((dd - lo) * perMeter, 0.0f), last);
        bins[i] = v ? (uint16_t)b : invalid;
    }
}
DL_DISPATCH(dl_k_depth_bins, (const float *src, uint16_t *bins, size_t n, float lo, float perMeter, float last,
                              uint16_t invalid),
            (src, bins, n, lo, perMeter, last, invalid))

void dl_k_histogram16(const uint16_t *bins, size_t n, uint32_t *hist0, uint32_t *hist1) {
    // Runs of one bin (smooth depth) count in a register; other neighbours alternate between
    // two counters (even and odd samples), so no increment waits on the one before it.
    (void)hist1;
    size_t i = 0;
    while (i < n) {
        uint16_t b = bins[i];
        size_t j = i + 1;
        while (j < n && bins[j] == b) j++;
        hist0[b] += (uint32_t)(j - i);
        i = j;
    }
}

INLINE void dl_k_lut16_body(const uint16_t *bins, uint32_t *dst, size_t n, const uint32_t *lut) {
    for (size_t i = 0; i < n; i++) dst[i] = lut[bins[i]];
}
DL_DISPATCH(dl_k_lut16, (const uint16_t *bins, uint32_t *dst, size_t n, const uint32_t *lut), (bins, dst, n, lut))

/// The bin of depth d (`lo` for invalid d, which lands in bin 0).
INLINE uint32_t depth_bin(float d, float lo, float perMeter, float last) {
    float dd = valid_depth(d) ? d : lo;
    return (uint32_t)(int32_t)smin(smax((dd - lo) * perMeter, 0.0f), last);
}

INLINE void dl_k_histogram_body(const float *src, size_t n, uint32_t *hist, float lo, float perMeter, float last) {
    for (size_t i = 0; i < n; i++) {
        float d = src[i];
        hist[depth_bin(d, lo, perMeter, last)] += (uint32_t)valid_depth(d);
    }
}
DL_DISPATCH(dl_k_histogram, (const float *src, size_t n, uint32_t *hist, float lo, float perMeter, float last),
            (src, n, hist, lo, perMeter, last))

INLINE void dl_k_lut_lookup_body(const float *src, uint32_t *dst, size_t n, const uint32_t *lut,
                                 float lo, float perMeter, float last, uint32_t black) {
    for (size_t i = 0; i < n; i++) {
        float d = src[i];
        uint32_t c = lut[depth_bin(d, lo, perMeter, last)];
        dst[i] = valid_depth(d) ? c : black;
    }
}
DL_DISPATCH(dl_k_lut_lookup, (const float *src, uint32_t *dst, size_t n, const uint32_t *lut, float lo,
                              float perMeter, float last, uint32_t black),
            (src, dst, n, lut, lo, perMeter, last, black))

// MARK: Fixed-range colormaps (Colormap.color in FilterSpec.swift, same operation order)
//
// Each map takes x already in [0, 1]: Colormap.color clamps its t first, but here t is
// 1 − clamp01(q), which is in [0, 1] exactly, so that clamp and the one inside unorm8 (of
// channels already clamped) change nothing and are left out. No value here is NaN (q is clamped
// with maxps/minps, which turn NaN into 0), so every clamp is one maxps and one minps.

INLINE uint32_t pack_unit(float r, float g, float b) {
    return unorm8_unit(r) | unorm8_unit(g) << 8 | unorm8_unit(b) << 16 | 0xFF000000u;
}

// The formulas are dl_colormap.h's (GLSL's and Swift's Colormap.color too); here each channel is
// clamped with the vectorizable clamp01_fast (x is in [0, 1], so none is NaN).
#define DL_FIXED_MAP(NAME)                                                               \
    INLINE uint32_t NAME(float x) {                                                      \
        dl_rgb c = dl_colormap_##NAME(x);                                                \
        return pack_unit(clamp01_fast(c.r), clamp01_fast(c.g), clamp01_fast(c.b));      \
    }
DL_FIXED_MAP(jet)
DL_FIXED_MAP(turbo)
DL_FIXED_MAP(viridis)
#undef DL_FIXED_MAP

/// An unknown code: dl_colormap.h's loud magenta.
INLINE uint32_t unknown_map(float x) {
    (void)x;
    dl_rgb c = dl_colormap_unknown();
    return pack_unit(c.r, c.g, c.b);
}

INLINE uint32_t gray(float x) { return unorm8_unit(x) * 0x010101u | 0xFF000000u; }

/// One loop per colormap, so each vectorizes without a switch inside. For valid d with
/// 0 < span < ∞, q = (d − lo)/span is never NaN; an invalid d's q may be anything: it is replaced.
#define FIXED_LOOP(FN)                                                  \
    for (size_t i = 0; i < n; i++) {                                    \
        float d = src[i];                                               \
        uint32_t c = FN(1.0f - clamp01_fast((d - lo) / span));          \
        dst[i] = valid_depth(d) ? c : black;                            \
    }

INLINE void dl_k_colormap_fixed_body(const float *src, uint32_t *dst, size_t n, float lo, float span, int map,
                                     uint32_t black) {
    switch (map) {
    case DL_COLORMAP_JET: FIXED_LOOP(jet) break;
    case DL_COLORMAP_TURBO: FIXED_LOOP(turbo) break;
    case DL_COLORMAP_VIRIDIS: FIXED_LOOP(viridis) break;
    case DL_COLORMAP_GRAYSCALE: FIXED_LOOP(gray) break;
    default: FIXED_LOOP(unknown_map) break;
    }
}
DL_DISPATCH(dl_k_colormap_fixed, (const float *src, uint32_t *dst, size_t n, float lo, float span, int map,
                                  uint32_t black),
            (src, dst, n, lo, span, map, black))

// MARK: Mix

INLINE void dl_k_mix_body(const uint8_t *a, const uint8_t *b, uint8_t *dst, size_t n, float f, float g) {
    for (size_t i = 0; i < n; i++) {
        float v = (float)(int32_t)a[i] * g + (float)(int32_t)b[i] * f + 0.5f;
        dst[i] = (uint8_t)(int32_t)v;
    }
}
DL_DISPATCH(dl_k_mix, (const uint8_t *a, const uint8_t *b, uint8_t *dst, size_t n, float f, float g),
            (a, b, dst, n, f, g))

/// A pixel word with its first and third bytes exchanged (RGBA ↔ BGRA).
INLINE uint32_t swap_rb(uint32_t p) { return (p & 0xFF00FF00u) | (p >> 16 & 0xFFu) | (p & 0xFFu) << 16; }

/// One row of b interpolated across: h[4x+c] = b[4·i0[x]+c]·(1 − fx[x]) + b[4·i1[x]+c]·fx[x]
/// (with `swap`, the first and third channels of b exchanged first).
INLINE void hlerp_row(const uint8_t *b, const int32_t *i0, const int32_t *i1, const float *fx, float *h, size_t w,
                      int swap) {
#if defined(__SSE2__)
    // One pixel's four channels as one vector (the same IEEE products and sum as below).
    const __m128i zero = _mm_setzero_si128();
    for (size_t x = 0; x < w; x++) {
        uint32_t pw = load32(b + 4 * (size_t)i0[x]), qw = load32(b + 4 * (size_t)i1[x]);
        if (swap) { pw = swap_rb(pw); qw = swap_rb(qw); }
        __m128i p = _mm_cvtsi32_si128((int)pw);
        __m128i q = _mm_cvtsi32_si128((int)qw);
        __m128 pf = _mm_cvtepi32_ps(_mm_unpacklo_epi16(_mm_unpacklo_epi8(p, zero), zero));
        __m128 qf = _mm_cvtepi32_ps(_mm_unpacklo_epi16(_mm_unpacklo_epi8(q, zero), zero));
        __m128 wx = _mm_set1_ps(fx[x]), vx = _mm_set1_ps(1.0f - fx[x]);
        _mm_storeu_ps(h + 4 * x, _mm_add_ps(_mm_mul_ps(pf, vx), _mm_mul_ps(qf, wx)));
    }
#else
    for (size_t x = 0; x < w; x++) {
        uint32_t pw = load32(b + 4 * (size_t)i0[x]), qw = load32(b + 4 * (size_t)i1[x]);
        if (swap) { pw = swap_rb(pw); qw = swap_rb(qw); }
        float wx = fx[x], vx = 1.0f - wx;
        for (int c = 0; c < 4; c++)
            h[4 * x + c] = (float)(int32_t)(pw >> 8 * c & 255) * vx + (float)(int32_t)(qw >> 8 * c & 255) * wx;
    }
#endif
}

/// out = floor(a·g + (top·(1 − fy) + bottom·fy)·f + 0.5) over n bytes.
INLINE void vmix_row(const uint8_t *a, const float *top, const float *bottom, uint8_t *dst, size_t n,
                     float fy, float f, float g) {
    float vy = 1.0f - fy;
    for (size_t i = 0; i < n; i++) {
        float bv = top[i] * vy + bottom[i] * fy;
        float v = (float)(int32_t)a[i] * g + bv * f + 0.5f;
        dst[i] = (uint8_t)(int32_t)v;
    }
}

#if DL_X86
/// hlerp_row with 256-bit vectors (AVX2 paths): where the two texels are neighbours (i1 = i0 + 1:
/// every pixel but those clamped at an edge) one 8-byte load brings both; they are widened to
/// eight floats (p's channels, then q's), multiplied by (1 − fx four times, fx four times) and the
/// halves added. The same IEEE products and sum as hlerp_row, so the same bytes; about half the
/// instructions a pixel (one index and one load instead of two of each, no unpacking by hand).
DL_AVX2 __attribute__((noinline)) static void hlerp_row_wide(const uint8_t *b, const int32_t *i0, const int32_t *i1,
                                                             const float *fx, float *h, size_t w, int swap) {
    const __m256i spread = _mm256_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1);
    const __m128i swapped = _mm_setr_epi8(2, 1, 0, 3, 6, 5, 4, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    const __m128 one = _mm_set1_ps(1.0f);
    for (size_t x = 0; x < w; x++) {
        int32_t a = i0[x];
        __m128 f = _mm_set_ss(fx[x]);
        __m256 weights = _mm256_permutevar8x32_ps(_mm256_castps128_ps256(_mm_unpacklo_ps(_mm_sub_ss(one, f), f)), spread);
        __m128i pq = i1[x] == a + 1 ? _mm_loadl_epi64((const __m128i *)(const void *)(b + 4 * (size_t)a))
                                    : _mm_set_epi32(0, 0, (int)load32(b + 4 * (size_t)i1[x]), (int)load32(b + 4 * (size_t)a));
        if (swap) pq = _mm_shuffle_epi8(pq, swapped);
        __m256 v = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(pq)), weights);
        _mm_storeu_ps(h + 4 * x, _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1)));
    }
}
#endif

/// The two rows of b (interpolated across) that output row y blends, from the two slots of
/// `scratch` (4·w floats each), refilling only a slot whose row the other one does not hold:
/// consecutive output rows mostly share their rows of b.
typedef struct { float *slot[2]; int32_t held[2]; } row_pair_cache;

INLINE void row_pair(int wide, row_pair_cache *c, const uint8_t *b, size_t bStride, int32_t r0, int32_t r1,
                     const int32_t *x0, const int32_t *x1, const float *fx, size_t w, int swap,
                     const float **top, const float **bottom) {
    const float *rows[2];
    int32_t want[2] = { r0, r1 };
    int used = -1;
    for (int k = 0; k < 2; k++) {
        int s = c->held[0] == want[k] ? 0 : c->held[1] == want[k] ? 1 : -1;
        if (s < 0) {
            s = used == 0 ? 1 : used == 1 ? 0 : (c->held[0] == want[1 - k] ? 1 : 0);
#if DL_X86
            if (wide) hlerp_row_wide(b + (size_t)want[k] * bStride, x0, x1, fx, c->slot[s], w, swap);
            else
#endif
            hlerp_row(b + (size_t)want[k] * bStride, x0, x1, fx, c->slot[s], w, swap);
            c->held[s] = want[k];
        }
        used = s;
        rows[k] = c->slot[s];
    }
    *top = rows[0];
    *bottom = rows[1];
}

INLINE void dl_k_mix_scaled_body(int wide, const uint8_t *a, size_t aStride, const uint8_t *b, size_t bStride,
                                 uint8_t *dst, size_t dstStride, size_t w, int32_t y0, int32_t y1,
                                 const int32_t *x0, const int32_t *x1, const float *fx,
                                 const int32_t *r0, const int32_t *r1, const float *fy,
                                 float *scratch, float f, float g) {
    row_pair_cache c = { { scratch, scratch + 4 * w }, { -1, -1 } };
    for (int32_t y = y0; y < y1; y++) {
        const float *top, *bottom;
        row_pair(wide, &c, b, bStride, r0[y], r1[y], x0, x1, fx, w, 0, &top, &bottom);
        vmix_row(a + (size_t)y * aStride, top, bottom, dst + (size_t)y * dstStride, 4 * w, fy[y], f, g);
    }
}
DL_DISPATCH_WIDE(dl_k_mix_scaled, (const uint8_t *a, size_t aStride, const uint8_t *b, size_t bStride,
                              uint8_t *dst, size_t dstStride, size_t w, int32_t y0, int32_t y1,
                              const int32_t *x0, const int32_t *x1, const float *fx,
                              const int32_t *r0, const int32_t *r1, const float *fy,
                              float *scratch, float f, float g),
            (a, aStride, b, bStride, dst, dstStride, w, y0, y1, x0, x1, fx, r0, r1, fy, scratch, f, g))

// MARK: Scale (the window's letterbox on the CPU)

/// out = floor(top·(1 − fy) + bottom·fy + 0.5) over n bytes.
INLINE void vlerp_row(const float *top, const float *bottom, uint8_t *dst, size_t n, float fy) {
    float vy = 1.0f - fy;
    for (size_t i = 0; i < n; i++) dst[i] = (uint8_t)(int32_t)(top[i] * vy + bottom[i] * fy + 0.5f);
}

INLINE void dl_k_scale_body(int wide, const uint8_t *b, size_t bStride, uint8_t *dst, size_t dstStride, size_t w,
                            int32_t y0, int32_t y1, const int32_t *x0, const int32_t *x1, const float *fx,
                            const int32_t *r0, const int32_t *r1, const float *fy, float *scratch, int swap) {
    row_pair_cache c = { { scratch, scratch + 4 * w }, { -1, -1 } };
    for (int32_t y = y0; y < y1; y++) {
        const float *top, *bottom;
        row_pair(wide, &c, b, bStride, r0[y], r1[y], x0, x1, fx, w, swap, &top, &bottom);
        vlerp_row(top, bottom, dst + (size_t)y * dstStride, 4 * w, fy[y]);
    }
}
DL_DISPATCH_WIDE(dl_k_scale, (const uint8_t *b, size_t bStride, uint8_t *dst, size_t dstStride, size_t w,
                         int32_t y0, int32_t y1, const int32_t *x0, const int32_t *x1, const float *fx,
                         const int32_t *r0, const int32_t *r1, const float *fy, float *scratch, int swap),
            (b, bStride, dst, dstStride, w, y0, y1, x0, x1, fx, r0, r1, fy, scratch, swap))

INLINE void dl_k_copy_pixels_body(const uint32_t *src, uint32_t *dst, size_t n, int swap) {
    if (swap) { for (size_t i = 0; i < n; i++) dst[i] = swap_rb(src[i]); }
    else memcpy(dst, src, n * 4);
}
DL_DISPATCH(dl_k_copy_pixels, (const uint32_t *src, uint32_t *dst, size_t n, int swap), (src, dst, n, swap))

// MARK: Depth masks

#define MASK_LOOP(M, STORE)                                                               \
    for (size_t i = 0; i < n; i++) {                                                      \
        float d = src[i];                                                                 \
        int v = valid_depth(d);                                                           \
        float dd = v ? d : 1.0f;                                                          \
        float p = clamp01_fast(((1.0f / dd - invMax) * numScale) / div + pBias);         \
        float mv = clamp01_fast(0.5f + slope * (M));                                      \
        float o = v ? mv : 0.0f;                                                          \
        STORE;                                                                            \
    }

INLINE void dl_k_depth_mask_body(const float *src, size_t n, int bandpass, float invMax, float numScale, float div,
                                 float pBias, float focus, float slope, float halfWidth, float *fdst, uint8_t *bdst) {
    if (bdst) {
        if (bandpass) { MASK_LOOP(halfWidth - fabsf(p - focus), bdst[i] = (uint8_t)unorm8_unit(o)) }
        else { MASK_LOOP(p - focus, bdst[i] = (uint8_t)unorm8_unit(o)) }
    } else if (fdst) {
        if (bandpass) { MASK_LOOP(halfWidth - fabsf(p - focus), fdst[i] = o) }
        else { MASK_LOOP(p - focus, fdst[i] = o) }
    }
}
DL_DISPATCH(dl_k_depth_mask, (const float *src, size_t n, int bandpass, float invMax, float numScale, float div,
                              float pBias, float focus, float slope, float halfWidth, float *fdst, uint8_t *bdst),
            (src, n, bandpass, invMax, numScale, div, pBias, focus, slope, halfWidth, fdst, bdst))
