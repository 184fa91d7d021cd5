#if canImport(Glibc)
import Glibc
#endif
import CPlatform
import Capture

/// A `V4L2System` that plays the kernel: fake devices answer the ioctls a V4L2 driver answers,
/// adjust requested formats to what they support (as drivers do), hand out mmap'ed buffers,
/// and deliver scripted frame payloads and timestamps. Tests drive `V4L2Camera` with it;
/// it can refuse frames (EAGAIN) or vanish at frame N (ENODEV) to simulate an unplug.
public final class ScriptedV4L2System: V4L2System {
    /// A pixel format a fake device offers, with discrete sizes and frame rates (same at every size).
    public struct Format {
        public var fourcc: V4L2FourCC
        public var name: String
        public var sizes: [(width: Int, height: Int)]
        public var frameRates: [Double]

        public init(_ fourcc: V4L2FourCC, name: String? = nil, sizes: [(width: Int, height: Int)], frameRates: [Double] = [30]) {
            self.fourcc = fourcc
            self.name = name ?? fourcc.description
            self.sizes = sizes
            self.frameRates = frameRates
        }
    }

    /// One scripted frame: payload bytes (copied into the buffer) and its timestamp in seconds.
    public struct Frame {
        public var payload: [UInt8]
        public var timestamp: Double
        public init(payload: [UInt8], timestamp: Double) { self.payload = payload; self.timestamp = timestamp }
    }

    /// A fake `/dev/videoN`. Configure before or while the camera runs.
    public final class Device {
        public let path: String
        public var driver = "scripted"
        public var card = "Scripted Camera"
        public var busInfo = "platform:scripted"
        /// A metadata node (`V4L2_CAP_META_CAPTURE`, no video capture, no video formats), as UVC
        /// cameras expose beside each video node.
        public let isMetadata: Bool
        public var formats: [Format]
        /// Frame `n`'s payload and timestamp; default: zero bytes, timestamp n × frame interval.
        public var frameProvider: ((_ n: Int) -> Frame)?
        /// Frames the "sensor" has ready: nil = one always ready; 0 = DQBUF answers EAGAIN.
        public var readyFrames: Int?
        /// The device vanishes when frame `unplugAtFrame` (0-based) is about to be dequeued.
        public var unplugAtFrame: Int?
        /// errno an unplugged device answers with (ENODEV, or EIO for some drivers).
        public var unplugErrno: Int32 = ENODEV
        /// Controls (`ScriptedV4L2Controls.swift`: `uvcWebcamControls()`, `realSenseDepthControls()`).
        public var controls: [ScriptedControl] = []

        public private(set) var isPresent = true
        public fileprivate(set) var isStreaming = false
        /// Frames dequeued since the device was (re)plugged.
        public fileprivate(set) var deliveredFrames = 0
        public fileprivate(set) var fourcc: V4L2FourCC
        public fileprivate(set) var width: Int
        public fileprivate(set) var height: Int
        /// Current time per frame as a fraction (numerator / denominator seconds).
        public fileprivate(set) var timePerFrame: (numerator: UInt32, denominator: UInt32)

        fileprivate var buffers: [FakeBuffer] = []
        fileprivate var queue: [Int] = []
        fileprivate var streamingFD: Int32?

        init(path: String, formats: [Format], isMetadata: Bool = false) {
            precondition(isMetadata || (!formats.isEmpty && !formats[0].sizes.isEmpty))
            self.path = path
            self.formats = formats
            self.isMetadata = isMetadata
            fourcc = formats.first?.fourcc ?? V4L2FourCC(0)
            width = formats.first?.sizes.first?.width ?? 0
            height = formats.first?.sizes.first?.height ?? 0
            timePerFrame = Device.fraction(fps: formats.first?.frameRates.first ?? 30)
        }

        /// Simulates pulling the cable: every call on an open descriptor now fails with `unplugErrno`.
        public func unplug() { isPresent = false }
        /// Plugs the device back in (a fresh open works again).
        public func replug() {
            isPresent = true
            unplugAtFrame = nil
            deliveredFrames = 0
        }

        var bytesPerLine: Int { fourcc == .mjpeg ? 0 : width * fourcc.bytesPerPixel }
        /// MJPEG frames vary in size: room for an uncompressed frame plus headers, as UVC drivers allow.
        var sizeImage: Int {
            fourcc == .mjpeg ? width * height * 3 + 4096
                : fourcc.minimumFrameBytes(width: width, height: height, bytesPerLine: bytesPerLine)
        }
        var currentFormat: Format? { formats.first { $0.fourcc == fourcc } }

