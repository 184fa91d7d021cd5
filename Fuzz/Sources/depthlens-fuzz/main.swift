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

/// A decoded librealsense zstd frame converted as a recording's frame is.
func rszstdConvert(_ image: LibrealsenseZstdImage?) {
    guard let image else { return }
    _ = ROSImageDecoding.isDepthEncoding(image.encoding) ? ROSImageDecoding.depthMeters(image, units: 0.001) : ROSImageDecoding.rgba(image)
}

/// One zstd frame holding `data` as a raw block (RFC 8878: single segment, a 1-byte content size,
/// one last raw block), so a seed needs no compressor.
func zstdRawFrame(_ data: [UInt8]) -> [UInt8] {
    precondition(data.count < 256)
    let block = UInt32(data.count) << 3 | 1
    return [0x28, 0xB5, 0x2F, 0xFD, 0x20, UInt8(data.count), UInt8(block & 0xFF), UInt8(block >> 8 & 0xFF), UInt8(block >> 16)] + data
}

let targets: [String: (UnsafeRawBufferPointer) -> Void] = [
    // The image readers detect the format from the first bytes, so each seed corpus mostly
    // exercises its own decoder (PNG and JPEG through libpng/libjpeg in the C shim).
    "png": { _ = try? ImageIO.read(put($0, "in.png")) },
    // A file, and the same bytes from memory (a ROS CompressedImage: color straight into RGBA).
    "jpeg": { b in
        _ = try? ImageIO.read(put(b, "in.jpg"))
        _ = try? ImageIO.decode(b, name: "in.jpg")
    },
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
        guard (try? s.start()) != nil, let n = s.recording.frameCount else { return }
        for i in 0..<min(n, 64) { _ = try? s.frame(i) }
        if n > 1 { _ = try? s.frame(0) }
        _ = (try? s.imu?.imuSamples())?.csv()
    },
    // Depth photos (photo:FILE): the HEIF item walk (ftyp, meta, iinf, iloc, iref, iprp), every
    // item's extents, then the whole decode (HEVC items and grids through libavcodec, Apple's XMP).
    "heif": { b in
        let bytes = Array(b)
        if let file = try? HEIFFile(bytes: bytes, name: "in.heic") {
            for item in file.items { _ = try? file.data(of: item) }
        }
        _ = try? DepthPhoto.decode(bytes: bytes, name: "in.heic")
    },
    // JPEG depth photos: the segment walk (APP1 XMP and extended XMP chunks, APP2 MPF, the scans up
    // to EOI), then the whole decode (iPhone MPF, GDepth base64, Dynamic Depth container items).
    "photojpeg": { b in
        let bytes = Array(b)
        if let j = try? JPEGSegments(bytes: bytes, name: "in.jpg") {
            for image in j.mpImages { _ = try? JPEGSegments(bytes: bytes, start: image.range.lowerBound, name: "in.jpg") }
        }
        _ = try? DepthPhoto.decode(bytes: bytes, name: "in.jpg")
    },
    // The XMP reader on its own: every lookup depth photos make.
    "xmp": { b in
        let x = XMPPacket(bytes: Array(b)[...])
        for ns in [XMPPacket.NS.apdi, XMPPacket.NS.depthData, XMPPacket.NS.gdepth, XMPPacket.NS.ddItem] {
            _ = x.values(ns, "FloatMinValue")
            _ = x.sequence(ns, "IntrinsicMatrix")
            _ = x.doubles(ns, "Length")
        }
        _ = x.itemRanges(XMPPacket.NS.ddContainer, "Directory")
    },
    // A DDS sample from the network (a `dds:` source's receive path): the bytes as each ROS 2 message
    // type, checked and converted as the receiver does (image → rgba8 or meters, JPEG, camera_info, TF).
    "dds": { b in
        let sample = Array(b)
        let image = try? ROS2Message.image(sample, file: "dds:/t", topic: "/t")
        // What the source decodes: the fields from the first bytes, the pixels where they lie; it
        // must agree with the whole-message decoder.
        let view = try? ROS2Message.imageView(b, file: "dds:/t", topic: "/t")
        precondition((view == nil) == (image == nil) && view?.pixels.count == image?.data.count
                     && view.map { $0.pixels.baseAddress! - b.baseAddress! } == image?.data.startIndex, "imageView and image disagree")
        if let m = view, (try? DDSImages.check(m, topic: "/t")) != nil {
            _ = ROSImageDecoding.isDepthEncoding(m.encoding) ? ROSImageDecoding.depthMeters(m, units: 0.001) : ROSImageDecoding.rgba(m)
        }
        // At most 2048x2048 (16 MiB of rgba8): the default limit, 8192x8192, is right at the fuzzer's 256 MB.
        if let m = try? ROS2Message.compressedImage(sample, file: "dds:/t", topic: "/t") {
            _ = try? DDSImages.decompress(m, topic: "/t", limit: DDSImageLimit(width: 2048, height: 2048))
        }
        if let m = try? ROS2Message.cameraInfo(sample, file: "dds:/t", topic: "/t") { _ = try? DDSImages.check(m, topic: "/t") }
        _ = try? ROS2Message.tfMessage(sample, file: "dds:/t", topic: "/t")
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
        _ = (try? ScanFormats.strayIMU(bytes, path: "imu.csv"))?.csv()
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
                case "sensor_msgs/Imu": _ = try? ROSMessage.imu(data, bag: "in.bag", topic: c.topic)
                default: break
                }
            }
        }
        let source = BagSource(path: put(b, "in.bag"))
        guard (try? source.start()) != nil, let n = source.recording.frameCount else { return }
        source.recording.pause()
        for i in 0..<min(n, 16) {
            try? source.recording.seek(toFrame: i)
            _ = try? source.nextFrame(now: Double(i))
        }
        _ = try? source.recording.seek(toTime: 0.5)
        _ = source.metadata
        _ = (try? source.imu?.imuSamples())?.csv()
    },
    // MCAP (ROS 2 recordings) from memory: the summary's chunk and message indexes, or the scan of
    // a file without a usable summary (chunks decompressed: zstd, lz4, none), then every message's
    // data (its chunk decompressed again, per-message zstd/lz4 frames too).
    "mcap": { b in
        guard let rec = try? ROS2Recording(mcap: Array(b), name: "in.mcap") else { return }
        for t in rec.topics {
            for r in rec.messages(onTopic: t.name).prefix(64) { _ = try? rec.data(of: r) }
        }
    },
    // One ROS 2 CDR message decoded as every type depthlens reads (both byte orders come from the
    // encapsulation header), images then checked and converted as a recording's frames are.
    "cdr": { b in
        let bytes = Array(b), f = "in.db3", t = "/t"
        if let image = try? ROS2Message.image(bytes, file: f, topic: t), (try? ROSImageDecoding.check(image, file: f, topic: t)) != nil {
            _ = ROSImageDecoding.isDepthEncoding(image.encoding) ? ROSImageDecoding.depthMeters(image, units: 0.001)
                : ROSImageDecoding.rgba(image)
        }
        if let m = try? ROS2Message.compressedImage(bytes, file: f, topic: t) {
            if CompressedDepth.isCompressedDepth(m.format) {
                _ = (try? CompressedDepth.decode(m.data, format: m.format, file: f, topic: t))?.meters(units: 0.001)
            } else if ROSImageDecoding.isLibrealsenseZstd(m.format) {
                rszstdConvert(try? ROSImageDecoding.librealsenseZstd(m.data, format: m.format, file: f, topic: t))
            } else {
                _ = try? ROSImageDecoding.compressedColor(m.data, format: m.format, file: f, topic: t)
            }
        }
        if let info = try? ROS2Message.cameraInfo(bytes, file: f, topic: t) {
            _ = ROSImageDecoding.cameraModel(K: info.K, D: info.D, distortionModel: info.distortionModel, width: info.width,
                                             height: info.height, streamWidth: 64, streamHeight: 48)
        }
        _ = (try? ROS2Message.tfMessage(bytes, file: f, topic: t))?.map(\.transform.rotationMatrix)
        _ = try? ROS2Message.imu(bytes, file: f, topic: t)
        _ = (try? ROS2Message.string(bytes, file: f, topic: t)).map(ROS2Message.keyValues)
        _ = try? ROS2Message.uint32(bytes, file: f, topic: t)
    },
    // librealsense's zstd-compressed raw frames (`FORMAT; zstd; WxH step=S`): the first byte picks
    // the format, the next two the width and height (1…16), the rest is the zstd data.
    "rszstd": { b in
        guard b.count >= 3 else { return }
        let formats = ["YUYV", "UYVY", "Z16", "Y8", "Y16", "RGB8", "BGRA8", "Y10BPACK"]
        let f = formats[Int(b[0]) % formats.count], w = Int(b[1]) % 16 + 1, h = Int(b[2]) % 16 + 1
        let bpp = ["RGB8": 3, "BGRA8": 4, "Y8": 1][f] ?? 2
        rszstdConvert(try? ROSImageDecoding.librealsenseZstd(Array(b.dropFirst(3))[...], format: "\(f); zstd; \(w)x\(h) step=\(w * bpp)",
                                                            file: "in.db3", topic: "/t"))
    },
    // A rosbag2 `.db3` as a file (SQLite opened read-only, immutable): tables, topics, the message
    // index, then messages read (per-message zstd/LZ4 too).
    "db3": { readRecording(put($0, "in.db3")) },
    // A whole-file zstd recording (rosbag2's file compression mode): the first byte picks `.db3.zstd`
    // or `.mcap.zstd`, the rest is the file, inflated within its declared size and the memory budget.
    "zstd": { b in
        guard let first = b.first else { return }
        let dir = folder("zstd")
        let path = dir + (first & 1 == 0 ? "/in.db3.zstd" : "/in.mcap.zstd")
        write(Array(b.dropFirst()), path)
        readRecording(path)
    },
    // rosbag2's metadata.yaml beside a small valid MCAP (`in.mcap`, which the seed names): the folder
    // opened as a recording, so the parsed storage, file list and compression are all used.
    "rosbag2meta": { b in
        let dir = folder("rosbag2")
        write(Array(b), dir + "/metadata.yaml")
        write(mcapSeed(chunked: true), dir + "/in.mcap")
        readRecording(dir)
    },
    // A phone scan folder from a few files, cut from the input at "DLFZ": the first byte picks the
    // layout (Polycam keyframes, 3D Scanner App frame_N, Stray Scanner with rgb.mp4), then the
    // camera file, the color image (or rgb.mp4), depth and confidence. Opened and played as
    // `scan:` does (libavformat with the mov demuxer and files only, for rgb.mp4).
    "scanfolder": { b in
        guard let first = b.first else { return }
        let p = parts(UnsafeRawBufferPointer(rebasing: b.dropFirst()), count: 4)
        let dir = folder("scanfolder")
        switch first % 3 {
        case 0:
            write(p[0], dir + "/keyframes/cameras/1.json")
            write(p[1], dir + "/keyframes/images/1.jpg")
            write(p[2], dir + "/keyframes/depth/1.png")
            write(p[3], dir + "/keyframes/confidence/1.png")
        case 1:
            write(p[0], dir + "/frame_00000.json")
            write(p[1], dir + "/frame_00000.jpg")
            write(p[2], dir + "/depth_00000.png")
            write(p[3], dir + "/conf_00000.png")
        default:
            write(p[0], dir + "/odometry.csv")
            write(p[1], dir + "/rgb.mp4")
            write(p[2], dir + "/depth/000000.png")
            write(p[3], dir + "/confidence/000000.png")
        }
        let source = ScanSource(directory: dir)
        guard (try? source.start()) != nil else { return }
        for i in 0..<2 { _ = try? source.nextFrame(now: Double(i)) }
    },
    // HEIF item locations: the input is the iloc box (its first byte the version 0…2, the rest its
    // payload) inside a fixed file; every item's data then read. Sums of extents past the file and
    // zero-length extents must not cost more memory than the file holds.
    "heifiloc": { b in
        guard let first = b.first else { return }
        let bytes = heifAround(iloc: Array(b.dropFirst()), version: first % 3)
        if let file = try? HEIFFile(bytes: bytes, name: "in.heic") {
            for item in file.items { _ = try? file.data(of: item) }
        }
    },
    // RVL (compressedDepth): the width and height from the first four bytes (big-endian, any size
    // up to 65535x65535), the rest the RVL code after a 16UC1 ConfigHeader; decoded and converted to
    // meters. A few bytes claiming a huge all-zero image must not cost that image.
    "rvl": { b in
        guard b.count >= 4 else { return }
        let w = UInt32(b[0]) << 8 | UInt32(b[1]), h = UInt32(b[2]) << 8 | UInt32(b[3])
        func le(_ v: UInt32) -> [UInt8] { (0..<4).map { UInt8(v >> ($0 * 8) & 0xFF) } }
        let data = le(0) + le(0) + le(0) + le(w) + le(h) + Array(b.dropFirst(4))
        _ = (try? CompressedDepth.decode(data[...], format: "16UC1; compressedDepth rvl", file: "in.db3", topic: "/t"))?
            .meters(units: 0.001)
    },
    // The `dds:` receive path as a sequence of samples from peers, no network: records of a topic
    // selector, a writer, a sequence number and a CDR sample (`DDSSource.fuzz` says the layout),
    // each handled as the receiver handles what it takes — the size limit on the header, decoding,
    // conversion, pairing, and the caps on writers, TF frames and notices.
    "ddsseq": { DDSSource.fuzz(Array($0)) },
    // Apple's LZFSE (Record3D's depth and confidence frames): every block kind, output capped.
    "lzfse": { _ = try? LZFSE.decode(Array($0), maxOutput: 1 << 20, name: "in.depth") },
    // image_transport's compressedDepth payload (ConfigHeader + PNG or RVL); the first byte picks
    // the format string (Tests/Fixtures/ros2_messages_reference.py's CDEPTH_FORMATS order).
    "cdepth": { b in
        guard let first = b.first else { return }
        let formats = ["16UC1; compressedDepth png", "16UC1; compressedDepth rvl", "32FC1; compressedDepth png",
                       "32FC1; compressedDepth rvl"]
        let data = Array(b.dropFirst())[...]
        _ = (try? CompressedDepth.decode(data, format: formats[Int(first) % formats.count], file: "in.db3", topic: "/t"))?
            .meters(units: 0.001)
    },
]

