/// Which `sensor_msgs/Imu` topics of a ROS 1 bag or a ROS 2 recording give its IMU streams
/// (`BagSource` and `ROS2Source` share the rule):
///
/// - librealsense's motion streams, `/device_D/sensor_S/Accel_N/imu/data` and `…/Gyro_N/imu/data`
///   (its `ros_writer::write_motion_frame`: one `sensor_msgs/Imu` per sample, only
///   `linear_acceleration` filled for Accel, only `angular_velocity` for Gyro; the header stamp is
///   the frame timestamp, as its images'); the rate from the stream's `…/info`.
/// - else topics with a path component starting "accel" / "gyro" (realsense2_camera's
///   `/camera/camera/accel/sample` and `…/gyro/sample`), one sensor each;
/// - otherwise the first other Imu topic (by name) gives both, each unless its covariance says the
///   field is not given (element 0 is -1, ROS's convention), read from the first message.
struct ROSIMUTopics: Sendable, Equatable {
    struct Pick: Sendable, Equatable {
        var topic: String
        /// The sensors this topic gives.
        var kinds: [IMUKind]
        /// librealsense's stream prefix ("/device_0/sensor_2/Accel_0"), nil for other topics.
        var prefix: String?
    }

    var picks: [Pick]

    init(picks: [Pick]) { self.picks = picks }

    /// librealsense's motion stream topic: its kind and stream prefix.
    static func librealsense(_ topic: String) -> (kind: IMUKind, prefix: String)? {
        let parts = topic.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 6, parts[0].isEmpty, parts[1].hasPrefix("device_"), parts[2].hasPrefix("sensor_"),
              parts[4] == "imu", parts[5] == "data" else { return nil }
        let prefix = parts[0...3].joined(separator: "/")
        switch parts[3].prefix(while: { $0 != "_" }) {
        case "Accel": return (.accelerometer, prefix)
        case "Gyro": return (.gyroscope, prefix)
        default: return nil
        }
    }

    /// The picks among `topics` (those whose type is sensor_msgs/Imu); `given` says, for a topic
    /// that is not librealsense's, which of accelerometer and gyroscope its first message gives.
    init(imuTopics topics: [String], given: (String) -> (accelerometer: Bool, gyroscope: Bool)) {
        var picks: [Pick] = []
        for kind in IMUKind.allCases {
            if let t = topics.sorted().first(where: { Self.librealsense($0)?.kind == kind }) {
                picks.append(Pick(topic: t, kinds: [kind], prefix: Self.librealsense(t)?.prefix))
            }
        }
        // realsense2_camera's /camera/camera/accel/sample and …/gyro/sample (one field filled each).
        if picks.isEmpty {
            for (kind, word) in [(IMUKind.accelerometer, "accel"), (.gyroscope, "gyro")] {
                if let t = topics.sorted().first(where: { $0.lowercased().split(separator: "/").contains { $0.hasPrefix(word) } }) {
                    picks.append(Pick(topic: t, kinds: [kind], prefix: nil))
                }
            }
        }
        if picks.isEmpty, let t = topics.sorted().first(where: { Self.librealsense($0) == nil }) {
            let g = given(t)
            let kinds = (g.accelerometer ? [IMUKind.accelerometer] : []) + (g.gyroscope ? [IMUKind.gyroscope] : [])
            if !kinds.isEmpty { picks.append(Pick(topic: t, kinds: kinds, prefix: nil)) }
        }
        self.picks = picks
    }

    var isEmpty: Bool { picks.isEmpty }

    /// One decoded message: its header stamp in seconds and both vectors.
    struct Message {
        var stamp: Double
        var linearAcceleration: SIMD3<Double>
        var angularVelocity: SIMD3<Double>
    }

    /// The samples: `read` gives each pick's messages in time order, `rate` a librealsense stream's
    /// recorded rate. A value that is not finite is a `CaptureError.file` naming `path`, the topic
    /// and the message.
    func samples(path: String, read: (Pick) throws -> [Message], rate: (String) -> Double?) throws -> IMUSamples {
        var out = IMUSamples()
        for pick in picks {
            let messages = try read(pick)
            for kind in pick.kinds {
                var values: [SIMD3<Double>] = []
                values.reserveCapacity(messages.count)
                for (i, m) in messages.enumerated() {
                    let v = kind == .accelerometer ? m.linearAcceleration : m.angularVelocity
                    try IMUSamples.checkFinite(v, path: path, what: "\(pick.topic) message \(i): "
                                               + (kind == .accelerometer ? "linear_acceleration" : "angular_velocity"))
                    guard m.stamp.isFinite else { throw CaptureError.file(path: path, problem: "\(pick.topic) message \(i): the stamp is not finite") }
                    values.append(v)
                }
                let stream = IMUStream(kind: kind, name: pick.topic, timestamps: messages.map(\.stamp), values: values,
                                       recordedRate: pick.prefix.flatMap(rate))
                switch kind {
                case .accelerometer: out.accelerometer = stream
                case .gyroscope: out.gyroscope = stream
                }
            }
        }
        return out
    }
}
