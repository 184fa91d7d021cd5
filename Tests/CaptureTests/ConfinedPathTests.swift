import XCTest
import Foundation
@testable import Capture
import DepthKit
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// Issue 33, "an input names no other input": a folder or file depthlens opens reads its own
/// files only. A Stray Scanner `rgb.mp4` that is an HLS playlist naming another video (by a
/// `file:` path, or an `http:` URL) is one error naming rgb.mp4 — the other video is never opened
/// (an inotify watch on it sees nothing) and nothing connects to the URL's listener; TUM lists,
/// scan folders and snapshots refuse absolute paths, `..` and links leading out of their folder.
final class ConfinedPathTests: XCTestCase {
    // MARK: Fixtures

    /// A 16-bit depth PNG of `width`×`height` (1 m everywhere at 1000 units per meter).
    private func writeDepth(_ path: String, width: Int = 32, height: Int = 24) throws {
        let b = PixelBuffer(width: width, height: height, format: .gray16(depthScale: 0))
        for y in 0..<height { for x in 0..<width { b.row(y, as: UInt16.self)[x] = 1000 } }
        try ImageIO.write(b, to: path)
    }

    private func writeColor(_ path: String, value: UInt8 = 90) throws {
        let b = PixelBuffer(width: 32, height: 24, format: .rgb8)
        for y in 0..<24 { for x in 0..<96 { b.row(y, as: UInt8.self)[x] = value } }
        try ImageIO.write(b, to: path)
    }

    private func write(_ text: String, to path: String) throws {
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
    }

    /// A 4-frame 64×48 H.264 video made by ffmpeg (`container`: "mp4" or "mpegts").
    private func makeVideo(_ path: String, container: String) throws {
        let r = try TestProcess.run(["ffmpeg", "-nostdin", "-loglevel", "error", "-y", "-f", "lavfi", "-i", "testsrc=size=64x48:rate=30",
                                     "-frames:v", "4", "-c:v", "libx264", "-pix_fmt", "yuv420p", "-f", container, path], timeout: 120)
        XCTAssertEqual(r.status, 0, r.output)
    }

    /// A Stray Scanner folder: `rgb.mp4` (a real 4-frame MP4 unless replaced), depth/000000…3.png.
    private func makeStray(_ dir: String) throws {
        try FileManager.default.createDirectory(atPath: dir + "/depth", withIntermediateDirectories: true)
        try makeVideo(dir + "/rgb.mp4", container: "mp4")
        for i in 0..<4 { try writeDepth(dir + "/depth/" + String(format: "%06d.png", i)) }
    }

    /// A TUM folder: rgb/1.png, rgb/2.png, depth/1.png, depth/2.png and the lists naming them.
    private func makeTUM(_ dir: String) throws {
        for sub in ["rgb", "depth"] { try FileManager.default.createDirectory(atPath: dir + "/" + sub, withIntermediateDirectories: true) }
        for i in 1...2 {
            try writeColor(dir + "/rgb/\(i).png")
            try writeDepth(dir + "/depth/\(i).png")
        }
        try write("# color\n1.0 rgb/1.png\n2.0 rgb/2.png\n", to: dir + "/rgb.txt")
        try write("1.0 depth/1.png\n2.0 depth/2.png\n", to: dir + "/depth.txt")
    }

    /// The CLI's result with the one-line contract checked: exit 1, one line on stderr holding
    /// every one of `mentioning`.
    @discardableResult
    private func assertRefused(_ args: [String], mentioning: [String], file: StaticString = #filePath, line: UInt = #line) throws -> String {
        let r = try TestProcess.result(Repo.depthlens, args, timeout: 120)
        XCTAssertEqual(r.status, 1, "\(args): \(r.stderr)", file: file, line: line)
        XCTAssertEqual(r.stderrLines.count, 1, "one line: \(r.stderr)", file: file, line: line)
        for m in mentioning { XCTAssertTrue(r.stderr.contains(m), "names \(m): \(r.stderr)", file: file, line: line) }
        return r.stderr
    }

    /// Files under `dir` (recursively), none expected after a refused convert.
    private func files(under dir: String) -> [String] {
        guard let e = FileManager.default.enumerator(atPath: dir) else { return [] }
        return e.compactMap { $0 as? String }.filter { !FileSupport.isDirectory(dir + "/" + $0) }
    }

    // MARK: rgb.mp4 naming other inputs

