import XCTest
import Foundation
import Capture
import DepthKit
import TestSupport

/// `RecordedStreams.payload`: a frame read in order and decoded apart from its source (what
/// `convert`'s workers do) gives what `decodeFrame` gives, byte for byte, for every recording kind —
/// also when many frames of one stream are decoded on several threads at once.
final class StreamPayloadTests: XCTestCase {
    /// Both decodings of every frame of every stream agree; payloads decoded concurrently agree
    /// with the same decoded one after another. Returns the number of frames with a payload.
    @discardableResult
    private func assertPayloadsDecodeAsFrames(_ source: FrameSource, streamsWithout: Set<StreamKind> = [],
                                              file: StaticString = #filePath, line: UInt = #line) throws -> Int {
        try source.start()
        defer { source.stop() }
        let rec = try XCTUnwrap(source.recordedStreams, file: file, line: line)
        var payloads: [(stream: Int, index: Int, payload: StreamPayload)] = []
        for (s, stream) in try rec.streams().enumerated() {
            for i in 0..<stream.frameCount {
                guard let p = try rec.payload(i, ofStream: s) else {
                    XCTAssertTrue(streamsWithout.contains(stream.kind), "\(source.name): \(stream.name) frame \(i) has no payload",
                                  file: file, line: line)
                    continue
                }
                XCTAssertFalse(streamsWithout.contains(stream.kind), "\(source.name): \(stream.name) has payloads", file: file, line: line)
                payloads.append((s, i, p))
            }
        }
        // Several threads at once, then in order, then decodeFrame (which seeks back where it must).
        let concurrent = Locked([Int: [UInt8]]()), decoders = payloads.map(\.payload)
        DispatchQueue.concurrentPerform(iterations: decoders.count) { k in
            let bytes = (try? decoders[k].decode()).map(Self.bytes) ?? []
            concurrent.withLock { $0[k] = bytes }
        }
        for (k, p) in payloads.enumerated() {
            let a = try p.payload.decode(), b = try rec.decodeFrame(p.index, ofStream: p.stream)
            let what = "\(source.name): stream \(p.stream) frame \(p.index)"
            XCTAssertTrue(Self.bytes(a) == Self.bytes(b), "\(what): payload and decodeFrame differ", file: file, line: line)
            XCTAssertTrue(Self.bytes(a) == concurrent.current[k], "\(what): decoded on several threads differs", file: file, line: line)
            switch (a, b) {
            case let (.depth(x), .depth(y)): XCTAssertEqual(x.intrinsics, y.intrinsics, what, file: file, line: line)
            case (.image, .image): break
            default: XCTFail("\(what): different kinds", file: file, line: line)
            }
        }
        return payloads.count
    }

    /// A decoded frame as bytes: its kind, format, size and every pixel.
    private static func bytes(_ f: StreamFrame) -> [UInt8] {
        let (tag, buffer): (UInt8, PixelBuffer)
        switch f {
        case let .image(b): (tag, buffer) = (0, b)
        case let .depth(d): (tag, buffer) = (1, d.map)
        }
        return [tag] + Array("\(buffer.format) \(buffer.width)x\(buffer.height)".utf8) + buffer.packedBytes()
    }

    private func ffmpeg(_ args: [String]) throws {
        let r = try TestProcess.run(["ffmpeg", "-nostdin", "-loglevel", "error", "-y"] + args, timeout: 300)
        XCTAssertEqual(r.status, 0, "ffmpeg (apt-get install ffmpeg): \(r.output)")
    }

