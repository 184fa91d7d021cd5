#if canImport(Glibc)
import Glibc
#endif
import CPlatform
import DepthKit

/// One V4L2 capture device, streaming with mmap'ed buffers, every syscall through a `V4L2System`.
///
/// Life cycle: `open()` → (`formats()`) → `configure(_:)` → `start()` → `readFrame()`… → `stop()` → `close()`.
/// On unplug (ENODEV/EIO from DQBUF, or an error from poll) the camera releases its buffers and
/// descriptor itself and throws `CaptureError.disconnected`; `open()` may be called again later.
public final class V4L2Camera {
    public let path: String
    public let system: V4L2System
    /// Units per meter of Z16 (and of Y16 when `y16IsDepth`): `--depth-scale`, default 1000.
    public var depthScale: Float
    /// Treat Y16 as depth (meters, `depthScale` units per meter, like Z16) rather than 16-bit gray:
    /// set on the depth node.
    public var y16IsDepth = false
    /// What gray formats of more than 8 bits (Y10, Y12, Y16 when not depth, Y12I) become.
    public enum GrayOutput: Sendable {
        /// rgba8 of the top 8 bits, for display (default).
        case rgba8
        /// gray16 at full 16-bit scale (bit replication), nothing lost.
        case gray16
    }
    public var grayOutput = GrayOutput.rgba8
    /// Buffers requested from the driver.
    public var bufferCount = 4

    public private(set) var driver = ""
    public private(set) var card = ""
    /// `bus_info` from `VIDIOC_QUERYCAP`: the same for every node of one device (a RealSense's depth,
    /// IR, color and metadata nodes).
    public private(set) var busInfo = ""
    /// The node's own capabilities (`device_caps`), also after `open()` refused a node that cannot capture video.
    public private(set) var deviceCaps: UInt32 = 0
    /// A metadata node (`V4L2_CAP_META_CAPTURE` without video capture), known after `open()`.
    public var isMetadataNode: Bool {
        deviceCaps & UInt32(truncatingIfNeeded: V4L2_CAP_META_CAPTURE) != 0
            && deviceCaps & UInt32(truncatingIfNeeded: V4L2_CAP_VIDEO_CAPTURE) == 0
    }
    public private(set) var configuration: V4L2Configuration?
    public var isOpen: Bool { fd >= 0 }
    public private(set) var isStreaming = false

    /// The open descriptor (-1 when closed); `V4L2ControlDevice` reads the controls through it.
    private(set) var fd: Int32 = -1
    private var mappings: [(address: UnsafeMutableRawPointer, length: Int)] = []
    private var pool: BufferPool?

    private let captureType = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
    private let mmapMemory = V4L2_MEMORY_MMAP.rawValue

    public init(path: String, system: V4L2System = LinuxV4L2System(), depthScale: Float = 1000) {
        self.path = path
        self.system = system
        self.depthScale = depthScale
    }

    deinit { close() }

    // MARK: Opening

    /// Opens the device non-blocking and checks it can capture by streaming. Kernel: `open`, `VIDIOC_QUERYCAP`.
    public func open() throws {
        guard fd < 0 else { return }
        let f = system.open(path, flags: O_RDWR | O_NONBLOCK)
        guard f >= 0 else { throw CaptureError.system(device: path, call: "open", errno: system.errno) }
        fd = f
        var cap = v4l2_capability()
        guard system.ioctl(fd, DL_VIDIOC_QUERYCAP, &cap) == 0 else {
            let e = system.errno
            close()
            throw CaptureError.system(device: path, call: "VIDIOC_QUERYCAP", errno: e)
        }
        driver = stringFromCTuple(cap.driver)
        card = stringFromCTuple(cap.card)
        busInfo = stringFromCTuple(cap.bus_info)
        let deviceCapsFlag = UInt32(truncatingIfNeeded: V4L2_CAP_DEVICE_CAPS)
        let caps = cap.capabilities & deviceCapsFlag != 0 ? cap.device_caps : cap.capabilities
        deviceCaps = caps
        guard caps & UInt32(truncatingIfNeeded: V4L2_CAP_VIDEO_CAPTURE) != 0 else {
            close()
            throw CaptureError.unsupported(device: path, problem: isMetadataNode ? "a metadata node, not a video capture device (\(card))" : "not a video capture device (\(card))")
        }
        guard caps & UInt32(truncatingIfNeeded: V4L2_CAP_STREAMING) != 0 else {
            close()
            throw CaptureError.unsupported(device: path, problem: "device does not support streaming I/O (\(card))")
        }
    }

