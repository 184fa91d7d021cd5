#if canImport(Glibc)
import Glibc
#endif
import CPlatform
import Capture

/// One control of a scripted device, answered as a driver answers `VIDIOC_QUERY_EXT_CTRL`,
/// `VIDIOC_QUERYMENU` and `VIDIOC_G/S_EXT_CTRLS`.
public struct ScriptedControl {
    public var id: UInt32
    /// The driver's name ("Exposure (Absolute)").
    public var name: String
    public var type: v4l2_ctrl_type
    public var minimum: Int64
    public var maximum: Int64
    public var step: UInt64
    public var defaultValue: Int64
    /// Flags that do not depend on state (read-only, volatile, write-only).
    public var flags: UInt32
    /// Menu names by index (a menu); indices missing are skipped, as uvcvideo skips exposure_auto's 0 and 2.
    public var menu: [Int64: String] = [:]
    /// Integer menu values by index.
    public var integerMenu: [Int64: Int64] = [:]
    /// The current value (a test may change a volatile one as the sensor would).
    public var value: Int64
    /// Active only while control `master` has one of `values`; else it carries V4L2_CTRL_FLAG_INACTIVE.
    public var activeWhen: (master: UInt32, values: Set<Int64>)?
    /// Writes while inactive are refused with EACCES (uvcvideo); false: accepted and stored (the V4L2 framework).
    public var refusesInactiveWrites = true
    /// errno for a menu index that is out of range (uvcvideo: ERANGE; the framework: EINVAL).
    public var badMenuErrno: Int32 = ERANGE
    /// Grabbed while the device streams: V4L2_CTRL_FLAG_GRABBED and EBUSY on writes.
    public var grabbedWhileStreaming = false
    /// Every write answers this errno (a test's refusal).
    public var refuseWith: Int32?
    /// Times a button was pressed.
    public var presses = 0
    public var isCompound: Bool { type.rawValue >= 0x100 }

    public init(id: UInt32, name: String, type: v4l2_ctrl_type, minimum: Int64 = 0, maximum: Int64 = 1, step: UInt64 = 1,
                defaultValue: Int64 = 0, flags: Int32 = 0, menu: [Int64: String] = [:], integerMenu: [Int64: Int64] = [:],
                activeWhen: (master: UInt32, values: Set<Int64>)? = nil) {
        self.id = id; self.name = name; self.type = type; self.minimum = minimum; self.maximum = maximum; self.step = step
        self.defaultValue = defaultValue; self.flags = UInt32(truncatingIfNeeded: flags); self.menu = menu
        self.integerMenu = integerMenu; self.value = defaultValue; self.activeWhen = activeWhen
    }

    static func classControl(_ classID: UInt32) -> ScriptedControl {
        ScriptedControl(id: classID | 1, name: V4L2Control.className(classID), type: V4L2_CTRL_TYPE_CTRL_CLASS,
                        minimum: 0, maximum: 0, step: 0, flags: V4L2_CTRL_FLAG_READ_ONLY | V4L2_CTRL_FLAG_WRITE_ONLY)
    }
}

public extension ScriptedV4L2System {
    // Standard control ids (linux/v4l2-controls.h).
    static let brightnessID: UInt32 = 0x0098_0900
    static let contrastID: UInt32 = 0x0098_0901
    static let saturationID: UInt32 = 0x0098_0902
    static let autoWhiteBalanceID: UInt32 = 0x0098_090c
    static let gainID: UInt32 = 0x0098_0913
    static let powerLineFrequencyID: UInt32 = 0x0098_0918
    static let whiteBalanceTemperatureID: UInt32 = 0x0098_091a
    static let exposureAutoID: UInt32 = 0x009a_0901
    static let exposureAbsoluteID: UInt32 = 0x009a_0902
    static let focusAbsoluteID: UInt32 = 0x009a_090a
    static let focusAutoID: UInt32 = 0x009a_090c
    static let linkFrequencyID: UInt32 = 0x009f_0901
    // Driver-private ids of the depth node (camera class, above the standard ones).
    static let laserPowerID: UInt32 = 0x009a_2001
    static let emitterEnabledID: UInt32 = 0x009a_2002
    static let asicTemperatureID: UInt32 = 0x009a_2003

