import Capture
import CaptureTesting
import DepthKit
import Foundation
#if canImport(Glibc)
import Glibc
#endif

// One libFuzzer binary, one target per reader: `DEPTHLENS_FUZZ_TARGET=NAME depthlens-fuzz [libFuzzer
// options] CORPUS…` fuzzes NAME; `depthlens-fuzz --make-seeds DIR` writes a small valid seed corpus
// per target into DIR/NAME (scripts/fuzz adds JPEG seeds with ImageMagick). Every reader is called
// through the entry point the product uses; readers that take a path get the bytes in a file in a
// private temporary folder. A reader may throw (bad input is expected); it must not crash, leak
// (AddressSanitizer) or hang.

/// The private folder the path-based readers read from.
let scratch: String = {
    let base = ProcessInfo.processInfo.environment["TMPDIR"] ?? "/tmp"
    let dir = "\(base)/depthlens-fuzz-\(getpid())"
    try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    return dir
}()

func put(_ bytes: UnsafeRawBufferPointer, _ name: String) -> String {
    let path = scratch + "/" + name
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    precondition(fd >= 0, "cannot write \(path)")
    var done = 0
    while done < bytes.count {
        let n = write(fd, bytes.baseAddress! + done, bytes.count - done)
        precondition(n > 0, "cannot write \(path)")
        done += n
    }
    close(fd)
    return path
}

/// Little cursor over the fuzz input for the structured targets.
struct Cursor {
    var bytes: UnsafeRawBufferPointer
    var at = 0
    mutating func byte() -> Int {
        guard at < bytes.count else { return 0 }
        defer { at += 1 }
        return Int(bytes[at])
    }
    mutating func u16() -> Int { byte() << 8 | byte() }
}

