import CDepthKit
import CGlslang
import DepthKit
import Foundation

/// SPIR-V for one shader file, with the files it was built from (for reloading).
public struct CompiledShader: Sendable {
    public let name: String
    public let code: [UInt32]
    /// Every file read (the shader and its `#include`s) with its modification date then.
    public let dependencies: [String: Date]
    /// True when the SPIR-V came from the on-disk cache rather than glslang.
    public let fromCache: Bool
}

/// The GLSL in the repository's `Shaders/` folder, compiled at run time with glslang to SPIR-V.
///
/// - Finds the folder wherever the binary runs from: `$DEPTHLENS_SHADERS`, then next to the
///   executable (`<exe>/Shaders`, `<exe>/../share/depthlens/Shaders`, `<exe>/../../Shaders`, …),
///   then the source tree (`#filePath`).
/// - Expands `#include "x.glsl"` itself (glslang's C API has no include callback), with `#line`
///   directives so errors name the right file and line: `Shaders/rosyEffect.comp:12: error: …`.
/// - Caches SPIR-V by a hash of the expanded source in `$XDG_CACHE_HOME/depthlens/spirv`
///   (else `~/.cache/depthlens/spirv`).
/// - Codes and sizes shared with Swift live in `dl_codes.h` (included by `common.glsl` here and
///   by CDepthKit's header for Swift and C): one definition for every side.
public final class ShaderLibrary: Sendable {
    public let directory: URL
    public let cacheDirectory: URL?
    private struct Counts { var compiles = 0, cacheHits = 0 }
    private let counts = Locked(Counts())

    /// glslang invocations so far (cache misses).
    public var compileCount: Int { counts.current.compiles }
    /// Shaders served from the disk cache so far.
    public var cacheHits: Int { counts.current.cacheHits }

    /// - Parameters:
    ///   - directory: the Shaders folder; nil searches (see the type's documentation).
    ///   - cacheDirectory: where SPIR-V is cached; nil disables the disk cache.
    public init(directory: URL? = nil, cacheDirectory: URL? = ShaderLibrary.defaultCacheDirectory()) throws {
        self.directory = try directory ?? ShaderLibrary.locateShaders()
        self.cacheDirectory = cacheDirectory
    }

    /// The library every renderer uses unless given another.
    public static func shared() throws -> ShaderLibrary {
        try sharedLibrary.withLock { shared in
            if let s = shared { return s }
            let s = try ShaderLibrary()
            shared = s
            return s
        }
    }
    private static let sharedLibrary = Locked<ShaderLibrary?>(nil)

    /// `$XDG_CACHE_HOME/depthlens/spirv`, else `~/.cache/depthlens/spirv`.
    public static func defaultCacheDirectory() -> URL? {
        let env = ProcessInfo.processInfo.environment
        if let x = env["XDG_CACHE_HOME"], !x.isEmpty {
            return URL(fileURLWithPath: x).appendingPathComponent("depthlens/spirv")
        }
        if let h = env["HOME"], !h.isEmpty {
            return URL(fileURLWithPath: h).appendingPathComponent(".cache/depthlens/spirv")
        }
        return nil
    }

