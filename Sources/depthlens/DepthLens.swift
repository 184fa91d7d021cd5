import ArgumentParser
import DepthKit
import Foundation

@main
struct DepthLens: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "depthlens",
        abstract: "A viewer and toolbox for live color + depth streams.",
        version: "depthlens (\(buildConfiguration) build)",
        subcommands: [ViewCommand.self, ProcessCommand.self, ExportPLYCommand.self, InfoCommand.self,
                      RecordCommand.self, ConvertCommand.self, BenchCommand.self, DevicesCommand.self, Render3DCommand.self,
                      QualityCommand.self, MeasureCommand.self, PublishCommand.self, SubscribeCommand.self]
    )

    /// Parses and runs, reporting every failure — a bad number, a missing file, a corrupt image —
    /// as one line `depthlens: …` on standard error with a non-zero exit status (no usage dump,
    /// no stack trace). `--help` still prints the full help.
    static func main() {
        do {
            var command = try parseAsRoot()
            try command.run()
        } catch {
            let code = exitCode(for: error)
            if code == .success {
                print(fullMessage(for: error))
                Foundation.exit(0)
            }
            let message = DepthLens.message(for: error)
            if !message.isEmpty {
                FileHandle.standardError.write(Data("depthlens: \(message)\n".utf8))
            }
            // A value ArgumentParser refuses (a bad --source, a word for a number) is bad input
            // like any other: exit 1, not EX_USAGE's 64.
            Foundation.exit(code.rawValue == 0 || code == .validationFailure ? 1 : code.rawValue)
        }
    }
}

/// "debug" or "release": what `--version` says, so tests know what they run against.
#if DEBUG
let buildConfiguration = "debug"
#else
let buildConfiguration = "release"
#endif

/// A line on standard error (progress, warnings), never mixed with results on standard output.
func warn(_ s: String) {
    FileHandle.standardError.write(Data("depthlens: \(s)\n".utf8))
}

/// Checks a number given on the command line.
func requireFinite(_ v: Float?, _ name: String, in range: ClosedRange<Float>? = nil) throws {
    guard let v else { return }
    guard v.isFinite else { throw DepthKitError.invalidArgument("\(name) must be a finite number, got \(v)") }
    if let range, !range.contains(v) {
        throw DepthKitError.invalidArgument("\(name) must be in \(range.lowerBound)…\(range.upperBound), got \(v)")
    }
}