let targets: [String: (UnsafeRawBufferPointer) -> Void] = [
    // The image readers detect the format from the first bytes, so each seed corpus mostly
    // exercises its own decoder (PNG and JPEG through libpng/libjpeg in the C shim).
    "png": { _ = try? ImageIO.read(put($0, "in.png")) },
    "jpeg": { _ = try? ImageIO.read(put($0, "in.jpg")) },
    "pnm": { b in
        let p = put(b, "in.pgm")
        _ = try? ImageIO.read(p)
        _ = try? ImageIO.read(p, pgmLittleEndian: true)
    },
    "pfm": { _ = try? DepthIO.readDepth(put($0, "in.pfm")) },
    "ply": { b in
        // A small chunk puts vertices, lines and the header across chunk boundaries.
        _ = try? PLYReader.decode(Array(b), name: "in.ply", chunkSize: 64)
        _ = try? PLYReader.load(put(b, "in.ply"))
    },
    "tum": { b in
        // The same text as rgb.txt + depth.txt, then as associations.txt.
        let dir = scratch + "/tum"
        try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        try? FileManager.default.removeItem(atPath: dir + "/associations.txt")
        _ = put(b, "tum/rgb.txt"); _ = put(b, "tum/depth.txt")
        _ = try? TUMSequence(directory: dir)
        _ = put(b, "tum/associations.txt")
        _ = try? TUMSequence(directory: dir)
    },
    "mjpeg": { b in
        // The size check comes after decoding, so any frame size exercises the decoder.
        let dst = PixelBuffer(width: 64, height: 48, format: .rgba8)
        if let base = b.baseAddress { _ = try? PixelConversion.mjpegToRGBA(base, count: b.count, into: dst) }
    },
    "v4l2": { b in
        // Formats, sizes and frame rates from the input, offered by the scripted V4L2 layer; the
        // camera enumerates them and negotiates a request also taken from the input. (The scripted
        // layer needs at least one format with one size to stand for a device.)
        var c = Cursor(bytes: b)
        let fourccs: [V4L2FourCC] = [.yuyv, .uyvy, .nv12, .mjpeg, .rgb24, .bgr24, .grey, .y8i, .y10, .y12, .y12i, .z16, .y16,
                                     V4L2FourCC(0x3436_3248) /* H264: unsupported */]
        var formats: [ScriptedV4L2System.Format] = []
        for _ in 0..<(1 + c.byte() % 4) {
            let fourcc = fourccs[c.byte() % fourccs.count]
            let sizes = (0..<(1 + c.byte() % 4)).map { _ in (width: c.u16() % 4200, height: c.u16() % 4200) }
            let rates = (0..<(c.byte() % 3)).map { _ in Double(c.byte()) / Double(max(1, c.byte() % 8)) }
            formats.append(.init(fourcc, sizes: sizes, frameRates: rates))
        }
        let system = ScriptedV4L2System()
        _ = system.addDevice(path: "/dev/video0", formats: formats)
        let camera = V4L2Camera(path: "/dev/video0", system: system)
        defer { camera.close() }
        guard (try? camera.open()) != nil else { return }
        _ = try? camera.formats()
        let request = V4L2Request(width: c.u16() % 4200, height: c.u16() % 4200, fps: Double(c.byte()),
                                  formats: (0..<(1 + c.byte() % 3)).map { _ in fourccs[c.byte() % fourccs.count] })
        _ = try? camera.configure(request)
    },
    // A Matroska recording from memory (libavformat through CMedia's custom AVIOContext): the
    // tracks, tags, calibration.json attachment and packet index, then every frame decoded
    // (MJPEG, raw b16g, H.264, FFV1…), and the first again after the last (a seek back).
    "mkv": { b in
        let s = MKVSource(bytes: Array(b), name: "in.mkv")
        guard (try? s.start()) != nil, let n = s.frameCount else { return }
        for i in 0..<min(n, 64) { _ = try? s.frame(i) }
        if n > 1 { _ = try? s.frame(0) }
    },
    // `--calibration` files: recognized by content, then the YAML subset, OpenCV's XML or calibration.json.
    "calibration": { _ = try? CalibrationFile.decode(Array($0), path: "in.yml") },
    // Every parser of the phone-scan layouts' text files and TUM's groundtruth.txt, on the same bytes.
    "scan": { b in
        let bytes = Array(b)
        _ = try? ScanFormats.strayOdometry(bytes, path: "odometry.csv")
        _ = try? ScanFormats.strayCameraMatrix(bytes, path: "camera_matrix.csv")
        _ = try? ScanFormats.polycamCamera(bytes, path: "camera.json")
        _ = try? ScanFormats.pincam(bytes, path: "frame.pincam")
        _ = try? ScanFormats.arkitScenesTrajectory(bytes, path: "lowres_wide.traj")
        _ = try? ScanFormats.scannerAppFrame(bytes, path: "frame_00000.json")
        _ = try? PoseTrack.parseTUM(bytes, path: "groundtruth.txt")
    },
    // The viewer snapshot's NAME.json, through the decoder `process --snapshot` and `info` use.
    "snapshot": { _ = try? SnapshotMetadata.decode(Array($0), name: "in.json") },
    // ROS bags: the container in memory (index, chunks through lz4/bz2, every message decoded as
    // the type its connection names), then the same bytes as a file through BagSource (streams,
    // calibration, metadata, every frame).
    "bag": { b in
        let bytes = Array(b)
        if let bag = try? RosBag(bytes: bytes, name: "in.bag") {
            for m in bag.messages {
                guard let c = bag.connection(m.connection), let data = try? bag.data(of: m) else { continue }
                switch c.type {
                case "sensor_msgs/Image": _ = try? ROSMessage.image(data, bag: "in.bag", topic: c.topic)
                case "sensor_msgs/CameraInfo": _ = try? ROSMessage.cameraInfo(data, bag: "in.bag", topic: c.topic)
                case "geometry_msgs/Transform": _ = (try? ROSMessage.transform(data, bag: "in.bag", topic: c.topic))?.rotationMatrix
                case "diagnostic_msgs/KeyValue": _ = try? ROSMessage.keyValue(data, bag: "in.bag", topic: c.topic)
                case "std_msgs/Float32": _ = try? ROSMessage.float32(data, bag: "in.bag", topic: c.topic)
                case "std_msgs/Float64": _ = try? ROSMessage.float64(data, bag: "in.bag", topic: c.topic)
                case "std_msgs/String": _ = try? ROSMessage.string(data, bag: "in.bag", topic: c.topic)
                case "std_msgs/UInt32": _ = try? ROSMessage.uint32(data, bag: "in.bag", topic: c.topic)
                case "realsense_msgs/StreamInfo": _ = try? ROSMessage.streamInfo(data, bag: "in.bag", topic: c.topic)
                default: break
                }
            }
        }
        let source = BagSource(path: put(b, "in.bag"))
        guard (try? source.start()) != nil, let n = source.frameCount else { return }
        source.pause()
        for i in 0..<min(n, 16) {
            try? source.seek(toFrame: i)
            _ = try? source.nextFrame(now: Double(i))
        }
        _ = try? source.seek(toTime: 0.5)
        _ = source.metadata
    },
]

