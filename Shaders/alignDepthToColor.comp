#version 450
#include "common.glsl"
// Depth aligned to color, the GPU port of DepthKit's DepthAligner (CShim align.c), which is
// librealsense's `align` to color: one invocation per depth pixel deprojects its corners
// (x ∓ 0.5, y ∓ 0.5) at depth z, moves them by the depth→color extrinsics, projects them with the
// color intrinsics and writes z into every color pixel of the rectangle between them, clipped to
// the image (or into the top-left corner's pixel alone when `bothCorners` is 0), with atomicMin
// on the float's bits (positive floats order like their bits: the nearest wins). The output is
// cleared to 0xFFFFFFFF (nothing) before; GPUDepthAligner turns that into 0.
//
// Bit-exact with the CPU: the same operations in the same order, `precise` (no FMA, no
// reassociation), the deprojection's (pixel − c)/f from the CPU's tables, and the projection's
// division corrected to the correctly rounded quotient (Vulkan allows OpFDiv 2.5 ULP; OpFMul,
// OpFAdd and OpFSub are correctly rounded, so a Dekker product gives the exact remainder).
layout(local_size_x = DL_LOCAL_SIZE_X, local_size_y = DL_LOCAL_SIZE_Y) in;
layout(set = 0, binding = 0) readonly buffer Depth { float depth[]; };
// xs0[depthW], xs1[depthW], ys0[depthH], ys1[depthH]: (x − 0.5 − cx)/fx, (x + 0.5 − cx)/fx, rows likewise.
layout(set = 1, binding = 0) readonly buffer Tables { float tables[]; };
layout(set = 2, binding = 0) buffer Aligned { uint aligned[]; };
layout(push_constant) uniform Params {
    ivec2 depthSize;
    ivec2 colorSize;
    vec4 color;          // fx, fy, cx, cy
    float r0, r1, r2, r3, r4, r5, r6, r7, r8;
    float t0, t1, t2;
    uint bothCorners;
} params;

// a = hi + lo exactly, hi with the upper 12 bits of a's significand (Veltkamp).
void split(float a, out float hi, out float lo) {
    precise float c = 4097.0 * a;
    precise float big = c - a;
    precise float h = c - big;
    precise float l = a - h;
    hi = h;
    lo = l;
}

// n − q·d, exact when q is within an ulp or so of n/d (Dekker's product).
float remainderOf(float n, float d, float q) {
    float qh, ql, dh, dl;
    split(q, qh, ql);
    split(d, dh, dl);
    precise float p = q * d;
    precise float e = ((qh * dh - p) + qh * dl + ql * dh) + ql * dl;
    precise float r = (n - p) - e;
    return r;
}

// Bit tests, not isnan() or x == x: drivers may fold those away (common.glsl).
bool isNaNBits(float v) { return (floatBitsToUint(v) & 0x7FFFFFFFu) > 0x7F800000u; }

bool finiteNonZero(float v) {
    uint b = floatBitsToUint(v) & 0x7FFFFFFFu;
    return b != 0u && b < 0x7F800000u;
}

// The correctly rounded n / d: the driver's quotient moved to the neighbor with the smallest
// remainder (round to nearest; a quotient of two floats is never exactly halfway).
float divide(float n, float d) {
    precise float q = n / d;
    if (!finiteNonZero(q) || !finiteNonZero(d)) return q;
    precise float r = abs(remainderOf(n, d, q));
    for (int i = 0; i < 4; i++) {
        uint b = floatBitsToUint(q);
        float up = uintBitsToFloat(b + 1u), down = uintBitsToFloat(b - 1u);
        precise float ru = abs(remainderOf(n, d, up));
        precise float rd = abs(remainderOf(n, d, down));
        if (ru < r) { q = up; r = ru; }
        else if (rd < r) { q = down; r = rd; }
        else break;
    }
    return q;
}

// One corner: deproject (xn, yn are (pixel − c)/f), transform (r0·x + (r1·y + (r2·z + t))),
// project, + 0.5.
vec2 corner(float z, float xn, float yn) {
    precise float px = z * xn;
    precise float py = z * yn;
    precise float qx = params.r0 * px + (params.r1 * py + (params.r2 * z + params.t0));
    precise float qy = params.r3 * px + (params.r4 * py + (params.r5 * z + params.t1));
    precise float qz = params.r6 * px + (params.r7 * py + (params.r8 * z + params.t2));
    precise float u = divide(qx, qz) * params.color.x + params.color.z + 0.5;
    precise float v = divide(qy, qz) * params.color.y + params.color.w + 0.5;
    return vec2(u, v);
}

void main() {
    ivec2 p = ivec2(gl_GlobalInvocationID.xy);
    int dw = params.depthSize.x, dh = params.depthSize.y;
    if (p.x >= dw || p.y >= dh) return;
    float z = depth[p.y * dw + p.x];
    if (!dl_validDepth(z)) return;
    vec2 c0 = corner(z, tables[p.x], tables[2 * dw + p.y]);
    vec2 c1 = params.bothCorners != 0u ? corner(z, tables[dw + p.x], tables[2 * dw + dh + p.y]) : c0;
    float W = float(params.colorSize.x), H = float(params.colorSize.y);
    // NaN anywhere: nothing. Clamp to [−1, W] before converting (int() truncates toward zero, so
    // −1 < u < 0 gives 0 as in C), then clip to the image.
    if (isNaNBits(c0.x) || isNaNBits(c0.y) || isNaNBits(c1.x) || isNaNBits(c1.y)) return;
    int x0 = max(int(clamp(c0.x, -1.0, W)), 0), y0 = max(int(clamp(c0.y, -1.0, H)), 0);
    int x1 = min(int(clamp(c1.x, -1.0, W)), params.colorSize.x - 1);
    int y1 = min(int(clamp(c1.y, -1.0, H)), params.colorSize.y - 1);
    uint zb = floatBitsToUint(z);
    for (int y = y0; y <= y1; y++) {
        for (int x = x0; x <= x1; x++) {
            atomicMin(aligned[y * params.colorSize.x + x], zb);
        }
    }
}
