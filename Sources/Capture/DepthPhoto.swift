import CDepthKit
import DepthKit
import Foundation

/// A phone's depth photo decoded: the color image, the depth map in meters, both cameras, and what
/// the file says about the depth (its stored range, whether it is metric). See docs/PHOTOS.md.
///
/// Opens HEIF/HEIC (iPhone portrait and depth photos: an `auxl` auxiliary image of type
/// `urn:mpeg:hevc:2015:auxid:2` with Apple's depth XMP), and JPEG: iPhone portrait JPEGs (the
/// depth as an MPF image with the same XMP), Google's GDepth (base64 in the extended XMP) and
/// Android Dynamic Depth (`Device:Container` items after the primary image). The kind is found
/// from the bytes, not the file name.
public struct DepthPhoto {
    /// How the depth was stored.
    public enum Encoding: String, Sendable {
        /// Apple: integers mapped linearly onto [FloatMinValue, FloatMaxValue] of disparity (1/m) or depth (m).
        case appleDisparity = "apple-disparity"
        case appleDepth = "apple-depth"
        /// Google's GDepth (Lens Blur) XMP.
        case gdepth
        /// Android Dynamic Depth 1.0.
        case dynamicDepth = "dynamic-depth"
    }

    /// What the file says about its depth values.
    public struct DepthRange: Sendable, Equatable {
        public var encoding: Encoding
        /// Apple: FloatMinValue/FloatMaxValue (1/m for disparity, m for depth). Google: Near/Far in `units`.
        public var low: Double
        public var high: Double
        /// "RangeInverse"/"RangeLinear" for Google's formats, "linear" for Apple's.
        public var format: String
        /// "1/m", "m", "mm", "diopters"; "" when the file gives none (a Lens Blur photo: no
        /// `GDepth:Units`), the depth then being relative and in the file's own scale.
        public var units: String
        /// Apple: IntMinValue/IntMaxValue; Google: 0 … 2^bits − 1.
        public var intLow: Double
        public var intHigh: Double
    }

    /// "HEIF (iPhone depth)", "JPEG (iPhone MPF)", "JPEG (GDepth)", "JPEG (Dynamic Depth)", "HEIF", "JPEG".
    public var container: String
    public var color: PixelBuffer
    /// Depth in meters (depthFloat32) with the depth camera's intrinsics and accuracy; nil when the
    /// file has none (a color-only photo: `notes` says so).
    public var depth: DepthData?
    /// The stored depth samples as the file has them (gray8, or gray16 with no scale).
    public var storedDepth: PixelBuffer?
    public var range: DepthRange?
    public var accuracy: DepthData.Accuracy
    public var colorCamera: CameraModel
    public var depthCamera: CameraModel
    /// Where the intrinsics came from ("depthData:IntrinsicMatrix", "ImagingModel", "assumed").
    public var intrinsicsOrigin: String
    /// Apple's lens distortion as the XMP gives it (a radial magnification table; not applied).
    public var lensDistortion: [String: String]
    /// Portrait effects and semantic mattes (gray8), by their auxiliary type URN (Apple's URN for
    /// the known ones however the file names them: `matteType(type:subtype:)`).
    public var mattes: [(type: String, image: PixelBuffer)]
    /// Other auxiliary images present, by type (the HDR gain map…), not decoded.
    public var otherAuxiliary: [String]
    /// Things worth saying that did not stop the read (no depth, an undecodable matte…).
    public var notes: [String]

    // MARK: - Reading

    /// Reads and decodes the photo at `path`. Throws one line naming the file and the problem.
    public static func read(_ path: String) throws -> DepthPhoto {
        // FileSupport (one-line errors: missing, empty, a folder), not FileManager.contents, which
        // leaks its buffer on an empty file.
        let bytes: [UInt8]
        do { bytes = try FileSupport.readAll(path) } catch { throw CaptureError.wrapping(error, path: path) }
        return try decode(bytes: bytes, name: path)
    }

    /// Decodes a photo held in memory; `name` is what errors name.
    public static func decode(bytes: [UInt8], name: String) throws -> DepthPhoto {
        if HEIFFile.looksLikeHEIF(bytes) { return try decodeHEIF(HEIFFile(bytes: bytes, name: name)) }
        if JPEGSegments.looksLikeJPEG(bytes[...]) { return try decodeJPEG(bytes, name: name) }
        throw CaptureError.file(path: name, problem: "not a HEIF/HEIC or JPEG file (no 'ftyp' with a HEIF brand, no JPEG SOI marker)")
    }

    // MARK: - HEIF

    static let depthAuxTypes = ["urn:mpeg:hevc:2015:auxid:2", "urn:mpeg:mpegB:cicp:systems:auxiliary:depth"]

