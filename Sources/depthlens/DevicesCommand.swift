import ArgumentParser
import Capture
import DepthKit
import Foundation
import GPUKit

struct DevicesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "devices",
        abstract: "List the Vulkan devices (the one depthlens would choose, and why the others were rejected), the V4L2 cameras with their formats, sizes and frame rates, and the thermal state.",
        discussion: "--json prints one object: {\"vulkan\": [...], \"cameras\": [...], \"thermal\": {\"state\": ..., \"zones\": [...]}}. "
            + "Cameras are V4L2 nodes grouped by bus info (a RealSense's depth, IR, color and metadata nodes are one camera), "
            + "each with the --source that opens it: {\"busInfo\", \"card\", \"driver\", \"source\", \"nodes\": [{\"path\", \"node\", \"formats\", ...}]}. "
            + "Thermal zones are read from /sys/class/thermal, or from DEPTHLENS_THERMAL_DIR when set."
    )

    @Option(help: "Prefer this device (index or part of the name) over automatic choice.")
    var device: String?
    @Flag(help: "Print JSON.")
    var json = false
    @Flag(help: "List the ROS 2 image topics published over DDS on --domain instead (listens --listen seconds), each with the --source that opens it.")
    var dds = false
    @Option(help: "With --dds: the DDS domain (ROS_DOMAIN_ID).")
    var domain: Int = 0
    @Option(help: "With --dds: seconds to listen for publishers.")
    var listen: Double = 1.5

    /// What `--json` prints.
    struct Listing: Encodable {
        var vulkan: [GPUDeviceInfo]
        /// V4L2 nodes grouped by bus info: one entry per camera, its nodes inside.
        var cameras: [V4L2CameraGroup]
        var thermal: ThermalReading
    }

    func run() throws {
        if dds { return try listDDS() }
        GPUBackend.select(device: device)
        let listing = Listing(vulkan: try GPUDevices.list(), cameras: V4L2Devices.groups(V4L2Devices.list(paths: V4L2Devices.paths())),
                              thermal: ThermalZones.read())
        if json {
            let enc = JSONEncoder()
            enc.outputFormatting = [.prettyPrinted, .sortedKeys]
            print(String(decoding: try enc.encode(listing), as: UTF8.self))
            return
        }
        print("Vulkan devices:")
        for d in listing.vulkan { print(d.description) }
        print("Cameras:")
        if listing.cameras.isEmpty { print("  none (no /dev/video*)") }
        for c in listing.cameras { print(c.description.split(separator: "\n").map { "  " + $0 }.joined(separator: "\n")) }
        print("Thermal: \(listing.thermal.summary)")
        for z in listing.thermal.zones {
            let trips = z.trips.map { String(format: "%@ %.0f", $0.type, $0.celsius) }.joined(separator: ", ")
            print(String(format: "  %@ %@: %.1f °C, %@", z.name, z.type, z.celsius, z.state.rawValue) + (trips.isEmpty ? " (no trip points)" : " (trips: \(trips))"))
        }
        for p in listing.thermal.problems { print("  \(p)") }
    }

    /// One image topic on the domain, for `--dds`.
    struct DDSTopic: Encodable {
        var topic: String
        var type: String
        var reliability: String
        var source: String
    }

    func listDDS() throws {
        guard listen > 0, listen <= 60 else { throw DepthKitError.invalidArgument("--listen must be 0…60 seconds") }
        let participant = try DDSParticipant(domain: domain)
        defer { participant.close() }
        let types = [ROS2DDS.TypeName.image: "sensor_msgs/msg/Image", ROS2DDS.TypeName.compressedImage: "sensor_msgs/msg/CompressedImage"]
        let suffix = domain == 0 ? "" : ",domain=\(domain)"
        var topics: [DDSTopic] = []
        for p in try participant.publications(listening: listen) where p.ddsTopic.hasPrefix("rt/") {
            guard let type = types[p.type], !topics.contains(where: { $0.topic == p.topic }) else { continue }
            topics.append(DDSTopic(topic: p.topic, type: type, reliability: p.reliable ? "reliable" : "best effort",
                                   source: "dds:\(p.topic)\(suffix)"))
        }
        topics.sort { $0.topic < $1.topic }
        // realsense2_camera-style namespaces: NS/color/image_raw.
        let namespaces = Set(topics.compactMap { t -> String? in
            t.topic.hasSuffix("/color/image_raw") ? String(t.topic.dropLast("/color/image_raw".count)) : nil
        }).sorted()
        if json {
            let enc = JSONEncoder()
            enc.outputFormatting = [.prettyPrinted, .sortedKeys]
            print(String(decoding: try enc.encode(["topics": topics]), as: UTF8.self))
            return
        }
        print("DDS image topics on domain \(domain):")
        if topics.isEmpty { print("  none heard in \(listen) s") }
        for t in topics { print("  \(t.topic)  \(t.type), \(t.reliability)  --source \(t.source)") }
        for n in namespaces where !n.isEmpty { print("  camera namespace \(n)  --source dds:\(n)\(suffix)") }
    }
}
