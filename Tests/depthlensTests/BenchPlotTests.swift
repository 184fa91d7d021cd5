import XCTest
import Foundation

/// `bench --plot`: a PNG from gnuplot when it is on PATH, one line saying how to get it when not.
final class BenchPlotTests: CLITestCase {
    private let args = ["bench", "--backend", "cpu", "--sizes", "32x24,16x8", "--kernels", "rosy,jet,highpass", "--iterations", "1"]

    func testPlotWritesAPNGWithGnuplot() throws {
        let gnuplot = ["/usr/bin/gnuplot", "/usr/local/bin/gnuplot"].first { FileManager.default.isExecutableFile(atPath: $0) }
        // scripts/test installs gnuplot-nox: without it this is a failure, not a skip.
        XCTAssertNotNil(gnuplot, "gnuplot is not installed (apt-get install gnuplot-nox)")
        guard gnuplot != nil else { return }
        let out = path("bench.png")
        let r = try CLI.run(args + ["--plot", out])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stdout.contains("highpass"), r.stdout)
        let png = try Data(contentsOf: URL(fileURLWithPath: out))
        XCTAssertEqual(Array(png.prefix(8)), [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A], "PNG signature")
        XCTAssertGreaterThan(png.count, 2000)
    }

    func testPlotWithoutGnuplotSaysHowToGetIt() throws {
        // A PATH with no gnuplot on it (the executable itself is run by its full path).
        let empty = path("empty-bin")
        try FileManager.default.createDirectory(atPath: empty, withIntermediateDirectories: true)
        let out = path("bench.png")
        let r = try CLI.run(args + ["--plot", out], environment: ["PATH": empty])
        XCTAssertNotEqual(r.status, 0)
        XCTAssertEqual(r.stderrLines.count, 1, r.stderr)
        XCTAssertTrue(r.stderr.contains("apt-get install gnuplot-nox"), r.stderr)
        XCTAssertEqual(r.stdout, "", "nothing timed before the check")
        XCTAssertFalse(FileManager.default.fileExists(atPath: out))
    }

    func testPlotToAnUnwritablePlaceFailsCleanly() throws {
        XCTAssertTrue(FileManager.default.isExecutableFile(atPath: "/usr/bin/gnuplot"), "gnuplot is not installed")
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/gnuplot") else { return }
        let out = path("no-such-dir/bench.png")
        let r = try CLI.run(args + ["--plot", out])
        XCTAssertNotEqual(r.status, 0)
        XCTAssertTrue(r.stderrLines.last?.contains(out) ?? false, r.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: out))
    }
}
