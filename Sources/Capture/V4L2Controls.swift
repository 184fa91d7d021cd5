#if canImport(Glibc)
import Glibc
#endif
import CPlatform
import Foundation

/// One V4L2 control as the driver describes it (`VIDIOC_QUERY_EXT_CTRL`, `VIDIOC_QUERYMENU`) with
/// its current value (`VIDIOC_G_EXT_CTRLS`). `name` is spelled as `v4l2-ctl` spells it.
public struct V4L2Control: Equatable, Sendable {
    public enum Kind: String, Codable, Sendable {
        case integer, boolean, menu, integerMenu = "intmenu", button, integer64 = "int64", string, bitmask
        case controlClass = "class", compound, unknown
    }
    /// One menu entry: `index` is the value the control takes; `name` for a menu, `value` for an integer menu.
    public struct MenuItem: Codable, Equatable, Sendable {
        public var index: Int64
        public var name: String?
        public var value: Int64?
        /// What the panel and messages show: the name, or the integer of an integer menu.
        public var label: String { name ?? value.map { String($0) } ?? String(index) }
    }

    public var id: UInt32
    /// `v4l2-ctl`'s spelling: "exposure_absolute".
    public var name: String
    /// The driver's name: "Exposure (Absolute)".
    public var label: String
    public var kind: Kind
    /// The raw `v4l2_ctrl_type`.
    public var type: UInt32
    public var minimum: Int64
    public var maximum: Int64
    public var step: UInt64
    public var defaultValue: Int64
    /// `V4L2_CTRL_FLAG_*`.
    public var flags: UInt32
    public var menu: [MenuItem]
    /// The current value; nil for controls without one (buttons, classes, write-only, strings, compound).
    public var value: Int64?
    /// The control class (`id & 0x0fff0000`): what section it is listed under.
    public var classID: UInt32 { id & 0x0fff_0000 }

    public func has(_ flag: Int32) -> Bool { flags & UInt32(truncatingIfNeeded: flag) != 0 }
    public var isDisabled: Bool { has(V4L2_CTRL_FLAG_DISABLED) }
    public var isGrabbed: Bool { has(V4L2_CTRL_FLAG_GRABBED) }
    public var isReadOnly: Bool { has(V4L2_CTRL_FLAG_READ_ONLY) }
    public var isInactive: Bool { has(V4L2_CTRL_FLAG_INACTIVE) }
    public var isWriteOnly: Bool { has(V4L2_CTRL_FLAG_WRITE_ONLY) }
    public var isVolatile: Bool { has(V4L2_CTRL_FLAG_VOLATILE) }
    /// A value this program reads and writes as one integer.
    public var isScalar: Bool {
        switch kind {
        case .integer, .boolean, .menu, .integerMenu, .integer64, .bitmask: return true
        case .button, .string, .controlClass, .compound, .unknown: return false
        }
    }
    /// Has a value to read (scalar and not write-only).
    public var isReadable: Bool { isScalar && !isWriteOnly && !isDisabled }
    /// Can be set at all (a button is "set" by pressing it).
    public var isWritable: Bool { (isScalar || kind == .button) && !isReadOnly && !isDisabled }
    /// Can be set now: writable, and not inactive or grabbed.
    public var isEditable: Bool { isWritable && !isInactive && !isGrabbed }

    /// Flag names as `v4l2-ctl` prints them.
    public var flagNames: [String] {
        let names: [(Int32, String)] = [
            (V4L2_CTRL_FLAG_DISABLED, "disabled"), (V4L2_CTRL_FLAG_GRABBED, "grabbed"), (V4L2_CTRL_FLAG_READ_ONLY, "read-only"),
            (V4L2_CTRL_FLAG_UPDATE, "update"), (V4L2_CTRL_FLAG_INACTIVE, "inactive"), (V4L2_CTRL_FLAG_SLIDER, "slider"),
            (V4L2_CTRL_FLAG_WRITE_ONLY, "write-only"), (V4L2_CTRL_FLAG_VOLATILE, "volatile"),
            (V4L2_CTRL_FLAG_HAS_PAYLOAD, "has-payload"), (V4L2_CTRL_FLAG_EXECUTE_ON_WRITE, "execute-on-write"),
            (V4L2_CTRL_FLAG_MODIFY_LAYOUT, "modify-layout"), (V4L2_CTRL_FLAG_DYNAMIC_ARRAY, "dynamic-array"),
        ]
        return names.filter { has($0.0) }.map(\.1)
    }

