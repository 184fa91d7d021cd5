import CImGui
import Capture
import Foundation

/// The "Camera controls" panel section's strings, built once per change of the control tables'
/// layout (a camera opened or closed, a control's flags, range or menu changed), never per frame.
struct CameraControlsPanel {
    struct Row {
        /// The widget label, unique per device and control ("Brightness##/dev/video0 brightness").
        var label: String
        /// The class section this control starts, if it is the first of its class.
        var section: String?
        /// A menu's items joined for the combo, and the control value of each combo position.
        var comboItems = ""
        var menuIndices: [Int64] = []
        /// Text for controls without a widget (strings, compound).
        var note = ""
    }
    struct Device {
        var title: String
        var resetLabel: String
        var rows: [Row]
    }
    private(set) var layout = -1
    private(set) var devices: [Device] = []

    /// Rebuilds the strings when `layout` changed.
    mutating func update(_ tables: [V4L2SourceControls.DeviceTable], layout: Int) {
        guard layout != self.layout else { return }
        self.layout = layout
        devices = tables.map { t in
            var lastClass: UInt32?
            let rows = t.controls.map { c -> Row in
                var r = Row(label: "\(c.label)##\(t.path) \(c.name)")
                if c.classID != lastClass {
                    r.section = t.sections[c.classID] ?? V4L2Control.className(c.classID)
                    lastClass = c.classID
                }
                if c.kind == .menu || c.kind == .integerMenu {
                    r.comboItems = UI.joined(c.menu.map(\.label))
                    r.menuIndices = c.menu.map(\.index)
                }
                if !c.isScalar && c.kind != .button { r.note = "\(c.label) (\(c.kind.rawValue))" }
                return r
            }
            return Device(title: "\(t.card) (\(t.path))", resetLabel: "reset to defaults##\(t.path)", rows: rows)
        }
    }
}

extension UI {
    /// An integer slider over `range` (clamped to what ImGui's 64-bit slider takes).
    @discardableResult
    static func slider(_ label: String, _ value: inout Int64, _ range: ClosedRange<Int64>) -> Bool {
        let lo = max(range.lowerBound, Int64.min / 2), hi = min(range.upperBound, Int64.max / 2)
        let old = value
        let changed = label.withCString { dl_imgui_slider_int64($0, &value, lo, hi, "%lld") != 0 }
        return changed && value != old
    }
    static func beginDisabled(_ disabled: Bool) { dl_imgui_begin_disabled(disabled ? 1 : 0) }
    static func endDisabled() { dl_imgui_end_disabled() }
}

extension ViewerApp {
    /// "Camera controls": one block per open V4L2 device, a section per control class; integers
    /// as sliders on the driver's range and step, booleans as checkboxes, menus and integer menus
    /// as combos, buttons as buttons; inactive, read-only, grabbed and disabled controls dimmed.
    /// Changes are posted to the source's thread, which makes the ioctls (`V4L2SourceControls`).
    func buildCameraControlsSection() {
        guard let controls = session.source?.cameraControls else { return }
        let (tables, layout, _) = controls.snapshot()
        guard !tables.isEmpty else { return }
        ui.cameraControls.update(tables, layout: layout)
        guard UI.header("Camera controls", open: false) else { return }
        for (d, table) in tables.enumerated() where d < ui.cameraControls.devices.count {
            let device = ui.cameraControls.devices[d]
            UI.text(device.title, color: [0.7, 0.9, 1])
            for (i, c) in table.controls.enumerated() where i < device.rows.count {
                let row = device.rows[i]
                if let s = row.section { UI.text(s, color: [0.8, 0.8, 0.6]) }
                UI.beginDisabled(!c.isEditable)
                switch c.kind {
                case .integer, .integer64, .bitmask:
                    var v = c.value ?? c.defaultValue
                    if UI.slider(row.label, &v, c.minimum...max(c.minimum, c.maximum)) {
                        controls.post(.set(device: d, name: c.name, value: c.adjusted(v)))
                    }
                case .boolean:
                    var on = (c.value ?? c.defaultValue) != 0
                    if UI.checkbox(row.label, &on) { controls.post(.set(device: d, name: c.name, value: on ? 1 : 0)) }
                case .menu, .integerMenu:
                    var pos = row.menuIndices.firstIndex(of: c.value ?? c.defaultValue) ?? 0
                    if UI.combo(row.label, &pos, joined: row.comboItems), row.menuIndices.indices.contains(pos) {
                        controls.post(.set(device: d, name: c.name, value: row.menuIndices[pos]))
                    }
                case .button:
                    if UI.button(row.label) { controls.post(.set(device: d, name: c.name, value: 1)) }
                case .string, .controlClass, .compound, .unknown:
                    UI.text(row.note)
                }
                UI.endDisabled()
            }
            if UI.button(device.resetLabel) { controls.post(.reset(device: d)) }
            UI.separator()
        }
    }
}
