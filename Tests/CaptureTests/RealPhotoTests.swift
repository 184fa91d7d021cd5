import XCTest
import Foundation
import DepthKit
import TestSupport
@testable import Capture

/// Depth photos written by other tools, not by the test setup: a Google Camera "Lens Blur" JPEG
/// (GDepth; its depth PNG is RGBA with R = G = B, no GDepth:Units) and an iPhone X portrait JPEG
/// as iOS 12 writes it (the portrait effects matte labelled type `depth`, subtype
/// `portraiteffectsmatte`). Each is checked through the product's own entry points
/// (`DepthPhoto.decode`, `PhotoSource`, `depthlens info --json` as a child process) against the
/// facts an independent reader (Python: Pillow, numpy, the XMP and MPF read by hand) reports, as
/// Tests/Fixtures/NAME.README records them.
final class RealPhotoTests: XCTestCase {
    private let lensBlur = Repo.fixture("google-lensblur-table.jpg")
    private let iPhoneX = Repo.fixture("iphone-x-portrait-matte.jpg")

    private func decode(_ path: String) throws -> DepthPhoto {
        try DepthPhoto.decode(bytes: [UInt8](try Data(contentsOf: URL(fileURLWithPath: path))), name: path)
    }

    /// Sum, minimum and maximum of a gray8 buffer's samples.
    private func stats(_ b: PixelBuffer) -> (sum: Int, min: Int, max: Int) {
        var sum = 0, lo = Int.max, hi = Int.min
        for y in 0..<b.height {
            let r = b.row(y, as: UInt8.self)
            for x in 0..<b.width {
                let v = Int(r[x])
                sum += v; lo = min(lo, v); hi = max(hi, v)
            }
        }
        return (sum, lo, hi)
    }