    /// `v4l2-ctl`'s name for a driver's control name: lowercase letters and digits, each run of
    /// other characters one '_' (none at the ends). "White Balance Temperature, Auto" → white_balance_temperature_auto.
    public static func v4l2ctlName(_ label: String) -> String {
        var s = ""
        var pendingUnderscore = false
        for c in label.unicodeScalars {
            if c.isASCII, c.properties.isAlphabetic || ("0"..."9").contains(c) {
                if pendingUnderscore { s.append("_") }
                pendingUnderscore = false
                s.unicodeScalars.append(contentsOf: String(c).lowercased().unicodeScalars)
            } else if !s.isEmpty {
                pendingUnderscore = true
            }
        }
        return s
    }

    /// The value the driver would keep for `v` (integers clamped to the range and rounded to the
    /// step from the minimum, as the V4L2 framework and uvcvideo do; booleans 0 or 1).
    public func adjusted(_ v: Int64) -> Int64 {
        switch kind {
        case .integer, .integer64:
            guard maximum >= minimum else { return v }
            let x = min(max(v, minimum), maximum)
            guard step > 1 else { return x }
            // Unsigned offsets: an int64 control may span the whole range.
            let offset = UInt64(bitPattern: x &- minimum), span = UInt64(bitPattern: maximum &- minimum)
            var k = offset / step + (offset % step >= step - step / 2 ? 1 : 0)
            var (product, overflow) = k.multipliedReportingOverflow(by: step)
            if overflow || product > span {
                k -= 1
                product = k &* step
            }
            return minimum &+ Int64(bitPattern: product)
        case .boolean: return v != 0 ? 1 : 0
        case .menu, .integerMenu, .bitmask, .button, .string, .controlClass, .compound, .unknown: return v
        }
    }

    /// The menu item with index `v`.
    public func menuItem(_ v: Int64) -> MenuItem? { menu.first { $0.index == v } }

    /// A value as people read it: a menu item's name, "on"/"off", or the number.
    public func describe(_ v: Int64) -> String {
        switch kind {
        case .menu, .integerMenu: return menuItem(v).map { "\(v) (\($0.label))" } ?? String(v)
        case .boolean: return v != 0 ? "1 (on)" : "0 (off)"
        case .integer, .integer64, .bitmask, .button, .string, .controlClass, .compound, .unknown: return String(v)
        }
    }

    /// Parses a `--ctrl` value: a number; a menu item by index or by name (as printed or as
    /// `v4l2-ctl`-style words: "manual_mode"); a boolean as 0/1, true/false, on/off, yes/no.
    public func parseValue(_ text: String) throws -> Int64 {
        let t = text.trimmingCharacters(in: .whitespaces)
        switch kind {
        case .menu, .integerMenu:
            if let i = Int64(t) {
                guard menuItem(i) != nil else {
                    throw CaptureError.invalidSource("--ctrl \(name)=\(text): not a menu item (items: \(menuDescription))")
                }
                return i
            }
            let wanted = Self.v4l2ctlName(t)
            if let item = menu.first(where: { Self.v4l2ctlName($0.label) == wanted && !wanted.isEmpty }) { return item.index }
            throw CaptureError.invalidSource("--ctrl \(name)=\(text): not a menu item (items: \(menuDescription))")
        case .boolean:
            switch t.lowercased() {
            case "1", "true", "on", "yes": return 1
            case "0", "false", "off", "no": return 0
            default: throw CaptureError.invalidSource("--ctrl \(name)=\(text): a boolean is 0 or 1 (or on/off)")
            }
        case .button:
            return 1
        default:
            guard isScalar, let v = Int64(t) else {
                throw CaptureError.invalidSource("--ctrl \(name)=\(text): \(isScalar ? "not an integer" : "a \(kind.rawValue) control cannot be set from the command line")")
            }
            return v
        }
    }

    /// "1: Manual Mode, 3: Aperture Priority Mode".
    public var menuDescription: String { menu.map { "\($0.index): \($0.label)" }.joined(separator: ", ") }