        static func fraction(fps: Double) -> (numerator: UInt32, denominator: UInt32) {
            fps == fps.rounded() ? (1, UInt32(fps)) : (1000, UInt32((fps * 1000).rounded()))
        }
    }

    struct FakeBuffer {
        var length: Int
        var offset: Int
        var mapping: UnsafeMutableRawPointer?
        var queued = false
    }

    public private(set) var errno: Int32 = 0
    /// Every call made, in order ("open /dev/video0", "VIDIOC_S_FMT", "mmap", …), for assertions.
    public private(set) var calls: [String] = []
    private var devices: [String: Device] = [:]
    private var descriptors: [Int32: Device] = [:]
    private var nextFD: Int32 = 100

    public init() {}

    /// Adds a fake device at `path`.
    @discardableResult
    public func addDevice(path: String, formats: [Format]) -> Device {
        let d = Device(path: path, formats: formats)
        devices[path] = d
        return d
    }

    /// Adds a metadata node at `path` (it answers QUERYCAP with `V4L2_CAP_META_CAPTURE`, and no video formats).
    @discardableResult
    public func addMetadataDevice(path: String) -> Device {
        let d = Device(path: path, formats: [], isMetadata: true)
        devices[path] = d
        return d
    }

    /// An Intel RealSense D435 as uvcvideo exposes it: four nodes with one `bus_info` —
    /// `base` depth (Z16), `base+1` metadata, `base+2` infrared (GREY, Y8I, Y12I), `base+3` color
    /// (YUYV) — at the sizes and rates the D435 offers on USB 3 (a subset). Returns the nodes in that order.
    @discardableResult
    public func addRealSenseD435(base: Int = 0, busInfo: String = "usb-0000:00:14.0-1") -> [Device] {
        let p = { (n: Int) in "/dev/video\(base + n)" }
        let depthSizes: [(width: Int, height: Int)] = [(1280, 720), (848, 480), (640, 480), (480, 270), (424, 240)]
        let nodes = [
            addDevice(path: p(0), formats: [.init(.z16, name: "16-bit Depth", sizes: depthSizes, frameRates: [90, 60, 30, 15, 6])]),
            addMetadataDevice(path: p(1)),
            addDevice(path: p(2), formats: [
                .init(.grey, name: "8-bit Greyscale", sizes: depthSizes, frameRates: [90, 60, 30, 15, 6]),
                .init(.y8i, name: "Interleaved 8-bit Greyscale", sizes: depthSizes, frameRates: [90, 60, 30, 15, 6]),
                .init(.y12i, name: "Interleaved 12-bit Greyscale", sizes: [(1280, 800), (640, 400)], frameRates: [25, 15]),
            ]),
            addDevice(path: p(3), formats: [
                .init(.yuyv, name: "YUYV 4:2:2", sizes: [(1920, 1080), (1280, 720), (848, 480), (640, 480)], frameRates: [30, 15, 6]),
            ]),
        ]
        for d in nodes {
            d.driver = "uvcvideo"
            d.card = "Intel(R) RealSense(TM) Depth Ca"  // uvcvideo's card name, cut at 31 characters as the D435's is
            d.busInfo = busInfo
        }
        return nodes
    }

    public func device(_ path: String) -> Device? { devices[path] }
    /// Descriptors open now (a camera that closed cleanly leaves none).
    public var openDescriptorCount: Int { descriptors.count }
    /// Buffers mapped now, over all devices (a camera that stopped cleanly leaves none).
    public var mappedBufferCount: Int {
        devices.values.reduce(0) { $0 + $1.buffers.filter { $0.mapping != nil }.count }
    }

    private func fail(_ e: Int32) -> Int32 { errno = e; return -1 }

    // MARK: V4L2System

    public func open(_ path: String, flags: Int32) -> Int32 {
        calls.append("open \(path)")
        guard let d = devices[path], d.isPresent else { return fail(ENOENT) }
        let fd = nextFD
        nextFD += 1
        descriptors[fd] = d
        return fd
    }