    private func infoJSON(_ path: String) throws -> [String: Any] {
        let r = try TestProcess.result(Repo.depthlens, ["info", "--json", "photo:\(path)"], timeout: 300)
        XCTAssertEqual(r.status, 0, r.stderr)
        return try XCTUnwrap(JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any], r.stdout)
    }

    // MARK: - Google Camera Lens Blur (GDepth)

    func testLensBlurDepthMatchesTheIndependentReader() throws {
        let photo = try decode(lensBlur)
        XCTAssertEqual(photo.container, "JPEG (GDepth)")
        XCTAssertEqual(photo.color.width, 768)
        XCTAssertEqual(photo.color.height, 1024)

        // The RGBA PNG's R (= G = B): 768x1024, min 44, max 252, sum 125,917,950.
        let stored = try XCTUnwrap(photo.storedDepth)
        XCTAssertEqual(stored.format, .gray8)
        XCTAssertEqual(stored.width, 768)
        XCTAssertEqual(stored.height, 1024)
        let s = stats(stored)
        XCTAssertEqual(s.min, 44)
        XCTAssertEqual(s.max, 252)
        XCTAssertEqual(s.sum, 125_917_950)
        XCTAssertEqual(stored.sample(x: 384, y: 512), 189)

        // Near/Far as written, no units: relative depth in the photo's own scale.
        let range = try XCTUnwrap(photo.range)
        XCTAssertEqual(range.encoding, .gdepth)
        XCTAssertEqual(range.format, "RangeInverse")
        XCTAssertEqual(range.low, 12.423587799072266)
        XCTAssertEqual(range.high, 390.539306640625)
        XCTAssertEqual(range.units, "")
        XCTAssertEqual(photo.accuracy, .relative)
        let depth = try XCTUnwrap(photo.depth)
        XCTAssertEqual(depth.accuracy, .relative)

        // z = far·near / (far − dn·(far − near)): 14.915345 … 287.570949, mean 57.07817,
        // center (row 512, col 384) 43.992662 — in Lens Blur's units.
        let d = depth.depthFloat32()
        let st = depth.depthStatistics()
        XCTAssertEqual(st.validCount, 768 * 1024)
        XCTAssertEqual(Double(st.min), 14.915345, accuracy: 2e-5)
        XCTAssertEqual(Double(st.max), 287.570949, accuracy: 3e-4)
        XCTAssertEqual(Double(d.row(512, as: Float.self)[384]), 43.992662, accuracy: 5e-5)
        var total = 0.0
        for y in 0..<d.height { for x in 0..<d.width { total += Double(d.row(y, as: Float.self)[x]) } }
        XCTAssertEqual(total / Double(d.width * d.height), 57.07817, accuracy: 1e-4)
        print(String(format: "Lens Blur table.jpg: depth %.6f … %.6f (own units), center %.6f", st.min, st.max, d.row(512, as: Float.self)[384]))
    }

    func testLensBlurThroughPhotoSourceAndInfo() throws {
        let source = PhotoSource(path: lensBlur)
        try source.start()
        let frame = try XCTUnwrap(try source.nextFrame(now: 0))
        XCTAssertEqual(frame.depth?.accuracy, .relative)
        XCTAssertNil(frame.matte)
        XCTAssertEqual(source.metadata.tags["depth_accuracy"], "relative")
        XCTAssertTrue(source.metadata.tags["depth_note"]?.contains("no units") == true, "\(source.metadata.tags)")
        XCTAssertEqual(source.metadata.tags["depth_values"], "14.9153 … 287.5710 (the photo's own scale, not meters)")
        XCTAssertNil(source.metadata.tags["depth_meters"])
        // 16-bit depth written from it keeps Far (390.5) in range: 100 steps a unit, not 1000.
        XCTAssertEqual(source.depthUnitsPerMeter, 100)
        XCTAssertEqual(source.calibration?.depthScale, 100)
        XCTAssertTrue(source.warnings.isEmpty, "\(source.warnings)")

        let o = try infoJSON(lensBlur)
        XCTAssertEqual(o["kind"] as? String, "photo")
        XCTAssertEqual(o["accuracy"] as? String, "relative")
        let streams = try XCTUnwrap(o["streams"] as? [[String: Any]])
        XCTAssertEqual(streams.map { $0["name"] as? String }, ["color", "depth"])
        XCTAssertEqual(streams[1]["width"] as? Int, 768)
        XCTAssertEqual(streams[1]["height"] as? Int, 1024)
        XCTAssertEqual(streams[1]["encoding"] as? String, "gdepth 8-bit")
        let tags = try XCTUnwrap(o["tags"] as? [String: String])
        XCTAssertEqual(tags["container"], "JPEG (GDepth)")
        XCTAssertEqual(tags["depth_range"], "12.423587799072266 … 390.539306640625 (no units) (RangeInverse, stored 0 … 255)")
    }

    // MARK: - iPhone X portrait JPEG with a portrait effects matte (iOS 12)

    func testIPhoneXDepthAndMatteMatchTheIndependentReader() throws {
        let photo = try decode(iPhoneX)
        XCTAssertEqual(photo.container, "JPEG (iPhone MPF)")
        XCTAssertEqual(photo.color.width, 3024)
        XCTAssertEqual(photo.color.height, 4032)

        // Disparity 576x768, sum 52,110,277, range 0.864746 … 1.366211 1/m, relative.
        let stored = try XCTUnwrap(photo.storedDepth)
        XCTAssertEqual(stored.width, 576)
        XCTAssertEqual(stored.height, 768)
        XCTAssertEqual(stats(stored).sum, 52_110_277)
        XCTAssertEqual(stored.sample(x: 288, y: 384), 199)
        let range = try XCTUnwrap(photo.range)
        XCTAssertEqual(range.encoding, .appleDisparity)
        XCTAssertEqual(range.low, 0.864746)
        XCTAssertEqual(range.high, 1.366211)
        XCTAssertEqual(photo.accuracy, .relative)

        // Depth = 1/disparity: 0.731951 … 1.153785 m, center (row 384, col 288) 0.796124 m.
        let depth = try XCTUnwrap(photo.depth)
        let st = depth.depthStatistics()
        XCTAssertEqual(Double(st.min), 0.731951, accuracy: 2e-6)
        XCTAssertEqual(Double(st.max), 1.153785, accuracy: 2e-6)
        let center = depth.depthFloat32().row(384, as: Float.self)[288]
        XCTAssertEqual(Double(center), 0.796124, accuracy: 2e-6)
        print(String(format: "iPhone X image-with-matte.jpg: depth %.6f … %.6f m, center %.6f m", st.min, st.max, center))

        // The matte the iOS 12 layout hides under type "depth": 1512x2016, sum 231,162,793.
        XCTAssertEqual(photo.mattes.count, 1)
        let matte = try XCTUnwrap(photo.mattes.first)
        XCTAssertEqual(matte.type, "urn:com:apple:photo:2018:aux:portraiteffectsmatte")
        XCTAssertEqual(matte.image.format, .gray8)
        XCTAssertEqual(matte.image.width, 1512)
        XCTAssertEqual(matte.image.height, 2016)
        XCTAssertEqual(stats(matte.image).sum, 231_162_793)
        XCTAssertTrue(photo.otherAuxiliary.isEmpty, "\(photo.otherAuxiliary)")
        XCTAssertTrue(photo.notes.isEmpty, "\(photo.notes)")
    }

    func testIPhoneXMatteReachesTheFrameAndInfo() throws {
        let source = PhotoSource(path: iPhoneX)
        try source.start()
        let frame = try XCTUnwrap(try source.nextFrame(now: 0))
        // The frame's matte is what the viewer's portrait and mask modes use (MatteMask).
        let matte = try XCTUnwrap(frame.matte)
        XCTAssertEqual(matte.width, 1512)
        XCTAssertEqual(matte.height, 2016)
        XCTAssertEqual(stats(matte).sum, 231_162_793)
        XCTAssertEqual(source.metadata.streams.map(\.name), ["color", "depth", "matte portraiteffectsmatte"])
        XCTAssertNil(source.metadata.tags["auxiliary_not_decoded"])
        XCTAssertEqual(source.depthUnitsPerMeter, 1000)

        let o = try infoJSON(iPhoneX)
        XCTAssertEqual(o["accuracy"] as? String, "relative")
        let streams = try XCTUnwrap(o["streams"] as? [[String: Any]])
        let m = try XCTUnwrap(streams.first { $0["name"] as? String == "matte portraiteffectsmatte" }, "\(streams)")
        XCTAssertEqual(m["width"] as? Int, 1512)
        XCTAssertEqual(m["height"] as? Int, 2016)
        let tags = try XCTUnwrap(o["tags"] as? [String: String])
        XCTAssertEqual(tags["depth_meters"], "0.7320 … 1.1538 m")
        XCTAssertNil(tags["auxiliary_not_decoded"])

        let text = try TestProcess.result(Repo.depthlens, ["info", "photo:\(iPhoneX)"], timeout: 300)
        XCTAssertEqual(text.status, 0, text.stderr)
        XCTAssertTrue(text.stdout.contains("  matte portraiteffectsmatte: 1512x2016 gray8"), text.stdout)
        XCTAssertFalse(text.stdout.contains("auxiliary not decoded"), text.stdout)
    }
}