/// One zstd frame holding `data` in raw blocks (RFC 8878: single segment, a 4-byte content size,
/// raw blocks of at most 128 KiB), so a whole-file-compressed seed needs no compressor.
func zstdRawFrameAnySize(_ data: [UInt8]) -> [UInt8] {
    var out: [UInt8] = [0x28, 0xB5, 0x2F, 0xFD, 0xA0] + (0..<4).map { UInt8(data.count >> ($0 * 8) & 0xFF) }
    var at = 0
    repeat {
        let n = min(data.count - at, 1 << 17)
        let last: UInt32 = at + n == data.count ? 1 : 0
        let header = UInt32(n) << 3 | last
        out += [UInt8(header & 0xFF), UInt8(header >> 8 & 0xFF), UInt8(header >> 16 & 0xFF)] + data[at..<(at + n)]
        at += n
    } while at < data.count
    return out
}

/// The fuzz input cut at each `separator` into at most `count` parts (missing parts are empty), so
/// one input can stand for several files of a folder.
func parts(_ b: UnsafeRawBufferPointer, count: Int, separator: [UInt8] = Array("DLFZ".utf8)) -> [[UInt8]] {
    var out: [[UInt8]] = []
    var start = 0, i = 0
    while i + separator.count <= b.count, out.count < count - 1 {
        if (0..<separator.count).allSatisfy({ b[i + $0] == separator[$0] }) {
            out.append(Array(b[start..<i]))
            i += separator.count
            start = i
        } else {
            i += 1
        }
    }
    out.append(Array(b[start...]))
    while out.count < count { out.append([]) }
    return out
}

