import ArgumentParser
import Capture
import DepthKit
import Foundation

struct PublishCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "publish",
        abstract: "Publish any source as ROS 2 camera topics over DDS (rviz2, Foxglove and another depthlens see it; no ROS install).",
        discussion: "Without --source: the synthetic scene. Topics under --namespace: color/image_raw (rgb8), depth/image_raw (16UC1 millimeters, or 32FC1 meters for "
            + "sources whose depth is not in millimeters), color/camera_info, depth/camera_info, and the depth→color transform on "
            + "/tf_static. Images are best effort (ROS 2's sensor-data QoS), camera_info reliable, /tf_static reliable and "
            + "transient-local. A recording plays at its own rate (--loop repeats it). DDS has no authentication: everyone on "
            + "the domain and network can read what is published; --interface binds it to one network interface (lo: this "
            + "machine only). Cyclone DDS also reads CYCLONEDDS_URI. Stops on Ctrl+C (or after --frames)."
    )

    /// Without `--source`: the synthetic scene.
    @OptionGroup var input: SourceOptions
    @Option(help: "ROS 2 namespace of the topics.")
    var namespace: String = "/depthlens"
    @Option(help: "DDS domain (ROS_DOMAIN_ID), 0…232.")
    var domain: Int = 0
    @Option(help: "Network interface to publish on (lo, eth0, …); default: Cyclone DDS's choice (or CYCLONEDDS_URI's).")
    var interface: String?
    @Flag(help: "Start a recording over at its end.")
    var loop = false
    @Option(help: "Stop after this many frames.")
    var frames: Int?
    @Flag(help: "Publish color as a JPEG sensor_msgs/CompressedImage (color/image_raw/compressed) for thin links.")
    var colorJpeg = false
    @Option(help: "Frames per second to play a recording or the synthetic scene at (default: its own rate).")
    var fps: Double?
    @Option(help: "Wait up to this many seconds for a subscriber to the color images before the first frame.")
    var waitForSubscriber: Double?
    @Flag(help: "Print one line of statistics per second (frames published, subscribers).")
    var stats = false

    func run() throws {
        if colorJpeg {
            throw DepthKitError.invalidArgument("--color-jpeg is not implemented yet (no JPEG encoder in depthlens); publish raw rgb8")
        }
        if let frames, frames < 1 { throw DepthKitError.invalidArgument("--frames must be at least 1, got \(frames)") }
        try input.check()
        let spec = try input.spec(or: .synthetic)
        let camera = try input.calibrationOverride()
        let src = try input.makeSource(spec)
        let participant = try DDSParticipant(domain: domain, interface: interface)
        defer { participant.close() }
        let publisher = try DDSPublisher(participant: participant, namespace: namespace)
        FileHandle.standardError.write(Data(("depthlens: publishing \(spec) as \(publisher.namespace)/{color,depth}/image_raw on DDS domain \(domain)"
            + (interface.map { " (interface \($0))" } ?? "") + ". DDS has no authentication: anyone who can reach this "
            + "network on that domain can read these topics.\n").utf8))
        try src.start()
        defer { src.stop() }
        if let p = src.playback {
            p.loop = loop
            if let fps {
                guard fps > 0, fps <= 1000 else { throw DepthKitError.invalidArgument("--fps must be in (0, 1000]") }
                p.fps = fps
            }
        } else if fps != nil {
            throw DepthKitError.invalidArgument("--fps: \(spec) is live; it sends frames at its own rate")
        }
        if let wait = waitForSubscriber {
            let end = ProcessInfo.processInfo.systemUptime + wait
            while publisher.subscribers == 0, ProcessInfo.processInfo.systemUptime < end { Thread.sleep(forTimeInterval: 0.01) }
            // Discovery of the subscriber's other readers (depth, camera_info) completes alongside.
            Thread.sleep(forTimeInterval: 0.3)
        }
        src.onWarning = { FileHandle.standardError.write(Data("depthlens: \(spec): \($0)\n".utf8)) }
        StopSignals.install()
        let t0 = ProcessInfo.processInfo.systemUptime
        var lastStats = t0, lastCount = 0
        while StopSignals.pending == nil {
            let now = ProcessInfo.processInfo.systemUptime
            let frame: FrameSet?
            do { frame = try src.nextFrame(now: now - t0) } catch {
                // The source has said what went wrong (onWarning); a recording goes on with its next frame.
                if !src.isLive, let p = src.playback, p.isFinished { break }
                Thread.sleep(forTimeInterval: 0.005)
                continue
            }
            if var frame {
                let d = frame.depth?.map
                // --calibration / --intrinsics: the camera_info and /tf_static published.
                let cal = try camera.calibrate(&frame, of: src) ?? RGBDCalibration.assumed(depthWidth: d?.width ?? frame.color.width,
                                                                     depthHeight: d?.height ?? frame.color.height,
                                                                     colorWidth: frame.color.width, colorHeight: frame.color.height)
                try publisher.publish(frame, calibration: cal, depthUnitsPerMeter: src.depthUnitsPerMeter)
                if let frames, publisher.published >= frames { break }
            } else if let p = src.playback, p.isFinished {
                break
            } else {
                Thread.sleep(forTimeInterval: 0.001)
            }
            if stats, now - lastStats >= 1 {
                print(String(format: "published %d frames (%.1f fps), %d subscribers", publisher.published,
                             Double(publisher.published - lastCount) / (now - lastStats), publisher.subscribers))
                lastStats = now
                lastCount = publisher.published
            }
        }
        // Give reliable readers (camera_info, /tf_static) a moment to have the last samples.
        Thread.sleep(forTimeInterval: 0.2)
        print("published \(publisher.published) frames")
    }
}