    /// Stops streaming, unmaps buffers and closes the descriptor. Errors are ignored: this also
    /// runs after an unplug, when the driver answers every call with ENODEV.
    public func close() {
        stop()
        if fd >= 0 { _ = system.close(fd) }
        fd = -1
        configuration = nil
        pool = nil
    }

    // MARK: Enumeration

    /// Every pixel format with its frame sizes and rates.
    /// Kernel: `VIDIOC_ENUM_FMT`, `VIDIOC_ENUM_FRAMESIZES`, `VIDIOC_ENUM_FRAMEINTERVALS`.
    public func formats() throws -> [V4L2FormatInfo] {
        try requireOpen()
        var result: [V4L2FormatInfo] = []
        var index: UInt32 = 0
        while true {
            var desc = v4l2_fmtdesc()
            desc.index = index
            desc.type = captureType
            guard system.ioctl(fd, DL_VIDIOC_ENUM_FMT, &desc) == 0 else {
                if system.errno == EINVAL { break }
                throw CaptureError.system(device: path, call: "VIDIOC_ENUM_FMT", errno: system.errno)
            }
            let fourcc = V4L2FourCC(desc.pixelformat)
            result.append(V4L2FormatInfo(
                fourcc: fourcc, name: stringFromCTuple(desc.description),
                isCompressed: desc.flags & UInt32(truncatingIfNeeded: V4L2_FMT_FLAG_COMPRESSED) != 0,
                isEmulated: desc.flags & UInt32(truncatingIfNeeded: V4L2_FMT_FLAG_EMULATED) != 0,
                sizes: try frameSizes(for: fourcc)))
            index += 1
        }
        return result
    }

    /// Frame sizes of `fourcc`. Stepwise/continuous ranges are reduced to the common sizes inside them.
    public func frameSizes(for fourcc: V4L2FourCC) throws -> [V4L2FrameSize] {
        try requireOpen()
        var sizes: [(Int, Int)] = []
        var index: UInt32 = 0
        while true {
            var e = v4l2_frmsizeenum()
            e.index = index
            e.pixel_format = fourcc.rawValue
            guard system.ioctl(fd, DL_VIDIOC_ENUM_FRAMESIZES, &e) == 0 else {
                if system.errno == EINVAL || system.errno == ENOTTY { break }
                throw CaptureError.system(device: path, call: "VIDIOC_ENUM_FRAMESIZES", errno: system.errno)
            }
            if e.type == V4L2_FRMSIZE_TYPE_DISCRETE.rawValue {
                sizes.append((Int(e.discrete.width), Int(e.discrete.height)))
                index += 1
            } else {
                let s = e.stepwise
                let common = [(320, 240), (640, 480), (848, 480), (1280, 720), (1920, 1080)]
                sizes += common.filter { w, h in
                    w >= Int(s.min_width) && w <= Int(s.max_width) && h >= Int(s.min_height) && h <= Int(s.max_height)
                        && (s.step_width == 0 || (w - Int(s.min_width)) % Int(s.step_width) == 0)
                        && (s.step_height == 0 || (h - Int(s.min_height)) % Int(s.step_height) == 0)
                }
                break
            }
        }
        return try sizes.map { w, h in
            V4L2FrameSize(width: w, height: h, frameRates: try frameRates(for: fourcc, width: w, height: h))
        }
    }

