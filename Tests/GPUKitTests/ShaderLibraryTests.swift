import XCTest
import CDepthKit
import DepthKit
@testable import GPUKit

final class ShaderLibraryTests: GPUTestCase {
    private var tmp: URL!

    override func setUpWithError() throws {
        try super.setUpWithError()
        tmp = FileManager.default.temporaryDirectory.appendingPathComponent("dl-shaders-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: tmp.appendingPathComponent("Shaders"), withIntermediateDirectories: true)
        let real = try ShaderLibrary.locateShaders()
        for f in try FileManager.default.contentsOfDirectory(atPath: real.path) {
            try FileManager.default.copyItem(at: real.appendingPathComponent(f), to: tmp.appendingPathComponent("Shaders/\(f)"))
        }
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: tmp)
        try super.tearDownWithError()
    }

    var shaders: URL { tmp.appendingPathComponent("Shaders") }

    func testFindsRepositoryShadersAndReadsSharedConstants() throws {
        let lib = try ShaderLibrary(cacheDirectory: nil)
        XCTAssertTrue(FileManager.default.fileExists(atPath: lib.directory.appendingPathComponent("rosyEffect.comp").path))
        // The dl_codes.h the shaders include at run time has the values Swift was compiled with.
        let header = try String(contentsOf: lib.directory.appendingPathComponent("dl_codes.h"), encoding: .utf8)
        var defines: [String: UInt32] = [:]
        for line in header.split(separator: "\n") {
            let parts = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            if parts.count >= 3, parts[0] == "#define", let v = UInt32(parts[2].filter { $0 != "u" }) { defines[String(parts[1])] = v }
        }
        let swift: [String: UInt32] = [
            "DL_LOCAL_SIZE_X": UInt32(DL_LOCAL_SIZE_X), "DL_LOCAL_SIZE_Y": UInt32(DL_LOCAL_SIZE_Y), "DL_SCAN_SIZE": UInt32(DL_SCAN_SIZE),
            "DL_PIXELS_PER_INVOCATION": UInt32(DL_PIXELS_PER_INVOCATION), "DL_REDUCE_SIZE": UInt32(DL_REDUCE_SIZE),
            "DL_REDUCE_ROWS": UInt32(DL_REDUCE_ROWS), "DL_HISTOGRAM_RUN": UInt32(DL_HISTOGRAM_RUN),
            "DL_RUN_GROUP_X": UInt32(DL_RUN_GROUP_X), "DL_RUN_GROUP_Y": UInt32(DL_RUN_GROUP_Y),
            "DL_POINT_GROUP": UInt32(DL_POINT_GROUP), "DL_POINTS_PER_INVOCATION": UInt32(DL_POINTS_PER_INVOCATION),
            "DL_COLORMAP_JET": DL_COLORMAP_JET, "DL_COLORMAP_TURBO": DL_COLORMAP_TURBO, "DL_COLORMAP_VIRIDIS": DL_COLORMAP_VIRIDIS,
            "DL_COLORMAP_GRAYSCALE": DL_COLORMAP_GRAYSCALE, "DL_MASK_HIGHPASS": DL_MASK_HIGHPASS, "DL_MASK_BANDPASS": DL_MASK_BANDPASS,
            "DL_COLOR_BY_COLOR": DL_COLOR_BY_COLOR, "DL_COLOR_BY_DEPTH": DL_COLOR_BY_DEPTH, "DL_COLOR_BY_HEIGHT": DL_COLOR_BY_HEIGHT,
            "DL_POINT_FIELD_MASK": DL_POINT_FIELD_MASK, "DL_POINT_SOURCE_SHIFT": DL_POINT_SOURCE_SHIFT,
            "DL_POINT_SOURCE_DEPTH": DL_POINT_SOURCE_DEPTH, "DL_POINT_SOURCE_BUFFER": DL_POINT_SOURCE_BUFFER,
            "DL_POINT_COLOR_BY_SHIFT": DL_POINT_COLOR_BY_SHIFT, "DL_POINT_COLORMAP_SHIFT": DL_POINT_COLORMAP_SHIFT,
            "DL_POINT_STRIDE_SHIFT": DL_POINT_STRIDE_SHIFT, "DL_POINT_NEAREST_PIXEL_BIT": DL_POINT_NEAREST_PIXEL_BIT,
        ]
        XCTAssertEqual(defines, swift)
        setenv("DEPTHLENS_SHADERS", shaders.path, 1)
        defer { unsetenv("DEPTHLENS_SHADERS") }
        XCTAssertEqual(try ShaderLibrary.locateShaders().standardizedFileURL.path, shaders.standardizedFileURL.path)
    }