/// A clean folder under the scratch folder for one input.
func folder(_ name: String) -> String {
    let dir = scratch + "/" + name
    try? FileManager.default.removeItem(atPath: dir)
    try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    return dir
}

func write(_ bytes: [UInt8], _ path: String) {
    try? FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
    _ = bytes.withUnsafeBytes { FileManager.default.createFile(atPath: path, contents: Data($0)) }
}

/// A recording opened as the `ros2:` source opens it, then up to 64 messages a topic read.
func readRecording(_ path: String) {
    guard let rec = try? ROS2Recording(path: path) else { return }
    for t in rec.topics {
        for r in rec.messages(onTopic: t.name).prefix(64) { _ = try? rec.data(of: r) }
    }
}

/// A HEIF file around `iloc` (the payload of the iloc box after its version and flags, from the
/// fuzz input): ftyp, a meta box with hdlr, pitm (item 1), iinf (items 1 and 2, `hvc1` and `Exif`)
/// and the iloc, then an mdat of 64 bytes — so every mutation lands in the item locations.
func heifAround(iloc: [UInt8], version: UInt8) -> [UInt8] {
    func u16(_ v: Int) -> [UInt8] { [UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
    func u32(_ v: Int) -> [UInt8] { (0..<4).map { UInt8(v >> (24 - $0 * 8) & 0xFF) } }
    func box(_ type: String, _ payload: [UInt8]) -> [UInt8] { u32(8 + payload.count) + Array(type.utf8) + payload }
    func full(_ type: String, _ version: UInt8, _ payload: [UInt8]) -> [UInt8] { box(type, [version, 0, 0, 0] + payload) }
    let infe = { (id: Int, type: String) in full("infe", 2, u16(id) + u16(0) + Array(type.utf8) + [0]) }
    let meta = full("meta", 0, full("hdlr", 0, u32(0) + Array("pict".utf8) + u32(0) + u32(0) + u32(0) + [0])
                    + full("pitm", 0, u16(1)) + full("iinf", 0, u16(2) + infe(1, "hvc1") + infe(2, "Exif"))
                    + full("iloc", version, iloc))
    return box("ftyp", Array("heicmif1heic".utf8)) + meta + box("mdat", (0..<64).map { UInt8($0) })
}

/// A small MCAP as the spec lays it out, written here so the fuzzer has a seed without Python
/// (scripts/fuzz adds zstd and lz4 seeds from Tests/Fixtures/ros2_reference.py when the reference
/// venv is there): one schema, one channel, three messages, in an uncompressed chunk with its
/// message index and a summary (schema, channel, chunk index, statistics) — or, unchunked, the
/// messages in the data section and a summary without indexes.
func mcapSeed(chunked: Bool) -> [UInt8] {
    func u16(_ v: Int) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF)] }
    func u32(_ v: Int) -> [UInt8] { (0..<4).map { UInt8(v >> ($0 * 8) & 0xFF) } }
    func u64(_ v: UInt64) -> [UInt8] { (0..<8).map { UInt8(v >> (UInt64($0) * 8) & 0xFF) } }
    func str(_ s: String) -> [UInt8] { u32(s.utf8.count) + Array(s.utf8) }
    func record(_ op: UInt8, _ content: [UInt8]) -> [UInt8] { [op] + u64(UInt64(content.count)) + content }
    let magic: [UInt8] = [0x89, 0x4D, 0x43, 0x41, 0x50, 0x30, 0x0D, 0x0A]
    let schema = record(0x03, u16(1) + str("std_msgs/msg/String") + str("ros2msg") + str("string data"))
    let channel = record(0x04, u16(1) + u16(1) + str("/chatter") + str("cdr") + u32(0))
    let times: [UInt64] = [1_000, 2_000, 3_000]
    let messages = times.enumerated().map { i, t in
        record(0x05, u16(1) + u32(i) + u64(t) + u64(t) + [0, 1, 0, 0] + str("hello \(i)\0"))
    }
    var file = magic + record(0x01, str("ros2") + str("depthlens-fuzz"))
    var summary: [UInt8] = schema + channel
    if chunked {
        var inner = schema + channel
        var index: [UInt8] = []
        for m in messages {
            index += u64(times[index.count / 16]) + u64(UInt64(inner.count))
            inner += m
        }
        let chunkStart = file.count
        file += record(0x06, u64(times[0]) + u64(times[2]) + u64(UInt64(inner.count)) + u32(0) + str("") + u64(UInt64(inner.count)) + inner)
        let chunkLength = file.count - chunkStart
        let indexStart = file.count
        file += record(0x07, u16(1) + u32(index.count) + index)
        summary += record(0x08, u64(times[0]) + u64(times[2]) + u64(UInt64(chunkStart)) + u64(UInt64(chunkLength)) + u32(10) + u16(1)
                          + u64(UInt64(indexStart)) + u64(UInt64(file.count - indexStart)) + str("") + u64(UInt64(inner.count))
                          + u64(UInt64(inner.count)))
    } else {
        file += schema + channel + messages.joined()
    }
    summary += record(0x0B, u64(3) + u16(1) + u32(1) + u32(0) + u32(0) + u32(chunked ? 1 : 0) + u64(times[0]) + u64(times[2])
                      + u32(10) + u16(1) + u64(3))
    file += record(0x0F, u32(0))
    let summaryStart = file.count
    file += summary
    file += record(0x02, u64(UInt64(summaryStart)) + u64(0) + u32(0))
    return file + magic
}