    /// Frame rates at one format and size, highest first (stepwise ranges give their ends).
    public func frameRates(for fourcc: V4L2FourCC, width: Int, height: Int) throws -> [Double] {
        try requireOpen()
        var rates: [Double] = []
        var index: UInt32 = 0
        while true {
            var e = v4l2_frmivalenum()
            e.index = index
            e.pixel_format = fourcc.rawValue
            e.width = UInt32(width)
            e.height = UInt32(height)
            guard system.ioctl(fd, DL_VIDIOC_ENUM_FRAMEINTERVALS, &e) == 0 else {
                if system.errno == EINVAL || system.errno == ENOTTY { break }
                throw CaptureError.system(device: path, call: "VIDIOC_ENUM_FRAMEINTERVALS", errno: system.errno)
            }
            if e.type == V4L2_FRMIVAL_TYPE_DISCRETE.rawValue {
                if let r = rate(e.discrete) { rates.append(r) }
                index += 1
            } else {
                if let r = rate(e.stepwise.min) { rates.append(r) }
                if let r = rate(e.stepwise.max) { rates.append(r) }
                break
            }
        }
        return Array(Set(rates)).sorted(by: >)
    }

    private func rate(_ f: v4l2_fract) -> Double? {
        f.numerator == 0 || f.denominator == 0 ? nil : Double(f.denominator) / Double(f.numerator)
    }

    // MARK: Negotiation

    /// Picks a format, size and rate for `request` from what the device offers, sets them, and
    /// returns what the driver agreed to. Kernel: `VIDIOC_S_FMT`, `VIDIOC_S_PARM` (+ enumeration).
    ///
    /// Choice: among the requested formats the device supports, the one whose nearest size is
    /// closest to the request (exact first), then reaching the requested rate, then by preference
    /// order. The nearest size minimizes |Δw| + |Δh|; the rate is the nearest offered.
    @discardableResult
    public func configure(_ request: V4L2Request) throws -> V4L2Configuration {
        try requireOpen()
        guard !isStreaming else { throw CaptureError.invalidState("\(path): cannot change the format while streaming") }
        let offered = try formats()
        struct Candidate { var fourcc: V4L2FourCC; var size: V4L2FrameSize?; var score: (Int, Int, Int) }
        var candidates: [Candidate] = []
        for (rank, fourcc) in request.formats.enumerated() {
            guard let info = offered.first(where: { $0.fourcc == fourcc }) else { continue }
            let best = info.sizes.min {
                abs($0.width - request.width) + abs($0.height - request.height)
                    < abs($1.width - request.width) + abs($1.height - request.height)
            }
            let distance = best.map { abs($0.width - request.width) + abs($0.height - request.height) } ?? Int.max / 2
            let reachesRate = best.map { s in s.frameRates.isEmpty || s.frameRates.contains { $0 >= request.fps - 0.5 } } ?? true
            candidates.append(Candidate(fourcc: fourcc, size: best, score: (distance, reachesRate ? 0 : 1, rank)))
        }
        guard let choice = candidates.min(by: { $0.score < $1.score }) else {
            let names = offered.map(\.fourcc.description).joined(separator: ", ")
            let wanted = request.formats.map(\.description).joined(separator: ", ")
            throw CaptureError.unsupported(device: path, problem: "no usable pixel format (device offers \(names.isEmpty ? "none" : names); depthlens reads \(wanted))")
        }

        var fmt = v4l2_format()
        fmt.type = captureType
        fmt.fmt.pix.width = UInt32(choice.size?.width ?? request.width)
        fmt.fmt.pix.height = UInt32(choice.size?.height ?? request.height)
        fmt.fmt.pix.pixelformat = choice.fourcc.rawValue
        fmt.fmt.pix.field = V4L2_FIELD_NONE.rawValue
        guard system.ioctl(fd, DL_VIDIOC_S_FMT, &fmt) == 0 else {
            throw CaptureError.system(device: path, call: "VIDIOC_S_FMT", errno: system.errno)
        }
        let got = V4L2FourCC(fmt.fmt.pix.pixelformat)
        guard V4L2FourCC.supported.contains(got) else {
            throw CaptureError.unsupported(device: path, problem: "driver chose pixel format \(got), which depthlens cannot convert")
        }
        let width = Int(fmt.fmt.pix.width), height = Int(fmt.fmt.pix.height)
        var bytesPerLine = Int(fmt.fmt.pix.bytesperline)
        if got != .mjpeg && bytesPerLine < width * got.bytesPerPixel { bytesPerLine = width * got.bytesPerPixel }
        var config = V4L2Configuration(fourcc: got, width: width, height: height, bytesPerLine: bytesPerLine,
                                       sizeImage: Int(fmt.fmt.pix.sizeimage), fps: nil)

        var parm = v4l2_streamparm()
        parm.type = captureType
        if system.ioctl(fd, DL_VIDIOC_G_PARM, &parm) == 0,
           parm.parm.capture.capability & UInt32(truncatingIfNeeded: V4L2_CAP_TIMEPERFRAME) != 0 {
            let rates = choice.size?.frameRates ?? []
            let target = rates.min { abs($0 - request.fps) < abs($1 - request.fps) } ?? request.fps
            parm.parm.capture.timeperframe = target == target.rounded()
                ? v4l2_fract(numerator: 1, denominator: UInt32(target))
                : v4l2_fract(numerator: 1000, denominator: UInt32((target * 1000).rounded()))
            guard system.ioctl(fd, DL_VIDIOC_S_PARM, &parm) == 0 else {
                throw CaptureError.system(device: path, call: "VIDIOC_S_PARM", errno: system.errno)
            }
            config.fps = rate(parm.parm.capture.timeperframe)
        }
        configuration = config
        return config
    }