    static func decodeHEIF(_ file: HEIFFile) throws -> DepthPhoto {
        let name = file.name
        let primary = file.primary
        let color = try decodeImageItem(file, primary, output: .rgba8)
        var notes: [String] = []
        var depthItem: HEIFFile.Item?
        var mattes: [(String, PixelBuffer)] = []
        var other: [String] = []
        for aux in file.items(referencing: primary.id, type: "auxl") {
            let auxC = aux.properties.lazy.compactMap { p -> (String, [UInt8])? in
                if case let .auxC(t, subtype) = p { return (t, subtype) }; return nil }.first
            let type = auxC?.0 ?? ""
            // A matte may be named by the type (Apple's URN), or by a subtype under a depth type:
            // the auxC's own subtype bytes when they are text, else the item's XMP
            // (apdi:AuxiliaryImageSubType), as iOS 12 labels the matte in its JPEGs.
            var subtype = auxC.flatMap { subtypeText($0.1) }
            if subtype == nil, depthAuxTypes.contains(type) {
                subtype = auxiliaryXMP(file, aux)?.value(XMPPacket.NS.apdi, "AuxiliaryImageSubType")
            }
            if let matte = matteType(type: type, subtype: subtype) {
                do {
                    mattes.append((matte, try decodeImageItem(file, aux, output: .gray8)))
                } catch {
                    notes.append("matte \(matte) not decoded: \(problem(error, name: name))")
                }
            } else if depthAuxTypes.contains(type), subtype?.isEmpty ?? true {
                if depthItem == nil { depthItem = aux }
            } else if let subtype, !subtype.isEmpty {
                other.append("\(type.isEmpty ? "item \(aux.id)" : type) (subtype \(subtype))")
            } else {
                other.append(type.isEmpty ? "item \(aux.id) (no auxC)" : type)
            }
        }
        var photo = DepthPhoto(container: "HEIF", color: color, depth: nil, storedDepth: nil, range: nil, accuracy: .absolute,
                               colorCamera: .default(width: color.width, height: color.height),
                               depthCamera: .default(width: color.width, height: color.height), intrinsicsOrigin: "assumed",
                               lensDistortion: [:], mattes: mattes, otherAuxiliary: other, notes: notes)
        guard let depthItem else {
            photo.notes.append("no depth: the file has no auxiliary depth image (urn:mpeg:hevc:2015:auxid:2); color only")
            return photo
        }
        let bits = depthItem.properties.lazy.compactMap { p -> Int? in if case let .pixi(b) = p { return b.first }; return nil }.first ?? 8
        let stored = try decodeImageItem(file, depthItem, output: bits > 8 ? .gray16 : .gray8)
        guard let xmpItem = xmpItem(file, depthItem) else {
            throw CaptureError.file(path: name, problem: "the depth image (item \(depthItem.id)) has no XMP: its range (apdi:FloatMinValue/FloatMaxValue) is unknown")
        }
        let xmp = XMPPacket(bytes: try file.data(of: xmpItem)[...])
        try photo.applyApple(xmp: xmp, stored: stored, name: name)
        photo.container = "HEIF (iPhone depth)"
        return photo
    }

    /// The XMP item (`mime` application/rdf+xml) describing `item` through a `cdsc` reference.
    static func xmpItem(_ file: HEIFFile, _ item: HEIFFile.Item) -> HEIFFile.Item? {
        file.items(referencing: item.id, type: "cdsc").first {
            $0.type == "mime" && ($0.contentType ?? "").lowercased().contains("rdf+xml")
        }
    }

    /// `item`'s XMP packet, nil when it has none or its data cannot be read (the depth item's own
    /// read says why, later).
    static func auxiliaryXMP(_ file: HEIFFile, _ item: HEIFFile.Item) -> XMPPacket? {
        guard let x = xmpItem(file, item), let data = try? file.data(of: x) else { return nil }
        return XMPPacket(bytes: data[...])
    }

    // MARK: - Mattes

    /// Apple's mattes by their short name (the URN's last part, and what a JPEG's
    /// `apdi:AuxiliaryImageSubType` says): the portrait effects matte (iOS 12) and the semantic
    /// segmentation mattes (skin, hair, teeth from iOS 13; glasses, sky from iOS 14), with the
    /// auxiliary type URNs ImageIO gives them (`kCGImageAuxiliaryDataTypePortraitEffectsMatte`,
    /// `…SemanticSegmentationSkinMatte`…).
    public static let appleMatteTypes: [String: String] = [
        "portraiteffectsmatte": "urn:com:apple:photo:2018:aux:portraiteffectsmatte",
        "semanticskinmatte": "urn:com:apple:photo:2019:aux:semanticskinmatte",
        "semantichairmatte": "urn:com:apple:photo:2019:aux:semantichairmatte",
        "semanticteethmatte": "urn:com:apple:photo:2019:aux:semanticteethmatte",
        "semanticglassesmatte": "urn:com:apple:photo:2020:aux:semanticglassesmatte",
        "semanticskymatte": "urn:com:apple:photo:2020:aux:semanticskymatte",
    ]

