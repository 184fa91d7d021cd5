// The CPU point renderer (see dl_points.h): the compute path's projection, nearest-point rule and
// resolve, bit for bit. Phase 1's projection loop is compiled for baseline x86-64, AVX2 and
// AVX-512 (it vectorizes: branch-free selects, one gather for the color texel); the rest is scalar
// (scatter and compare), the same on every path.
#include "dl_points.h"
#include "dl_kernels.h"
#include "../../Shaders/dl_codes.h"
#include <math.h>
#include <string.h>

// No a·b + c is fused (lavapipe lowers GLSL's ffma to a multiply and an add): the same roundings.
#pragma STDC FP_CONTRACT OFF

#if defined(__x86_64__) || defined(__i386__)
#define DL_P_AVX2 __attribute__((target("avx2")))
#define DL_P_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq"), min_vector_width(512)))
#else
#define DL_P_AVX2
#define DL_P_AVX512
#endif

#define INLINE static inline __attribute__((always_inline))

INLINE float smax(float x, float y) { return y >= x ? y : x; }
INLINE float smin(float x, float y) { return y < x ? y : x; }
INLINE float clamp01(float v) { return smin(smax(v, 0.0f), 1.0f); }
/// GLSL's dl_unorm8: clamp to [0, 1], ·255, + 0.5, truncate.
INLINE uint32_t unorm8(float v) { return (uint32_t)(int32_t)(clamp01(v) * 255.0f + 0.5f); }
INLINE uint32_t float_bits(float f) { uint32_t b; memcpy(&b, &f, 4); return b; }
/// dl_validDepth: finite and > 0, on the bits.
INLINE int valid_depth(float d) {
    uint32_t b = float_bits(d);
    return (int32_t)(b + 0x7FFFFFFFu) < (int32_t)0xFF7FFFFFu;
}

/// dl_pack(vec4(rgb, 1), 0).
INLINE uint32_t pack_rgb(float r, float g, float b) {
    return unorm8(r) | unorm8(g) << 8 | unorm8(b) << 16 | 0xFF000000u;
}

/// dl_colormap of common.glsl (dl_colormap.h's formulas, as DepthKit's Colormap.color), packed
/// (pack_rgb clamps each channel).
INLINE uint32_t colormap(uint32_t map, float t) {
    dl_rgb c = dl_colormap_rgb(map, clamp01(t));
    return pack_rgb(c.r, c.g, c.b);
}

/// What every point of a call shares.
typedef struct consts {
    float m[16];
    float w, h;
    int32_t iw, ih, nearest;
    float lo, span;
    uint32_t by, map;
    float ascale, amax;   // adaptive size: scale, largest size (0: off)
} consts;

/// pointAt's landing: pixel (−1: not drawn), its row, the depth key. Branch-free, so loops over
/// points vectorize. clip = M·(x, y, z, 1) as lavapipe computes it: ((c3 + c2·z) + c1·y) + c0·x.
INLINE void land(const consts *k, float x, float y, float z, int valid, int32_t *pixel, int32_t *row, uint32_t *key,
                 float *w) {
    const float *m = k->m;
    float c0 = ((m[12] + m[8] * z) + m[4] * y) + m[0] * x;
    float c1 = ((m[13] + m[9] * z) + m[5] * y) + m[1] * x;
    float c2 = ((m[14] + m[10] * z) + m[6] * y) + m[2] * x;
    float c3 = ((m[15] + m[11] * z) + m[7] * y) + m[3] * x;
    float nx = c0 / c3, ny = c1 / c3, nz = c2 / c3;
    float fx = (nx * 0.5f + 0.5f) * k->w, fy = (ny * 0.5f + 0.5f) * k->h;
    int ok = valid & (c3 > 0.0f) & (nz >= 0.0f) & (nz < 1.0f) & (fx >= 0.0f) & (fy >= 0.0f) & (fx < k->w) & (fy < k->h);
    // Converted only where in range (an out-of-range conversion is undefined in C).
    float sx = ok ? fx : 0.0f, sy = ok ? fy : 0.0f;
    int32_t px = k->nearest ? (int32_t)(sx + 0.5f) : (int32_t)sx;
    int32_t py = k->nearest ? (int32_t)(sy + 0.5f) : (int32_t)sy;
    px = px < k->iw - 1 ? px : k->iw - 1;
    py = py < k->ih - 1 ? py : k->ih - 1;
    *pixel = ok ? py * k->iw + px : -1;
    *row = ok ? py : -1;
    *key = float_bits(nz) & 0x7FFFFFFFu;   // max(ndc.z, 0): −0 keys as +0
    *w = c3;
}