    /// Order in which saved values are written: auto switches before the manual values they
    /// make active (exposure_auto before exposure_absolute), then the other switches and menus,
    /// then the numbers. A restore in this order is not refused for an inactive control.
    public var writeRank: Int {
        let isSwitch = kind == .boolean || kind == .menu || kind == .integerMenu
        if isSwitch && (name.contains("auto") || label.lowercased().contains("auto")) { return 0 }
        return isSwitch ? 1 : 2
    }

    static func kind(of type: UInt32) -> Kind {
        switch type {
        case V4L2_CTRL_TYPE_INTEGER.rawValue: return .integer
        case V4L2_CTRL_TYPE_BOOLEAN.rawValue: return .boolean
        case V4L2_CTRL_TYPE_MENU.rawValue: return .menu
        case V4L2_CTRL_TYPE_INTEGER_MENU.rawValue: return .integerMenu
        case V4L2_CTRL_TYPE_BUTTON.rawValue: return .button
        case V4L2_CTRL_TYPE_INTEGER64.rawValue: return .integer64
        case V4L2_CTRL_TYPE_CTRL_CLASS.rawValue: return .controlClass
        case V4L2_CTRL_TYPE_STRING.rawValue: return .string
        case V4L2_CTRL_TYPE_BITMASK.rawValue: return .bitmask
        default: return type >= 0x0100 ? .compound : .unknown
        }
    }

    /// Section title of a control class (when the driver lists no class control of its own).
    public static func className(_ classID: UInt32) -> String {
        switch classID {
        case UInt32(V4L2_CTRL_CLASS_USER): return "User Controls"
        case UInt32(V4L2_CTRL_CLASS_CAMERA): return "Camera Controls"
        case UInt32(V4L2_CTRL_CLASS_FLASH): return "Flash Controls"
        case UInt32(V4L2_CTRL_CLASS_JPEG): return "JPEG Compression Controls"
        case UInt32(V4L2_CTRL_CLASS_IMAGE_SOURCE): return "Image Source Controls"
        case UInt32(V4L2_CTRL_CLASS_IMAGE_PROC): return "Image Processing Controls"
        case UInt32(V4L2_CTRL_CLASS_CODEC): return "Codec Controls"
        default: return "Controls 0x" + String(classID, radix: 16)
        }
    }
}

/// What became of one write: the value asked, the value sent (after clamping to the range), the
/// value the driver kept (read back), and the errno when the driver refused it.
public struct V4L2ControlOutcome: Equatable, Sendable {
    public var device: String
    public var control: String
    public var requested: Int64
    public var sent: Int64?
    public var kept: Int64?
    public var errno: Int32?
    /// Why it was not sent (not writable, inactive, not a menu item).
    public var problem: String?
    public var keptText: String

    public var succeeded: Bool { errno == nil && problem == nil }

    /// One line for a notice; nil when the driver took the value as asked.
    public var notice: String? {
        let kept = self.kept.map { _ in "; keeps \(keptText)" } ?? ""
        if let problem { return "\(device): \(control)=\(requested) not set: \(problem)\(kept)" }
        if let errno {
            return "\(device): \(control)=\(sent ?? requested) refused: \(V4L2ControlOutcome.reason(errno))\(kept)"
        }
        if let sent, sent != requested { return "\(device): \(control)=\(requested) is outside the driver's range or step; set \(sent)" }
        return nil
    }

    static func reason(_ e: Int32) -> String {
        let why: String
        switch e {
        case EINVAL: why = "invalid value"
        case ERANGE: why = "out of range"
        case EBUSY: why = "busy (the device is streaming or the control is grabbed)"
        case EACCES: why = "not writable now (read-only, or inactive while its auto mode is on)"
        default: why = String(cString: strerror(e))
        }
        return "\(why) (\(errnoName(e)))"
    }

    static func errnoName(_ e: Int32) -> String {
        switch e {
        case EINVAL: return "EINVAL"
        case ERANGE: return "ERANGE"
        case EBUSY: return "EBUSY"
        case EACCES: return "EACCES"
        case EIO: return "EIO"
        case EPERM: return "EPERM"
        case ENOTTY: return "ENOTTY"
        default: return "errno \(e)"
        }
    }
}

