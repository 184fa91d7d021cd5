import Foundation

/// Which sensor an IMU stream holds.
public enum IMUKind: String, Sendable, CaseIterable {
    /// Specific force in m/s² (gravity included, as the sensor measures it).
    case accelerometer
    /// Angular velocity in rad/s.
    case gyroscope

    /// The unit of its values.
    public var unit: String {
        switch self {
        case .accelerometer: return "m/s^2"
        case .gyroscope: return "rad/s"
        }
    }
}

/// One IMU sensor's samples on its own clock: accelerometer in m/s², gyroscope in rad/s, each
/// sample with its own stamp (seconds, the recording's clock: the one its frames' timestamps use),
/// sorted by time.
public struct IMUStream: Sendable, Equatable {
    public var kind: IMUKind
    /// Where the recording keeps it: a bag topic, an mkv track title, a scan's file.
    public var name: String
    public var timestamps: [Double]
    /// x, y, z per sample, in the sensor's own axes as recorded.
    public var values: [SIMD3<Double>]
    /// Samples per second: the recorded rate when the recording says it (librealsense's stream
    /// info), else from the median interval between stamps; nil with fewer than two samples.
    public var rate: Double?

    public var count: Int { timestamps.count }

    /// Sorts the samples by time (stable: equal stamps keep their order) and works out the rate
    /// from the stamps unless `recordedRate` is given.
    public init(kind: IMUKind, name: String, timestamps: [Double], values: [SIMD3<Double>], recordedRate: Double? = nil) {
        precondition(timestamps.count == values.count, "one value per stamp")
        self.kind = kind
        self.name = name
        let order = timestamps.indices.sorted { timestamps[$0] != timestamps[$1] ? timestamps[$0] < timestamps[$1] : $0 < $1 }
        if order.enumerated().allSatisfy({ $0.offset == $0.element }) {
            self.timestamps = timestamps
            self.values = values
        } else {
            self.timestamps = order.map { timestamps[$0] }
            self.values = order.map { values[$0] }
        }
        rate = recordedRate.flatMap { $0 > 0 && $0.isFinite ? $0 : nil } ?? Self.medianRate(self.timestamps)
    }

    /// Samples per second from the median positive interval, to 3 decimals.
    static func medianRate(_ t: [Double]) -> Double? {
        guard t.count >= 2 else { return nil }
        let gaps = zip(t.dropFirst(), t).map { $0 - $1 }.filter { $0 > 0 }.sorted()
        guard !gaps.isEmpty else { return nil }
        return (1 / gaps[gaps.count / 2] * 1000).rounded() / 1000
    }

    /// The value at time `t`, linearly interpolated between the samples around it (a sample's own
    /// value at its stamp); nil outside the stream's first…last stamp.
    public func value(at t: Double) -> SIMD3<Double>? {
        guard let first = timestamps.first, let last = timestamps.last, t >= first, t <= last else { return nil }
        var lo = 0, hi = timestamps.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if timestamps[mid] < t { lo = mid + 1 } else { hi = mid }
        }
        // timestamps[lo] >= t, and lo < count because t <= last.
        if timestamps[lo] == t || lo == 0 { return values[lo] }
        let t0 = timestamps[lo - 1], t1 = timestamps[lo]
        let f = (t - t0) / (t1 - t0)
        return values[lo - 1] + (values[lo] - values[lo - 1]) * f
    }
}

/// A recording's IMU samples: accelerometer and gyroscope, each on its own stamps (librealsense
/// records them as two streams at different rates; an Azure Kinect, a ROS `sensor_msgs/Imu` topic
/// or a Stray Scanner scan has both in each sample, and then both streams share its stamps).
public struct IMUSamples: Sendable, Equatable {
    public var accelerometer: IMUStream?
    public var gyroscope: IMUStream?

    public init(accelerometer: IMUStream? = nil, gyroscope: IMUStream? = nil) {
        self.accelerometer = accelerometer
        self.gyroscope = gyroscope
    }

    public var streams: [IMUStream] { [accelerometer, gyroscope].compactMap { $0 } }
    public var isEmpty: Bool { streams.allSatisfy { $0.count == 0 } }