/// pointAt's adaptive size: ⌈sf⌉ clamped to 1…amax (NaN → 1) in the color's alpha byte.
INLINE uint32_t sized(const consts *k, float sf, uint32_t color) {
    float c = ceilf(sf);
    c = c >= 1.0f ? c : 1.0f;
    c = c <= k->amax ? c : k->amax;
    return (color & 0x00FFFFFFu) | (uint32_t)c << 24;
}

/// pointColor for color by depth / height.
INLINE uint32_t mapped(const consts *k, float y, float z) {
    float t = k->by == DL_COLOR_BY_DEPTH ? 1.0f - (z - k->lo) / k->span : (-y - k->lo) / k->span;
    return colormap(k->map, t);
}

/// Phase 1's projection of `n` points of a chunk into pixel/row/key/color arrays.
/// `adapt` is a constant at each call (project_variants): the plain instantiation has no adaptive
/// code in its loops, so they vectorize as before.
INLINE void project_body(const dl_points_job *j, int64_t first, int32_t n, int32_t *pix, int32_t *row,
                         uint32_t *key, uint32_t *col, const int adapt) {
    consts k;
    memcpy(k.m, j->m, sizeof k.m);
    k.w = (float)j->width; k.h = (float)j->height;
    k.iw = j->width; k.ih = j->height; k.nearest = j->nearest_pixel;
    k.lo = j->range_lo;
    float span = j->range_hi - j->range_lo;
    k.span = span >= 1e-6f ? span : 1e-6f;   // GLSL max(hi − lo, 1e-6)
    k.by = j->color_by; k.map = j->colormap;
    k.ascale = j->adapt_scale; k.amax = (float)j->adapt_max;
    float w;
    const int by_color = k.by == DL_COLOR_BY_COLOR;
    if (j->source == DL_POINT_SOURCE_DEPTH) {
        const int32_t wd = j->depth_width, hd = j->depth_height;
        const int32_t cw = j->color_width, ch = j->color_height;
        const float fx = j->fx, fy = j->fy, cx = j->cx, cy = j->cy;
        // Pieces of one depth row each.
        int32_t o = 0;
        while (o < n) {
            int64_t index = first + o;
            int32_t v = (int32_t)(index / wd), u0 = (int32_t)(index % wd);
            int32_t len = n - o < wd - u0 ? n - o : wd - u0;
            const float *d = j->depth + (int64_t)v * j->depth_stride + u0;
            const float fv = (float)v, dv = fv - cy;
            int32_t cv = v * ch / hd;
            cv = cv < ch - 1 ? cv : ch - 1;
            const uint8_t *crow = j->color + (int64_t)cv * j->color_stride;
            int32_t *P = pix + o, *R = row + o;
            uint32_t *K = key + o, *C = col + o;
            if (by_color) {
                const int ri = j->color_bgra ? 2 : 0, bi = j->color_bgra ? 0 : 2;
                for (int32_t i = 0; i < len; i++) {
                    float z = d[i];
                    int32_t u = u0 + i;
                    float x = (((float)u - cx) * z) / fx, y = (dv * z) / fy;
                    land(&k, x, y, z, valid_depth(z), &P[i], &R[i], &K[i], &w);
                    int32_t cu = u * cw / wd;
                    cu = cu < cw - 1 ? cu : cw - 1;
                    const uint8_t *c = crow + 4 * (int64_t)cu;
                    C[i] = (uint32_t)c[ri] | (uint32_t)c[1] << 8 | (uint32_t)c[bi] << 16 | 0xFF000000u;
                    if (adapt) C[i] = sized(&k, (k.ascale * z) / w, C[i]);
                }
            } else {
                for (int32_t i = 0; i < len; i++) {
                    float z = d[i];
                    float x = (((float)(u0 + i) - cx) * z) / fx, y = (dv * z) / fy;
                    land(&k, x, y, z, valid_depth(z), &P[i], &R[i], &K[i], &w);
                    C[i] = mapped(&k, y, z);
                    if (adapt) C[i] = sized(&k, (k.ascale * z) / w, C[i]);
                }
            }
            o += len;
        }
    } else {
        const int64_t s = j->stride;
        const float *p = j->points;
        // Every point (stride 1, a still view): contiguous loads rather than gathers, which stalled
        // on memory (38 % of a 2 M-point frame's projection at one gather).
#define DL_LIST_POINT(q) \
            float x = (q)[0], y = (q)[1], z = (q)[2]; \
            land(&k, x, y, z, 1, &pix[i], &row[i], &key[i], &w); \
            col[i] = by_color ? float_bits((q)[3]) | 0xFF000000u : mapped(&k, y, z); \
            if (adapt) col[i] = sized(&k, k.ascale / w, col[i]);
        if (s == 1) {
            const float *base = p + 4 * first;
            for (int32_t i = 0; i < n; i++) { DL_LIST_POINT(base + 4 * i) }
        } else {
            for (int32_t i = 0; i < n; i++) { DL_LIST_POINT(p + 4 * (first + i) * s) }
        }
#undef DL_LIST_POINT
    }
}