    /// Before: `convert` wrote the other video's 4 frames as the scan's color, exit 0 (every
    /// libavformat demuxer, HLS's too, and every protocol). Now rgb.mp4 is opened by the MP4 demuxer
    /// only, with nested opens refused: one line naming rgb.mp4, nothing written, and the other
    /// video is never opened.
    func testHLSPlaylistNamingAnotherFileIsRefused() throws {
        let tmp = TemporaryFolder("confined")
        let scan = tmp.file("scan"), other = tmp.file("other.ts"), out = tmp.file("out")
        try makeStray(scan)
        try makeVideo(other, container: "mpegts")
        // A real scan plays (the mov demuxer reads Stray Scanner's MP4).
        let good = try TestProcess.result(Repo.depthlens, ["convert", "--source", "scan:" + scan, "--out", tmp.file("good")], timeout: 120)
        XCTAssertEqual(good.status, 0, good.stderr)
        XCTAssertEqual(files(under: tmp.file("good") + "/rgb").count, 4)

        try write("#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:10\n#EXTINF:1.0,\nfile:\(other)\n#EXTINF:1.0,\n\(other)\n#EXT-X-ENDLIST\n",
                  to: scan + "/rgb.mp4")
        // inotify on the other video: any open or read of it by the child is an event.
        let watch = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        XCTAssertGreaterThanOrEqual(watch, 0)
        defer { close(watch) }
        XCTAssertGreaterThanOrEqual(inotify_add_watch(watch, other, UInt32(IN_OPEN | IN_ACCESS)), 0)
        try assertRefused(["convert", "--source", "scan:" + scan, "--out", out], mentioning: [scan + "/rgb.mp4", "not an MP4"])
        XCTAssertEqual(files(under: out), [], "nothing written")
        XCTAssertFalse(FileManager.default.fileExists(atPath: out), "the --out folder the refused convert made is gone again")
        var buffer = [UInt8](repeating: 0, count: 4096)
        let n = buffer.withUnsafeMutableBytes { read(watch, $0.baseAddress, $0.count) }
        XCTAssertLessThanOrEqual(n, 0, "the other video was opened or read (\(n) bytes of inotify events)")
    }

