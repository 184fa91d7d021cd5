// The depth masks of DepthKit's DepthMaskFilter, exactly (every result `precise`: no fused
// multiply-adds, so the GPU rounds like the CPU reference). Needs common.glsl.
//
// p = clamp((1/d − 1/dmax)/(1/dmin − 1/dmax)) (p = 1 for valid pixels when dmin == dmax);
// high-pass m = clamp(0.5 + s·(p − f)); band-pass m = clamp(0.5 + s·(w/2 − |p − f|)); invalid → 0.
// The mask is defined at the depth size and scaled bilinearly (clamp to edge, at the output's
// pixel centers) to the output size.

struct DLMaskParams { uint kind; float focus; float slope; float width; };
// From the depthMinMax.comp stats: what turns 1/d into p.
struct DLMaskRange { float invMax; float numScale; float div; float pBias; };

DLMaskRange dl_maskRange(uint minBits, uint maxBits, uint count) {
    DLMaskRange r;
    precise float invMax = count > 0u ? 1.0 / uintBitsToFloat(maxBits) : 0.0;
    precise float denom = count > 0u ? 1.0 / uintBitsToFloat(minBits) - invMax : 0.0;
    bool same = count == 0u || !(denom > 0.0);
    r.invMax = invMax;
    r.numScale = same ? 0.0 : 1.0;
    r.pBias = same ? 1.0 : 0.0;
    r.div = same ? 1.0 : denom;
    return r;
}

float dl_maskOf(float d, DLMaskRange r, DLMaskParams m) {
    bool valid = dl_validDepth(d);
    precise float dd = valid ? d : 1.0;
    precise float p = min(max(((1.0 / dd - r.invMax) * r.numScale) / r.div + r.pBias, 0.0), 1.0);
    precise float mv;
    if (m.kind == DL_MASK_BANDPASS) {
        precise float hb = m.width / 2.0;
        mv = min(max(0.5 + m.slope * (hb - abs(p - m.focus)), 0.0), 1.0);
    } else {
        mv = min(max(0.5 + m.slope * (p - m.focus), 0.0), 1.0);
    }
    return valid ? mv : 0.0;
}

// DepthKit's BilinearAxis for one target coordinate.
void dl_bilinearAxis(int x, int source, int target, out int i0, out int i1, out float f) {
    precise float u = (float(x) + 0.5) * float(source) / float(target) - 0.5;
    precise float fl = floor(u);
    int a = int(fl);
    i0 = clamp(a, 0, source - 1);
    i1 = clamp(a + 1, 0, source - 1);
    f = u - fl;
}

// The mask at output pixel p (outSize) from the depth texture (depthSize), before clamping.
float dl_maskAt(sampler2D depthTexture, ivec2 p, ivec2 outSize, ivec2 depthSize, DLMaskRange r, DLMaskParams m) {
    if (outSize == depthSize) return dl_maskOf(texelFetch(depthTexture, p, 0).r, r, m);
    int x0, x1, y0, y1;
    float wx, fy;
    dl_bilinearAxis(p.x, depthSize.x, outSize.x, x0, x1, wx);
    dl_bilinearAxis(p.y, depthSize.y, outSize.y, y0, y1, fy);
    float m00 = dl_maskOf(texelFetch(depthTexture, ivec2(x0, y0), 0).r, r, m);
    float m01 = dl_maskOf(texelFetch(depthTexture, ivec2(x1, y0), 0).r, r, m);
    float m10 = dl_maskOf(texelFetch(depthTexture, ivec2(x0, y1), 0).r, r, m);
    float m11 = dl_maskOf(texelFetch(depthTexture, ivec2(x1, y1), 0).r, r, m);
    precise float top = m00 * (1.0 - wx) + m01 * wx;
    precise float bottom = m10 * (1.0 - wx) + m11 * wx;
    precise float v = top * (1.0 - fy) + bottom * fy;
    return v;
}

// unorm8 of common.glsl without a fused multiply-add (DepthKit's unorm8, rounding for rounding).
uint dl_unorm8Precise(float v) {
    precise float t = clamp(v, 0.0, 1.0) * 255.0 + 0.5;
    return uint(t);
}

// What the effects mix by: the mask clamped, v > 0 ? min(v, 1) : 0 (NaN → 0).
float dl_effectMask(float v) { return v > 0.0 ? min(v, 1.0) : 0.0; }

// An 8-bit color texel back to its bytes (0…255 as floats).
vec4 dl_bytes(vec4 c) { return vec4(uvec4(c * 255.0 + 0.5)); }

// Bytes (values + 0.5 already added, in [0.5, 255.5]) truncated and packed for an R32_UINT view.
uint dl_packBytes(vec4 v, uint swapRB) {
    uvec4 b = min(uvec4(v), uvec4(255u));
    if (swapRB != 0u) b = b.bgra;
    return b.r | (b.g << 8) | (b.b << 16) | (b.a << 24);
}