#define PROJECT_VARIANTS(j, first, n, pix, row, key, col) \
    if ((j)->adapt_max > 0) project_body(j, first, n, pix, row, key, col, 1); \
    else project_body(j, first, n, pix, row, key, col, 0)
static void project_base(const dl_points_job *j, int64_t first, int32_t n, int32_t *pix, int32_t *row,
                         uint32_t *key, uint32_t *col) { PROJECT_VARIANTS(j, first, n, pix, row, key, col); }
DL_P_AVX2 static void project_avx2(const dl_points_job *j, int64_t first, int32_t n, int32_t *pix, int32_t *row,
                                   uint32_t *key, uint32_t *col) { PROJECT_VARIANTS(j, first, n, pix, row, key, col); }
DL_P_AVX512 static void project_avx512(const dl_points_job *j, int64_t first, int32_t n, int32_t *pix, int32_t *row,
                                       uint32_t *key, uint32_t *col) { PROJECT_VARIANTS(j, first, n, pix, row, key, col); }

static size_t align64(size_t n) { return (n + 63) & ~(size_t)63; }

size_t dl_points_scratch_bytes(int32_t width, int32_t height, int64_t drawn, int32_t bands) {
    int64_t chunks = (drawn + DL_POINTS_CHUNK - 1) / DL_POINTS_CHUNK;
    size_t entries = (size_t)chunks * DL_POINTS_CHUNK;
    return align64((size_t)width * (size_t)height * 8) + align64(entries * 4) + align64(entries * 8)
        + align64((size_t)chunks * (size_t)(bands + 1) * 4) + align64((size_t)width * (size_t)height * 4)
        + align64((size_t)height);
}