    public func close(_ fd: Int32) -> Int32 {
        calls.append("close")
        guard let d = descriptors.removeValue(forKey: fd) else { return fail(EBADF) }
        if d.streamingFD == fd {
            // Closing the streaming descriptor stops streaming and frees unmapped buffers, as vb2 does.
            d.isStreaming = false
            d.streamingFD = nil
            d.queue.removeAll()
            if d.buffers.allSatisfy({ $0.mapping == nil }) { d.buffers.removeAll() }
        }
        return 0
    }

    public func mmap(length: Int, fd: Int32, offset: Int64) -> UnsafeMutableRawPointer? {
        calls.append("mmap")
        guard let d = descriptors[fd] else { errno = EBADF; return nil }
        guard d.isPresent else { errno = d.unplugErrno; return nil }
        guard let i = d.buffers.firstIndex(where: { $0.offset == Int(offset) }), d.buffers[i].length >= length,
              d.buffers[i].mapping == nil else { errno = EINVAL; return nil }
        var p: UnsafeMutableRawPointer?
        guard posix_memalign(&p, 4096, max(length, 1)) == 0, let p else { errno = ENOMEM; return nil }
        memset(p, 0, length)
        d.buffers[i].mapping = p
        return p
    }

    public func munmap(_ address: UnsafeMutableRawPointer, length: Int) -> Int32 {
        calls.append("munmap")
        for d in devices.values {
            if let i = d.buffers.firstIndex(where: { $0.mapping == address }) {
                free(address)
                d.buffers[i].mapping = nil
                if d.streamingFD == nil && d.buffers.allSatisfy({ $0.mapping == nil }) { d.buffers.removeAll() }
                return 0
            }
        }
        return fail(EINVAL)
    }

    public func poll(_ fd: Int32, events: Int16, timeoutMilliseconds: Int32, revents: inout Int16) -> Int32 {
        calls.append("poll")
        revents = 0
        guard let d = descriptors[fd] else { revents = Int16(POLLNVAL); return 1 }
        if d.isPresent, let n = d.unplugAtFrame, d.deliveredFrames >= n { d.unplug() }
        guard d.isPresent else { revents = Int16(POLLERR | POLLHUP); return 1 }
        guard d.isStreaming, !d.queue.isEmpty else { revents = Int16(POLLERR); return 1 }
        if d.readyFrames == 0 { return 0 }
        revents = Int16(POLLIN | POLLRDNORM)
        return 1
    }

    public func ioctl(_ fd: Int32, _ request: UInt, _ arg: UnsafeMutableRawPointer) -> Int32 {
        let name = Self.requestName(request)
        calls.append(name)
        guard let d = descriptors[fd] else { return fail(EBADF) }
        guard d.isPresent else { return fail(d.unplugErrno) }
        // A metadata node answers QUERYCAP; every video-capture request is EINVAL there, as uvcvideo's are.
        if d.isMetadata && request != DL_VIDIOC_QUERYCAP { return fail(EINVAL) }
        switch request {
        case DL_VIDIOC_QUERYCAP: return queryCap(d, arg.assumingMemoryBound(to: v4l2_capability.self))
        case DL_VIDIOC_ENUM_FMT: return enumFormat(d, arg.assumingMemoryBound(to: v4l2_fmtdesc.self))
        case DL_VIDIOC_ENUM_FRAMESIZES: return enumSizes(d, arg.assumingMemoryBound(to: v4l2_frmsizeenum.self))
        case DL_VIDIOC_ENUM_FRAMEINTERVALS: return enumIntervals(d, arg.assumingMemoryBound(to: v4l2_frmivalenum.self))
        case DL_VIDIOC_G_FMT: return getFormat(d, arg.assumingMemoryBound(to: v4l2_format.self))
        case DL_VIDIOC_S_FMT: return setFormat(d, arg.assumingMemoryBound(to: v4l2_format.self))
        case DL_VIDIOC_G_PARM: return getParm(d, arg.assumingMemoryBound(to: v4l2_streamparm.self))
        case DL_VIDIOC_S_PARM: return setParm(d, arg.assumingMemoryBound(to: v4l2_streamparm.self))
        case DL_VIDIOC_REQBUFS: return reqBufs(d, fd, arg.assumingMemoryBound(to: v4l2_requestbuffers.self))
        case DL_VIDIOC_QUERYBUF: return queryBuf(d, arg.assumingMemoryBound(to: v4l2_buffer.self))
        case DL_VIDIOC_QBUF: return qBuf(d, arg.assumingMemoryBound(to: v4l2_buffer.self))
        case DL_VIDIOC_DQBUF: return dqBuf(d, arg.assumingMemoryBound(to: v4l2_buffer.self))
        case DL_VIDIOC_STREAMON, DL_VIDIOC_STREAMOFF:
            guard arg.load(as: UInt32.self) == captureType else { return fail(EINVAL) }
            if request == DL_VIDIOC_STREAMON {
                guard !d.buffers.isEmpty else { return fail(EINVAL) }
                d.isStreaming = true
            } else {
                d.isStreaming = false
                d.queue.removeAll()
                for i in d.buffers.indices { d.buffers[i].queued = false }
            }
            return 0
        case DL_VIDIOC_QUERY_EXT_CTRL, DL_VIDIOC_QUERYMENU, DL_VIDIOC_G_EXT_CTRLS, DL_VIDIOC_S_EXT_CTRLS:
            let e = controlIoctl(d, request, arg)
            return e == 0 ? 0 : fail(e)
        default:
            return fail(ENOTTY)
        }
    }

