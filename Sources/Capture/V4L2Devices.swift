import Foundation

/// One `/dev/videoN` as `depthlens devices` lists it (Codable for `--json`).
public struct V4L2DeviceInfo: Codable, Equatable, Sendable, CustomStringConvertible {
    public struct Size: Codable, Equatable, Sendable {
        public var width: Int
        public var height: Int
        /// Frames per second, highest first.
        public var fps: [Double]
    }
    public struct Format: Codable, Equatable, Sendable {
        /// Four-character code ("YUYV", "MJPG", "Z16").
        public var fourcc: String
        public var name: String
        public var compressed: Bool
        /// Converted by libv4l2, not native to the device.
        public var emulated: Bool
        /// depthlens can convert this format.
        public var supported: Bool
        public var sizes: [Size]
    }
    public var path: String
    public var driver: String
    public var card: String
    public var formats: [Format]
    /// Why the device could not be opened or enumerated (not a capture node, busy, no permission).
    public var error: String?
    /// The camera's controls with type, range, default, current value, flags and menu items.
    public var controls: [V4L2ControlInfo] = []

    public var description: String {
        var s = "\(path): " + (card.isEmpty ? "" : "\(card) (\(driver))")
        if let error { return s + (card.isEmpty ? "" : " ") + error }
        for f in formats {
            s += "\n    \(f.fourcc) (\(f.name))\(f.emulated ? " [emulated]" : "")\(f.supported ? "" : " [not supported by depthlens]")"
            for z in f.sizes {
                s += "\n      \(z.width)x\(z.height)" + (z.fps.isEmpty ? "" : " @ " + z.fps.map { formatRate($0) }.joined(separator: ", ") + " fps")
            }
        }
        if !controls.isEmpty { s += "\n    controls:" + controls.map { "\n      " + $0.description.replacingOccurrences(of: "\n", with: "\n      ") }.joined() }
        return s
    }
}

/// Finds and describes the V4L2 cameras through a `V4L2System`, so the scripted system tests it.
public enum V4L2Devices {
    /// `/dev/video*` (or `directory`'s `video*`), in number order.
    public static func paths(directory: String = "/dev") -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return names.filter { $0.hasPrefix("video") && Int($0.dropFirst(5)) != nil }
            .sorted { Int($0.dropFirst(5))! < Int($1.dropFirst(5))! }
            .map { (directory as NSString).appendingPathComponent($0) }
    }

    /// Opens each device, enumerates its formats, sizes and frame rates, and closes it again.
    /// Kernel: `VIDIOC_QUERYCAP`, `VIDIOC_ENUM_FMT`, `VIDIOC_ENUM_FRAMESIZES`, `VIDIOC_ENUM_FRAMEINTERVALS`.
    public static func list(paths: [String], system: V4L2System = LinuxV4L2System()) -> [V4L2DeviceInfo] {
        paths.map { path in
            let camera = V4L2Camera(path: path, system: system)
            defer { camera.close() }
            var info = V4L2DeviceInfo(path: path, driver: "", card: "", formats: [], error: nil)
            do {
                try camera.open()
                info.driver = camera.driver
                info.card = camera.card
                info.formats = try camera.formats().map { f in
                    V4L2DeviceInfo.Format(fourcc: f.fourcc.description, name: f.name, compressed: f.isCompressed,
                                          emulated: f.isEmulated, supported: V4L2FourCC.supported.contains(f.fourcc),
                                          sizes: f.sizes.map { .init(width: $0.width, height: $0.height, fps: $0.frameRates) })
                }
                info.controls = try V4L2ControlInfo.list(V4L2ControlDevice(camera: camera))
            } catch {
                info.driver = camera.driver
                info.card = camera.card
                info.error = "\(error)"
            }
            return info
        }
    }
}