void dl_points_prepare(dl_points_job *j) {
    int32_t s = j->source == DL_POINT_SOURCE_BUFFER ? (j->stride < 1 ? 1 : j->stride > 16 ? 16 : j->stride) : 1;
    j->stride = s;
    j->drawn = (j->count + s - 1) / s;
    j->chunks = (int32_t)((j->drawn + DL_POINTS_CHUNK - 1) / DL_POINTS_CHUNK);
    if (j->bands < 1) j->bands = 1;
    if (j->bands > DL_POINTS_MAX_BANDS) j->bands = DL_POINTS_MAX_BANDS;
    if (j->bands > j->height) j->bands = j->height;
    size_t entries = (size_t)j->chunks * DL_POINTS_CHUNK;
    uint8_t *p = (uint8_t *)j->scratch;
    j->keys = (uint64_t *)p;
    p += align64((size_t)j->width * (size_t)j->height * 8);
    j->entry_pixel = (uint32_t *)p;
    p += align64(entries * 4);
    j->entry_value = (uint64_t *)p;
    p += align64(entries * 8);
    j->offsets = (int32_t *)p;
    p += align64((size_t)j->chunks * (size_t)(j->bands + 1) * 4);
    j->log_depth = (float *)p;
    p += align64((size_t)j->width * (size_t)j->height * 4);
    j->row_band = p;
    // Band b has rows height·b/bands ..< height·(b + 1)/bands (DepthKit's bandRows).
    for (int32_t b = 0; b < j->bands; b++) {
        int32_t lo = (int32_t)((int64_t)j->height * b / j->bands), hi = (int32_t)((int64_t)j->height * (b + 1) / j->bands);
        for (int32_t y = lo; y < hi; y++) j->row_band[y] = (uint8_t)b;
    }
}

void dl_points_project_chunk(void *ctx, int32_t chunk) {
    const dl_points_job *j = (const dl_points_job *)ctx;
    int64_t first = (int64_t)chunk * DL_POINTS_CHUNK;
    int32_t n = (int32_t)(j->drawn - first < DL_POINTS_CHUNK ? j->drawn - first : DL_POINTS_CHUNK);
    int32_t pix[DL_POINTS_CHUNK], row[DL_POINTS_CHUNK];
    uint32_t key[DL_POINTS_CHUNK], col[DL_POINTS_CHUNK];
    switch (dl_kernels_path()) {
    case DL_PATH_AVX512: project_avx512(j, first, n, pix, row, key, col); break;
    case DL_PATH_AVX2: project_avx2(j, first, n, pix, row, key, col); break;
    default: project_base(j, first, n, pix, row, key, col); break;
    }
    // Counting sort by band into the chunk's part of the entries.
    const int32_t bands = j->bands;
    int32_t cursor[DL_POINTS_MAX_BANDS + 1];
    memset(cursor, 0, sizeof cursor);
    for (int32_t i = 0; i < n; i++)
        if (pix[i] >= 0) cursor[j->row_band[row[i]]]++;
    int32_t *off = j->offsets + (int64_t)chunk * (bands + 1);
    int32_t at = (int32_t)first;
    for (int32_t b = 0; b < bands; b++) {
        int32_t c = cursor[b];
        off[b] = at;
        cursor[b] = at;
        at += c;
    }
    off[bands] = at;
    for (int32_t i = 0; i < n; i++) {
        if (pix[i] < 0) continue;
        int32_t e = cursor[j->row_band[row[i]]]++;
        j->entry_pixel[e] = (uint32_t)pix[i];
        j->entry_value[e] = (uint64_t)key[i] << 32 | col[i];
    }
}

void dl_points_apply_band(void *ctx, int32_t band) {
    const dl_points_job *j = (const dl_points_job *)ctx;
    int32_t lo = (int32_t)((int64_t)j->height * band / j->bands), hi = (int32_t)((int64_t)j->height * (band + 1) / j->bands);
    uint64_t *keys = j->keys;
    memset(keys + (int64_t)lo * j->width, 0xFF, (size_t)(hi - lo) * (size_t)j->width * 8);
    const int32_t stride = j->bands + 1;
    const uint32_t *pixel = j->entry_pixel;
    const uint64_t *value = j->entry_value;
    for (int32_t c = 0; c < j->chunks; c++) {
        const int32_t *off = j->offsets + (int64_t)c * stride;
        for (int32_t e = off[band], end = off[band + 1]; e < end; e++) {
            uint32_t p = pixel[e];
            uint64_t v = value[e];
            if (v < keys[p]) keys[p] = v;
        }
    }
}

