import DepthKit
import Foundation

/// `bench --plot FILE.png`: the bench table as a grouped bar chart (copy, CPU, GPU ms per kernel
/// and size), drawn by gnuplot.
enum BenchPlot {
    static let installHint = "bench --plot needs gnuplot, which is not on PATH: install it with `sudo apt-get install gnuplot-nox`"

    /// gnuplot's path on PATH, or an error saying how to get it (checked before timing anything).
    static func gnuplot() throws -> String {
        let dirs = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":")
        for dir in dirs {
            let path = "\(dir)/gnuplot"
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        throw DepthKitError.invalidArgument(installHint)
    }

    /// Draws `report` into `path` (PNG); nothing is left at `path` when gnuplot fails.
    static func draw(_ report: BenchReport, to path: String) throws {
        let exe = try gnuplot()
        let dir = FileManager.default.temporaryDirectory
            .appendingPathComponent("depthlens-plot-\(ProcessInfo.processInfo.processIdentifier)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let data = dir.appendingPathComponent("bench.dat")
        try table(report).write(to: data, atomically: true, encoding: .utf8)

        let proc = Process()
        proc.executableURL = URL(fileURLWithPath: exe)
        let input = Pipe(), errors = Pipe()
        proc.standardInput = input
        proc.standardError = errors
        proc.standardOutput = FileHandle.nullDevice
        try proc.run()
        input.fileHandleForWriting.write(Data(script(report, data: data.path, out: path).utf8))
        try input.fileHandleForWriting.close()
        let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        proc.waitUntilExit()
        let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
        guard proc.terminationStatus == 0, size > 0 else {
            try? FileManager.default.removeItem(atPath: path)
            let why = message.split(separator: "\n").last.map(String.init) ?? "gnuplot exited with status \(proc.terminationStatus)"
            throw DepthKitError.file(path: path, problem: "cannot draw the plot: \(why.trimmingCharacters(in: .whitespaces))")
        }
    }

    /// One row a kernel and size: label, copy, cpu, gpu ms ("-" when not measured).
    static func table(_ report: BenchReport) -> String {
        func v(_ x: Double?) -> String { x.map { String(format: "%.4f", $0) } ?? "-" }
        var lines = ["label copy cpu gpu"]
        for r in report.results {
            lines.append("\"\(r.kernel)\\n\(r.size)\" \(v(r.copy_ms)) \(v(r.cpu_ms)) \(v(r.gpu_ms))")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    static func script(_ report: BenchReport, data: String, out: String) -> String {
        let width = max(800, 90 * report.results.count + 200)
        func quoted(_ s: String) -> String { "'" + s.replacingOccurrences(of: "'", with: "''") + "'" }
        return """
        set terminal pngcairo size \(width),560 font 'sans,10'
        set output \(quoted(out))
        set title \(quoted("depthlens bench: ms per frame (lower is faster), device \(report.device)"))
        set ylabel 'ms'
        set style data histograms
        set style histogram clustered gap 1
        set style fill solid 0.85 border -1
        set boxwidth 0.9
        set datafile missing '-'
        set key autotitle columnhead top left
        set grid ytics
        set yrange [0:*]
        set xtics nomirror font 'sans,9'
        set bmargin 4
        plot \(quoted(data)) using 2:xtic(1) lc rgb '#9e9e9e', '' using 3 lc rgb '#1f77b4', '' using 4 lc rgb '#ff7f0e'

        """
    }
}