    /// A UVC webcam as uvcvideo exposes it (names as kernels before 5.19 spell them, which
    /// `v4l2-ctl` shows as white_balance_temperature_auto, exposure_auto, exposure_absolute):
    /// the manual white balance, exposure and focus are inactive while their auto switch is on.
    static func uvcWebcamControls() -> [ScriptedControl] {
        [
            ScriptedControl(id: brightnessID, name: "Brightness", type: V4L2_CTRL_TYPE_INTEGER, minimum: 0, maximum: 255, defaultValue: 128),
            ScriptedControl(id: contrastID, name: "Contrast", type: V4L2_CTRL_TYPE_INTEGER, minimum: 0, maximum: 255, defaultValue: 128),
            ScriptedControl(id: saturationID, name: "Saturation", type: V4L2_CTRL_TYPE_INTEGER, minimum: 0, maximum: 255, defaultValue: 128),
            ScriptedControl(id: autoWhiteBalanceID, name: "White Balance Temperature, Auto", type: V4L2_CTRL_TYPE_BOOLEAN, defaultValue: 1),
            ScriptedControl(id: gainID, name: "Gain", type: V4L2_CTRL_TYPE_INTEGER, minimum: 0, maximum: 255, defaultValue: 0),
            ScriptedControl(id: powerLineFrequencyID, name: "Power Line Frequency", type: V4L2_CTRL_TYPE_MENU, minimum: 0, maximum: 2,
                            defaultValue: 2, menu: [0: "Disabled", 1: "50 Hz", 2: "60 Hz"]),
            ScriptedControl(id: whiteBalanceTemperatureID, name: "White Balance Temperature", type: V4L2_CTRL_TYPE_INTEGER,
                            minimum: 2000, maximum: 6500, defaultValue: 4000, activeWhen: (autoWhiteBalanceID, [0])),
            ScriptedControl(id: exposureAutoID, name: "Exposure, Auto", type: V4L2_CTRL_TYPE_MENU, minimum: 0, maximum: 3,
                            defaultValue: 3, menu: [1: "Manual Mode", 3: "Aperture Priority Mode"]),
            ScriptedControl(id: exposureAbsoluteID, name: "Exposure (Absolute)", type: V4L2_CTRL_TYPE_INTEGER,
                            minimum: 3, maximum: 2047, defaultValue: 250, activeWhen: (exposureAutoID, [1])),
            ScriptedControl(id: focusAbsoluteID, name: "Focus (absolute)", type: V4L2_CTRL_TYPE_INTEGER, minimum: 0, maximum: 250,
                            step: 5, defaultValue: 0, activeWhen: (focusAutoID, [0])),
            ScriptedControl(id: focusAutoID, name: "Focus, Auto", type: V4L2_CTRL_TYPE_BOOLEAN, defaultValue: 1),
        ]
    }

    /// A RealSense depth node: laser power 0…360 in steps of 30, the emitter as a menu
    /// (Off/On/Auto), a read-only volatile temperature and a read-only integer menu (the link
    /// frequency); V4L2-framework behaviour (EINVAL for a bad menu index, inactive writes kept).
    static func realSenseDepthControls() -> [ScriptedControl] {
        var list = [
            ScriptedControl(id: gainID, name: "Gain", type: V4L2_CTRL_TYPE_INTEGER, minimum: 16, maximum: 248, defaultValue: 16),
            ScriptedControl(id: laserPowerID, name: "Laser Power", type: V4L2_CTRL_TYPE_INTEGER, minimum: 0, maximum: 360, step: 30,
                            defaultValue: 150, activeWhen: (emitterEnabledID, [1])),
            ScriptedControl(id: emitterEnabledID, name: "Emitter Enabled", type: V4L2_CTRL_TYPE_MENU, minimum: 0, maximum: 2,
                            defaultValue: 1, menu: [0: "Off", 1: "On", 2: "Auto"]),
            ScriptedControl(id: asicTemperatureID, name: "ASIC Temperature", type: V4L2_CTRL_TYPE_INTEGER, minimum: -40, maximum: 125,
                            defaultValue: 35, flags: V4L2_CTRL_FLAG_READ_ONLY | V4L2_CTRL_FLAG_VOLATILE),
            ScriptedControl(id: linkFrequencyID, name: "Link Frequency", type: V4L2_CTRL_TYPE_INTEGER_MENU, minimum: 0, maximum: 1,
                            defaultValue: 0, flags: V4L2_CTRL_FLAG_READ_ONLY, integerMenu: [0: 300_000_000, 1: 750_000_000]),
        ]
        for i in list.indices {
            list[i].refusesInactiveWrites = false
            list[i].badMenuErrno = EINVAL
        }
        return list
    }
}