    /// The frame rate the driver reports now (`VIDIOC_G_PARM`), nil when it has none.
    public func currentFrameRate() throws -> Double? {
        try requireOpen()
        var parm = v4l2_streamparm()
        parm.type = captureType
        guard system.ioctl(fd, DL_VIDIOC_G_PARM, &parm) == 0 else {
            throw CaptureError.system(device: path, call: "VIDIOC_G_PARM", errno: system.errno)
        }
        return rate(parm.parm.capture.timeperframe)
    }

    // MARK: Streaming

    /// Requests `bufferCount` mmap buffers, maps and queues them, and starts streaming.
    /// Kernel: `VIDIOC_REQBUFS`, `VIDIOC_QUERYBUF`, `mmap`, `VIDIOC_QBUF`, `VIDIOC_STREAMON`.
    public func start() throws {
        try requireOpen()
        guard !isStreaming else { return }
        if configuration == nil { try readCurrentFormat() }
        guard let config = configuration else { return }
        do {
            var req = v4l2_requestbuffers()
            req.count = UInt32(bufferCount)
            req.type = captureType
            req.memory = mmapMemory
            guard system.ioctl(fd, DL_VIDIOC_REQBUFS, &req) == 0 else { throw fail("VIDIOC_REQBUFS") }
            guard req.count >= 2 else {
                throw CaptureError.unsupported(device: path, problem: "driver granted \(req.count) buffers, need at least 2")
            }
            for i in 0..<req.count {
                var buf = v4l2_buffer()
                buf.index = i
                buf.type = captureType
                buf.memory = mmapMemory
                guard system.ioctl(fd, DL_VIDIOC_QUERYBUF, &buf) == 0 else { throw fail("VIDIOC_QUERYBUF") }
                let length = Int(buf.length)
                guard let p = system.mmap(length: length, fd: fd, offset: Int64(buf.m.offset)) else { throw fail("mmap") }
                mappings.append((p, length))
                guard system.ioctl(fd, DL_VIDIOC_QBUF, &buf) == 0 else { throw fail("VIDIOC_QBUF") }
            }
            var type = Int32(captureType)
            guard system.ioctl(fd, DL_VIDIOC_STREAMON, &type) == 0 else { throw fail("VIDIOC_STREAMON") }
        } catch {
            releaseBuffers()
            throw error
        }
        let out: PixelFormat
        switch config.fourcc {
        case .z16: out = .depthFloat32
        case .y16 where y16IsDepth: out = .depthFloat32
        case .y16, .y10, .y12, .y12i: out = grayOutput == .gray16 ? .gray16(depthScale: 0) : .rgba8
        default: out = .rgba8
        }
        pool = BufferPool(format: FrameFormat(width: config.width, height: config.height, pixelFormat: out),
                          outputRetainedBufferCountHint: framesHeldByConsumer, allocationThreshold: 10)
        isStreaming = true
    }

