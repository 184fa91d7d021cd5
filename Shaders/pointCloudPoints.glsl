// The compute point rasterizer's shared part (pointCloudProject.comp, pointCloudDepth32.comp,
// pointCloudColor32.comp): where point `index` comes from, where it lands and its color.
// Points come from a depth frame (one per depth pixel, unprojected from the texel with the depth
// intrinsics as in pointCloud.vert; colored from the color texel) or from a point buffer (PLY:
// xyz + packed rgba8 per point). A point lands on output pixel ⌊(ndc·½ + ½)·size⌋ with depth key
// floatBits(ndc.z) when 0 ≤ ndc.z < 1 and w > 0: positive floats order like their bits, so
// `atomicMin` on the key keeps the nearest point. Empty pixels hold 0xFFFFFFFF.
layout(local_size_x = DL_POINT_GROUP) in;
layout(set = 0, binding = 0) uniform sampler2D depthMap;
layout(set = 1, binding = 0) uniform sampler2D colorImage;
layout(set = 3, binding = 0) readonly buffer Points { vec4 points[]; } cloud;   // xyz, rgba8 bits in w
layout(push_constant) uniform Params {
    mat4 viewProjection;   // world → clip space
    vec4 intrinsics;       // depth frames: fx, fy, cx, cy in depth pixels
    ivec4 sizes;           // depth width, height; color width, height
    ivec4 target;          // output width, height; point count; flags
    vec2 range;            // color-by range (meters) for depth / height
#ifdef DL_POINTS_ADAPTIVE
    vec2 adapt;            // adaptive size: scale, largest size
#endif
} params;
// flags: the DL_POINT_* fields of dl_codes.h (source, color by, colormap, stride − 1, nearest pixel).
#define DL_FLAGS uint(params.target.w)
#define DL_SOURCE ((DL_FLAGS >> DL_POINT_SOURCE_SHIFT) & DL_POINT_FIELD_MASK)
#define DL_COLOR_BY ((DL_FLAGS >> DL_POINT_COLOR_BY_SHIFT) & DL_POINT_FIELD_MASK)
#define DL_MAP ((DL_FLAGS >> DL_POINT_COLORMAP_SHIFT) & DL_POINT_FIELD_MASK)

uint pointColor(vec3 p, uint rgba) {
    uint by = DL_COLOR_BY;
    if (by == DL_COLOR_BY_COLOR) return rgba | 0xFF000000u;
    float span = max(params.range.y - params.range.x, 1e-6);
    float t = by == DL_COLOR_BY_DEPTH ? 1.0 - (p.z - params.range.x) / span : (-p.y - params.range.x) / span;
    return dl_pack(vec4(dl_colormap(DL_MAP, t), 1.0), 0u);
}

// Point `index`: false when it has no valid position or falls outside the view.
bool pointAt(uint index, out uint pixel, out uint key, out uint color) {
    vec3 p;
    uint rgba = 0u;
    if (DL_SOURCE == DL_POINT_SOURCE_DEPTH) {
        int wd = params.sizes.x, hd = params.sizes.y;
        int u = int(index % uint(wd)), v = int(index / uint(wd));
        float z = texelFetch(depthMap, ivec2(u, v), 0).r;
        if (!dl_validDepth(z)) return false;
        p = vec3((float(u) - params.intrinsics.z) * z / params.intrinsics.x,
                 (float(v) - params.intrinsics.w) * z / params.intrinsics.y, z);
        if (DL_COLOR_BY == DL_COLOR_BY_COLOR) {
            ivec2 ct = min(ivec2(u * params.sizes.z / wd, v * params.sizes.w / hd), params.sizes.zw - 1);
            rgba = dl_pack(vec4(texelFetch(colorImage, ct, 0).rgb, 1.0), 0u);
        }
    } else {
        vec4 q = cloud.points[index];
        p = q.xyz;
        rgba = floatBitsToUint(q.w);
    }
    vec4 c = params.viewProjection * vec4(p, 1.0);
    if (!(c.w > 0.0)) return false;
    vec3 ndc = c.xyz / c.w;
    if (!(ndc.z >= 0.0 && ndc.z < 1.0)) return false;
    vec2 f = (ndc.xy * 0.5 + 0.5) * vec2(params.target.xy);
    if (!(f.x >= 0.0 && f.y >= 0.0 && f.x < float(params.target.x) && f.y < float(params.target.y))) return false;
    ivec2 px = (DL_FLAGS & DL_POINT_NEAREST_PIXEL_BIT) != 0u ? min(ivec2(f + 0.5), params.target.xy - 1) : ivec2(f);
    pixel = uint(px.y * params.target.x + px.x);
    key = floatBitsToUint(max(ndc.z, 0.0));
    color = pointColor(p, rgba);
#ifdef DL_POINTS_ADAPTIVE
    // Adaptive point size (the shader variant with DL_POINTS_ADAPTIVE defined, so the plain one
    // runs none of this): ⌈scale·z / w⌉ (depth frames: the source pixel's footprint z/fx seen at
    // view depth w) or ⌈scale / w⌉ (point buffers: the cloud's spacing), clamped to 1…largest,
    // carried in the color's alpha byte for the resolve.
    float sf = (DL_SOURCE == DL_POINT_SOURCE_DEPTH ? params.adapt.x * p.z : params.adapt.x) / c.w;
    uint s = uint(clamp(ceil(sf), 1.0, params.adapt.y));
    color = (color & 0x00FFFFFFu) | (s << 24);
#endif
    return true;
}

// Each invocation draws DL_POINTS_PER_INVOCATION consecutive points (of the strided subset).
#define DL_FOR_EACH_POINT(body) \
    uint stride = ((DL_FLAGS >> DL_POINT_STRIDE_SHIFT) & DL_POINT_FIELD_MASK) + 1u; \
    uint first = gl_GlobalInvocationID.x * uint(DL_POINTS_PER_INVOCATION); \
    for (uint k = 0u; k < uint(DL_POINTS_PER_INVOCATION); k++) { \
        uint index = (first + k) * stride; \
        if (index >= uint(params.target.z)) break; \
        uint pixel, key, color; \
        if (pointAt(index, pixel, key, color)) { body } \
    }