/// Small valid files per target, written with depthlens' own writers (the bag seeds: scripts/fuzz,
/// with python3-rosbag from the test fixture).
func makeSeeds(_ dir: String) throws {
    func seed(_ target: String, _ name: String, _ write: (String) throws -> Void) throws {
        try FileManager.default.createDirectory(atPath: "\(dir)/\(target)", withIntermediateDirectories: true)
        try write("\(dir)/\(target)/\(name)")
    }
    func text(_ s: String) -> (String) throws -> Void { { try FileSupport.atomicWrite(Array(s.utf8), to: $0) } }
    let frame = SyntheticScene().render(width: 16, height: 12)
    let rgba = frame.color
    let gray = PixelBuffer(width: 7, height: 5, format: .gray8)
    let g16 = PixelBuffer(width: 6, height: 4, format: .gray16(depthScale: 1000))
    for y in 0..<4 { for x in 0..<6 { g16.setSample(x: x, y: y, Float(x * 300 + y)) } }
    try seed("png", "color.png") { try ImageIO.write(rgba, to: $0) }
    try seed("png", "gray.png") { try ImageIO.write(gray, to: $0) }
    try seed("png", "depth16.png") { try ImageIO.write(g16, to: $0) }
    try seed("pnm", "color.ppm") { try ImageIO.write(rgba, to: $0) }
    try seed("pnm", "gray.pgm") { try ImageIO.write(gray, to: $0) }
    try seed("pnm", "depth16.pgm") { try ImageIO.write(g16, to: $0) }
    try seed("pfm", "depth.pfm") { try ImageIO.write(frame.depth.depthFloat32(), to: $0) }
    let cloud = PointCloud.unproject(depth: frame.depth, color: frame.color)
    let small = PointCloud(positions: Array(cloud.positions.prefix(8)), colors: Array(cloud.colors.prefix(8)))
    try seed("ply", "binary.ply") { try PLYWriter.write(small, to: $0) }
    try seed("ply", "ascii.ply") { try PLYWriter.write(small, to: $0, ascii: true) }
    try seed("ply", "mesh_be.ply", text("ply\nformat binary_big_endian 1.0\nelement vertex 1\nproperty double x\nproperty double y\n"
        + "property double z\nproperty float red\nproperty float green\nproperty float blue\nproperty float nx\n"
        + "element face 1\nproperty list uchar int vertex_indices\nend_header\n"
        + String(repeating: "\u{3f}", count: 40) + "\u{3}\0\0\0\0\0\0\0\0\0\0\0\0"))
    try seed("ply", "faces_first.ply", text("ply\nformat ascii 1.0\nelement face 1\nproperty list uchar int vertex_indices\n"
        + "element vertex 2\nproperty float x\nproperty float y\nproperty float z\nproperty ushort red\nproperty ushort green\n"
        + "property ushort blue\nend_header\n3 0 1 1\n1 2 3 65535 0 7\nnan 1 2 0 0 0\n"))
    try seed("tum", "rgb.txt", text("# color images\n1305031102.175304 rgb/1305031102.175304.png\n1305031102.211214 rgb/1305031102.211214.png\n"))
    try seed("tum", "associations.txt", text("1305031102.175304 rgb/a.png 1305031102.160407 depth/a.png\n"))
    try seed("scan", "odometry.csv", text("timestamp, frame, x, y, z, qx, qy, qz, qw\n1000.0, 000000, 0.1, -0.2, 0.3, 0.02, 0.17, -0.01, 0.98\n"))
    try seed("scan", "camera_matrix.csv", text("611.0,0.0,318.2\n0.0,609.5,241.7\n0.0,0.0,1.0\n"))
    try seed("scan", "polycam.json", text("{\"cx\": 318.2, \"cy\": 241.7, \"fx\": 611.0, \"fy\": 609.5, \"width\": 640, \"height\": 480, "
        + "\"t_00\": 1, \"t_01\": 0, \"t_02\": 0, \"t_03\": 0.1, \"t_10\": 0, \"t_11\": 1, \"t_12\": 0, \"t_13\": 0.2, "
        + "\"t_20\": 0, \"t_21\": 0, \"t_22\": 1, \"t_23\": 0.3}"))
    try seed("scan", "frame.pincam", text("256 192 212.1 212.1 127.5 95.5\n"))
    try seed("scan", "lowres_wide.traj", text("6997.771 -0.05 -0.35 0.02 0.0068 0.183 -0.326\n"))
    try seed("scan", "frame_00000.json", text("{\"cameraPoseARFrame\": [1,0,0,0.1, 0,1,0,0.2, 0,0,1,0.3, 0,0,0,1], "
        + "\"intrinsics\": [611,0,318.2, 0,609.5,241.7, 0,0,1], \"time\": 52431.25}"))
    try seed("scan", "groundtruth.txt", text("# timestamp tx ty tz qx qy qz qw\n1305031102.175304 0.1 0.2 0.3 0 0 0 1\n"))
    var v4l2: [UInt8] = [2, 0, 2, 0x02, 0x80, 0x01, 0xE0, 0x01, 0x40, 0x00, 0xF0, 2, 30, 1, 15, 1]
    v4l2 += [5, 1, 0x02, 0x80, 0x01, 0xE0, 1, 30, 1, 0x02, 0x80, 0x01, 0xE0, 30, 1, 0]
    try seed("v4l2", "two_formats", { try FileSupport.atomicWrite(v4l2, to: $0) })
    // The bytes the viewer's Snapshot.write writes for a synthetic frame.
    let meta = SnapshotMetadata(intrinsics: frame.depth.intrinsics, mode: "portrait", timestamp: 1305031102.175304,
                                frame: 42, source: "synthetic",
                                files: ["depthlens-20240131-142501-123-f42_filtered.png", "depthlens-20240131-142501-123-f42_color.png",
                                        "depthlens-20240131-142501-123-f42_depth.png"])
    try seed("snapshot", "snapshot.json") { try FileSupport.atomicWrite(try meta.encoded(), to: $0) }
    // Calibration files in their writers' layouts (cv::FileStorage YAML and XML, ROS camera_info, stereo R/T).
    try seed("calibration", "opencv.yml", text("%YAML:1.0\n---\nimage_width: 640\nimage_height: 480\n# flags: +zero_tangent_dist\n"
        + "camera_matrix: !!opencv-matrix\n   rows: 3\n   cols: 3\n   dt: d\n   data: [ 6.05e+02, 0., 3.195e+02, 0.,\n"
        + "       6.05e+02, 2.395e+02, 0., 0., 1. ]\ndistortion_coefficients: !!opencv-matrix\n   rows: 5\n   cols: 1\n"
        + "   dt: d\n   data: [ 1.1e-01, -7.3e-01, 0., 0., 1.15e+00 ]\ncalibration_time: \"Wed 25 Nov 2026\"\n"))
    try seed("calibration", "opencv.xml", text("<?xml version=\"1.0\"?>\n<opencv_storage>\n<image_width>1280</image_width>\n"
        + "<image_height>720</image_height>\n<!-- flags -->\n<camera_matrix type_id=\"opencv-matrix\">\n  <rows>3</rows>\n"
        + "  <cols>3</cols>\n  <dt>d</dt>\n  <data>\n    912.3 0. 640.1 0. 913.4 359.8 0. 0. 1.</data></camera_matrix>\n</opencv_storage>\n"))
    try seed("calibration", "ros.yaml", text("image_width: 640\nimage_height: 480\ncamera_name: cam\ncamera_matrix:\n  rows: 3\n"
        + "  cols: 3\n  data: [517.3, 0, 318.6, 0, 516.4, 255.3, 0, 0, 1]\ndistortion_model: plumb_bob\ndistortion_coefficients:\n"
        + "  rows: 1\n  cols: 5\n  data:\n  - 0.26\n  - -0.95\n  - 0\n  - 0\n  - 1.16\nprojection_matrix: {rows: 3, cols: 4, data: [1]}\n"))
    try seed("calibration", "stereo.yml", text("%YAML:1.0\n---\nR: !!opencv-matrix\n   rows: 3\n   cols: 3\n   dt: d\n"
        + "   data: [ 1., 0., 0., 0., 1., 0., 0., 0., 1. ]\nT: !!opencv-matrix\n   rows: 3\n   cols: 1\n   dt: d\n   data: [ -14.3, 0.6, 0.6 ]\n"))
}

