import ArgumentParser
import Capture
import DepthKit

/// `--ctrl NAME=VALUE` (repeatable) and `--no-restore`, shared by `view` and `record`.
struct CameraControlOptions: ParsableArguments {
    @Option(name: .customLong("ctrl"), help: ArgumentHelp(
        "Set a V4L2 camera control on open, named as v4l2-ctl names it (repeatable; menus by index or item name, e.g. exposure_auto=manual_mode). `depthlens devices` lists them. The value is saved for the camera.",
        valueName: "name=value"))
    var ctrl: [String] = []
    @Flag(help: "Do not restore the camera controls saved for a V4L2 camera (in $XDG_CONFIG_HOME/depthlens/cameras).")
    var noRestore = false

    /// The options for the source `source`; `--ctrl` on a source that is not a camera is an error.
    func options(source: SourceSpec) throws -> V4L2ControlOptions {
        let assignments = try ctrl.map { try V4L2ControlAssignment(parsing: $0) }
        if !assignments.isEmpty {
            guard case .v4l2 = source else {
                throw DepthKitError.invalidArgument("--ctrl applies to a V4L2 camera (--source v4l2:/dev/videoN), not '\(source)'")
            }
        }
        return V4L2ControlOptions(assignments: assignments, restore: !noRestore)
    }
}