/// The controls of one open V4L2 device, every call through its `V4L2System`. Not thread-safe:
/// one thread at a time (the source's thread in the viewer; see `V4L2SourceControls`).
public final class V4L2ControlDevice {
    public let path: String
    public let system: V4L2System
    public let fd: Int32
    public private(set) var driver = ""
    public private(set) var card = ""
    public private(set) var busInfo = ""
    /// Every control in the driver's order (compound controls listed, without a value).
    public private(set) var controls: [V4L2Control] = []
    /// Class headers: class id → the driver's class control name ("User Controls").
    public private(set) var classNames: [UInt32: String] = [:]

    /// The node's first pixel format ("YUYV", "Z16"): a RealSense's depth, IR and color nodes
    /// share bus info and card name, and this tells them apart.
    public private(set) var firstFormat = ""

    /// The key settings are saved under: bus info, card name and the node's first pixel format.
    public var key: String { "\(busInfo) \(card)" + (firstFormat.isEmpty ? "" : " \(firstFormat)") }

    /// Reads the device's identity (`VIDIOC_QUERYCAP`) and enumerates its controls.
    public init(path: String, system: V4L2System, fd: Int32) throws {
        self.path = path
        self.system = system
        self.fd = fd
        var cap = v4l2_capability()
        guard system.ioctl(fd, DL_VIDIOC_QUERYCAP, &cap) == 0 else {
            throw CaptureError.system(device: path, call: "VIDIOC_QUERYCAP", errno: system.errno)
        }
        driver = stringFromCTuple(cap.driver)
        card = stringFromCTuple(cap.card)
        busInfo = stringFromCTuple(cap.bus_info)
        var desc = v4l2_fmtdesc()
        desc.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
        if system.ioctl(fd, DL_VIDIOC_ENUM_FMT, &desc) == 0 { firstFormat = V4L2FourCC(desc.pixelformat).description }
        try enumerate()
    }

    /// The controls of an open camera.
    public convenience init(camera: V4L2Camera) throws {
        guard camera.isOpen else { throw CaptureError.invalidState("\(camera.path): camera is not open") }
        try self.init(path: camera.path, system: camera.system, fd: camera.fd)
    }

    public func index(named name: String) -> Int? { controls.firstIndex { $0.name == name } }
    public subscript(name: String) -> V4L2Control? { index(named: name).map { controls[$0] } }

    // MARK: Enumeration

    /// `VIDIOC_QUERY_EXT_CTRL` with `V4L2_CTRL_FLAG_NEXT_CTRL | V4L2_CTRL_FLAG_NEXT_COMPOUND` until
    /// EINVAL; menus through `VIDIOC_QUERYMENU` (indices the driver skips are left out); values
    /// through `VIDIOC_G_EXT_CTRLS`. A driver without the ioctl (ENOTTY) has no controls.
    public func enumerate() throws {
        var result: [V4L2Control] = []
        var names: [UInt32: String] = [:]
        let next = UInt32(truncatingIfNeeded: V4L2_CTRL_FLAG_NEXT_CTRL) | UInt32(truncatingIfNeeded: V4L2_CTRL_FLAG_NEXT_COMPOUND)
        var id: UInt32 = 0
        var seen = Set<UInt32>()
        while true {
            var q = v4l2_query_ext_ctrl()
            q.id = id | next
            guard system.ioctl(fd, DL_VIDIOC_QUERY_EXT_CTRL, &q) == 0 else {
                let e = system.errno
                if e == EINVAL || e == ENOTTY { break }
                throw CaptureError.system(device: path, call: "VIDIOC_QUERY_EXT_CTRL", errno: e)
            }
            // A driver that answers the same id again would loop forever.
            guard seen.insert(q.id).inserted else { break }
            id = q.id
            var c = control(from: q)
            if c.kind == .controlClass {
                names[c.classID] = c.label
                continue
            }
            if c.kind == .menu || c.kind == .integerMenu { c.menu = menuItems(c) }
            result.append(c)
        }
        controls = result
        classNames = names
        for i in controls.indices { controls[i].value = read(controls[i]) }
    }

    private func control(from q: v4l2_query_ext_ctrl) -> V4L2Control {
        let label = stringFromCTuple(q.name)
        return V4L2Control(id: q.id, name: V4L2Control.v4l2ctlName(label), label: label, kind: V4L2Control.kind(of: q.type),
                           type: q.type, minimum: q.minimum, maximum: q.maximum, step: q.step,
                           defaultValue: q.default_value, flags: q.flags, menu: [], value: nil)
    }

