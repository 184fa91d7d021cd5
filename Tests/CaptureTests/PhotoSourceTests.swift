import XCTest
import Foundation
import DepthKit
import TestSupport
@testable import Capture

/// `photo:FILE` against independent references: the real iPhone HEIC decoded by PyPI's pillow-heif
/// (a current libheif) and its XMP read by Python's xml.etree; GDepth, Dynamic Depth and iPhone
/// MPF JPEGs written by Tests/Fixtures/photo_reference.py following their specs (Pillow, numpy),
/// decoded back to what went in.
final class PhotoSourceTests: XCTestCase {
    private var folder: TemporaryFolder!
    private var python: String!
    private let script = Repo.fixture("photo_reference.py")
    private let heic = Repo.fixture("iphone-portrait-pug.heic")

    override func setUpWithError() throws {
        folder = TemporaryFolder("photo-tests")
        python = try PythonReference.python(importing: ["numpy", "PIL", "pillow_heif"])
    }

    override func tearDown() { folder = nil }

    private func reference(_ args: [String]) throws {
        let r = try TestProcess.run([python, script] + args, timeout: 300)
        XCTAssertEqual(r.status, 0, r.output)
        if r.status != 0 { throw CaptureError.invalidState("photo_reference.py \(args.first ?? "") failed") }
    }

    private func json(_ path: String) throws -> [String: Any] {
        try XCTUnwrap(JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [String: Any])
    }

    private func raw<T>(_ path: String, as: T.Type) throws -> [T] {
        let d = try Data(contentsOf: URL(fileURLWithPath: path))
        return d.withUnsafeBytes { Array($0.bindMemory(to: T.self)) }
    }

    private func samples(_ b: PixelBuffer) -> [Int] {
        var out: [Int] = []
        out.reserveCapacity(b.width * b.height)
        for y in 0..<b.height { for x in 0..<b.width { out.append(Int(b.sample(x: x, y: y))) } }
        return out
    }

    private func meters(_ d: DepthData) -> [Float] {
        var out: [Float] = []
        for y in 0..<d.map.height { for x in 0..<d.map.width { out.append(d.map.sample(x: x, y: y)) } }
        return out
    }

    private func assertClose(_ a: [Float], _ b: [Float], relative: Float, _ what: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(a.count, b.count, what, file: file, line: line)
        var worst: Float = 0
        for (x, y) in zip(a, b) { worst = max(worst, abs(x - y) / max(abs(y), 1e-6)) }
        XCTAssertLessThanOrEqual(worst, relative, "\(what): worst relative difference", file: file, line: line)
    }

    // MARK: - The real iPhone HEIC

