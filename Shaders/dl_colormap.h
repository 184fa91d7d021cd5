// The colormaps' formulas: the one definition for C (CDepthKit's colormap kernels and point
// renderer; Swift's `Colormap.color` calls it through CDepthKit) and GLSL (common.glsl includes it;
// ShaderLibrary expands the include). Written in what both languages read: scalar float arithmetic,
// float literals with an `f` suffix, and the few DL_CM_* words defined for each language below.
//
// Each map takes x in [0, 1] and gives r, g, b BEFORE clamping: every caller clamps the channels to
// [0, 1] its own way (the C kernels with their vectorizable clamps, GLSL with clamp) and rounds with
// unorm8. A new colormap is a DL_COLORMAP_* code in dl_codes.h, a function here, a line in
// `dl_colormap`, and a case of Swift's `Colormap` (whose switch is exhaustive). An unknown code is
// magenta (1, 0, 1) in both languages, never a quiet gray.
#ifndef DL_COLORMAP_H
#define DL_COLORMAP_H

// Include dl_codes.h first (the DL_COLORMAP_* codes). No #include here: ShaderLibrary expands every
// #include line, whatever #ifdef it stands in.
#ifdef __STDC__
// C: a struct with the fields a GLSL vec3 also has (.r, .g, .b). Nothing contracted into an FMA
// (lavapipe lowers GLSL's a·b + c to a multiply and an add): the same roundings on both sides.
#pragma STDC FP_CONTRACT OFF
typedef struct { float r, g, b; } dl_rgb;
#define DL_CM_FN static inline __attribute__((always_inline))
#define DL_CM_UINT unsigned int
#define DL_RGB(r, g, b) ((dl_rgb){(r), (g), (b)})
/// GLSL's min for the finite values here (the second when it is smaller).
DL_CM_FN float dl_cm_min(float a, float b) { return b < a ? b : a; }
#else
// GLSL.
#define dl_rgb vec3
#define DL_CM_FN
#define DL_CM_UINT uint
#define DL_RGB(r, g, b) vec3((r), (g), (b))
float dl_cm_min(float a, float b) { return min(a, b); }
#endif

/// TrueDepthStreamer's JET: red = near (x = 1), blue = far (x = 0).
DL_CM_FN dl_rgb dl_colormap_jet(float x) {
    float x4 = 4.0f * x;
    return DL_RGB(dl_cm_min(x4 - 1.5f, 4.5f - x4), dl_cm_min(x4 - 0.5f, 3.5f - x4), dl_cm_min(x4 + 0.5f, 2.5f - x4));
}

/// Google's Turbo, polynomial approximation (A. Mikhailov, 2019), in the operation order lavapipe
/// gives a dot product: ((c0 + x·c1) + x²·c2) + x³·c3, plus (x⁴·e0 + x⁵·e1).
DL_CM_FN float dl_cm_turbo(float x, float x2, float x3, float y0, float y1,
                           float c0, float c1, float c2, float c3, float e0, float e1) {
    return (((c0 + x * c1) + x2 * c2) + x3 * c3) + (y0 * e0 + y1 * e1);
}

DL_CM_FN dl_rgb dl_colormap_turbo(float x) {
    float x2 = x * x;
    float x3 = x2 * x;
    float y0 = x2 * x2;
    float y1 = x2 * x3;
    return DL_RGB(dl_cm_turbo(x, x2, x3, y0, y1, 0.13572138f, 4.61539260f, -42.66032258f, 132.13108234f,
                              -152.94239396f, 59.28637943f),
                  dl_cm_turbo(x, x2, x3, y0, y1, 0.09140261f, 2.19418839f, 4.84296658f, -14.18503333f,
                              4.27729857f, 2.82956604f),
                  dl_cm_turbo(x, x2, x3, y0, y1, 0.10667330f, 12.64194608f, -60.58204836f, 110.36276771f,
                              -89.90310912f, 27.34824973f));
}

/// Viridis, degree-6 polynomial fit (after matplotlib's table), by Horner's rule.
DL_CM_FN float dl_cm_horner6(float x, float c0, float c1, float c2, float c3, float c4, float c5, float c6) {
    float v = c6;
    v = c5 + x * v;
    v = c4 + x * v;
    v = c3 + x * v;
    v = c2 + x * v;
    v = c1 + x * v;
    return c0 + x * v;
}

DL_CM_FN dl_rgb dl_colormap_viridis(float x) {
    return DL_RGB(dl_cm_horner6(x, 0.2777273272234177f, 0.1050930431085774f, -0.3308618287255563f, -4.634230498983486f,
                                6.228269936347081f, 4.776384997670288f, -5.435455855934631f),
                  dl_cm_horner6(x, 0.005407344544966578f, 1.404613529898575f, 0.214847559468213f, -5.799100973351585f,
                                14.17993336680509f, -13.74514537774601f, 4.645852612178535f),
                  dl_cm_horner6(x, 0.3340998053353061f, 1.384590162594685f, 0.09509516302823659f, -19.33244095627987f,
                                56.69055260068105f, -65.35303263337234f, 26.3124352495832f));
}

DL_CM_FN dl_rgb dl_colormap_grayscale(float x) { return DL_RGB(x, x, x); }

/// An unknown code: loud magenta, so a missing case shows at once.
DL_CM_FN dl_rgb dl_colormap_unknown(void) { return DL_RGB(1.0f, 0.0f, 1.0f); }

/// Map `map` (DL_COLORMAP_*) at x in [0, 1], channels not yet clamped.
DL_CM_FN dl_rgb dl_colormap_rgb(DL_CM_UINT map, float x) {
    if (map == DL_COLORMAP_JET) return dl_colormap_jet(x);
    if (map == DL_COLORMAP_TURBO) return dl_colormap_turbo(x);
    if (map == DL_COLORMAP_VIRIDIS) return dl_colormap_viridis(x);
    if (map == DL_COLORMAP_GRAYSCALE) return dl_colormap_grayscale(x);
    return dl_colormap_unknown();
}

#endif