/// Eye-dome lighting's L = log2 w of a resolved key (pointCloudResolve.comp's), +Inf for background.
INLINE float log_depth(const dl_points_job *j, uint32_t best) {
    if (best == 0xFFFFFFFFu) return INFINITY;
    float ndc;
    memcpy(&ndc, &best, 4);
    return log2f(j->edl_b / (ndc - j->edl_a));
}

/// pointCloudResolve.comp for one output row; `shaded` (a constant at each call, resolve_row) adds
/// the adaptive-size and eye-dome-lighting variants' work, so the plain instantiation has none.
INLINE void resolve_row_body(const dl_points_job *j, int32_t y, const int shaded) {
    const int32_t w = j->width, h = j->height, r = j->back, q = j->reach;
    const uint64_t *keys = j->keys;
    const uint32_t bg = j->background;
    uint32_t *o = j->out + (int64_t)y * j->out_stride;
    const uint64_t *row = keys + (int64_t)y * w;
    float *ld = shaded && j->edl ? j->log_depth + (int64_t)y * w : NULL;
    if (shaded && j->adapt_max > 0) {
        // Adaptive sizes (pointCloudResolve.comp's branch): the largest size's window; a neighbour
        // at (dx, dy) covers the pixel when both lie in its own size's window; none outside the picture.
        for (int32_t x = 0; x < w; x++) {
            uint64_t at = row[x];
            uint32_t best = (uint32_t)(at >> 32);
            for (int32_t dy = -r; dy <= q; dy++) {
                int32_t yy = y + dy;
                if (yy < 0 || yy >= h) continue;
                const uint64_t *nr = keys + (int64_t)yy * w;
                for (int32_t dx = -r; dx <= q; dx++) {
                    int32_t xx = x + dx;
                    if (xx < 0 || xx >= w) continue;
                    uint64_t v = nr[xx];
                    if ((uint32_t)(v >> 32) < best) {
                        int32_t s = (int32_t)((uint32_t)v >> 24);
                        if (dx >= -((s - 1) / 2) && dx <= s / 2 && dy >= -((s - 1) / 2) && dy <= s / 2) {
                            best = (uint32_t)(v >> 32); at = v;
                        }
                    }
                }
            }
            o[x] = best == 0xFFFFFFFFu ? bg : (uint32_t)at | 0xFF000000u;
            if (ld) ld[x] = log_depth(j, best);
        }
    } else if (r == 0 && q == 0) {
        for (int32_t x = 0; x < w; x++) {
            uint64_t v = row[x];
            o[x] = (uint32_t)(v >> 32) == 0xFFFFFFFFu ? bg : (uint32_t)v;
            if (ld) ld[x] = log_depth(j, (uint32_t)(v >> 32));
        }
    } else if (r == 0 && q == 1) {
        // Point size 2: the pixel, then right, down, down-right (the general loop's order).
        const uint64_t *down = keys + (int64_t)(y < h - 1 ? y + 1 : h - 1) * w;
        for (int32_t x = 0; x < w; x++) {
            int32_t rt = x < w - 1 ? x + 1 : w - 1;
            uint64_t at = row[x];
            uint32_t best = (uint32_t)(at >> 32);
            uint64_t v = row[rt];
            if ((uint32_t)(v >> 32) < best) { best = (uint32_t)(v >> 32); at = v; }
            v = down[x];
            if ((uint32_t)(v >> 32) < best) { best = (uint32_t)(v >> 32); at = v; }
            v = down[rt];
            if ((uint32_t)(v >> 32) < best) { best = (uint32_t)(v >> 32); at = v; }
            o[x] = best == 0xFFFFFFFFu ? bg : (uint32_t)at;
            if (ld) ld[x] = log_depth(j, best);
        }
    } else {
        for (int32_t x = 0; x < w; x++) {
            uint64_t at = row[x];
            uint32_t best = (uint32_t)(at >> 32);
            for (int32_t dy = -r; dy <= q; dy++) {
                int32_t yy = y + dy;
                yy = yy < 0 ? 0 : yy > h - 1 ? h - 1 : yy;
                const uint64_t *nr = keys + (int64_t)yy * w;
                for (int32_t dx = -r; dx <= q; dx++) {
                    int32_t xx = x + dx;
                    xx = xx < 0 ? 0 : xx > w - 1 ? w - 1 : xx;
                    uint64_t v = nr[xx];
                    if ((uint32_t)(v >> 32) < best) { best = (uint32_t)(v >> 32); at = v; }
                }
            }
            o[x] = best == 0xFFFFFFFFu ? bg : (uint32_t)at;
            if (ld) ld[x] = log_depth(j, best);
        }
    }
}