    func testSharedHEICMatchesPillowHeif() throws {
        let out = folder.file("ref")
        try reference(["heic-reference", heic, out])
        let info = try json(out + "/info.json")
        let xmp = try XCTUnwrap(info["xmp"] as? [String: Any])
        let photo = try DepthPhoto.read(heic)

        XCTAssertEqual(photo.container, "HEIF (iPhone depth)")
        XCTAssertEqual(photo.color.width, info["width"] as? Int)
        XCTAssertEqual(photo.color.height, info["height"] as? Int)
        // The primary image (a grid of 48 HEVC tiles) against libheif's decode: the same HEVC
        // picture, YUV → RGB by swscale here and libheif there (different chroma upsampling).
        let rgb = try raw(out + "/primary.rgb", as: UInt8.self)
        XCTAssertEqual(rgb.count, photo.color.width * photo.color.height * 3)
        var sum = 0, big = 0
        for y in 0..<photo.color.height {
            let row = photo.color.row(y, as: UInt8.self)
            for x in 0..<photo.color.width {
                for c in 0..<3 {
                    let d = abs(Int(row[4 * x + c]) - Int(rgb[(y * photo.color.width + x) * 3 + c]))
                    sum += d
                    if d > 12 { big += 1 }
                }
            }
        }
        let mean = Double(sum) / Double(rgb.count)
        print(String(format: "primary image vs pillow-heif: mean |difference| %.3f, %.4f%% of samples over 12", mean, 100 * Double(big) / Double(rgb.count)))
        XCTAssertLessThan(mean, 0.5, "mean absolute difference from pillow-heif's primary image")
        XCTAssertLessThan(Double(big) / Double(rgb.count), 0.002, "share of samples more than 12 apart")

        // The depth item's 8-bit values: exactly libheif's.
        let stored = try XCTUnwrap(photo.storedDepth)
        XCTAssertEqual(stored.width, info["depth_width"] as? Int)
        XCTAssertEqual(stored.height, info["depth_height"] as? Int)
        XCTAssertEqual(stored.format, .gray8)
        let refDepth = try raw(out + "/depth.gray", as: UInt8.self).map(Int.init)
        let mine = samples(stored)
        XCTAssertEqual(zip(mine, refDepth).map { abs($0 - $1) }.max(), 0, "depth values differ from libheif's")

        // The range: the XMP (xml.etree) exactly, libheif's float16 depth representation within its rounding.
        let range = try XCTUnwrap(photo.range)
        XCTAssertEqual(range.encoding, .appleDisparity)
        XCTAssertEqual(range.low, try XCTUnwrap(xmp["FloatMinValue"] as? Double))
        XCTAssertEqual(range.high, try XCTUnwrap(xmp["FloatMaxValue"] as? Double))
        XCTAssertEqual(range.intLow, try XCTUnwrap(xmp["IntMinValue"] as? Double))
        XCTAssertEqual(range.intHigh, try XCTUnwrap(xmp["IntMaxValue"] as? Double))
        let libheif = try XCTUnwrap(info["libheif_depth"] as? [String: Any])
        XCTAssertEqual(range.low, try XCTUnwrap(libheif["d_min"] as? Double), accuracy: 2e-3)
        XCTAssertEqual(range.high, try XCTUnwrap(libheif["d_max"] as? Double), accuracy: 2e-3)

        // Depth = 1 / (min + v/255·(max − min)), from the reference's values and range.
        let depth = try XCTUnwrap(photo.depth)
        let expected = refDepth.map { v -> Float in Float(1 / (range.low + Double(v) / 255 * (range.high - range.low))) }
        assertClose(meters(depth), expected, relative: 1e-6, "depth in meters")
        let s = depth.depthStatistics()
        XCTAssertEqual(Double(s.min), 1 / range.high, accuracy: 1e-3 * (1 / range.high) + 0.02)
        XCTAssertLessThanOrEqual(Double(s.max), 1 / range.low + 1e-6)

        // Relative accuracy, carried on the depth and in the metadata.
        XCTAssertEqual(xmp["Accuracy"] as? String, "relative")
        XCTAssertEqual(photo.accuracy, .relative)
        XCTAssertEqual(depth.accuracy, .relative)

        // Intrinsics: column-major K against the 4032×3024 reference, scaled to each image.
        let k = try XCTUnwrap(xmp["IntrinsicMatrix"] as? [Double])
        let rw = try XCTUnwrap(xmp["ReferenceWidth"] as? Double), rh = try XCTUnwrap(xmp["ReferenceHeight"] as? Double)
        let ref = CameraIntrinsics(fx: Float(k[0]), fy: Float(k[4]), cx: Float(k[6]), cy: Float(k[7]), width: Int(rw), height: Int(rh))
        XCTAssertEqual(photo.colorCamera.intrinsics, ref.scaled(toWidth: photo.color.width, height: photo.color.height))
        XCTAssertEqual(photo.depthCamera.intrinsics, ref.scaled(toWidth: stored.width, height: stored.height))
        XCTAssertEqual(depth.intrinsics, photo.depthCamera.intrinsics)
        XCTAssertEqual(photo.depthCamera.intrinsics.fx, Float(k[0] * 768 / 4032), accuracy: 1e-3)
        let lens = try XCTUnwrap(xmp["LensDistortionCoefficients"] as? [Double])
        let mineLens = photo.lensDistortion["LensDistortionCoefficients"]?.split(separator: " ").compactMap { Double($0) } ?? []
        XCTAssertEqual(mineLens.count, lens.count)
        for (a, b) in zip(mineLens, lens) { XCTAssertEqual(a, b, accuracy: 1e-12 * max(1, abs(b))) }
        XCTAssertEqual(photo.otherAuxiliary, ["urn:com:apple:photo:2020:aux:hdrgainmap"])
        XCTAssertTrue(photo.mattes.isEmpty)
    }