    /// The matte an auxiliary image is, from its type and subtype (HEIF `auxC`, or an MPF image's
    /// `apdi:AuxiliaryImageType` / `AuxiliaryImageSubType`); nil when neither names one. The
    /// subtype is asked first: iOS 12 writes its JPEG matte as type `depth`, subtype
    /// `portraiteffectsmatte`. A name whose last `:` part ends in "matte" (or "mattevN") is a
    /// matte; a bare short name of `appleMatteTypes` becomes its URN, anything else is kept.
    public static func matteType(type: String, subtype: String?) -> String? {
        for candidate in [subtype, type] {
            guard let c = candidate?.trimmingCharacters(in: .whitespacesAndNewlines), !c.isEmpty else { continue }
            let short = (c.split(separator: ":").last.map(String.init) ?? c).lowercased()
            guard short.range(of: #"matte(v[0-9]+)?$"#, options: .regularExpression) != nil else { continue }
            return c.contains(":") ? c : appleMatteTypes[short] ?? c
        }
        return nil
    }

    /// The problem an error states, without the file name a note's reader adds again.
    static func problem(_ error: Error, name: String) -> String {
        if case let .file(path, problem) = CaptureError.wrapping(error, path: name), path == name { return problem }
        return "\(error)"
    }

    /// An `auxC` subtype as text, when it is one (printable ASCII, trailing NULs dropped); nil for
    /// the binary subtypes (the HEVC depth SEI Apple puts under its depth type) and empty ones.
    static func subtypeText(_ bytes: [UInt8]) -> String? {
        var b = bytes[...]
        while b.last == 0 { b = b.dropLast() }
        guard !b.isEmpty, b.count <= 256, b.allSatisfy({ (0x20...0x7e).contains($0) }) else { return nil }
        return String(decoding: b, as: UTF8.self)
    }

    /// Decodes an image item (`hvc1`, or a `grid` of `hvc1` tiles) and applies its `clap`, `irot`
    /// and `imir` in property order.
    static func decodeImageItem(_ file: HEIFFile, _ item: HEIFFile.Item, output: PictureDecoder.Output) throws -> PixelBuffer {
        let name = file.name
        var nclx: (matrix: Int, full: Bool)?
        for case let .nclx(_, _, m, f) in item.properties { nclx = (m, f) }
        var image: PixelBuffer
        switch item.type {
        case "hvc1":
            image = try decodeHEVC(file, item, output: output, nclx: nclx)
        case "grid":
            let d = try file.data(of: item)
            var r = BEReader(bytes: d, range: 0..<d.count, name: name, what: "grid item \(item.id)")
            _ = try r.u8()
            let flags = try r.u8()
            let rows = Int(try r.u8()) + 1, columns = Int(try r.u8()) + 1
            let width = Int(flags & 1 != 0 ? try r.u32() : UInt32(try r.u16()))
            let height = Int(flags & 1 != 0 ? try r.u32() : UInt32(try r.u16()))
            let tiles = file.referenced(from: item.id, type: "dimg")
            guard tiles.count == rows * columns else {
                throw CaptureError.file(path: name, problem: "grid item \(item.id) is \(columns)x\(rows) tiles but references \(tiles.count)")
            }
            guard width > 0, height > 0, width * height <= 1 << 26 else {
                throw CaptureError.file(path: name, problem: "grid item \(item.id) claims \(width)x\(height) pixels")
            }
            // The tiles' declared size must cover the grid before anything is allocated for it.
            if let first = tiles.first.flatMap({ file.item($0) }),
               let (tw, th) = first.properties.lazy.compactMap({ p -> (Int, Int)? in if case let .ispe(w, h) = p { return (w, h) }; return nil }).first,
               tw * columns < width || th * rows < height {
                throw CaptureError.file(path: name, problem: "grid item \(item.id): \(columns)x\(rows) tiles of \(tw)x\(th) do not cover \(width)x\(height)")
            }
            let format: PixelFormat
            switch output {
            case .rgba8: format = .rgba8
            case .gray8: format = .gray8
            case .gray16: format = .gray16(depthScale: 0)
            }
            image = try PixelBuffer.make(width: width, height: height, format: format, name: name, what: "grid item \(item.id)")
            let bpp = format.bytesPerPixel
            var decoders: [[UInt8]: PictureDecoder] = [:]
            var tileSize: (Int, Int)?
            for (k, id) in tiles.enumerated() {
                guard let tile = file.item(id), tile.type == "hvc1" else {
                    throw CaptureError.file(path: name, problem: "grid item \(item.id): tile \(id) is not an HEVC image item")
                }
                let tileNCLX = nclx ?? tile.properties.lazy.compactMap { p -> (Int, Bool)? in
                    if case let .nclx(_, _, m, f) = p { return (m, f) }; return nil }.first
                let t = try decodeHEVC(file, tile, output: output, nclx: tileNCLX, decoders: &decoders)
                if tileSize == nil { tileSize = (t.width, t.height) }
                guard let ts = tileSize, t.width == ts.0, t.height == ts.1 else {
                    throw CaptureError.file(path: name, problem: "grid item \(item.id): tiles of different sizes")
                }
                let x0 = (k % columns) * ts.0, y0 = (k / columns) * ts.1
                guard x0 < width, y0 < height else { continue }
                let w = min(ts.0, width - x0)
                for y in 0..<min(ts.1, height - y0) {
                    (image.row(y0 + y) + x0 * bpp).copyMemory(from: t.row(y), byteCount: w * bpp)
                }
            }
            if let ts = tileSize, ts.0 * columns < width || ts.1 * rows < height {
                throw CaptureError.file(path: name, problem: "grid item \(item.id): \(columns)x\(rows) tiles of \(ts.0)x\(ts.1) do not cover \(width)x\(height)")
            }
        default:
            throw CaptureError.file(path: name, problem: "item \(item.id) is a '\(item.type)' image; only HEVC ('hvc1') and grids of it are supported")
        }
        for p in item.properties {
            switch p {
            case let .irot(q): image = ImageTransform.rotate(image, quarterTurnsAnticlockwise: q)
            case let .imir(axis): image = ImageTransform.mirror(image, axis: axis)
            case let .clap(w, h, ho, vo): image = ImageTransform.cleanAperture(image, width: w, height: h, horizontalOffset: ho, verticalOffset: vo)
            case .hvcC, .ispe, .auxC, .pixi, .nclx, .icc, .other: break
            }
        }
        return image
    }

    private static func decodeHEVC(_ file: HEIFFile, _ item: HEIFFile.Item, output: PictureDecoder.Output,
                                   nclx: (matrix: Int, full: Bool)?) throws -> PixelBuffer {
        var decoders: [[UInt8]: PictureDecoder] = [:]
        return try decodeHEVC(file, item, output: output, nclx: nclx, decoders: &decoders)
    }

    private static func decodeHEVC(_ file: HEIFFile, _ item: HEIFFile.Item, output: PictureDecoder.Output,
                                   nclx: (matrix: Int, full: Bool)?, decoders: inout [[UInt8]: PictureDecoder]) throws -> PixelBuffer {
        guard let config = item.properties.lazy.compactMap({ p -> [UInt8]? in if case let .hvcC(c) = p { return c }; return nil }).first else {
            throw CaptureError.file(path: file.name, problem: "HEVC item \(item.id) has no hvcC (decoder configuration)")
        }
        let what = "HEVC item \(item.id)"
        let decoder = try decoders[config] ?? PictureDecoder(codec: "hevc", extradata: config, matrix: nclx?.matrix,
                                                             fullRange: nclx?.full, name: file.name, what: what)
        decoders[config] = decoder
        let data = try file.data(of: item)
        let image = try decoder.decode(data, as: output, what: what)
        for case let .ispe(w, h) in item.properties where w != image.width || h != image.height {
            throw CaptureError.file(path: file.name, problem: "\(what) decodes to \(image.width)x\(image.height) but its ispe says \(w)x\(h)")
        }
        return image
    }

    // MARK: - Apple's depth XMP (HEIF aux item, MPF image of a portrait JPEG)

    /// Fills depth, range, accuracy and cameras from Apple's XMP and the stored integers.
    mutating func applyApple(xmp: XMPPacket, stored: PixelBuffer, name: String) throws {
        let apdi = XMPPacket.NS.apdi, dd = XMPPacket.NS.depthData
        guard let fmin = xmp.double(apdi, "FloatMinValue"), let fmax = xmp.double(apdi, "FloatMaxValue") else {
            throw CaptureError.file(path: name, problem: "the depth XMP has no apdi:FloatMinValue/FloatMaxValue: the depth's range is unknown")
        }
        let maxInt: Double = stored.format == .gray8 ? 255 : 65535
        let imin = xmp.double(apdi, "IntMinValue") ?? 0, imax = xmp.double(apdi, "IntMaxValue") ?? maxInt
        guard fmin.isFinite, fmax.isFinite, imin.isFinite, imax.isFinite, imax != imin else {
            throw CaptureError.file(path: name, problem: "the depth XMP's range is unusable (IntMin \(imin), IntMax \(imax), FloatMin \(fmin), FloatMax \(fmax))")
        }
        // AuxiliaryImageType "disparity"/"depth"; NativeFormat the CoreVideo type ('hdis', 'fdis', 'hdep', 'fdep').
        let type = (xmp.value(apdi, "AuxiliaryImageType") ?? "").lowercased()
        let native = xmp.value(apdi, "NativeFormat").flatMap { UInt32($0) }
        let isDepth = type == "depth" || native == 0x6864_6570 || native == 0x6664_6570
        let encoding: Encoding = isDepth ? .appleDepth : .appleDisparity
        range = DepthRange(encoding: encoding, low: fmin, high: fmax, format: "linear", units: isDepth ? "m" : "1/m",
                           intLow: imin, intHigh: imax)
        storedDepth = stored
        let map = try PixelBuffer.make(width: stored.width, height: stored.height, format: .depthFloat32, name: name, what: "depth")
        let scale = (fmax - fmin) / (imax - imin)
        for y in 0..<stored.height {
            let d = map.row(y, as: Float.self)
            for x in 0..<stored.width {
                let v = fmin + (Double(stored.sample(x: x, y: y)) - imin) * scale
                let m = isDepth ? v : (v > 0 ? 1 / v : 0)
                d[x] = m > 0 && m.isFinite ? Float(m) : 0
            }
        }
        accuracy = (xmp.value(dd, "Accuracy") ?? "").lowercased() == "relative" ? .relative : .absolute

        // IntrinsicMatrix: column-major 3×3 (fx, fy, cx, cy at 0, 4, 6, 7) for the reference size.
        if let k = xmp.doubles(dd, "IntrinsicMatrix"), k.count == 9,
           let rw = xmp.double(dd, "IntrinsicMatrixReferenceWidth"), let rh = xmp.double(dd, "IntrinsicMatrixReferenceHeight"),
           rw >= 1, rh >= 1, rw <= 65536, rh <= 65536, k[0] > 0, k[4] > 0 {
            let ref = CameraIntrinsics(fx: Float(k[0]), fy: Float(k[4]), cx: Float(k[6]), cy: Float(k[7]), width: Int(rw), height: Int(rh))
            colorCamera = CameraModel(intrinsics: ref.scaled(toWidth: color.width, height: color.height))
            depthCamera = CameraModel(intrinsics: ref.scaled(toWidth: stored.width, height: stored.height))
            intrinsicsOrigin = "depthData:IntrinsicMatrix for \(Int(rw))x\(Int(rh))"
        } else {
            colorCamera = .default(width: color.width, height: color.height)
            depthCamera = .default(width: stored.width, height: stored.height)
            intrinsicsOrigin = "assumed (the XMP has no depthData:IntrinsicMatrix)"
            notes.append("no depthData:IntrinsicMatrix: intrinsics assumed")
        }
        var lens: [String: String] = [:]
        for key in ["LensDistortionCenterOffsetX", "LensDistortionCenterOffsetY", "PixelSize"] {
            if let v = xmp.value(dd, key) { lens[key] = v }
        }
        for key in ["LensDistortionCoefficients", "InverseLensDistortionCoefficients"] {
            if let s = xmp.sequence(dd, key) { lens[key] = s.joined(separator: " ") }
        }
        lensDistortion = lens
        depth = DepthData(map: map, accuracy: accuracy, intrinsics: depthCamera.intrinsics)
    }

    // MARK: - JPEG

    static func decodeJPEG(_ bytes: [UInt8], name: String) throws -> DepthPhoto {
        let jpeg = try JPEGSegments(bytes: bytes, name: name)
        let color = try PictureDecoder.jpeg(bytes[jpeg.imageRange], gray: false, name: name, what: "primary image")
        var photo = DepthPhoto(container: "JPEG", color: color, depth: nil, storedDepth: nil, range: nil, accuracy: .absolute,
                               colorCamera: .default(width: color.width, height: color.height),
                               depthCamera: .default(width: color.width, height: color.height), intrinsicsOrigin: "assumed",
                               lensDistortion: [:], mattes: [], otherAuxiliary: [], notes: jpeg.notes)
        let xmp = jpeg.xmp
        // iPhone: the MPF images whose own XMP is Apple's depth (or a matte).
        var appleDepth: (XMPPacket, PixelBuffer)?
        for (k, image) in jpeg.mpImages.enumerated() {
            guard let sub = try? JPEGSegments(bytes: bytes, start: image.range.lowerBound, name: name), let subXMP = sub.xmp else { continue }
            let type = (subXMP.value(XMPPacket.NS.apdi, "AuxiliaryImageType") ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
            let subtype = (subXMP.value(XMPPacket.NS.apdi, "AuxiliaryImageSubType") ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
            guard !type.isEmpty || !subtype.isEmpty else {
                photo.otherAuxiliary.append("MPF image \(k + 2)")
                continue
            }
            // iOS 12 writes its portrait effects matte as type "depth", subtype "portraiteffectsmatte":
            // the subtype decides before the type is taken for depth.
            if let matte = matteType(type: type, subtype: subtype) {
                do {
                    photo.mattes.append((matte, try PictureDecoder.jpeg(bytes[sub.imageRange], gray: true, name: name, what: "MPF matte \(k + 2)")))
                } catch {
                    photo.notes.append("matte \(matte) not decoded: \(problem(error, name: name))")
                }
            } else if ["disparity", "depth"].contains(type.lowercased()), subtype.isEmpty, appleDepth == nil {
                appleDepth = (subXMP, try PictureDecoder.jpeg(bytes[sub.imageRange], gray: true, name: name, what: "MPF depth image \(k + 2)"))
            } else {
                photo.otherAuxiliary.append(subtype.isEmpty ? type : "\(type.isEmpty ? "MPF image \(k + 2)" : type) (subtype \(subtype))")
            }
        }
        if let (subXMP, stored) = appleDepth {
            try photo.applyApple(xmp: subXMP, stored: stored, name: name)
            photo.container = "JPEG (iPhone MPF)"
            return photo
        }
        if let xmp, !xmp.prefixes(XMPPacket.NS.ddContainer).isEmpty || !xmp.prefixes(XMPPacket.NS.ddDepthMap).isEmpty {
            try photo.applyDynamicDepth(xmp: xmp, bytes: bytes, primaryEnd: jpeg.imageRange.upperBound, name: name)
            photo.container = "JPEG (Dynamic Depth)"
            return photo
        }
        if let xmp, !xmp.prefixes(XMPPacket.NS.gdepth).isEmpty {
            try photo.applyGDepth(xmp: xmp, extended: jpeg.extendedXMP, name: name)
            photo.container = "JPEG (GDepth)"
            return photo
        }
        photo.notes.append("no depth: the JPEG has no iPhone MPF depth image, GDepth or Dynamic Depth metadata; color only")
        return photo
    }

    /// Google's formats: a normalized value dn ∈ [0, 1] → depth in `units` (RangeLinear: near +
    /// dn·(far − near); RangeInverse: far·near / (far − dn·(far − near))), then meters.
    static func googleDepth(_ stored: PixelBuffer, format: String, near: Double, far: Double, units: String) -> PixelBuffer {
        let map = PixelBuffer(width: stored.width, height: stored.height, format: .depthFloat32)
        let maxValue: Double = stored.format == .gray8 ? 255 : 65535
        let inverse = format.lowercased() == "rangeinverse"
        let u = units.lowercased()
        for y in 0..<stored.height {
            let d = map.row(y, as: Float.self)
            for x in 0..<stored.width {
                let dn = Double(stored.sample(x: x, y: y)) / maxValue
                var v = inverse ? far * near / (far - dn * (far - near)) : near + dn * (far - near)
                if u == "mm" || u == "millimeter" || u == "millimeters" { v /= 1000 } else if u == "diopters" { v = v > 0 ? 1 / v : 0 }
                d[x] = v > 0 && v.isFinite ? Float(v) : 0
            }
        }
        return map
    }

    /// A PNG or JPEG payload of a depth map, as gray8 (8-bit) or gray16. The kind comes from the
    /// payload's signature (the Mime when it has none). See `decodePNGDepth` for the PNG layouts.
    static func decodeDepthPayload(_ data: [UInt8], mime: String, name: String, what: String) throws -> PixelBuffer {
        let pngSignature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        if data.starts(with: pngSignature) || (!JPEGSegments.looksLikeJPEG(data[...]) && mime.lowercased().contains("png")) {
            return try decodePNGDepth(data, name: name, what: what)
        }
        return try PictureDecoder.jpeg(data[...], gray: true, name: name, what: what)
    }

    /// A depth PNG through libpng (`dl_png_decode`, samples as stored): 8- or 16-bit gray (with or
    /// without alpha), or RGB / RGBA whose R, G and B are equal in every pixel — Google Camera's
    /// Lens Blur stores its depth as RGBA with R = G = B and A = 255. Alpha is ignored. An RGB(A)
    /// picture whose channels differ is not a depth map: one line naming the first such pixel.
    static func decodePNGDepth(_ data: [UInt8], name: String, what: String) throws -> PixelBuffer {
        var img = dl_image()
        var err = [CChar](repeating: 0, count: 512)
        let rc = data.withUnsafeBufferPointer { dl_png_decode($0.baseAddress, $0.count, &img, &err, err.count) }
        defer { dl_image_free(&img) }
        guard rc == 0, let pixels = img.pixels else {
            let msg = String(cBuffer: err)
            throw CaptureError.file(path: name, problem: "\(what): corrupt PNG: \(msg.isEmpty ? "cannot decode" : msg)")
        }
        let w = Int(img.width), h = Int(img.height), channels = Int(img.channels), bits = Int(img.bit_depth)
        guard w > 0, h > 0, (1...4).contains(channels), bits == 8 || bits == 16 else {
            throw CaptureError.file(path: name, problem: "\(what): unsupported PNG layout (\(channels) channels, \(bits) bits)")
        }
        let out = try PixelBuffer.make(width: w, height: h, format: bits == 8 ? .gray8 : .gray16(depthScale: 0), name: name, what: what)
        let color = channels >= 3
        let layout = ["gray", "gray+alpha", "RGB", "RGBA"][channels - 1]
        for y in 0..<h {
            let row = UnsafeRawPointer(pixels + y * img.row_bytes)
            func copy<T: FixedWidthInteger>(_: T.Type) throws {
                let s = row.assumingMemoryBound(to: T.self), d = out.row(y, as: T.self)
                for x in 0..<w {
                    let v = s[x * channels]
                    if color, s[x * channels + 1] != v || s[x * channels + 2] != v {
                        throw CaptureError.file(path: name, problem: "\(what): a \(w)x\(h) \(bits)-bit \(layout) picture whose color "
                            + "channels differ (pixel \(x),\(y): R \(v) G \(s[x * channels + 1]) B \(s[x * channels + 2])): "
                            + "a depth map needs gray, or R = G = B")
                    }
                    d[x] = v
                }
            }
            if bits == 8 { try copy(UInt8.self) } else { try copy(UInt16.self) }
        }
        out.markModified()
        return out
    }

    mutating func applyGDepth(xmp: XMPPacket, extended: XMPPacket?, name: String) throws {
        let ns = XMPPacket.NS.gdepth
        func value(_ key: String) -> String? { xmp.value(ns, key) ?? extended?.value(ns, key) }
        guard let near = value("Near").flatMap({ Double($0) }), let far = value("Far").flatMap({ Double($0) }) else {
            throw CaptureError.file(path: name, problem: "GDepth XMP has no GDepth:Near/GDepth:Far: the depth's range is unknown")
        }
        let format = value("Format") ?? "RangeInverse"
        guard ["rangeinverse", "rangelinear"].contains(format.lowercased()) else {
            throw CaptureError.file(path: name, problem: "GDepth:Format '\(format)' is neither RangeInverse nor RangeLinear")
        }
        guard let base64 = value("Data") else {
            throw CaptureError.file(path: name, problem: extended == nil && xmp.value(XMPPacket.NS.xmpNote, "HasExtendedXMP") != nil
                ? "GDepth:Data is in extended XMP that is missing or incomplete" : "GDepth XMP has no GDepth:Data")
        }
        guard let decoded = Data(base64Encoded: base64, options: .ignoreUnknownCharacters) else {
            throw CaptureError.file(path: name, problem: "GDepth:Data is not valid base64 (\(base64.count) characters): cut?")
        }
        let mime = value("Mime") ?? "image/png"
        let stored = try Self.decodeDepthPayload([UInt8](decoded), mime: mime, name: name, what: "GDepth:Data (\(mime))")
        // GDepth:Units "m" or "mm" make the depth metric. Without Units (every Lens Blur photo:
        // Near/Far such as 12.4/390.5 are in the app's own scale, not meters) or with units that
        // are not lengths, the depth is relative, kept in the file's scale: Near/Far as written.
        let written = value("Units")?.trimmingCharacters(in: .whitespacesAndNewlines)
        let metric = ["m", "meter", "meters", "mm", "millimeter", "millimeters", "diopters"]
        var units = written ?? ""
        if let written, !metric.contains(written.lowercased()) {
            notes.append("GDepth:Units '\(written)' is neither m nor mm: the depth is taken as relative (Near/Far as written)")
            units = ""
        }
        storedDepth = stored
        range = DepthRange(encoding: .gdepth, low: near, high: far, format: format, units: units, intLow: 0,
                           intHigh: stored.format == .gray8 ? 255 : 65535)
        depthCamera = colorCamera.scaled(toWidth: stored.width, height: stored.height)
        intrinsicsOrigin = "assumed (GDepth has no intrinsics)"
        accuracy = units.isEmpty ? .relative : .absolute
        depth = DepthData(map: Self.googleDepth(stored, format: format, near: near, far: far, units: units), accuracy: accuracy,
                          intrinsics: depthCamera.intrinsics)
    }

    mutating func applyDynamicDepth(xmp: XMPPacket, bytes: [UInt8], primaryEnd: Int, name: String) throws {
        let dm = XMPPacket.NS.ddDepthMap, item = XMPPacket.NS.ddItem, im = XMPPacket.NS.ddImagingModel
        guard let near = xmp.double(dm, "Near"), let far = xmp.double(dm, "Far") else {
            throw CaptureError.file(path: name, problem: "Dynamic Depth XMP has no DepthMap:Near/DepthMap:Far: the depth's range is unknown")
        }
        let format = xmp.value(dm, "Format") ?? "RangeInverse"
        guard ["rangeinverse", "rangelinear"].contains(format.lowercased()) else {
            throw CaptureError.file(path: name, problem: "DepthMap:Format '\(format)' is neither RangeInverse nor RangeLinear")
        }
        let units = xmp.value(dm, "Units") ?? "Meters"
        // Container items in directory order, each with its Mime, Length, DataURI and Semantic;
        // the first is the primary image. As Google's dynamic_depth reader does, an item's bytes
        // start after the primary image's EOI at the sum of the Lengths of the items before it.
        guard let slots = xmp.itemRanges(XMPPacket.NS.ddContainer, "Directory"), !slots.isEmpty else {
            throw CaptureError.file(path: name, problem: "Dynamic Depth XMP has no Container:Directory: the depth map cannot be found")
        }
        func field(_ key: String) -> [String?] {
            let o = xmp.occurrences(item, key)
            return slots.map { r in o.first { r.contains($0.offset) }?.value }
        }
        let mimes = field("Mime"), lengths = field("Length"), uris = field("DataURI"), semantics = field("Semantic")
        let depthURI = xmp.value(dm, "DepthURI")
        var offset = 0
        var found: (Int, Int, String)?
        for k in slots.indices.dropFirst() {
            guard let length = lengths[k].flatMap({ Int($0) }), length >= 0 else {
                throw CaptureError.file(path: name, problem: "Dynamic Depth Container item \(k + 1) has no valid Item:Length")
            }
            let isDepth = depthURI.map { uris[k] == $0 } ?? (semantics[k]?.lowercased() == "depth")
            if isDepth { found = (offset, length, mimes[k] ?? "image/png"); break }
            offset += length
        }
        guard let (start, length, mime) = found, length > 0 else {
            throw CaptureError.file(path: name, problem: "Dynamic Depth: no Container item holds the depth map\(depthURI.map { " (\($0))" } ?? "")")
        }
        guard start <= bytes.count - primaryEnd, length <= bytes.count - primaryEnd - start else {
            throw CaptureError.file(path: name, problem: "Dynamic Depth depth item (\(length) bytes at \(start) after the primary image) lies past the end of the file: truncated?")
        }
        let payload = Array(bytes[(primaryEnd + start)..<(primaryEnd + start + length)])
        let stored = try Self.decodeDepthPayload(payload, mime: mime, name: name, what: "Dynamic Depth depth item (\(mime))")
        storedDepth = stored
        range = DepthRange(encoding: .dynamicDepth, low: near, high: far, format: format, units: units, intLow: 0,
                           intHigh: stored.format == .gray8 ? 255 : 65535)
        if let fx = xmp.double(im, "FocalLengthX"), let fy = xmp.double(im, "FocalLengthY"),
           let cx = xmp.double(im, "PrincipalPointX"), let cy = xmp.double(im, "PrincipalPointY"),
           let w = xmp.double(im, "ImageWidth"), let h = xmp.double(im, "ImageHeight"), w >= 1, h >= 1, w <= 65536, h <= 65536, fx > 0, fy > 0 {
            let k = CameraIntrinsics(fx: Float(fx), fy: Float(fy), cx: Float(cx), cy: Float(cy), width: Int(w), height: Int(h))
            colorCamera = CameraModel(intrinsics: k.scaled(toWidth: color.width, height: color.height))
            depthCamera = CameraModel(intrinsics: k.scaled(toWidth: stored.width, height: stored.height))
            intrinsicsOrigin = "ImagingModel for \(Int(w))x\(Int(h))"
        } else {
            depthCamera = colorCamera.scaled(toWidth: stored.width, height: stored.height)
            intrinsicsOrigin = "assumed (no ImagingModel)"
        }
        accuracy = .absolute
        depth = DepthData(map: Self.googleDepth(stored, format: format, near: near, far: far, units: units), accuracy: .absolute,
                          intrinsics: depthCamera.intrinsics)
    }
}

/// The HEIF transformative properties on buffers of any 1–4-byte-per-pixel format.
enum ImageTransform {
    /// `irot`: `q` quarter turns anticlockwise.
    static func rotate(_ src: PixelBuffer, quarterTurnsAnticlockwise q: Int) -> PixelBuffer {
        let turns = ((q % 4) + 4) % 4
        guard turns != 0 else { return src }
        let w = src.width, h = src.height, bpp = src.format.bytesPerPixel
        let (ow, oh) = turns == 2 ? (w, h) : (h, w)
        let out = PixelBuffer(width: ow, height: oh, format: src.format)
        for y in 0..<oh {
            let d = out.row(y)
            for x in 0..<ow {
                // Source pixel for output (x, y).
                let (sx, sy): (Int, Int)
                switch turns {
                case 1: (sx, sy) = (w - 1 - y, x)          // 90° anticlockwise
                case 2: (sx, sy) = (w - 1 - x, h - 1 - y)
                default: (sx, sy) = (y, h - 1 - x)         // 270° anticlockwise
                }
                (d + x * bpp).copyMemory(from: src.row(sy) + sx * bpp, byteCount: bpp)
            }
        }
        return out
    }

    /// `imir`: axis 0 mirrors about a vertical axis (left ↔ right), 1 about a horizontal one.
    static func mirror(_ src: PixelBuffer, axis: Int) -> PixelBuffer {
        let w = src.width, h = src.height, bpp = src.format.bytesPerPixel
        let out = PixelBuffer(width: w, height: h, format: src.format)
        for y in 0..<h {
            let d = out.row(y), s = src.row(axis == 0 ? y : h - 1 - y)
            if axis == 0 {
                for x in 0..<w { (d + x * bpp).copyMemory(from: s + (w - 1 - x) * bpp, byteCount: bpp) }
            } else {
                d.copyMemory(from: s, byteCount: w * bpp)
            }
        }
        return out
    }

    /// `clap`: the clean aperture centered on the image center plus the offsets (ISO/IEC 14496-12 12.1.4).
    static func cleanAperture(_ src: PixelBuffer, width cw: Double, height ch: Double, horizontalOffset ho: Double,
                              verticalOffset vo: Double) -> PixelBuffer {
        let w = Int(cw.rounded()), h = Int(ch.rounded())
        let left = Int((ho + Double(src.width - 1) / 2 - (cw - 1) / 2).rounded())
        let top = Int((vo + Double(src.height - 1) / 2 - (ch - 1) / 2).rounded())
        guard w > 0, h > 0, left >= 0, top >= 0, left + w <= src.width, top + h <= src.height,
              w != src.width || h != src.height else { return src }
        let bpp = src.format.bytesPerPixel
        let out = PixelBuffer(width: w, height: h, format: src.format)
        for y in 0..<h { out.row(y).copyMemory(from: src.row(top + y) + left * bpp, byteCount: w * bpp) }
        return out
    }
}