    func testEveryShaderCompilesAndIsCachedOnDisk() throws {
        let cache = tmp.appendingPathComponent("cache")
        let lib = try ShaderLibrary(directory: shaders, cacheDirectory: cache)
        let names = try FileManager.default.contentsOfDirectory(atPath: shaders.path).filter { !$0.hasSuffix(".glsl") && !$0.hasSuffix(".h") }
        for n in names { XCTAssertEqual(try lib.shader(named: n).code.first, 0x0723_0203, n) }
        XCTAssertEqual(lib.compileCount, names.count)
        let again = try ShaderLibrary(directory: shaders, cacheDirectory: cache)
        for n in names { XCTAssertTrue(try again.shader(named: n).fromCache) }
        XCTAssertEqual(again.compileCount, 0)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: cache.path).filter { $0.hasSuffix(".spv") }.count, names.count)
    }

    func testCompileErrorNamesFileAndLine() throws {
        let lib = try ShaderLibrary(directory: shaders, cacheDirectory: nil)
        let src = "#version 450\n#include \"common.glsl\"\nlayout(local_size_x = 1) in;\nvoid main() {\n    undeclaredThing = 1;\n}\n"
        try src.write(to: shaders.appendingPathComponent("broken.comp"), atomically: true, encoding: .utf8)
        XCTAssertThrowsError(try lib.shader(named: "broken.comp")) { e in
            XCTAssertTrue("\(e)".hasPrefix("Shaders/broken.comp:5: error:"), "\(e)")
            XCTAssertTrue("\(e)".contains("undeclaredThing"), "\(e)")
        }
        // An error inside an included file names that file.
        try "#version 450\n#include \"bad.glsl\"\nvoid main() {}\n".write(to: shaders.appendingPathComponent("inc.comp"), atomically: true, encoding: .utf8)
        try "float f() {\n  return nope;\n}\n".write(to: shaders.appendingPathComponent("bad.glsl"), atomically: true, encoding: .utf8)
        XCTAssertThrowsError(try lib.shader(named: "inc.comp")) { e in
            XCTAssertTrue("\(e)".hasPrefix("Shaders/bad.glsl:2: error:"), "\(e)")
        }
    }

    func testVariantNameDefinesItsNamesAfterVersionAndKeepsLineNumbers() throws {
        let lib = try ShaderLibrary(directory: shaders, cacheDirectory: nil)
        let src = "#version 450\nlayout(local_size_x = 1) in;\n#if !defined(DL_A) || !defined(DL_B)\n"
            + "#error DL_A and DL_B wanted\n#endif\nvoid main() {\n#ifdef DL_C\n    undeclaredThing = 1;\n#endif\n}\n"
        try src.write(to: shaders.appendingPathComponent("variant.comp"), atomically: true, encoding: .utf8)
        XCTAssertThrowsError(try lib.shader(named: "variant.comp")) { e in
            XCTAssertTrue("\(e)".hasPrefix("Shaders/variant.comp:4: error:"), "\(e)")
        }
        XCTAssertThrowsError(try lib.shader(named: "variant.comp:DL_A"))
        let both = try lib.shader(named: "variant.comp:DL_A,DL_B")
        XCTAssertEqual(both.code.first, 0x0723_0203)
        XCTAssertThrowsError(try lib.shader(named: "variant.comp:DL_A,DL_B,DL_C")) { e in
            XCTAssertTrue("\(e)".hasPrefix("Shaders/variant.comp:8: error:"), "\(e)")
        }
        // The point renderer's variants compile, and differ from the plain shader.
        let plain = try lib.shader(named: "pointCloudResolve.comp").code
        for v in ["DL_RESOLVE_ADAPTIVE", "DL_RESOLVE_EDL", "DL_RESOLVE_ADAPTIVE,DL_RESOLVE_EDL"] {
            XCTAssertNotEqual(try lib.shader(named: "pointCloudResolve.comp:" + v).code, plain, v)
        }
        XCTAssertNotEqual(try lib.shader(named: "pointCloudProject.comp:DL_POINTS_ADAPTIVE").code,
                          try lib.shader(named: "pointCloudProject.comp").code)
    }

    func testReloadSwapsPipelineAndKeepsOldOnError() throws {
        let lib = try ShaderLibrary(directory: shaders, cacheDirectory: nil)
        let factory = try GPUFilterFactory(context: context, library: lib)
        factory.watchesShaders = true
        let f = try factory.makeGPUFilter(.rosy)
        let input = Inputs.color(5, 3)
        try f.prepare(input: input.frameFormat, outputRetainedBufferCountHint: 1)
        XCTAssertTrue(try f.render(input).rgba(x: 0, y: 0).1 == 0)

        let file = shaders.appendingPathComponent("rosyEffect.comp")
        let original = try String(contentsOf: file, encoding: .utf8)
        // Edit: green becomes 1.0 instead of 0.
        try original.replacingOccurrences(of: "vec4(c.r, 0.0, c.b, 1.0)", with: "vec4(c.r, 1.0, c.b, 1.0)")
            .write(to: file, atomically: true, encoding: .utf8)
        try touch(file, secondsAhead: 2)
        XCTAssertTrue(f.kernels[0].reloadIfNeeded(force: true))
        XCTAssertTrue(try f.render(input).rgba(x: 0, y: 0).1 == 255)
        XCTAssertNil(f.lastShaderError)

        // A broken edit: the last good pipeline keeps running and the error is exposed.
        try (original + "\nthis is not glsl\n").write(to: file, atomically: true, encoding: .utf8)
        try touch(file, secondsAhead: 4)
        XCTAssertFalse(f.kernels[0].reloadIfNeeded(force: true))
        XCTAssertTrue("\(f.lastShaderError.map { "\($0)" } ?? "")".hasPrefix("Shaders/rosyEffect.comp:"))
        XCTAssertTrue(try f.render(input).rgba(x: 0, y: 0).1 == 255)
    }

    private func touch(_ url: URL, secondsAhead: Double) throws {
        try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(secondsAhead)], ofItemAtPath: url.path)
    }
}