    // MARK: ioctl handlers

    private let captureType = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
    private let mmapMemory = V4L2_MEMORY_MMAP.rawValue

    private func queryCap(_ d: Device, _ c: UnsafeMutablePointer<v4l2_capability>) -> Int32 {
        c.pointee = v4l2_capability()
        copyCString(d.driver, into: &c.pointee.driver)
        copyCString(d.card, into: &c.pointee.card)
        copyCString(d.busInfo, into: &c.pointee.bus_info)
        c.pointee.version = 0x060800
        let caps = UInt32(truncatingIfNeeded: d.isMetadata ? V4L2_CAP_META_CAPTURE : V4L2_CAP_VIDEO_CAPTURE)
            | UInt32(truncatingIfNeeded: V4L2_CAP_STREAMING)
        c.pointee.device_caps = caps
        c.pointee.capabilities = caps | UInt32(truncatingIfNeeded: V4L2_CAP_DEVICE_CAPS)
        return 0
    }

    private func enumFormat(_ d: Device, _ f: UnsafeMutablePointer<v4l2_fmtdesc>) -> Int32 {
        let i = Int(f.pointee.index)
        guard f.pointee.type == captureType, i < d.formats.count else { return fail(EINVAL) }
        let fmt = d.formats[i]
        f.pointee.pixelformat = fmt.fourcc.rawValue
        f.pointee.flags = fmt.fourcc == .mjpeg ? UInt32(truncatingIfNeeded: V4L2_FMT_FLAG_COMPRESSED) : 0
        copyCString(fmt.name, into: &f.pointee.description)
        return 0
    }

    private func enumSizes(_ d: Device, _ s: UnsafeMutablePointer<v4l2_frmsizeenum>) -> Int32 {
        guard let fmt = d.formats.first(where: { $0.fourcc.rawValue == s.pointee.pixel_format }),
              Int(s.pointee.index) < fmt.sizes.count else { return fail(EINVAL) }
        let size = fmt.sizes[Int(s.pointee.index)]
        s.pointee.type = V4L2_FRMSIZE_TYPE_DISCRETE.rawValue
        s.pointee.discrete = v4l2_frmsize_discrete(width: UInt32(size.width), height: UInt32(size.height))
        return 0
    }

    private func enumIntervals(_ d: Device, _ v: UnsafeMutablePointer<v4l2_frmivalenum>) -> Int32 {
        guard let fmt = d.formats.first(where: { $0.fourcc.rawValue == v.pointee.pixel_format }),
              fmt.sizes.contains(where: { $0.width == Int(v.pointee.width) && $0.height == Int(v.pointee.height) }),
              Int(v.pointee.index) < fmt.frameRates.count else { return fail(EINVAL) }
        let f = Device.fraction(fps: fmt.frameRates[Int(v.pointee.index)])
        v.pointee.type = V4L2_FRMIVAL_TYPE_DISCRETE.rawValue
        v.pointee.discrete = v4l2_fract(numerator: f.numerator, denominator: f.denominator)
        return 0
    }