    /// Stops streaming and releases the buffers (errors ignored). Kernel: `VIDIOC_STREAMOFF`, `munmap`, `VIDIOC_REQBUFS(0)`.
    public func stop() {
        guard isStreaming || !mappings.isEmpty else { return }
        if isStreaming, fd >= 0 {
            var type = Int32(captureType)
            _ = system.ioctl(fd, DL_VIDIOC_STREAMOFF, &type)
        }
        isStreaming = false
        releaseBuffers()
    }

    private func releaseBuffers() {
        for m in mappings { _ = system.munmap(m.address, length: m.length) }
        mappings.removeAll()
        if fd >= 0 {
            var req = v4l2_requestbuffers()
            req.count = 0
            req.type = captureType
            req.memory = mmapMemory
            _ = system.ioctl(fd, DL_VIDIOC_REQBUFS, &req)
        }
    }

    /// Waits up to `timeout` seconds for a frame, then reads it (nil when none came).
    /// Kernel: `poll`; an error condition there means the device is gone.
    public func waitForFrame(timeout: Double) throws -> CapturedFrame? {
        guard isStreaming else { throw CaptureError.invalidState("\(path): not streaming") }
        var revents: Int16 = 0
        let r = system.poll(fd, events: Int16(POLLIN), timeoutMilliseconds: Int32(max(0, timeout * 1000)), revents: &revents)
        if r < 0 {
            let e = system.errno
            if e == EINTR { return nil }
            throw disconnect(e)
        }
        if r == 0 { return nil }
        if revents & Int16(POLLERR | POLLHUP | POLLNVAL) != 0 { throw disconnect(ENODEV) }
        return try readFrame()
    }