    private func menuItems(_ c: V4L2Control) -> [V4L2Control.MenuItem] {
        guard c.minimum >= 0, c.maximum >= c.minimum, c.maximum - c.minimum < 1024 else { return [] }
        var items: [V4L2Control.MenuItem] = []
        for i in c.minimum...c.maximum {
            var m = v4l2_querymenu()
            m.id = c.id
            m.index = UInt32(i)
            guard system.ioctl(fd, DL_VIDIOC_QUERYMENU, &m) == 0 else { continue }   // EINVAL: an index the driver skips
            if c.kind == .integerMenu {
                items.append(.init(index: i, name: nil, value: m.value))
            } else {
                items.append(.init(index: i, name: stringFromCTuple(m.name), value: nil))
            }
        }
        return items
    }

    /// Section title of `classID`: the driver's class control, else the standard name.
    public func sectionTitle(_ classID: UInt32) -> String { classNames[classID] ?? V4L2Control.className(classID) }

    // MARK: Reading

    /// The current value (`VIDIOC_G_EXT_CTRLS`, `V4L2_CTRL_WHICH_CUR_VAL`); nil when the control has
    /// none or the driver refuses to read it.
    public func read(_ c: V4L2Control) -> Int64? {
        guard c.isReadable else { return nil }
        var one = v4l2_ext_control()
        one.id = c.id
        guard currentValue(DL_VIDIOC_G_EXT_CTRLS, &one) else { return nil }
        return c.kind == .integer64 ? one.value64 : Int64(one.value)
    }

    /// `VIDIOC_G_EXT_CTRLS` or `VIDIOC_S_EXT_CTRLS` of one control's current value.
    private func currentValue(_ request: UInt, _ one: inout v4l2_ext_control) -> Bool {
        withUnsafeMutablePointer(to: &one) { p -> Bool in
            var list = v4l2_ext_controls()
            list.which = UInt32(V4L2_CTRL_WHICH_CUR_VAL)
            list.count = 1
            list.controls = p
            return system.ioctl(fd, request, &list) == 0
        }
    }

    /// Re-reads every control's flags (`VIDIOC_QUERY_EXT_CTRL` by id) and value: after a write,
    /// a master switch may have made others active or inactive. True when anything changed.
    @discardableResult
    public func refresh() -> Bool {
        var changed = false
        for i in controls.indices {
            var q = v4l2_query_ext_ctrl()
            q.id = controls[i].id
            if system.ioctl(fd, DL_VIDIOC_QUERY_EXT_CTRL, &q) == 0 {
                if q.flags != controls[i].flags || q.minimum != controls[i].minimum || q.maximum != controls[i].maximum {
                    controls[i].flags = q.flags
                    controls[i].minimum = q.minimum
                    controls[i].maximum = q.maximum
                    changed = true
                }
            }
            let v = read(controls[i])
            if v != controls[i].value { controls[i].value = v; changed = true }
        }
        return changed
    }

    /// Re-reads the values of the volatile controls (the driver changes them: a temperature, the
    /// exposure chosen by auto exposure). True when one changed.
    @discardableResult
    public func refreshVolatile() -> Bool {
        var changed = false
        for i in controls.indices where controls[i].isVolatile {
            let v = read(controls[i])
            if v != controls[i].value { controls[i].value = v; changed = true }
        }
        return changed
    }

    // MARK: Writing

    /// Sets control `name` to `value`: clamped to the driver's range and step before it is sent
    /// (`VIDIOC_S_EXT_CTRLS`, `V4L2_CTRL_WHICH_CUR_VAL`), then every control's flags and value are
    /// read again. A refusal (EINVAL, ERANGE, EBUSY, EACCES) is in the outcome with the value the
    /// driver kept.
    @discardableResult
    public func set(_ name: String, _ value: Int64) -> V4L2ControlOutcome {
        guard let i = index(named: name) else {
            return V4L2ControlOutcome(device: path, control: name, requested: value, problem: "no such control", keptText: "")
        }
        let c = controls[i]
        var outcome = V4L2ControlOutcome(device: path, control: name, requested: value, keptText: "")
        func finish() -> V4L2ControlOutcome {
            refresh()
            outcome.kept = controls[i].value
            outcome.keptText = controls[i].value.map { controls[i].describe($0) } ?? ""
            return outcome
        }
        if !c.isWritable {
            outcome.problem = c.isReadOnly ? "read-only" : c.isDisabled ? "disabled" : "a \(c.kind.rawValue) control cannot be set"
            return finish()
        }
        if (c.kind == .menu || c.kind == .integerMenu) && c.menuItem(value) == nil {
            outcome.problem = "not a menu item (items: \(c.menuDescription))"
            return finish()
        }
        let v = c.kind == .button ? 1 : c.adjusted(value)
        outcome.sent = v
        var one = v4l2_ext_control()
        one.id = c.id
        if c.kind == .integer64 { one.value64 = v } else { one.value = Int32(clamping: v) }
        if !currentValue(DL_VIDIOC_S_EXT_CTRLS, &one) { outcome.errno = system.errno }
        return finish()
    }