/// Small valid files per target, written with depthlens' own writers (the bag seeds: scripts/fuzz,
/// with python3-rosbag from the test fixture).
func makeSeeds(_ dir: String) throws {
    func seed(_ target: String, _ name: String, _ write: (String) throws -> Void) throws {
        try FileManager.default.createDirectory(atPath: "\(dir)/\(target)", withIntermediateDirectories: true)
        try write("\(dir)/\(target)/\(name)")
    }
    func text(_ s: String) -> (String) throws -> Void { { try FileSupport.atomicWrite(Array(s.utf8), to: $0) } }
    // YUYV 4x2 (step 8) and Z16 3x2 (step 6) as librealsense stores them.
    try seed("rszstd", "yuyv") { try FileSupport.atomicWrite([0, 3, 1] + zstdRawFrame((0..<16).map { UInt8(16 + $0 * 13) }), to: $0) }
    try seed("rszstd", "z16") { try FileSupport.atomicWrite([2, 2, 1] + zstdRawFrame((0..<12).map { UInt8($0 * 21) }), to: $0) }
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
    // XMP as Apple and Google write it (the photo seeds themselves: scripts/fuzz, from the fixtures).
    try seed("xmp", "apple.xmp", text("<x:xmpmeta xmlns:x=\"adobe:ns:meta/\"><rdf:RDF xmlns:rdf=\"http://www.w3.org/1999/02/22-rdf-syntax-ns#\">"
        + "<rdf:Description xmlns:apdi=\"http://ns.apple.com/pixeldatainfo/1.0/\" xmlns:depthData=\"http://ns.apple.com/depthData/1.0/\" "
        + "apdi:IntMinValue='0'><apdi:FloatMinValue>1.498047</apdi:FloatMinValue><depthData:IntrinsicMatrix><rdf:Seq><rdf:li>3032.5</rdf:li>"
        + "<rdf:li>0.0</rdf:li></rdf:Seq></depthData:IntrinsicMatrix></rdf:Description></rdf:RDF></x:xmpmeta>"))
    try seed("xmp", "dd.xmp", text("<rdf:Description xmlns:Container=\"http://ns.google.com/photos/dd/1.0/container/\" "
        + "xmlns:Item=\"http://ns.google.com/photos/dd/1.0/item/\"><Container:Directory><rdf:Seq><rdf:li rdf:parseType=\"Resource\">"
        + "<Container:Item Item:Mime=\"image/jpeg\" Item:Length=\"0\"/></rdf:li><rdf:li><Container:Item Item:Mime=\"image/png\" "
        + "Item:Length=\"12&#x33;\"/></rdf:li></rdf:Seq></Container:Directory></rdf:Description>"))
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
    try seed("mcap", "chunked.mcap") { try FileSupport.atomicWrite(mcapSeed(chunked: true), to: $0) }
    try seed("zstd", "mcap") { try FileSupport.atomicWrite([1] + zstdRawFrameAnySize(mcapSeed(chunked: true)), to: $0) }
    try seed("rosbag2meta", "metadata.yaml", text("rosbag2_bagfile_information:\n  version: 5\n  storage_identifier: mcap\n"
        + "  duration:\n    nanoseconds: 2000\n  relative_file_paths:\n    - in.mcap\n  compression_format: \"\"\n"
        + "  compression_mode: \"\"\n  topics_with_message_count:\n    - topic_metadata:\n        name: /chatter\n"
        + "        type: std_msgs/msg/String\n        serialization_format: cdr\n      message_count: 3\n"))
    // A Polycam keyframe (camera JSON, color, 16-bit depth, 8-bit confidence) and a 3D Scanner App
    // frame, as "scanfolder" cuts them; the color is a PNG (the readers go by content, not name).
    var colorPNG: [UInt8] = [], depthPNG: [UInt8] = [], confPNG: [UInt8] = []
    let tmp = scratch + "/seed.png"
    try ImageIO.write(rgba, to: tmp); colorPNG = try FileSupport.readAll(tmp)
    try ImageIO.write(g16, to: tmp); depthPNG = try FileSupport.readAll(tmp)
    try ImageIO.write(gray, to: tmp); confPNG = try FileSupport.readAll(tmp)
    let cut = Array("DLFZ".utf8)
    let polycam = Array(("{\"cx\": 7.5, \"cy\": 5.5, \"fx\": 12.0, \"fy\": 12.0, \"width\": 16, \"height\": 12, "
        + "\"t_00\": 1, \"t_01\": 0, \"t_02\": 0, \"t_03\": 0.1, \"t_10\": 0, \"t_11\": 1, \"t_12\": 0, \"t_13\": 0.2, "
        + "\"t_20\": 0, \"t_21\": 0, \"t_22\": 1, \"t_23\": 0.3}").utf8)
    let scanner = Array(("{\"cameraPoseARFrame\": [1,0,0,0.1, 0,1,0,0.2, 0,0,1,0.3, 0,0,0,1], "
        + "\"intrinsics\": [12,0,7.5, 0,12,5.5, 0,0,1], \"time\": 52431.25}").utf8)
    try seed("scanfolder", "polycam") { try FileSupport.atomicWrite([0] + polycam + cut + colorPNG + cut + depthPNG + cut + confPNG, to: $0) }
    try seed("scanfolder", "scannerapp") { try FileSupport.atomicWrite([1] + scanner + cut + colorPNG + cut + depthPNG + cut + confPNG, to: $0) }
    try seed("scanfolder", "stray") {
        try FileSupport.atomicWrite([2] + Array("timestamp, frame, x, y, z, qx, qy, qz, qw\n0.0, 000000, 0, 0, 0, 0, 0, 0, 1\n".utf8)
                                    + cut + Array("#EXTM3U\n#EXT-X-TARGETDURATION:1\n#EXTINF:1,\nfile:/nonexistent/depthlens-fuzz.ts\n".utf8) + cut + depthPNG
                                    + cut + confPNG, to: $0)
    }
    // iloc version 1: offset and length 4 bytes, base offset 0, index 0; two items with one extent
    // each in the mdat (item 1: 16 bytes at the mdat's payload, item 2: 8 bytes after it).
    // Each item: ID, construction method 0, data reference 0, one extent (offset, length).
    func be(_ v: Int, _ n: Int) -> [UInt8] { (0..<n).map { UInt8(v >> (8 * (n - 1 - $0)) & 0xFF) } }
    let mdatStart = heifAround(iloc: [0x44, 0x00] + be(2, 2) + [UInt8](repeating: 0, count: 2 * 16), version: 1).count - 64
    let iloc = [0x44, 0x00] + be(2, 2) + be(1, 2) + be(0, 2) + be(0, 2) + be(1, 2) + be(mdatStart, 4) + be(16, 4)
        + be(2, 2) + be(0, 2) + be(0, 2) + be(1, 2) + be(mdatStart + 16, 4) + be(8, 4)
    try seed("heifiloc", "two-items") { try FileSupport.atomicWrite([1] + iloc, to: $0) }
    // A 4x2 image: a run of 2 zeros, then 6 values 100, 101, … (RVL's nibbles by hand: 2, 6, then
    // zigzag(100) = 200 as 8 9 3, then zigzag(+1) = 2 five times; 32-bit little-endian words, each
    // read from its top nibble, as image_transport's compressed_depth plugin reads them).
    try seed("rvl", "4x2") { try FileSupport.atomicWrite([0, 4, 0, 2] + [0x22, 0x32, 0x89, 0x26, 0x00, 0x00, 0x00, 0x22], to: $0) }
    try seed("mcap", "unchunked.mcap") { try FileSupport.atomicWrite(mcapSeed(chunked: false), to: $0) }
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
    let stamp = ROS2Message.Header(stamp: ROS2Message.Time(sec: 360, nanosec: 815_089_000), frameID: "color_optical_frame")
    try seed("dds", "image_rgb8") { p in
        try FileSupport.atomicWrite(ROS2Message.encodeImage(header: stamp, width: 4, height: 3, encoding: "rgb8", step: 12) {
            for i in 0..<$0.count { $0[i] = UInt8(i * 7 & 255) } }, to: p)
    }
    try seed("dds", "image_16UC1") { p in
        try FileSupport.atomicWrite(ROS2Message.encodeImage(header: stamp, width: 3, height: 2, encoding: "16UC1", step: 6) {
            for i in 0..<$0.count { $0[i] = UInt8(i * 31 & 255) } }, to: p)
    }
    try seed("dds", "camera_info") { p in
        try FileSupport.atomicWrite(ROS2Message.encodeCameraInfo(ROS2Message.CameraInfo(header: stamp, height: 480, width: 640, distortionModel: "plumb_bob",
            D: [0.1, -0.2, 0, 0, 0.05], K: [613, 0, 320, 0, 613, 239, 0, 0, 1], R: [1, 0, 0, 0, 1, 0, 0, 0, 1],
            P: [613, 0, 320, 0, 0, 613, 239, 0, 0, 0, 1, 0])), to: p)
    }
    try seed("dds", "tf") { p in
        try FileSupport.atomicWrite(ROS2Message.encodeTFMessage([ROS2Message.TransformStamped(header: stamp, childFrameID: "depth_optical_frame",
            transform: ROSMessage.Transform(translation: SIMD3(0.015, 0, 0), rotation: SIMD4(0, 0, 0, 1)))]), to: p)
    }
    try seed("dds", "compressed") { p in
        try FileSupport.atomicWrite(ROS2Message.encodeCompressedImage(header: stamp, format: "jpeg", data: [0xFF, 0xD8, 0xFF, 0xD9]), to: p)
    }
    // A realsense2_camera burst as `ddsseq` reads it: camera_info, a color and a depth image, TF;
    // each record a topic selector (DDSSource.fuzzTopics), a writer, a sequence number, a length.
    func record(_ topic: Int, _ sequence: UInt64, _ cdr: [UInt8]) -> [UInt8] {
        [UInt8(topic), 1] + (0..<8).map { UInt8(sequence >> (8 * UInt64($0)) & 0xFF) } + [UInt8(cdr.count & 0xFF), UInt8(cdr.count >> 8)] + cdr
    }
    let info = ROS2Message.encodeCameraInfo(ROS2Message.CameraInfo(header: stamp, height: 3, width: 4, distortionModel: "plumb_bob",
        D: [0, 0, 0, 0, 0], K: [4, 0, 1.5, 0, 4, 1, 0, 0, 1], R: [1, 0, 0, 0, 1, 0, 0, 0, 1], P: [4, 0, 1.5, 0, 0, 4, 1, 0, 0, 0, 1, 0]))
    let colorImage = ROS2Message.encodeImage(header: stamp, width: 4, height: 3, encoding: "rgb8", step: 12) {
        for i in 0..<$0.count { $0[i] = UInt8(i * 7 & 255) } }
    let depthImage = ROS2Message.encodeImage(header: stamp, width: 4, height: 3, encoding: "16UC1", step: 8) {
        for i in 0..<$0.count { $0[i] = UInt8(i * 31 & 255) } }
    let tf = ROS2Message.encodeTFMessage([ROS2Message.TransformStamped(header: stamp, childFrameID: "depth_optical_frame",
        transform: ROSMessage.Transform(translation: SIMD3(0.015, 0, 0), rotation: SIMD4(0, 0, 0, 1)))])
    try seed("ddsseq", "burst") { p in
        try FileSupport.atomicWrite(record(5, 1, info) + record(6, 1, info) + record(8, 1, tf) + record(0, 1, colorImage)
                                    + record(2, 1, depthImage) + record(0, 2, colorImage) + record(2, 3, depthImage), to: p)
    }
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