    /// Folders searched for `common.glsl`, in order.
    public static func searchPaths() -> [URL] {
        var paths: [URL] = []
        if let d = ProcessInfo.processInfo.environment["DEPTHLENS_SHADERS"], !d.isEmpty {
            paths.append(URL(fileURLWithPath: d))
        }
        let exe = URL(fileURLWithPath: (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
                      ?? CommandLine.arguments.first ?? ".").deletingLastPathComponent()
        for rel in ["Shaders", "../share/depthlens/Shaders", "share/depthlens/Shaders", "../Shaders",
                    "../../Shaders", "../../../Shaders"] {
            paths.append(exe.appendingPathComponent(rel).standardizedFileURL)
        }
        // Sources/GPUKit/ShaderLibrary.swift → <repo>/Shaders
        paths.append(URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Shaders"))
        return paths
    }

    public static func locateShaders() throws -> URL {
        let paths = searchPaths()
        for p in paths where FileManager.default.fileExists(atPath: p.appendingPathComponent("common.glsl").path) {
            return p
        }
        throw GPUError.shaderNotFound(name: "common.glsl", searched: paths.map(\.path))
    }

    /// The SPIR-V of `name` (`rosyEffect.comp`), from the cache or compiled now.
    ///
    /// A variant of a file is named `file.comp:NAME,NAME2`: the file compiled with `#define NAME 1`
    /// (and NAME2) after its `#version` line, so one source serves a plain shader and the variants
    /// that add work only when asked (the point renderer's eye-dome lighting and adaptive size).
    public func shader(named name: String) throws -> CompiledShader {
        var deps: [String: Date] = [:]
        let variant = Self.variant(name)
        let source = try expand(variant.file, depth: 0, defines: variant.defines, dependencies: &deps)
        let stage = try Self.stage(of: variant.file)
        let hash = Self.fnv1a(source + "\n//stage \(stage.rawValue) glslang-c vk1.1 spv1.3")
        let cacheFile = cacheDirectory?.appendingPathComponent(String(format: "%016llx.spv", hash))
        if let cacheFile, let data = try? Data(contentsOf: cacheFile), data.count >= 20, data.count % 4 == 0 {
            let words = data.withUnsafeBytes { Array($0.bindMemory(to: UInt32.self)) }
            if words[0] == 0x0723_0203 {
                counts.withLock { $0.cacheHits += 1 }
                return CompiledShader(name: name, code: words, dependencies: deps, fromCache: true)
            }
        }
        let code = try Self.compile(source, stage: stage, displayName: "Shaders/\(name)")
        counts.withLock { $0.compiles += 1 }
        if let cacheFile {
            try? FileManager.default.createDirectory(at: cacheFile.deletingLastPathComponent(), withIntermediateDirectories: true)
            let tmp = cacheFile.appendingPathExtension("tmp\(getpid())")
            let data = code.withUnsafeBytes { Data($0) }
            if (try? data.write(to: tmp)) != nil {
                if rename(tmp.path, cacheFile.path) != 0 { try? FileManager.default.removeItem(at: tmp) }
            }
        }
        return CompiledShader(name: name, code: code, dependencies: deps, fromCache: false)
    }

    /// True when a dependency of `shader` changed on disk (or vanished) since it was built.
    public func isStale(_ shader: CompiledShader) -> Bool {
        shader.dependencies.contains { path, date in Self.modificationDate(path) != date }
    }

    static func modificationDate(_ path: String) -> Date? {
        (try? FileManager.default.attributesOfItem(atPath: path))?[.modificationDate] as? Date
    }

    /// `file.comp:A,B` → the file and the names it defines (none for a plain name).
    static func variant(_ name: String) -> (file: String, defines: [Substring]) {
        guard let colon = name.firstIndex(of: ":") else { return (name, []) }
        return (String(name[..<colon]), name[name.index(after: colon)...].split(separator: ","))
    }

    /// The source of `name` with includes expanded and `#line` directives naming the files;
    /// `defines` follow the top file's `#version` line.
    private func expand(_ name: String, depth: Int, defines: [Substring] = [],
                        dependencies: inout [String: Date]) throws -> String {
        let url = directory.appendingPathComponent(name)
        guard let text = try? String(contentsOf: url, encoding: .utf8) else {
            throw GPUError.shaderNotFound(name: name, searched: [directory.path])
        }
        dependencies[url.path] = Self.modificationDate(url.path)
        let display = "Shaders/\(name)"
        var out: [String] = []
        for (i, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let lineNo = i + 1
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix("#include") {
                guard depth < 8, let open = trimmed.firstIndex(of: "\""), let close = trimmed.lastIndex(of: "\""), open < close else {
                    throw GPUError.shaderCompile("\(display):\(lineNo): error: bad #include (use #include \"file.glsl\", at most 8 deep)")
                }
                let inc = String(trimmed[trimmed.index(after: open)..<close])
                out.append("#line 1 \"Shaders/\(inc)\"")
                out.append(try expand(inc, depth: depth + 1, dependencies: &dependencies))
                out.append("#line \(lineNo + 1) \"\(display)\"")
            } else if depth == 0 && trimmed.hasPrefix("#version") {
                out.append(String(line))
                out.append("#extension GL_GOOGLE_cpp_style_line_directive : require")
                for d in defines { out.append("#define \(d) 1") }
                out.append("#line \(lineNo + 1) \"\(display)\"")
            } else if trimmed.hasPrefix("#extension GL_GOOGLE_include_directive") {
                out.append("")  // includes are expanded here; keep the line count
            } else {
                out.append(String(line))
            }
        }
        return out.joined(separator: "\n")
    }

    static func stage(of name: String) throws -> glslang_stage_t {
        if name.hasSuffix(".comp") { return GLSLANG_STAGE_COMPUTE }
        if name.hasSuffix(".vert") { return GLSLANG_STAGE_VERTEX }
        if name.hasSuffix(".frag") { return GLSLANG_STAGE_FRAGMENT }
        throw GPUError.shaderCompile("\(name): unknown shader stage (use .comp, .vert or .frag)")
    }

    /// Whether `glslang_initialize_process` ran; its lock is held around every glslang call.
    private static let glslangReady = Locked(false)

    /// GLSL → SPIR-V. Vulkan 1.1 / SPIR-V 1.3 targets run on every Vulkan 1.1 device.
    /// glslang: `glslang_shader_preprocess`, `_parse`, `glslang_program_link`, `_SPIRV_generate`.
    static func compile(_ source: String, stage: glslang_stage_t, displayName: String) throws -> [UInt32] {
        try glslangReady.withLock { ready in
            if !ready { _ = glslang_initialize_process(); ready = true }
            return try source.withCString { code in
                var input = glslang_input_t()
                input.language = GLSLANG_SOURCE_GLSL
                input.stage = stage
                input.client = GLSLANG_CLIENT_VULKAN
                input.client_version = GLSLANG_TARGET_VULKAN_1_1
                input.target_language = GLSLANG_TARGET_SPV
                input.target_language_version = GLSLANG_TARGET_SPV_1_3
                input.code = code
                input.default_version = 450
                input.default_profile = GLSLANG_NO_PROFILE
                input.force_default_version_and_profile = 0
                input.forward_compatible = 0
                let messages = GLSLANG_MSG_DEFAULT_BIT.rawValue | GLSLANG_MSG_SPV_RULES_BIT.rawValue | GLSLANG_MSG_VULKAN_RULES_BIT.rawValue
                input.messages = glslang_messages_t(rawValue: messages)
                input.resource = glslang_default_resource()
                guard let shader = glslang_shader_create(&input) else {
                    throw GPUError.shaderCompile("\(displayName): error: glslang could not create a shader")
                }
                defer { glslang_shader_delete(shader) }
                if glslang_shader_preprocess(shader, &input) == 0 || glslang_shader_parse(shader, &input) == 0 {
                    throw GPUError.shaderCompile(formatLog(glslang_shader_get_info_log(shader), displayName: displayName))
                }
                guard let program = glslang_program_create() else {
                    throw GPUError.shaderCompile("\(displayName): error: glslang could not create a program")
                }
                defer { glslang_program_delete(program) }
                glslang_program_add_shader(program, shader)
                if glslang_program_link(program, Int32(messages)) == 0 {
                    throw GPUError.shaderCompile(formatLog(glslang_program_get_info_log(program), displayName: displayName))
                }
                glslang_program_SPIRV_generate(program, stage)
                let n = glslang_program_SPIRV_get_size(program)
                guard n > 0 else { throw GPUError.shaderCompile("\(displayName): error: no SPIR-V generated") }
                var words = [UInt32](repeating: 0, count: n)
                glslang_program_SPIRV_get(program, &words)
                return words
            }
        }
    }

    /// glslang's `ERROR: Shaders/x.comp:12: 'foo' : undeclared identifier` → `Shaders/x.comp:12: error: 'foo' : undeclared identifier`.
    static func formatLog(_ log: UnsafePointer<CChar>?, displayName: String) -> String {
        let text = log.map { String(cString: $0) } ?? ""
        var lines: [String] = []
        for raw in text.split(separator: "\n") {
            let line = raw.trimmingCharacters(in: .whitespaces)
            let kind: String
            let rest: Substring
            if line.hasPrefix("ERROR: ") { kind = "error"; rest = line.dropFirst(7) }
            else if line.hasPrefix("WARNING: ") { kind = "warning"; rest = line.dropFirst(9) }
            else { continue }
            // "<file>:<line>: message" or "0:<line>: message" or a bare message
            let parts = rest.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
            if parts.count == 3, Int(parts[1]) != nil {
                let file = Int(parts[0]) != nil ? displayName : String(parts[0])
                let msg = parts[2].trimmingCharacters(in: .whitespaces)
                if msg.hasSuffix("compilation terminated") { continue }
                lines.append("\(file):\(parts[1]): \(kind): \(msg)")
            } else if !rest.contains("compilation errors") {
                lines.append("\(displayName): \(kind): \(rest)")
            }
        }
        return lines.isEmpty ? "\(displayName): error: compilation failed" : lines.joined(separator: "\n")
    }

    static func fnv1a(_ s: String) -> UInt64 {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in s.utf8 { h = (h ^ UInt64(b)) &* 0x0000_0100_0000_01B3 }
        return h
    }
}