public extension ScriptedV4L2System.Device {
    /// The scripted control whose driver name is `name` or whose `v4l2-ctl` name is `name`.
    func controlIndex(_ name: String) -> Int? {
        controls.firstIndex { $0.name == name || V4L2Control.v4l2ctlName($0.name) == name }
    }
    /// The current value of a control (as the hardware holds it).
    func controlValue(_ name: String) -> Int64? { controlIndex(name).map { controls[$0].value } }
    /// Changes a control behind the program's back (a volatile sensor reading).
    func setControlValue(_ name: String, _ v: Int64) { if let i = controlIndex(name) { controls[i].value = v } }

    /// The flags the driver reports now: the static ones, INACTIVE when the master says so,
    /// GRABBED while streaming for a grabbed control.
    internal func currentFlags(_ c: ScriptedControl) -> UInt32 {
        var f = c.flags
        if let (master, values) = c.activeWhen, let m = controls.first(where: { $0.id == master }), !values.contains(m.value) {
            f |= UInt32(truncatingIfNeeded: V4L2_CTRL_FLAG_INACTIVE)
        }
        if c.grabbedWhileStreaming && isStreaming { f |= UInt32(truncatingIfNeeded: V4L2_CTRL_FLAG_GRABBED) }
        return f
    }

    /// Controls with a class control per class present, in id order (as the framework lists them).
    internal var listedControls: [ScriptedControl] {
        let classes = Set(controls.map { $0.id & 0x0fff_0000 })
        return (controls + classes.map { ScriptedControl.classControl($0) }).sorted { $0.id < $1.id }
    }
}

extension ScriptedV4L2System {
    static func controlRequestName(_ r: UInt) -> String? {
        switch r {
        case DL_VIDIOC_QUERY_EXT_CTRL: return "VIDIOC_QUERY_EXT_CTRL"
        case DL_VIDIOC_QUERYMENU: return "VIDIOC_QUERYMENU"
        case DL_VIDIOC_G_EXT_CTRLS: return "VIDIOC_G_EXT_CTRLS"
        case DL_VIDIOC_S_EXT_CTRLS: return "VIDIOC_S_EXT_CTRLS"
        default: return nil
        }
    }

    /// The control ioctls; returns 0 or the errno to fail with (a device without controls answers
    /// EINVAL to the first query, as the V4L2 framework does).
    func controlIoctl(_ d: Device, _ request: UInt, _ arg: UnsafeMutableRawPointer) -> Int32 {
        switch request {
        case DL_VIDIOC_QUERY_EXT_CTRL: return queryExtCtrl(d, arg.assumingMemoryBound(to: v4l2_query_ext_ctrl.self))
        case DL_VIDIOC_QUERYMENU: return queryMenu(d, arg.assumingMemoryBound(to: v4l2_querymenu.self))
        case DL_VIDIOC_G_EXT_CTRLS: return extControls(d, arg.assumingMemoryBound(to: v4l2_ext_controls.self), set: false)
        case DL_VIDIOC_S_EXT_CTRLS: return extControls(d, arg.assumingMemoryBound(to: v4l2_ext_controls.self), set: true)
        default: return ENOTTY
        }
    }

    private func queryExtCtrl(_ d: Device, _ q: UnsafeMutablePointer<v4l2_query_ext_ctrl>) -> Int32 {
        let nextCtrl = UInt32(truncatingIfNeeded: V4L2_CTRL_FLAG_NEXT_CTRL)
        let nextCompound = UInt32(truncatingIfNeeded: V4L2_CTRL_FLAG_NEXT_COMPOUND)
        let raw = q.pointee.id
        let id = raw & ~(nextCtrl | nextCompound)
        let all = d.listedControls
        let found: ScriptedControl?
        if raw & (nextCtrl | nextCompound) != 0 {
            let wantScalar = raw & nextCtrl != 0, wantCompound = raw & nextCompound != 0
            found = all.first { $0.id > id && ($0.isCompound ? wantCompound : wantScalar) }
        } else {
            found = all.first { $0.id == id }
        }
        guard let c = found else { return EINVAL }
        q.pointee = v4l2_query_ext_ctrl()
        q.pointee.id = c.id
        q.pointee.type = c.type.rawValue
        copyCString(c.name, into: &q.pointee.name)
        q.pointee.minimum = c.minimum
        q.pointee.maximum = c.maximum
        q.pointee.step = c.step
        q.pointee.default_value = c.defaultValue
        q.pointee.flags = d.currentFlags(c)
        q.pointee.elem_size = c.type == V4L2_CTRL_TYPE_INTEGER64 ? 8 : 4
        q.pointee.elems = 1
        return 0
    }