    /// mkv: MJPEG COLOR, b16g DEPTH and IR (Azure Kinect's codecs), and FFV1 written a keyframe a
    /// packet (depthlens' own) — all with payloads; an H.264 COLOR track has none (its frames need
    /// the ones before them) and is decoded in order.
    func testMKVTracks() throws {
        let folder = TemporaryFolder("payload-mkv")
        let azure = folder.file("azure.mkv"), own = folder.file("own.mkv")
        try ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=64x48:rate=30:duration=0.4,noise=alls=8:allf=t",
                    "-f", "lavfi", "-i", "testsrc=size=32x24:rate=15:duration=0.4",
                    "-f", "lavfi", "-i", "testsrc2=size=32x24:rate=15:duration=0.4",
                    "-map", "0", "-map", "1", "-map", "2", "-c:v:0", "mjpeg", "-pix_fmt:v:0", "yuvj422p",
                    "-c:v:1", "rawvideo", "-pix_fmt:v:1", "gray16be", "-tag:v:1", "b16g",
                    "-c:v:2", "rawvideo", "-pix_fmt:v:2", "gray16be", "-tag:v:2", "b16g", "-strict", "unofficial",
                    "-metadata:s:v:0", "title=COLOR", "-metadata:s:v:1", "title=DEPTH", "-metadata:s:v:2", "title=IR", azure])
        try ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=64x48:rate=30:duration=0.4",
                    "-f", "lavfi", "-i", "testsrc=size=32x24:rate=30:duration=0.4,format=gray16le",
                    "-map", "0", "-map", "1", "-c:v:0", "libx264", "-pix_fmt:v:0", "yuv420p", "-g:v:0", "6", "-bf:v:0", "2",
                    "-c:v:1", "ffv1", "-g:v:1", "1", "-pix_fmt:v:1", "gray16le",
                    "-metadata:s:v:0", "title=COLOR", "-metadata:s:v:1", "title=DEPTH", own])
        XCTAssertEqual(try assertPayloadsDecodeAsFrames(MKVSource(path: azure)), 12 + 6 + 6)
        XCTAssertEqual(try assertPayloadsDecodeAsFrames(MKVSource(path: own), streamsWithout: [.color]), 12)
    }

    /// ROS 2: raw Images in an MCAP, PNG CompressedImage and compressedDepth in a .db3 (as
    /// librealsense 2.59 writes them), written by PyPI's mcap and rosbags.
    func testROS2Messages() throws {
        let python = try PythonReference.python(importing: ["rosbags", "mcap", "numpy", "cv2"])
        let folder = TemporaryFolder("payload-ros2")
        for (name, extra) in [("raw.mcap", [String]()), ("png.db3", ["--png"])] {
            let r = try TestProcess.run([python, Repo.fixture("ros2_reference.py"), "make-bench", folder.file(name), "--size", "64x48",
                                         "--depth-size", "32x24", "--frames", "7", "--noise"] + extra, timeout: 300)
            XCTAssertEqual(r.status, 0, r.output)
            XCTAssertEqual(try assertPayloadsDecodeAsFrames(ROS2Source(path: folder.file(name))), 14, name)
        }
    }

    /// ROS 1: the shared D435 bag (rgb8 color, mono16 depth, lz4 chunks).
    func testBagMessages() throws {
        XCTAssertEqual(try assertPayloadsDecodeAsFrames(BagSource(path: Repo.fixture("realsense-d435-640x480.bag"))), 3)
    }

    /// TUM: a folder's PNGs (rgb.txt and depth.txt on their own clocks), read and decoded by the payload.
    func testTUMFiles() throws {
        let folder = TemporaryFolder("payload-tum")
        let writer = try TUMWriter(directory: folder.path, depthScale: 5000)
        var rng = SeededRandom(seed: 24)
        for i in 0..<5 {
            let color = PixelBuffer(width: 16, height: 12, format: .rgba8)
            let depth = PixelBuffer(width: 8, height: 6, format: .depthFloat32)
            for y in 0..<12 { for x in 0..<64 { color.row(y, as: UInt8.self)[x] = UInt8.random(in: 0...255, using: &rng) } }
            for y in 0..<6 { for x in 0..<8 { depth.row(y, as: Float.self)[x] = rng.float(0.5, 4) } }
            color.markModified(); depth.markModified()
            try writer.append(color: i == 4 ? nil : color, depth: DepthData(map: depth), timestamp: 10 + Double(i) / 30)
        }
        try writer.finish()
        XCTAssertEqual(try assertPayloadsDecodeAsFrames(TUMSource(directory: folder.path)), 9)
    }

    /// The export's memory is bounded: however slow the decoding, the calling thread reads at most
    /// `framesInFlight` frames ahead of the ones decoded, and the frames are listed in order.
    func testAtMostFramesInFlightAreReadAhead() throws {
        let source = CountingRecording(frames: 40)
        let folder = TemporaryFolder("payload-window")
        let exporter = DatasetExporter(source: source, directory: folder.path)
        exporter.contents = [.color]
        exporter.workers = 2
        exporter.framesInFlight = 3
        let summary = try exporter.run(shouldStop: { nil })
        XCTAssertEqual(summary.imagesWritten[.color], 40)
        XCTAssertEqual(source.decoded.current, 40)
        XCTAssertLessThanOrEqual(source.mostAhead, 3, "frames read and not yet decoded, the one being read included")
        let listed = try String(contentsOfFile: folder.file("rgb.txt"), encoding: .utf8).split(separator: "\n").filter { !$0.hasPrefix("#") }
        XCTAssertEqual(listed.map { String($0.prefix { $0 != " " }) }, (0..<40).map { TUMWriter.stamp(Double($0) / 30) })
    }
}

/// A recording of one color stream whose payloads count how far reading runs ahead of decoding
/// (each decode takes a moment, so a reader that did not wait would run far ahead).
private final class CountingRecording: FrameSource, RecordedStreams {
    let frames: Int
    let decoded = Locked(0)
    private(set) var mostAhead = 0
    init(frames: Int) { self.frames = frames }

    var name: String { "counting" }
    var intrinsics: CameraIntrinsics { .default(width: 8, height: 6) }
    var isLive: Bool { false }
    func start() throws {}
    func stop() {}
    func nextFrame(now: Double) throws -> FrameSet? { nil }
    var recordedStreams: RecordedStreams? { self }

    func streams() throws -> [RecordedStream] {
        [RecordedStream(kind: .color, name: "color", width: 8, height: 6, timestamps: (0..<frames).map { Double($0) / 30 })]
    }
    func playbackTimestamps() throws -> [Double] { try streams()[0].timestamps }
    func decodeFrame(_ index: Int, ofStream stream: Int) throws -> StreamFrame { .image(Self.image(index)) }
    func payload(_ index: Int, ofStream stream: Int) throws -> StreamPayload? {
        mostAhead = max(mostAhead, index + 1 - decoded.current)
        let decoded = self.decoded
        return StreamPayload {
            usleep(3000)
            decoded.withLock { $0 += 1 }
            return .image(Self.image(index))
        }
    }

    static func image(_ i: Int) -> PixelBuffer {
        let b = PixelBuffer(width: 8, height: 6, format: .rgba8)
        for y in 0..<6 { for x in 0..<32 { b.row(y, as: UInt8.self)[x] = UInt8(truncatingIfNeeded: i * 7 + x + y) } }
        b.markModified()
        return b
    }
}