    func testPhotoSourceDeliversOneFrameWithBothCameras() throws {
        let source = try SourceSpec(parsing: "photo:\(heic)").makeSource()
        XCTAssertTrue(source is PhotoSource)
        let frame = try FrameReader.frame(0, of: source)
        XCTAssertEqual(frame.color.width, 4032)
        let depth = try XCTUnwrap(frame.depth)
        XCTAssertEqual(depth.map.format, .depthFloat32)
        XCTAssertEqual(depth.map.width, 768)
        let cal = try XCTUnwrap(source.calibration)
        XCTAssertEqual(cal.depth.intrinsics.width, 768)
        XCTAssertEqual(cal.color.intrinsics.width, 4032)
        XCTAssertTrue(cal.depthToColor.isIdentity())
        XCTAssertEqual(source.metadata.kind, "photo")
        XCTAssertEqual(source.metadata.tags["depth_accuracy"], "relative")
        XCTAssertEqual(source.metadata.streams.map(\.name), ["color", "depth"])
        XCTAssertThrowsError(try SourceSpec(parsing: "photo:\(heic)").makeSource(depthScale: 1000))
    }

    /// An iOS 18-like file: 300 more auxiliary images referencing the primary (libheif before 1.18
    /// refuses such files with "Too many auxiliary image references"). pillow-heif reads it too.
    func testManyAuxiliaryReferences() throws {
        let many = folder.file("many.heic")
        try reference(["heic-variant", heic, many, "many-aux"])
        let out = folder.file("many-ref")
        try reference(["heic-reference", many, out])
        let photo = try DepthPhoto.read(many)
        XCTAssertEqual(photo.otherAuxiliary.filter { $0 == "urn:depthlens:test:aux" }.count, 300)
        let refDepth = try raw(out + "/depth.gray", as: UInt8.self).map(Int.init)
        XCTAssertEqual(samples(try XCTUnwrap(photo.storedDepth)), refDepth)
        XCTAssertEqual(photo.range?.low, 1.498047)
    }

    // MARK: - Bad HEIC input: one line naming the file, or color with a notice

    func testHEICWithoutDepthIsColorWithANotice() throws {
        let path = folder.file("no-depth.heic")
        try reference(["heic-variant", heic, path, "no-depth"])
        let source = PhotoSource(path: path)
        var heard: [String] = []
        source.onWarning = { heard.append($0) }
        try source.start()
        let frame = try XCTUnwrap(try source.nextFrame(now: 0))
        XCTAssertNil(frame.depth)
        XCTAssertEqual(frame.color.width, 4032)
        XCTAssertEqual(heard.count, 1)
        XCTAssertTrue(heard[0].hasPrefix(path + ": no depth"), heard[0])
        XCTAssertEqual(source.metadata.tags["depth_encoding"], "none")
    }