static void resolve_row(const dl_points_job *j, int32_t y) {
    if (j->edl || j->adapt_max > 0) resolve_row_body(j, y, 1);
    else resolve_row_body(j, y, 0);
}

void dl_points_resolve_band(void *ctx, int32_t band) {
    const dl_points_job *j = (const dl_points_job *)ctx;
    int32_t lo = (int32_t)((int64_t)j->height * band / j->bands), hi = (int32_t)((int64_t)j->height * (band + 1) / j->bands);
    for (int32_t y = lo; y < hi; y++) resolve_row(j, y);
}

/// EDL's neighbour sum for pixels x0 ..< x0 + n of an interior row (every neighbour inside the
/// picture): Σ max(0, L(p) − L(q)) in the shader's order. Branch-free, so it vectorizes: a background
/// neighbour (L = +Inf) gives −Inf, which adds 0 as the shader's skip does; pixels that are themselves
/// background get a meaningless sum the caller ignores.
INLINE void edl_sums_body(const float *row, int32_t w, int32_t r, int32_t d, int32_t n, float *sums) {
    const float *up_r = row - (int64_t)r * w, *dn_r = row + (int64_t)r * w;
    const float *up_d = row - (int64_t)d * w, *dn_d = row + (int64_t)d * w;
    for (int32_t i = 0; i < n; i++) {
        float lp = row[i], sum = 0.0f, diff;
#define DL_EDL_ADD(q) diff = lp - (q); sum = sum + (0.0f < diff ? diff : 0.0f);
        DL_EDL_ADD(row[i + r]) DL_EDL_ADD(row[i - r]) DL_EDL_ADD(dn_r[i]) DL_EDL_ADD(up_r[i])
        DL_EDL_ADD(dn_d[i + d]) DL_EDL_ADD(dn_d[i - d]) DL_EDL_ADD(up_d[i + d]) DL_EDL_ADD(up_d[i - d])
#undef DL_EDL_ADD
        sums[i] = sum;
    }
}
static void edl_sums_base(const float *row, int32_t w, int32_t r, int32_t d, int32_t n, float *sums) {
    edl_sums_body(row, w, r, d, n, sums);
}
DL_P_AVX2 static void edl_sums_avx2(const float *row, int32_t w, int32_t r, int32_t d, int32_t n, float *sums) {
    edl_sums_body(row, w, r, d, n, sums);
}
DL_P_AVX512 static void edl_sums_avx512(const float *row, int32_t w, int32_t r, int32_t d, int32_t n, float *sums) {
    edl_sums_body(row, w, r, d, n, sums);
}

