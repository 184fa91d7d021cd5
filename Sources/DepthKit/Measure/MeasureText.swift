import Foundation

// The one-line summaries of the measurements: `depthlens measure` prints them, and the viewer's
// 3D pick tool shows them in its overlay and prints them with `--log-readout`.

extension AreaMeasurement {
    /// "area 0.043200 m² on the plane through N of M pixels (RMS 0.50 mm from it)".
    public var line: String {
        String(format: "area %.6f m² on the plane through %d of %d pixels (RMS %.2f mm from it)", areaM2, points, pixels, rms * 1000)
    }
}

extension MeasureFloor {
    /// The floor's normal, the camera's height above it, its points and RMS; `named` says where it came from.
    public func line(named: String) -> String {
        let n = plane.normal
        return "floor: \(named)"
            + String(format: ", normal (%.4f, %.4f, %.4f), camera %.4f m above it, %d points, RMS %.2f mm, tolerance %.2f mm",
                     n.x, n.y, n.z, plane.d, points, rms * 1000, tolerance * 1000)
    }
}

extension VolumeMeasurement {
    /// "volume V m³ above the floor (N pixels), W m³ below it (M pixels)".
    public var line: String {
        String(format: "volume %.6f m³ above the floor (%d pixels), %.6f m³ below it (%d pixels)",
               volumeM3, abovePixels, volumeBelowM3, belowPixels)
    }
}

extension BoxMeasurement {
    /// "box L × W × H m (length × width × height, N pixels)".
    public var line: String {
        String(format: "box %.4f × %.4f × %.4f m (length × width × height, %d pixels)", lengthM, widthM, heightM, pixels)
    }
}