    private func fillPix(_ d: Device, _ f: UnsafeMutablePointer<v4l2_format>) {
        f.pointee.fmt.pix.width = UInt32(d.width)
        f.pointee.fmt.pix.height = UInt32(d.height)
        f.pointee.fmt.pix.pixelformat = d.fourcc.rawValue
        f.pointee.fmt.pix.field = V4L2_FIELD_NONE.rawValue
        f.pointee.fmt.pix.bytesperline = UInt32(d.bytesPerLine)
        f.pointee.fmt.pix.sizeimage = UInt32(d.sizeImage)
    }

    private func getFormat(_ d: Device, _ f: UnsafeMutablePointer<v4l2_format>) -> Int32 {
        guard f.pointee.type == captureType else { return fail(EINVAL) }
        fillPix(d, f)
        return 0
    }

    /// Like a driver: an unknown pixel format becomes the first supported one, and the size
    /// becomes the nearest supported size; the adjusted format is written back.
    private func setFormat(_ d: Device, _ f: UnsafeMutablePointer<v4l2_format>) -> Int32 {
        guard f.pointee.type == captureType else { return fail(EINVAL) }
        guard d.buffers.isEmpty else { return fail(EBUSY) }
        let want = f.pointee.fmt.pix
        let fmt = d.formats.first { $0.fourcc.rawValue == want.pixelformat } ?? d.formats[0]
        let size = fmt.sizes.min { a, b in
            abs(a.width - Int(want.width)) + abs(a.height - Int(want.height))
                < abs(b.width - Int(want.width)) + abs(b.height - Int(want.height))
        }!
        d.fourcc = fmt.fourcc
        d.width = size.width
        d.height = size.height
        if let rate = nearestRate(fmt.frameRates, to: 1 / interval(d.timePerFrame)) {
            d.timePerFrame = Device.fraction(fps: rate)
        }
        fillPix(d, f)
        return 0
    }

    private func interval(_ f: (numerator: UInt32, denominator: UInt32)) -> Double {
        f.denominator == 0 ? 0 : Double(f.numerator) / Double(f.denominator)
    }

    private func nearestRate(_ rates: [Double], to fps: Double) -> Double? {
        rates.min { abs($0 - fps) < abs($1 - fps) }
    }

    private func getParm(_ d: Device, _ p: UnsafeMutablePointer<v4l2_streamparm>) -> Int32 {
        guard p.pointee.type == captureType else { return fail(EINVAL) }
        p.pointee.parm.capture = v4l2_captureparm()
        p.pointee.parm.capture.capability = UInt32(truncatingIfNeeded: V4L2_CAP_TIMEPERFRAME)
        p.pointee.parm.capture.timeperframe = v4l2_fract(numerator: d.timePerFrame.numerator,
                                                          denominator: d.timePerFrame.denominator)
        p.pointee.parm.capture.readbuffers = 2
        return 0
    }

    /// Picks the supported rate nearest the requested `timeperframe` and writes it back.
    private func setParm(_ d: Device, _ p: UnsafeMutablePointer<v4l2_streamparm>) -> Int32 {
        guard p.pointee.type == captureType else { return fail(EINVAL) }
        let t = p.pointee.parm.capture.timeperframe
        if t.numerator != 0, t.denominator != 0, let fmt = d.currentFormat,
           let rate = nearestRate(fmt.frameRates, to: Double(t.denominator) / Double(t.numerator)) {
            d.timePerFrame = Device.fraction(fps: rate)
        }
        return getParm(d, p)
    }

    private func reqBufs(_ d: Device, _ fd: Int32, _ r: UnsafeMutablePointer<v4l2_requestbuffers>) -> Int32 {
        guard r.pointee.type == captureType, r.pointee.memory == mmapMemory else { return fail(EINVAL) }
        guard !d.isStreaming else { return fail(EBUSY) }
        if d.buffers.contains(where: { $0.mapping != nil }) { return fail(EBUSY) }
        d.queue.removeAll()
        let count = min(Int(r.pointee.count), 8)
        let length = d.sizeImage
        let stride = (length + 4095) / 4096 * 4096
        d.buffers = (0..<count).map { FakeBuffer(length: length, offset: $0 * stride) }
        d.streamingFD = count > 0 ? fd : nil
        r.pointee.count = UInt32(count)
        r.pointee.capabilities = UInt32(truncatingIfNeeded: V4L2_BUF_CAP_SUPPORTS_MMAP)
        return 0
    }