if CommandLine.arguments.count == 3, CommandLine.arguments[1] == "--make-seeds" {
    do { try makeSeeds(CommandLine.arguments[2]) } catch { fputs("depthlens-fuzz: \(error)\n", stderr); exit(1) }
    exit(0)
}

/// The chosen target, where the C callback can reach it (a C function pointer captures nothing).
enum Chosen { nonisolated(unsafe) static var target: (UnsafeRawBufferPointer) -> Void = { _ in } }

let targetName = ProcessInfo.processInfo.environment["DEPTHLENS_FUZZ_TARGET"] ?? ""
guard let target = targets[targetName] else {
    fputs("depthlens-fuzz: set DEPTHLENS_FUZZ_TARGET to one of \(targets.keys.sorted().joined(separator: " "))\n", stderr)
    exit(2)
}
Chosen.target = target

@_cdecl("LLVMFuzzerTestOneInput")
func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    Chosen.target(UnsafeRawBufferPointer(start: data, count: size))
    return 0
}

/// libFuzzer's driver, run from Swift's own `main` (SwiftPM links the executable's entry point as
/// `main`, so libFuzzer's `main` is not used).
@_silgen_name("LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(_ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
                         _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt) -> CInt

var argc = CommandLine.argc
var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
let status = LLVMFuzzerRunDriver(&argc, &argv, fuzzOne)
try? FileManager.default.removeItem(atPath: scratch)
exit(status)