    /// Dequeues a filled buffer without blocking, converts it into a pooled buffer and queues the
    /// buffer again. nil when no frame is ready (EAGAIN). Kernel: `VIDIOC_DQBUF`, `VIDIOC_QBUF`.
    public func readFrame() throws -> CapturedFrame? {
        guard isStreaming, let config = configuration, let pool else {
            throw CaptureError.invalidState("\(path): not streaming")
        }
        var buf = v4l2_buffer()
        buf.type = captureType
        buf.memory = mmapMemory
        guard system.ioctl(fd, DL_VIDIOC_DQBUF, &buf) == 0 else {
            let e = system.errno
            switch e {
            case EAGAIN, EINTR: return nil
            case ENODEV, EIO, ENXIO: throw disconnect(e)
            default: throw CaptureError.system(device: path, call: "VIDIOC_DQBUF", errno: e)
            }
        }
        let index = Int(buf.index)
        defer {
            if isStreaming, system.ioctl(fd, DL_VIDIOC_QBUF, &buf) != 0 {
                // A buffer that cannot be queued again is lost to the stream; a gone device shows on the next DQBUF.
            }
        }
        guard index < mappings.count else {
            throw CaptureError.system(device: path, call: "VIDIOC_DQBUF", errno: EINVAL)
        }
        let src = UnsafeRawPointer(mappings[index].address)
        let used = Int(buf.bytesused)
        let out: PixelBuffer
        do { out = try pool.makeBuffer() } catch {
            throw CaptureError.unsupported(device: path, problem: "\(error) (frames are held too long)")
        }
        let needed = config.fourcc.minimumFrameBytes(width: config.width, height: config.height, bytesPerLine: config.bytesPerLine)
        guard used >= needed, used <= mappings[index].length else {
            throw CaptureError.unsupported(device: path, problem: "short frame: \(used) bytes, expected \(needed) for \(config)")
        }
        let bpl = config.bytesPerLine
        let gray16 = out.format != .rgba8
        switch config.fourcc {
        case .yuyv: PixelConversion.yuyvToRGBA(src, bytesPerLine: bpl, into: out)
        case .uyvy: PixelConversion.uyvyToRGBA(src, bytesPerLine: bpl, into: out)
        case .nv12: PixelConversion.nv12ToRGBA(src, bytesPerLine: bpl, into: out)
        case .y8i: PixelConversion.y8iLeftToRGBA(src, bytesPerLine: bpl, into: out)
        case .y12i:
            if gray16 { PixelConversion.y12iLeftToGray16(src, bytesPerLine: bpl, into: out) }
            else { PixelConversion.y12iLeftToRGBA(src, bytesPerLine: bpl, into: out) }
        case .y10, .y12:
            let bits = config.fourcc == .y10 ? 10 : 12
            if gray16 { PixelConversion.grayWordsToGray16(src, bytesPerLine: bpl, bits: bits, into: out) }
            else { PixelConversion.grayWordsToRGBA(src, bytesPerLine: bpl, bits: bits, into: out) }
        case .rgb24: PixelConversion.rgb24ToRGBA(src, bytesPerLine: config.bytesPerLine, bgr: false, into: out)
        case .bgr24: PixelConversion.rgb24ToRGBA(src, bytesPerLine: config.bytesPerLine, bgr: true, into: out)
        case .grey: PixelConversion.greyToRGBA(src, bytesPerLine: config.bytesPerLine, into: out)
        case .z16: PixelConversion.z16ToMeters(src, bytesPerLine: config.bytesPerLine, unitsPerMeter: depthScale, into: out)
        case .y16:
            if y16IsDepth { PixelConversion.z16ToMeters(src, bytesPerLine: bpl, unitsPerMeter: depthScale, into: out) }
            else if gray16 { PixelConversion.y16ToGray16(src, bytesPerLine: bpl, into: out) }
            else { PixelConversion.grayWordsToRGBA(src, bytesPerLine: bpl, bits: 16, into: out) }
        case .mjpeg:
            do { try PixelConversion.mjpegToRGBA(src, count: used, into: out) } catch let p as ConversionProblem {
                throw CaptureError.unsupported(device: path, problem: p.message)
            }
        default:
            throw CaptureError.unsupported(device: path, problem: "cannot convert \(config.fourcc)")
        }
        let t = Double(buf.timestamp.tv_sec) + Double(buf.timestamp.tv_usec) / 1e6
        return CapturedFrame(buffer: out, timestamp: t, sequence: Int(buf.sequence))
    }

    // MARK: Helpers

    private func readCurrentFormat() throws {
        var fmt = v4l2_format()
        fmt.type = captureType
        guard system.ioctl(fd, DL_VIDIOC_G_FMT, &fmt) == 0 else { throw fail("VIDIOC_G_FMT") }
        let got = V4L2FourCC(fmt.fmt.pix.pixelformat)
        guard V4L2FourCC.supported.contains(got) else {
            throw CaptureError.unsupported(device: path, problem: "current pixel format \(got) cannot be converted; call configure first")
        }
        let w = Int(fmt.fmt.pix.width), h = Int(fmt.fmt.pix.height)
        configuration = V4L2Configuration(fourcc: got, width: w, height: h,
                                          bytesPerLine: max(Int(fmt.fmt.pix.bytesperline), w * got.bytesPerPixel),
                                          sizeImage: Int(fmt.fmt.pix.sizeimage), fps: try? currentFrameRate())
    }

    private func requireOpen() throws {
        guard fd >= 0 else { throw CaptureError.invalidState("\(path): camera is not open") }
    }

    private func fail(_ call: String) -> CaptureError {
        let e = system.errno
        if e == ENODEV || e == EIO || e == ENXIO { return disconnect(e) }
        return .system(device: path, call: call, errno: e)
    }

    /// Releases everything after an unplug and returns the error to throw.
    private func disconnect(_ e: Int32) -> CaptureError {
        close()
        return .disconnected(device: path, errno: e)
    }
}