    func testBadHEICsAreOneLineErrors() throws {
        for (kind, expect) in [("no-range", "FloatMinValue"), ("truncated", "truncated")] {
            let path = folder.file("\(kind).heic")
            try reference(["heic-variant", heic, path, kind])
            XCTAssertThrowsError(try PhotoSource(path: path).start(), kind) { error in
                let line = "\(error)"
                XCTAssertTrue(line.hasPrefix(path + ": "), line)
                XCTAssertTrue(line.contains(expect), line)
                XCTAssertFalse(line.contains("\n"), line)
            }
        }
        // Every prefix of the file's first 16 KB (the boxes) is refused with a line, never a crash.
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: heic)))
        for n in stride(from: 0, to: 16384, by: 97) {
            XCTAssertThrowsError(try DepthPhoto.decode(bytes: Array(bytes[..<n]), name: "cut.heic"))
        }
        // Not a photo at all.
        XCTAssertThrowsError(try DepthPhoto.decode(bytes: Array("hello".utf8), name: "x.heic")) {
            XCTAssertTrue("\($0)".contains("not a HEIF/HEIC or JPEG"), "\($0)")
        }
    }

    // MARK: - JPEGs

    func testGDepthRoundTrips() throws {
        for (format, units) in [("RangeInverse", "m"), ("RangeLinear", "mm")] {
            let path = folder.file("g-\(format).jpg"), out = folder.file("g-\(format)")
            try reference(["gdepth", path, out, format, units])
            let info = try json(out + "/info.json")
            XCTAssertGreaterThanOrEqual(info["chunks"] as? Int ?? 0, 2, "the depth must span several extended-XMP segments")
            let photo = try DepthPhoto.read(path)
            XCTAssertEqual(photo.container, "JPEG (GDepth)")
            XCTAssertEqual(photo.color.width, 160)
            let stored = try XCTUnwrap(photo.storedDepth)
            XCTAssertEqual(stored.width, 256)
            XCTAssertEqual(samples(stored), try raw(out + "/stored.u16", as: UInt16.self).map(Int.init), "\(format): stored depth")
            assertClose(meters(try XCTUnwrap(photo.depth)), try raw(out + "/meters.f32", as: Float.self), relative: 1e-5, "\(format) meters")
            XCTAssertEqual(photo.range?.format, format)
            XCTAssertEqual(photo.range?.units, units)
            XCTAssertEqual(photo.depthCamera.intrinsics.width, 256)
            // GDepth:Units m / mm: metric.
            XCTAssertEqual(photo.accuracy, .absolute)
            XCTAssertEqual(photo.depth?.accuracy, .absolute)
        }
        let cut = folder.file("cut.jpg")
        try reference(["gdepth", cut, folder.file("cut"), "RangeInverse", "m", "cut"])
        XCTAssertThrowsError(try PhotoSource(path: cut).start()) {
            XCTAssertTrue("\($0)".hasPrefix(cut + ": GDepth:Data is not valid base64"), "\($0)")
        }
    }

    /// Lens Blur-style GDepth JPEGs (no GDepth:Units) whose depth PNG Pillow wrote as RGBA with
    /// R = G = B (what Lens Blur stores), RGB with equal channels, or 16-bit gray: the stored
    /// values, the values in the file's own units (Near/Far as written), relative accuracy. RGBA
    /// whose channels differ is one line naming the pixel.
    func testLensBlurStyleDepthPNGs() throws {
        for kind in ["rgba", "rgb", "gray16"] {
            let path = folder.file("lb-\(kind).jpg"), out = folder.file("lb-\(kind)")
            try reference(["lensblur", path, out, kind])
            let info = try json(out + "/info.json")
            XCTAssertGreaterThanOrEqual(info["chunks"] as? Int ?? 0, 2, "the extended XMP must span several segments")
            XCTAssertEqual(info["png_mode"] as? String, ["rgba": "RGBA", "rgb": "RGB", "gray16": "I;16"][kind])
            let photo = try DepthPhoto.read(path)
            XCTAssertEqual(photo.container, "JPEG (GDepth)")
            let stored = try XCTUnwrap(photo.storedDepth)
            XCTAssertEqual(stored.format, kind == "gray16" ? .gray16(depthScale: 0) : .gray8, kind)
            XCTAssertEqual(stored.width, 192)
            XCTAssertEqual(samples(stored), try raw(out + "/stored.u16", as: UInt16.self).map(Int.init), "\(kind): stored depth")
            assertClose(meters(try XCTUnwrap(photo.depth)), try raw(out + "/values.f32", as: Float.self), relative: 1e-5, "\(kind) values")
            XCTAssertEqual(photo.range?.low, info["near"] as? Double)
            XCTAssertEqual(photo.range?.high, info["far"] as? Double)
            XCTAssertEqual(photo.range?.units, "")
            XCTAssertEqual(photo.accuracy, .relative, kind)
            XCTAssertEqual(photo.depth?.accuracy, .relative, kind)
        }
        let differ = folder.file("lb-differ.jpg")
        try reference(["lensblur", differ, folder.file("lb-differ"), "differ"])
        let px = try XCTUnwrap(try json(folder.file("lb-differ") + "/info.json")["differ"] as? [String: Int])
        XCTAssertThrowsError(try PhotoSource(path: differ).start()) { error in
            let line = "\(error)"
            XCTAssertEqual(line, "\(differ): GDepth:Data (image/png): a 192x256 8-bit RGBA picture whose color channels differ "
                           + "(pixel \(px["x"]!),\(px["y"]!): R \(px["r"]!) G \(px["g"]!) B \(px["r"]!)): a depth map needs gray, or R = G = B")
        }
    }

    func testDynamicDepthRoundTrips() throws {
        for (format, units) in [("RangeInverse", "Meters"), ("RangeLinear", "Diopters")] {
            let path = folder.file("dd-\(units).jpg"), out = folder.file("dd-\(units)")
            try reference(["dynamic-depth", path, out, format, units])
            let info = try json(out + "/info.json")
            let photo = try DepthPhoto.read(path)
            XCTAssertEqual(photo.container, "JPEG (Dynamic Depth)")
            let stored = try XCTUnwrap(photo.storedDepth)
            XCTAssertEqual(samples(stored), try raw(out + "/stored.u16", as: UInt16.self).map(Int.init), "\(units): stored depth")
            assertClose(meters(try XCTUnwrap(photo.depth)), try raw(out + "/meters.f32", as: Float.self), relative: 1e-5, "\(units) meters")
            let k = CameraIntrinsics(fx: Float(info["fx"] as! Double), fy: Float(info["fy"] as! Double),
                                     cx: Float(info["cx"] as! Double), cy: Float(info["cy"] as! Double), width: 160, height: 120)
            XCTAssertEqual(photo.colorCamera.intrinsics, k)
            XCTAssertEqual(photo.depthCamera.intrinsics, k.scaled(toWidth: 80, height: 60))
        }
    }

    func testIPhoneMPFJPEG() throws {
        let path = folder.file("iphone.jpg"), out = folder.file("iphone")
        try reference(["iphone-jpeg", path, out])
        let info = try json(out + "/info.json")
        let photo = try DepthPhoto.read(path)
        XCTAssertEqual(photo.container, "JPEG (iPhone MPF)")
        let stored = try XCTUnwrap(photo.storedDepth)
        let ref = try raw(out + "/stored.u8", as: UInt8.self).map(Int.init)
        XCTAssertLessThanOrEqual(zip(samples(stored), ref).map { abs($0 - $1) }.max() ?? 99, 1, "depth JPEG vs Pillow's decode")
        let matte = try XCTUnwrap(photo.mattes.first)
        XCTAssertEqual(matte.type, "urn:com:apple:photo:2018:aux:portraiteffectsmatte")
        let refMatte = try raw(out + "/matte.u8", as: UInt8.self).map(Int.init)
        XCTAssertLessThanOrEqual(zip(samples(matte.image), refMatte).map { abs($0 - $1) }.max() ?? 99, 1)
        let rgb = try raw(out + "/primary.rgb", as: UInt8.self)
        var worst = 0
        for y in 0..<120 { for x in 0..<160 { for c in 0..<3 {
            worst = max(worst, abs(Int(photo.color.row(y, as: UInt8.self)[4 * x + c]) - Int(rgb[(y * 160 + x) * 3 + c])))
        } } }
        XCTAssertLessThanOrEqual(worst, 2, "primary JPEG vs Pillow's decode")
        let fmin = try XCTUnwrap(info["fmin"] as? Double), fmax = try XCTUnwrap(info["fmax"] as? Double)
        XCTAssertEqual(photo.range?.low, fmin)
        XCTAssertEqual(photo.range?.high, fmax)
        let expected = samples(stored).map { Float(1 / (fmin + Double($0) / 255 * (fmax - fmin))) }
        assertClose(meters(try XCTUnwrap(photo.depth)), expected, relative: 1e-6, "MPF depth meters")
        XCTAssertEqual(photo.accuracy, .absolute)
        XCTAssertEqual(photo.depthCamera.intrinsics.fx, Float(3032.594 * 96 / 4032), accuracy: 1e-3)
    }

    /// The iOS 12 layout: the portrait effects matte labelled type `depth`, subtype
    /// `portraiteffectsmatte`, placed before the depth image (it must not be taken for the
    /// depth), then semantic mattes named by their URN as type, or by a subtype under `depth`.
    func testIOS12MatteLayoutAndSemanticMattes() throws {
        let path = folder.file("ios12.jpg"), out = folder.file("ios12")
        try reference(["iphone-jpeg", path, out, "ios12"])
        let expected = try json(out + "/mattes.json")
        let photo = try DepthPhoto.read(path)
        XCTAssertEqual(photo.container, "JPEG (iPhone MPF)")
        XCTAssertEqual(photo.storedDepth?.width, 96, "the depth image, not the matte before it")
        let info = try json(out + "/info.json")
        XCTAssertEqual(photo.range?.low, info["fmin"] as? Double)
        XCTAssertEqual(Set(photo.mattes.map(\.type)), Set(expected.keys))
        for m in photo.mattes {
            let e = try XCTUnwrap(expected[m.type] as? [String: Any])
            XCTAssertEqual([m.image.width, m.image.height], e["size"] as? [Int], m.type)
            // libjpeg here and Pillow's libjpeg there: at most 1 apart a sample.
            let sum = samples(m.image).reduce(0, +), ref = try XCTUnwrap(e["sum"] as? Int)
            XCTAssertLessThanOrEqual(abs(sum - ref), m.image.width * m.image.height, m.type)
        }
        XCTAssertTrue(photo.otherAuxiliary.isEmpty, "\(photo.otherAuxiliary)")
        // The frame's matte: the portrait effects matte, whatever semantic mattes are there too.
        let source = PhotoSource(path: path)
        try source.start()
        let frame = try XCTUnwrap(try source.nextFrame(now: 0))
        XCTAssertEqual(frame.matte?.width, 80)
        XCTAssertEqual(source.metadata.streams.map(\.name), ["color", "depth", "matte portraiteffectsmatte", "matte semanticskinmatte",
                                                             "matte semantichairmatte", "matte semanticskymatte"])
    }

    /// A HEIC auxiliary image whose `auxC` subtype (text, NUL-padded) names the matte under a type
    /// that does not: decoded as the portrait effects matte.
    func testHEICAuxCSubtypeNamesTheMatte() throws {
        let path = folder.file("subtype.heic")
        try reference(["heic-variant", heic, path, "subtype-matte"])
        let photo = try DepthPhoto.read(path)
        XCTAssertEqual(photo.mattes.map(\.type), ["urn:com:apple:photo:2018:aux:portraiteffectsmatte"])
        XCTAssertTrue(photo.otherAuxiliary.isEmpty, "\(photo.otherAuxiliary)")
        XCTAssertEqual(photo.storedDepth?.width, 768, "the depth is still read")
        let source = PhotoSource(path: path)
        try source.start()
        XCTAssertNotNil(try XCTUnwrap(try source.nextFrame(now: 0)).matte)
    }

    func testMatteTypesFromTypeAndSubtype() {
        let pem = "urn:com:apple:photo:2018:aux:portraiteffectsmatte"
        XCTAssertEqual(DepthPhoto.matteType(type: "depth", subtype: "portraiteffectsmatte"), pem)
        XCTAssertEqual(DepthPhoto.matteType(type: pem, subtype: nil), pem)
        XCTAssertEqual(DepthPhoto.matteType(type: "depth", subtype: "semanticskinmatte"), "urn:com:apple:photo:2019:aux:semanticskinmatte")
        XCTAssertEqual(DepthPhoto.matteType(type: "depth", subtype: "semanticglassesmatte"), "urn:com:apple:photo:2020:aux:semanticglassesmatte")
        XCTAssertEqual(DepthPhoto.matteType(type: "tag:apple.com,2026:photo:aux:semanticskinmattev2", subtype: ""),
                       "tag:apple.com,2026:photo:aux:semanticskinmattev2")
        XCTAssertNil(DepthPhoto.matteType(type: "depth", subtype: nil))
        XCTAssertNil(DepthPhoto.matteType(type: "disparity", subtype: ""))
        XCTAssertNil(DepthPhoto.matteType(type: "urn:com:apple:photo:2020:aux:hdrgainmap", subtype: nil))
        XCTAssertNil(DepthPhoto.matteType(type: "urn:mpeg:hevc:2015:auxid:2", subtype: nil))
        XCTAssertEqual(DepthPhoto.subtypeText(Array("portraiteffectsmatte\0\0".utf8)), "portraiteffectsmatte")
        XCTAssertNil(DepthPhoto.subtypeText([0, 0, 0, 0x11, 0, 0, 0, 0x0d, 0x4e]))
        XCTAssertNil(DepthPhoto.subtypeText([]))
    }

    // MARK: - The parsers on their own

    func testXMPReadsAttributesElementsAndSequences() {
        let x = XMPPacket(text: """
            <x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">
            <rdf:Description xmlns:q="http://ns.apple.com/depthData/1.0/" xmlns:a='http://ns.apple.com/pixeldatainfo/1.0/'
              a:FloatMinValue = '1.5' a:Note="a &amp; b">
            <a:FloatMaxValue> 4.25 </a:FloatMaxValue>
            <q:IntrinsicMatrix><rdf:Seq><rdf:li>1</rdf:li><rdf:li>2.5</rdf:li></rdf:Seq></q:IntrinsicMatrix>
            </rdf:Description></rdf:RDF></x:xmpmeta>
            """)
        XCTAssertEqual(x.double(XMPPacket.NS.apdi, "FloatMinValue"), 1.5)
        XCTAssertEqual(x.double(XMPPacket.NS.apdi, "FloatMaxValue"), 4.25)
        XCTAssertEqual(x.value(XMPPacket.NS.apdi, "Note"), "a & b")
        XCTAssertEqual(x.doubles(XMPPacket.NS.depthData, "IntrinsicMatrix"), [1, 2.5])
        XCTAssertNil(x.value(XMPPacket.NS.gdepth, "Near"))
    }
}
