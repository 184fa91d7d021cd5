// The hover readout's id map of a point list (Viewer/CloudHover.swift, `PointIDMap`): per window
// pixel, the key (depth bits << 32 | index) of the point nearest the eye whose center lands there.
#include "dl_depthkit.h"
#include <math.h>
#include <string.h>

void dl_point_id_map(const float *xyz, size_t count, size_t stride, const float *m, long width, long height,
                     uint64_t *keys) {
    if (width <= 0 || height <= 0) return;
    size_t pixels = (size_t)width * (size_t)height;
    memset(keys, 0xFF, pixels * sizeof *keys);
    if (count > 0xFFFFFFFFu) count = 0xFFFFFFFFu;
    const float w = (float)width, h = (float)height;
    for (size_t i = 0; i < count; i++) {
        const float *p = xyz + i * stride;
        const float x = p[0], y = p[1], z = p[2];
        // Column-major: clip = m·(x, y, z, 1).
        const float cw = m[3] * x + m[7] * y + m[11] * z + m[15];
        if (!(cw > 1e-6f)) continue;
        const float cx = m[0] * x + m[4] * y + m[8] * z + m[12];
        const float cy = m[1] * x + m[5] * y + m[9] * z + m[13];
        // Window pixel coordinates with pixel centers on integers; the pixel is the nearest center.
        const float u = floorf((cx / cw + 1) / 2 * w), v = floorf((cy / cw + 1) / 2 * h);
        if (!(u >= 0 && v >= 0 && u < w && v < h)) continue;
        uint32_t bits;
        memcpy(&bits, &cw, sizeof bits);
        const uint64_t key = (uint64_t)bits << 32 | (uint64_t)i;
        uint64_t *at = keys + (size_t)v * (size_t)width + (size_t)u;
        if (key < *at) *at = key;
    }
}
