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
    /// `bus_info`: the same for every node of one physical device (empty when it could not be opened).
    public var busInfo: String = ""
    /// What the node streams: "depth" (offers Z16), "color", "infrared" (gray formats only),
    /// "metadata" (a metadata node: no video capture), "unsupported" (no format depthlens reads),
    /// or "unavailable" (could not be opened: `error` says why).
    public var node: String = "unavailable"
    public var formats: [Format]
    /// Why the device could not be opened or enumerated (not a capture node, busy, no permission).
    public var error: String?
    /// The camera's controls with type, range, default, current value, flags and menu items.
    public var controls: [V4L2ControlInfo] = []

    public var description: String {
        var s = "\(path): " + (card.isEmpty ? "" : "\(card) (\(driver))")
        if node == "metadata" { return s + " metadata node (no video capture)" }
        if let error { return s + (card.isEmpty ? "" : " ") + error }
        s += ", \(node)"
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
                info.busInfo = camera.busInfo
                let formats = try camera.formats()
                info.formats = formats.map { f in
                    V4L2DeviceInfo.Format(fourcc: f.fourcc.description, name: f.name, compressed: f.isCompressed,
                                          emulated: f.isEmulated, supported: V4L2FourCC.supported.contains(f.fourcc),
                                          sizes: f.sizes.map { .init(width: $0.width, height: $0.height, fps: $0.frameRates) })
                }
                info.controls = try V4L2ControlInfo.list(V4L2ControlDevice(camera: camera))
                let kinds = Set(formats.map(\.fourcc).filter { V4L2FourCC.supported.contains($0) }.map(\.streamKind))
                info.node = kinds.contains("depth") ? "depth" : kinds.contains("color") ? "color"
                    : kinds.contains("infrared") ? "infrared" : "unsupported"
            } catch {
                info.driver = camera.driver
                info.card = camera.card
                info.busInfo = camera.busInfo
                if camera.isMetadataNode { info.node = "metadata" } else { info.error = "\(error)" }
            }
            return info
        }
    }
}

/// One physical camera: the nodes that share a `bus_info` (a RealSense's depth, IR, color and
/// metadata nodes; a webcam's video and metadata nodes), so a user picks a camera, not a node.
public struct V4L2CameraGroup: Codable, Equatable, Sendable, CustomStringConvertible {
    /// The nodes' `bus_info` (empty for a node that could not be opened: it is its own group).
    public var busInfo: String
    public var card: String
    public var driver: String
    /// The `--source` that opens the camera: its color node (else its infrared node) with its depth
    /// node as `depth=`; nil when it has no node depthlens can show as the picture.
    public var source: String?
    public var nodes: [V4L2DeviceInfo]

    public var description: String {
        var s = nodes.count == 1 && busInfo.isEmpty ? "" : "\(card.isEmpty ? "camera" : card)"
            + (driver.isEmpty ? "" : " (\(driver))") + (busInfo.isEmpty ? "" : " at \(busInfo)")
            + ": \(nodes.count) node\(nodes.count == 1 ? "" : "s")" + (source.map { ", --source \($0)" } ?? "") + "\n"
        s += nodes.map { n in n.description.split(separator: "\n", omittingEmptySubsequences: false)
            .map { "  " + $0 }.joined(separator: "\n") }.joined(separator: "\n")
        return s
    }
}

extension V4L2Devices {
    /// Nodes grouped by `bus_info`, groups in the order of their first node; within a group, nodes
    /// in the listing's order.
    public static func groups(_ nodes: [V4L2DeviceInfo]) -> [V4L2CameraGroup] {
        var order: [String] = []
        var byKey: [String: [V4L2DeviceInfo]] = [:]
        for n in nodes {
            let key = n.busInfo.isEmpty ? "path:" + n.path : "bus:" + n.busInfo
            if byKey[key] == nil { order.append(key) }
            byKey[key, default: []].append(n)
        }
        return order.map { key in
            let members = byKey[key]!
            let named = members.first { !$0.card.isEmpty } ?? members[0]
            let picture = members.first { $0.node == "color" } ?? members.first { $0.node == "infrared" }
            let depth = members.first { $0.node == "depth" }
            let source = picture.map { "v4l2:\($0.path)" + (depth.map { ",depth=\($0.path)" } ?? "") }
            return V4L2CameraGroup(busInfo: members[0].busInfo, card: named.card, driver: named.driver,
                                   source: source, nodes: members)
        }
    }
}