    /// Writes `values` (name → value) in dependency order (`writeRank`, then the driver's order).
    /// Names this device does not have are skipped (the caller decides whether that is an error).
    public func apply(_ values: [String: Int64]) -> [V4L2ControlOutcome] {
        let order = controls.enumerated().filter { values[$0.element.name] != nil }
            .sorted { ($0.element.writeRank, $0.offset) < ($1.element.writeRank, $1.offset) }
        return order.map { set($0.element.name, values[$0.element.name]!) }
    }

    /// Sets every writable control back to the driver's default: manual values first (while
    /// their auto switch still leaves them active), then the switches; controls inactive at their
    /// turn keep their value. Buttons are not pressed.
    public func resetToDefaults() -> [V4L2ControlOutcome] {
        let order = controls.enumerated().filter { $0.element.isWritable && $0.element.isScalar }
            .sorted { ($0.element.writeRank, $0.offset) > ($1.element.writeRank, $1.offset) }
        var outcomes: [V4L2ControlOutcome] = []
        for (_, c) in order {
            guard let now = self[c.name], now.isEditable, now.value != now.defaultValue else { continue }
            outcomes.append(set(c.name, now.defaultValue))
        }
        return outcomes
    }

    /// The values of the writable, non-volatile controls (what a save keeps).
    public var settableValues: [String: Int64] {
        var d: [String: Int64] = [:]
        for c in controls where c.isWritable && c.isScalar && !c.isVolatile { if let v = c.value { d[c.name] = v } }
        return d
    }
}

/// A control as `depthlens devices` lists it (`--json`: one object per control).
public struct V4L2ControlInfo: Codable, Equatable, Sendable, CustomStringConvertible {
    public var name: String
    public var label: String
    public var id: UInt32
    public var section: String
    public var type: V4L2Control.Kind
    public var minimum: Int64
    public var maximum: Int64
    public var step: UInt64
    public var defaultValue: Int64
    /// nil for controls without a readable value (buttons, write-only, compound).
    public var value: Int64?
    public var flags: [String]
    public var menu: [V4L2Control.MenuItem]?

    enum CodingKeys: String, CodingKey {
        case name, label, id, section, type, minimum, maximum, step, defaultValue = "default", value, flags, menu
    }

    public init(_ c: V4L2Control, section: String) {
        name = c.name; label = c.label; id = c.id; self.section = section; type = c.kind
        minimum = c.minimum; maximum = c.maximum; step = c.step; defaultValue = c.defaultValue
        value = c.value; flags = c.flagNames
        menu = c.kind == .menu || c.kind == .integerMenu ? c.menu : nil
    }

    /// Every control of a device.
    public static func list(_ d: V4L2ControlDevice) -> [V4L2ControlInfo] {
        d.controls.map { V4L2ControlInfo($0, section: d.sectionTitle($0.classID)) }
    }

    /// One line in `v4l2-ctl --list-ctrls-menus` style, menu items on their own lines.
    public var description: String {
        var s = "\(name) 0x" + String(id, radix: 16) + " (\(type.rawValue))"
        switch type {
        case .integer, .integer64, .bitmask: s += " : min=\(minimum) max=\(maximum) step=\(step) default=\(defaultValue)"
        case .boolean, .menu, .integerMenu: s += " : " + (type == .boolean ? "" : "min=\(minimum) max=\(maximum) ") + "default=\(defaultValue)"
        case .button, .string, .controlClass, .compound, .unknown: break
        }
        if let value { s += " value=\(value)" }
        if !flags.isEmpty { s += " flags=" + flags.joined(separator: ", ") }
        for m in menu ?? [] { s += "\n  \(m.index): \(m.label)" }
        return s
    }
}
