import XCTest
import Foundation
@testable import DepthKit

/// A fresh temporary directory for one test, removed afterwards.
final class TempDir {
    let path: String
    init() {
        path = NSTemporaryDirectory() + "depthlens-test-\(getpid())-\(UUID().uuidString)"
        try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }
    deinit { try? FileManager.default.removeItem(atPath: path) }
    func file(_ name: String) -> String { path + "/" + name }
    func write(_ name: String, _ bytes: [UInt8]) -> String {
        let p = file(name)
        _ = FileManager.default.createFile(atPath: p, contents: Data(bytes))
        return p
    }
    /// Every entry in the directory, hidden temporaries included.
    var contents: [String] { ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).sorted() }
}

/// Asserts that `body` throws `DepthKitError.file` whose problem contains `fragment`.
func XCTAssertFileError<T>(_ body: @autoclosure () throws -> T, path: String? = nil, _ fragment: String,
                           file: StaticString = #filePath, line: UInt = #line) {
    XCTAssertThrowsError(try body(), file: file, line: line) { error in
        guard case let DepthKitError.file(p, problem) = error else {
            return XCTFail("expected a file error, got \(error)", file: file, line: line)
        }
        XCTAssertTrue(problem.contains(fragment), "'\(problem)' does not contain '\(fragment)'", file: file, line: line)
        if let path { XCTAssertEqual(p, path, file: file, line: line) }
    }
}

func makeBuffer(_ w: Int, _ h: Int, _ format: PixelFormat, seed: Int = 1) -> PixelBuffer {
    let b = PixelBuffer(width: w, height: h, format: format)
    var s = UInt64(seed) &* 6364136223846793005 &+ 1442695040888963407
    for y in 0..<h {
        let r = b.row(y, as: UInt8.self)
        for i in 0..<(w * format.bytesPerPixel) {
            s = s &* 6364136223846793005 &+ 1442695040888963407
            r[i] = UInt8(truncatingIfNeeded: s >> 33)
        }
    }
    return b
}

func floatMap(_ w: Int, _ h: Int, _ f: (Int, Int) -> Float, format: PixelFormat = .depthFloat32) -> PixelBuffer {
    let b = PixelBuffer(width: w, height: h, format: format)
    for y in 0..<h { for x in 0..<w { b.row(y, as: Float.self)[x] = f(x, y) } }
    return b
}