    private func queryBuf(_ d: Device, _ b: UnsafeMutablePointer<v4l2_buffer>) -> Int32 {
        let i = Int(b.pointee.index)
        guard b.pointee.type == captureType, i < d.buffers.count else { return fail(EINVAL) }
        b.pointee.memory = mmapMemory
        b.pointee.length = UInt32(d.buffers[i].length)
        b.pointee.m.offset = UInt32(d.buffers[i].offset)
        b.pointee.flags = d.buffers[i].queued ? UInt32(V4L2_BUF_FLAG_QUEUED) : 0
        return 0
    }

    private func qBuf(_ d: Device, _ b: UnsafeMutablePointer<v4l2_buffer>) -> Int32 {
        let i = Int(b.pointee.index)
        guard b.pointee.type == captureType, b.pointee.memory == mmapMemory, i < d.buffers.count,
              !d.buffers[i].queued else { return fail(EINVAL) }
        d.buffers[i].queued = true
        d.queue.append(i)
        return 0
    }

    private func dqBuf(_ d: Device, _ b: UnsafeMutablePointer<v4l2_buffer>) -> Int32 {
        guard b.pointee.type == captureType, b.pointee.memory == mmapMemory else { return fail(EINVAL) }
        guard d.isStreaming else { return fail(EINVAL) }
        if let n = d.unplugAtFrame, d.deliveredFrames >= n {
            d.unplug()
            return fail(d.unplugErrno)
        }
        guard !d.queue.isEmpty, d.readyFrames != 0 else { return fail(EAGAIN) }
        if let r = d.readyFrames { d.readyFrames = r - 1 }
        let i = d.queue.removeFirst()
        d.buffers[i].queued = false
        let n = d.deliveredFrames
        d.deliveredFrames += 1
        let frame = d.frameProvider?(n) ?? Frame(payload: [], timestamp: Double(n) * interval(d.timePerFrame))
        let used = min(frame.payload.count, d.buffers[i].length)
        if let m = d.buffers[i].mapping, used > 0 {
            frame.payload.withUnsafeBytes { m.copyMemory(from: $0.baseAddress!, byteCount: used) }
        }
        b.pointee.index = UInt32(i)
        b.pointee.bytesused = UInt32(frame.payload.isEmpty ? d.buffers[i].length : used)
        b.pointee.flags = UInt32(V4L2_BUF_FLAG_MAPPED | V4L2_BUF_FLAG_DONE | V4L2_BUF_FLAG_TIMESTAMP_MONOTONIC)
        b.pointee.field = V4L2_FIELD_NONE.rawValue
        b.pointee.sequence = UInt32(n)
        b.pointee.length = UInt32(d.buffers[i].length)
        b.pointee.m.offset = UInt32(d.buffers[i].offset)
        let sec = frame.timestamp.rounded(.down)
        b.pointee.timestamp = timeval(tv_sec: Int(sec), tv_usec: Int(((frame.timestamp - sec) * 1e6).rounded()))
        return 0
    }

    /// The ioctl's name for `calls` and messages.
    public static func requestName(_ r: UInt) -> String {
        switch r {
        case DL_VIDIOC_QUERYCAP: return "VIDIOC_QUERYCAP"
        case DL_VIDIOC_ENUM_FMT: return "VIDIOC_ENUM_FMT"
        case DL_VIDIOC_ENUM_FRAMESIZES: return "VIDIOC_ENUM_FRAMESIZES"
        case DL_VIDIOC_ENUM_FRAMEINTERVALS: return "VIDIOC_ENUM_FRAMEINTERVALS"
        case DL_VIDIOC_G_FMT: return "VIDIOC_G_FMT"
        case DL_VIDIOC_S_FMT: return "VIDIOC_S_FMT"
        case DL_VIDIOC_G_PARM: return "VIDIOC_G_PARM"
        case DL_VIDIOC_S_PARM: return "VIDIOC_S_PARM"
        case DL_VIDIOC_REQBUFS: return "VIDIOC_REQBUFS"
        case DL_VIDIOC_QUERYBUF: return "VIDIOC_QUERYBUF"
        case DL_VIDIOC_QBUF: return "VIDIOC_QBUF"
        case DL_VIDIOC_DQBUF: return "VIDIOC_DQBUF"
        case DL_VIDIOC_STREAMON: return "VIDIOC_STREAMON"
        case DL_VIDIOC_STREAMOFF: return "VIDIOC_STREAMOFF"
        default: return controlRequestName(r) ?? "ioctl 0x\(String(r, radix: 16))"
        }
    }
}