    /// An `http:` entry: refused the same way, and nothing connects to the listener it names.
    func testHLSPlaylistNamingAURLOpensNoConnection() throws {
        let tmp = TemporaryFolder("confined")
        let scan = tmp.file("scan")
        try makeStray(scan)
        // A listening socket on loopback: a connection attempt would wait in its backlog.
        let s = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        XCTAssertGreaterThanOrEqual(s, 0)
        defer { close(s) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        addr.sin_port = 0
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &addr) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(s, $0, len) == 0 && listen(s, 8) == 0 && getsockname(s, $0, &len) == 0 }
        }
        XCTAssertTrue(bound)
        let port = UInt16(bigEndian: addr.sin_port)
        try write("#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXTINF:1.0,\nhttp://127.0.0.1:\(port)/x.ts\n#EXT-X-ENDLIST\n", to: scan + "/rgb.mp4")
        try assertRefused(["convert", "--source", "scan:" + scan, "--out", tmp.file("out")], mentioning: [scan + "/rgb.mp4"])
        try assertRefused(["info", "scan:" + scan], mentioning: [scan + "/rgb.mp4"])
        var p = pollfd(fd: s, events: Int16(POLLIN), revents: 0)
        XCTAssertEqual(poll(&p, 1, 0), 0, "a connection reached the listener the playlist names")
    }

    /// Whatever the demuxer, nothing nested opens: even libavformat's HLS demuxer, asked for by
    /// name, never opens the segment its playlist names — from a file or from memory (MKVSource's
    /// bytes). In memory, an HLS playlist is not Matroska either.
    func testNestedOpensAreRefused() throws {
        let tmp = TemporaryFolder("confined")
        let other = tmp.file("other.ts"), playlist = tmp.file("list.m3u8")
        try makeVideo(other, container: "mpegts")
        let text = "#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXTINF:1.0,\nfile:\(other)\n#EXT-X-ENDLIST\n"
        try write(text, to: playlist)
        let watch = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        XCTAssertGreaterThanOrEqual(watch, 0)
        defer { close(watch) }
        XCTAssertGreaterThanOrEqual(inotify_add_watch(watch, other, UInt32(IN_OPEN | IN_ACCESS)), 0)
        // (libavformat 59's HLS demuxer gives up before its first segment over IO it did not open
        // itself; whatever it says, the watch below shows the segment stays closed.)
        XCTAssertThrowsError(try MediaFile.open(path: playlist, format: "hls"))
        XCTAssertThrowsError(try MediaFile.open(bytes: Array(text.utf8), name: "memory.m3u8", format: "hls"))
        XCTAssertThrowsError(try MediaFile.open(bytes: Array(text.utf8), name: "memory.mkv", format: "matroska")) {
            XCTAssertTrue("\($0)".hasPrefix("memory.mkv: not a Matroska file"), "\($0)")
        }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let n = buffer.withUnsafeMutableBytes { read(watch, $0.baseAddress, $0.count) }
        XCTAssertLessThanOrEqual(n, 0, "the segment was opened or read (\(n) bytes of inotify events)")
    }

    // MARK: TUM lists

    /// Before: an absolute path or a `..` in rgb.txt was read wherever it led. Now one line naming
    /// the list file, the line and the path.
    func testTUMListRefusesAbsolutePathsAndDotDot() throws {
        let tmp = TemporaryFolder("confined")
        let dir = tmp.file("tum"), outside = tmp.file("outside.png")
        try makeTUM(dir)
        try writeColor(outside, value: 200)
        XCTAssertEqual(try TUMSequence(directory: dir).count, 2)
        for (entry, line) in [(outside, 3), ("../outside.png", 3), ("rgb/../../outside.png", 3), ("rgb/./../../tum/../outside.png", 3)] {
            try write("# color\n1.0 rgb/1.png\n2.0 \(entry)\n", to: dir + "/rgb.txt")
            XCTAssertThrowsError(try TUMSequence(directory: dir)) {
                let text = "\($0)"
                XCTAssertEqual(text.split(separator: "\n").count, 1, text)
                XCTAssertTrue(text.hasPrefix(dir + "/rgb.txt: line \(line): '\(entry)'"), text)
            }
            try assertRefused(["info", "tum:" + dir], mentioning: [dir + "/rgb.txt", "line \(line)", entry])
        }
        // associations.txt and depth.txt the same way.
        try write("1.0 rgb/1.png\n2.0 rgb/2.png\n", to: dir + "/rgb.txt")
        try write("1.0 depth/1.png\n2.0 /etc/passwd\n", to: dir + "/depth.txt")
        try assertRefused(["convert", "--source", "tum:" + dir, "--out", tmp.file("out")], mentioning: [dir + "/depth.txt", "line 2", "/etc/passwd"])
        XCTAssertEqual(files(under: tmp.file("out")), [])
        try write("1.0 rgb/1.png 1.0 ../outside.png\n", to: dir + "/associations.txt")
        try assertRefused(["info", "tum:" + dir], mentioning: [dir + "/associations.txt", "line 1", "../outside.png"])
    }

    /// A file of the folder that is a link leading out is refused (its real path is outside); a
    /// link to another file inside the folder is fine.
    func testTUMLinkLeadingOutIsRefused() throws {
        let tmp = TemporaryFolder("confined")
        let dir = tmp.file("tum"), outside = tmp.file("outside.png")
        try makeTUM(dir)
        try writeColor(outside, value: 200)
        try FileManager.default.removeItem(atPath: dir + "/rgb/2.png")
        try FileManager.default.createSymbolicLink(atPath: dir + "/rgb/2.png", withDestinationPath: dir + "/rgb/1.png")
        XCTAssertEqual(try TUMSequence(directory: dir).count, 2, "a link inside the folder is the folder's file")
        try FileManager.default.removeItem(atPath: dir + "/rgb/2.png")
        try FileManager.default.createSymbolicLink(atPath: dir + "/rgb/2.png", withDestinationPath: "../../outside.png")
        try assertRefused(["info", "tum:" + dir], mentioning: [dir + "/rgb.txt", "line 3", "outside.png", "outside the folder"])
        // A linked folder leading out, too.
        try FileManager.default.removeItem(atPath: dir + "/rgb/2.png")
        try FileManager.default.createSymbolicLink(atPath: dir + "/up", withDestinationPath: tmp.path)
        try write("1.0 rgb/1.png\n2.0 up/outside.png\n", to: dir + "/rgb.txt")
        try assertRefused(["info", "tum:" + dir], mentioning: [dir + "/rgb.txt", "line 2", "outside the folder"])
        // The folder itself reached through a link is fine: its real path is the root.
        try write("1.0 rgb/1.png\n2.0 rgb/1.png\n", to: dir + "/rgb.txt")
        try FileManager.default.createSymbolicLink(atPath: tmp.file("alias"), withDestinationPath: dir)
        XCTAssertEqual(try TUMSequence(directory: tmp.file("alias")).count, 2)
        // color/ + depth/ folders (no lists): a link leading out among the pairs.
        let pairs = tmp.file("pairs")
        for sub in ["color", "depth"] { try FileManager.default.createDirectory(atPath: pairs + "/" + sub, withIntermediateDirectories: true) }
        try writeColor(pairs + "/color/a.png")
        try writeDepth(pairs + "/depth/a.png")
        XCTAssertEqual(try TUMSequence(directory: pairs).count, 1)
        try FileManager.default.createSymbolicLink(atPath: pairs + "/color/b.png", withDestinationPath: outside)
        try writeDepth(pairs + "/depth/b.png")
        try assertRefused(["info", "tum:" + pairs], mentioning: [pairs + "/color/b.png", "outside the folder"])
        // calibration.json beside the lists, a link leading out.
        try FileManager.default.createSymbolicLink(atPath: dir + "/calibration.json", withDestinationPath: "/etc/passwd")
        try assertRefused(["info", "tum:" + dir], mentioning: [dir + "/calibration.json", "outside the folder"])
    }

    // MARK: Scan folders and snapshots

    /// A scan folder's files are the layout's own names; one that is a link leading out (a depth
    /// frame, camera_matrix.csv, rgb.mp4) is one line naming it.
    func testScanFileLinkLeadingOutIsRefused() throws {
        let tmp = TemporaryFolder("confined")
        let scan = tmp.file("scan"), outside = tmp.file("outside.png")
        try makeStray(scan)
        try writeDepth(outside)
        let frame = scan + "/depth/000002.png"
        try FileManager.default.removeItem(atPath: frame)
        try FileManager.default.createSymbolicLink(atPath: frame, withDestinationPath: outside)
        try assertRefused(["info", "scan:" + scan], mentioning: [frame, "outside the folder"])
        try FileManager.default.removeItem(atPath: frame)
        try writeDepth(frame)
        try FileManager.default.createSymbolicLink(atPath: scan + "/camera_matrix.csv", withDestinationPath: "/etc/passwd")
        try assertRefused(["info", "scan:" + scan], mentioning: [scan + "/camera_matrix.csv", "outside the folder"])
        try FileManager.default.removeItem(atPath: scan + "/camera_matrix.csv")
        try makeVideo(tmp.file("elsewhere.mp4"), container: "mp4")
        try FileManager.default.removeItem(atPath: scan + "/rgb.mp4")
        try FileManager.default.createSymbolicLink(atPath: scan + "/rgb.mp4", withDestinationPath: tmp.file("elsewhere.mp4"))
        try assertRefused(["convert", "--source", "scan:" + scan, "--out", tmp.file("out")], mentioning: [scan + "/rgb.mp4", "outside the folder"])
        XCTAssertEqual(files(under: tmp.file("out")), [])
    }

    /// A snapshot's JSON names plain file names (a folder or `..` was already refused); a listed
    /// file that is a link leading out of the JSON's folder is refused too.
    func testSnapshotFileLinkLeadingOutIsRefused() throws {
        let tmp = TemporaryFolder("confined")
        let dir = tmp.file("snap")
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let meta = SnapshotMetadata(intrinsics: CameraIntrinsics(fx: 30, fy: 30, cx: 16, cy: 12, width: 32, height: 24), mode: "depth",
                                    timestamp: 1, frame: 0, source: "test", files: ["s_color.png", "s_depth.png"])
        try Data(try meta.encoded()).write(to: URL(fileURLWithPath: dir + "/s.json"))
        try writeColor(dir + "/s_color.png")
        try writeDepth(dir + "/s_depth.png")
        let good = try TestProcess.result(Repo.depthlens, ["info", "snapshot:" + dir + "/s.json"], timeout: 120)
        XCTAssertEqual(good.status, 0, good.stderr)
        try writeColor(tmp.file("outside_color.png"), value: 7)
        try FileManager.default.removeItem(atPath: dir + "/s_color.png")
        try FileManager.default.createSymbolicLink(atPath: dir + "/s_color.png", withDestinationPath: "../outside_color.png")
        XCTAssertThrowsError(try SnapshotSource(json: dir + "/s.json").start()) {
            let text = "\($0)"
            XCTAssertEqual(text.split(separator: "\n").count, 1, text)
            XCTAssertTrue(text.hasPrefix(dir + "/s.json: 'files': " + dir + "/s_color.png is a link to"), text)
            XCTAssertTrue(text.contains("outside the folder"), text)
        }
        try assertRefused(["info", "snapshot:" + dir + "/s.json"], mentioning: [dir + "/s.json", "s_color.png", "outside the folder"])
    }
}