    private func queryMenu(_ d: Device, _ m: UnsafeMutablePointer<v4l2_querymenu>) -> Int32 {
        guard let c = d.controls.first(where: { $0.id == m.pointee.id }) else { return EINVAL }
        let i = Int64(m.pointee.index)
        switch c.type {
        case V4L2_CTRL_TYPE_MENU:
            guard let name = c.menu[i] else { return EINVAL }
            copyCString(name, into: &m.pointee.name)
        case V4L2_CTRL_TYPE_INTEGER_MENU:
            guard let v = c.integerMenu[i] else { return EINVAL }
            m.pointee.value = v
        default:
            return EINVAL
        }
        m.pointee.reserved = 0
        return 0
    }

    /// G: every control's value (EACCES for write-only); S: all checked first, then all written
    /// (clamped and stepped as drivers do, written back into the caller's array).
    private func extControls(_ d: Device, _ list: UnsafeMutablePointer<v4l2_ext_controls>, set: Bool) -> Int32 {
        let n = Int(list.pointee.count)
        let which = list.pointee.which
        guard which == UInt32(V4L2_CTRL_WHICH_CUR_VAL) || which == UInt32(V4L2_CTRL_WHICH_DEF_VAL) && !set
                || which & 0x0fff_0000 == which && which != 0 else { return EINVAL }
        guard n > 0 else { return 0 }
        guard let items = list.pointee.controls else { return EFAULT }
        var indices: [Int] = []
        for k in 0..<n {
            list.pointee.error_idx = UInt32(set ? n : k)
            guard let i = d.controls.firstIndex(where: { $0.id == items[k].id }) else {
                list.pointee.error_idx = UInt32(k)
                return EINVAL
            }
            let c = d.controls[i]
            let flags = d.currentFlags(c)
            func has(_ f: Int32) -> Bool { flags & UInt32(truncatingIfNeeded: f) != 0 }
            if set {
                if has(V4L2_CTRL_FLAG_READ_ONLY) { return EACCES }
                if let e = c.refuseWith { return e }
                if has(V4L2_CTRL_FLAG_GRABBED) { return EBUSY }
                if has(V4L2_CTRL_FLAG_INACTIVE) && c.refusesInactiveWrites { return EACCES }
                let v = c.type == V4L2_CTRL_TYPE_INTEGER64 ? items[k].value64 : Int64(items[k].value)
                if c.type == V4L2_CTRL_TYPE_MENU && c.menu[v] == nil || c.type == V4L2_CTRL_TYPE_INTEGER_MENU && c.integerMenu[v] == nil {
                    return v < c.minimum || v > c.maximum ? c.badMenuErrno : EINVAL
                }
            } else if has(V4L2_CTRL_FLAG_WRITE_ONLY) && which != UInt32(V4L2_CTRL_WHICH_DEF_VAL) {
                return EACCES
            }
            indices.append(i)
        }
        list.pointee.error_idx = 0
        for (k, i) in indices.enumerated() {
            var c = d.controls[i]
            if set {
                var v = c.type == V4L2_CTRL_TYPE_INTEGER64 ? items[k].value64 : Int64(items[k].value)
                switch c.type {
                case V4L2_CTRL_TYPE_INTEGER, V4L2_CTRL_TYPE_INTEGER64:
                    v = min(max(v, c.minimum), c.maximum)
                    if c.step > 1 {
                        let s = Int64(c.step)
                        v = c.minimum + (v - c.minimum + s / 2) / s * s
                        if v > c.maximum { v -= s }
                    }
                case V4L2_CTRL_TYPE_BOOLEAN: v = v != 0 ? 1 : 0
                case V4L2_CTRL_TYPE_BUTTON: c.presses += 1; v = 0
                default: break
                }
                c.value = v
                d.controls[i] = c
            }
            let v = which == UInt32(V4L2_CTRL_WHICH_DEF_VAL) ? c.defaultValue : c.value
            if c.type == V4L2_CTRL_TYPE_INTEGER64 { items[k].value64 = v } else { items[k].value = Int32(clamping: v) }
        }
        return 0
    }
}