/// One covered pixel's shading: rgb·exp(−sum·factor) rounded, alpha kept (sum 0: unchanged).
INLINE void edl_shade(uint32_t *px, float sum, float factor) {
    if (sum == 0.0f) return;   // shade 1: unchanged
    float shade = expf(-(sum * factor));
    uint32_t c = *px;
    uint32_t cr = (uint32_t)((float)(c & 255u) * shade + 0.5f);
    uint32_t cg = (uint32_t)((float)(c >> 8 & 255u) * shade + 0.5f);
    uint32_t cb = (uint32_t)((float)(c >> 16 & 255u) * shade + 0.5f);
    *px = (c & 0xFF000000u) | cb << 16 | cg << 8 | cr;
}

/// pointCloudEDL.comp for one output row: covered pixels shaded by exp(−Σ max(0, L(p) − L(q)) · factor)
/// over the 8 neighbours in the shader's order, skipping those outside or background. Pixels whose
/// neighbours all lie inside take the vectorized sums; the picture's margins check each neighbour.
static void edl_row(const dl_points_job *j, int32_t y) {
    const int32_t w = j->width, h = j->height, r = j->edl_r, d = j->edl_d;
    const int32_t ox[8] = {r, -r, 0, 0, d, -d, d, -d}, oy[8] = {0, 0, r, -r, d, d, -d, -d};
    const float *L = j->log_depth;
    const float *row = L + (int64_t)y * w;
    const float factor = j->edl_factor;
    uint32_t *o = j->out + (int64_t)y * j->out_stride;
    const int32_t m = r > d ? r : d;
    const int interior = y >= m && y < h - m && w > 2 * m;
    const int32_t x0 = interior ? m : w, x1 = interior ? w - m : w;
    for (int32_t x = 0; x < w; x++) {
        if (x == x0) {
            // The interior run in chunks: sums vectorized, then the covered pixels shaded.
            float sums[256];
            const int path = dl_kernels_path();
            for (int32_t c = x0; c < x1; c += 256) {
                int32_t n = x1 - c < 256 ? x1 - c : 256;
                switch (path) {
                case DL_PATH_AVX512: edl_sums_avx512(row + c, w, r, d, n, sums); break;
                case DL_PATH_AVX2: edl_sums_avx2(row + c, w, r, d, n, sums); break;
                default: edl_sums_base(row + c, w, r, d, n, sums); break;
                }
                for (int32_t i = 0; i < n; i++)
                    if (row[c + i] < 3.0e38f) edl_shade(&o[c + i], sums[i], factor);
            }
            x = x1 - 1;
            continue;
        }
        float lp = row[x];
        if (!(lp < 3.0e38f)) continue;
        float sum = 0.0f;
        for (int k = 0; k < 8; k++) {
            int32_t xx = x + ox[k], yy = y + oy[k];
            if (xx < 0 || yy < 0 || xx >= w || yy >= h) continue;
            float lq = L[(int64_t)yy * w + xx];
            if (!(lq < 3.0e38f)) continue;
            float diff = lp - lq;
            sum = sum + (0.0f < diff ? diff : 0.0f);
        }
        edl_shade(&o[x], sum, factor);
    }
}

void dl_points_edl_band(void *ctx, int32_t band) {
    const dl_points_job *j = (const dl_points_job *)ctx;
    if (!j->edl) return;
    int32_t lo = (int32_t)((int64_t)j->height * band / j->bands), hi = (int32_t)((int64_t)j->height * (band + 1) / j->bands);
    for (int32_t y = lo; y < hi; y++) edl_row(j, y);
}

void dl_points_run_serial(dl_points_job *j) {
    for (int32_t c = 0; c < j->chunks; c++) dl_points_project_chunk(j, c);
    for (int32_t b = 0; b < j->bands; b++) dl_points_apply_band(j, b);
    for (int32_t b = 0; b < j->bands; b++) dl_points_resolve_band(j, b);
    if (j->edl)
        for (int32_t b = 0; b < j->bands; b++) dl_points_edl_band(j, b);
}