    public func stream(_ kind: IMUKind) -> IMUStream? {
        switch kind {
        case .accelerometer: return accelerometer
        case .gyroscope: return gyroscope
        }
    }

    // MARK: imu.csv

    /// The header of `imu.csv`: the columns and their units.
    public static let csvHeader = "timestamp [s],ax [m/s^2],ay [m/s^2],az [m/s^2],gx [rad/s],gy [rad/s],gz [rad/s]"

    /// One row of `imu.csv`: a time and the values at it (nil: the recording has no such sensor).
    public struct Row: Sendable, Equatable {
        public var timestamp: Double
        public var accelerometer: SIMD3<Double>?
        public var gyroscope: SIMD3<Double>?
    }

    /// The rows `imu.csv` holds, at the stamps of one stream with the other interpolated there
    /// (what realsense-ros' `unite_imu_method: linear_interpolation` does): one row per gyroscope
    /// sample with the accelerometer linearly interpolated at its stamp; gyroscope samples before
    /// the first accelerometer sample or after the last are left out (nothing to interpolate
    /// from). Streams that share their stamps (one sensor_msgs/Imu topic, a Stray Scanner scan) give
    /// their samples as recorded. With one sensor only, one row per sample of it, the other's
    /// columns empty. `within` keeps the rows stamped in it.
    public func rows(within range: ClosedRange<Double>? = nil) -> [Row] {
        func keep(_ t: Double) -> Bool { range.map { $0.contains(t) } ?? true }
        switch (accelerometer, gyroscope) {
        case let (a?, g?):
            var out: [Row] = []
            out.reserveCapacity(g.count)
            for (i, t) in g.timestamps.enumerated() where keep(t) {
                guard let av = a.value(at: t) else { continue }
                out.append(Row(timestamp: t, accelerometer: av, gyroscope: g.values[i]))
            }
            return out
        case let (a?, nil):
            return a.timestamps.indices.filter { keep(a.timestamps[$0]) }.map { Row(timestamp: a.timestamps[$0], accelerometer: a.values[$0]) }
        case let (nil, g?):
            return g.timestamps.indices.filter { keep(g.timestamps[$0]) }.map { Row(timestamp: g.timestamps[$0], gyroscope: g.values[$0]) }
        case (nil, nil):
            return []
        }
    }

    /// `imu.csv`: `csvHeader`, then `rows(within:)`, the stamp in seconds with 6 decimals (as
    /// convert's rgb.txt and depth.txt: a Double of epoch seconds holds no more), values as the
    /// shortest decimal that reads back to the same Double, empty fields for a missing sensor.
    public func csv(within range: ClosedRange<Double>? = nil) -> String {
        var text = Self.csvHeader + "\n"
        for r in rows(within: range) {
            text += String(format: "%.6f", r.timestamp)
            for v in [r.accelerometer, r.gyroscope] {
                if let v { text += ",\(v.x),\(v.y),\(v.z)" } else { text += ",,," }
            }
            text += "\n"
        }
        return text
    }

    /// Checks that every value is finite; `path` and `what` name the recording and the sample in the error.
    static func checkFinite(_ v: SIMD3<Double>, path: String, what: @autoclosure () -> String) throws {
        guard v.x.isFinite, v.y.isFinite, v.z.isFinite else {
            throw CaptureError.file(path: path, problem: "\(what()) is not finite (\(v.x), \(v.y), \(v.z))")
        }
    }
}

/// The capability of a recording that holds IMU samples (`FrameSource.imu`, nil for sources that
/// have none): bag and ros2 (`sensor_msgs/Imu` topics, librealsense's Accel_N / Gyro_N streams),
/// mkv (the Azure Kinect IMU track) and scan (Stray Scanner's imu.csv). Valid after `start()`;
/// like the rest of a source, used from one thread.
public protocol IMURecording: AnyObject {
    /// Every sample (the first call reads them all; the answer is kept). A message that cannot be
    /// read or a value that is not finite is a `CaptureError.file` naming the recording.
    func imuSamples() throws -> IMUSamples
}
