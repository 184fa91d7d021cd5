// The viewer's depth readout line, formatted into the caller's buffer: per frame under the
// cursor without a heap allocation (Swift's String(format:) allocates; so does a CVarArg list).
#include "dl_platform.h"
#include <stdio.h>

int dl_format_readout(char *out, size_t size, const char *prefix, long x, long y, int has_depth,
                      float z, float px, float py, float pz, int relative) {
    if (!has_depth) return snprintf(out, size, "%s(%ld, %ld)  no depth", prefix, x, y);
    char depth[32];
    if (z < 1) snprintf(depth, sizeof depth, "%.0f mm", (double)z * 1000);
    else snprintf(depth, sizeof depth, "%.3f m", (double)z);
    return snprintf(out, size, "%s(%ld, %ld)  %s  x %.3f y %.3f z %.3f m%s", prefix, x, y, depth, (double)px, (double)py, (double)pz,
                    relative ? "  (relative depth, not meters)" : "");
}

int dl_format_point_readout(char *out, size_t size, const char *prefix, long index, float depth,
                            float px, float py, float pz, int has_color, int r, int g, int b) {
    char d[32];
    if (depth < 1) snprintf(d, sizeof d, "%.0f mm", (double)depth * 1000);
    else snprintf(d, sizeof d, "%.3f m", (double)depth);
    if (!has_color)
        return snprintf(out, size, "%spoint %ld  %s  x %.3f y %.3f z %.3f m", prefix, index, d, (double)px, (double)py, (double)pz);
    return snprintf(out, size, "%spoint %ld  %s  x %.3f y %.3f z %.3f m  rgb %d %d %d", prefix, index, d,
                    (double)px, (double)py, (double)pz, r, g, b);
}

int dl_format_timeline(char *out, size_t size, long index, long count, double timestamp, double elapsed, double duration) {
    if (duration > 0)
        return snprintf(out, size, "frame %ld of %ld   t %.6f s   %.3f / %.3f s", index, count, timestamp, elapsed, duration);
    return snprintf(out, size, "frame %ld of %ld   t %.6f s", index, count, timestamp);
}

int dl_format_camera_line(char *out, size_t size, float distance, float yaw_deg, float pitch_deg, float roll_deg,
                          float point_size) {
    return snprintf(out, size, "distance %.2f m, yaw %.0f deg, pitch %.0f deg, roll %.0f deg, points %.0f px",
                    (double)distance, (double)yaw_deg, (double)pitch_deg, (double)roll_deg, (double)point_size);
}

/// n with a comma every three digits (n >= 0) into out; returns the length.
static int grouped(char *out, size_t size, long n) {
    char digits[32];
    int len = snprintf(digits, sizeof digits, "%ld", n < 0 ? 0 : n);
    size_t at = 0;
    for (int i = 0; i < len && at + 1 < size; i++) {
        if (i > 0 && (len - i) % 3 == 0 && at + 2 < size) out[at++] = ',';
        out[at++] = digits[i];
    }
    if (size > 0) out[at < size ? at : size - 1] = 0;
    return (int)at;
}

int dl_format_drawn_points(char *out, size_t size, long drawn, long total) {
    char a[40], b[40];
    grouped(a, sizeof a, drawn);
    grouped(b, sizeof b, total);
    return snprintf(out, size, "drawing %s of %s points%s", a, b, drawn < total ? " (moving)" : "");
}
