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
            + "Thermal zones are read from /sys/class/thermal, or from DEPTHLENS_THERMAL_DIR when set. "
            + "With --dds, --json prints {\"domain\", \"topics\": [{\"topic\", \"type\", \"reliability\", \"width\", \"height\", "
            + "\"encoding\", \"rate\", \"samples\", \"source\", \"problem\"}], \"cameras\": [{\"namespace\", \"source\"}]} (docs/DDS.md)."
    )

    @Option(help: "Prefer this device (index or part of the name) over automatic choice.")
    var device: String?
    @Flag(help: "Print JSON.")
    var json = false
    @Flag(help: "List the ROS 2 image topics published over DDS on --domain instead (listens --listen seconds), each with its type, size, encoding and rate and the --source that opens it.")
    var dds = false
    @Option(help: "With --dds: the DDS domain (ROS_DOMAIN_ID).")
    var domain: Int = 0
    @Option(help: "With --dds: seconds to listen for publishers and their samples (the rate is measured over them).")
    var listen: Double = 2
    @Option(help: "With --dds: largest image size given, WxH (default 8192x8192); a compressed image's size is read from its header, never decoded.")
    var maxImage: String?

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

    func listDDS() throws {
        guard listen > 0, listen <= 60 else { throw DepthKitError.invalidArgument("--listen must be 0…60 seconds") }
        var limit = DDSImageLimit.standard
        if let maxImage {
            do { limit = try DDSImageLimit.parse(maxImage) } catch let CaptureError.invalidSource(why) {
                throw DepthKitError.invalidArgument("--max-image: \(why)")
            }
        }
        let topics = try DDSDiscovery.imageTopics(domain: domain, listening: listen, maxImage: limit)
        let cameras = DDSDiscovery.cameraNamespaces(topics, domain: domain)
        if json {
            struct Camera: Encodable { var namespace: String; var source: String }
            struct DDSListing: Encodable { var domain: Int; var topics: [DDSImageTopic]; var cameras: [Camera] }
            let enc = JSONEncoder()
            enc.outputFormatting = [.prettyPrinted, .sortedKeys]
            let listing = DDSListing(domain: domain, topics: topics, cameras: cameras.map { Camera(namespace: $0.namespace, source: $0.source) })
            print(String(decoding: try enc.encode(listing), as: UTF8.self))
            return
        }
        print("DDS image topics on domain \(domain):")
        if topics.isEmpty { print("  none heard in \(listen) s") }
        for t in topics { print("  \(t.topic)  \(t.type), \(t.summary), \(t.reliability)  --source \(t.source)") }
        for c in cameras { print("  camera namespace \(c.namespace)  --source \(c.source)") }
    }
}
