// swift-tools-version:6.0
import PackageDescription

/// glslang ships static libraries only; they need SPIRV-Tools, the C++ runtime and libm.
/// `--no-as-needed` keeps the order-sensitive static archives resolvable from Swift's link line.
let glslangLinker: [LinkerSetting] = [
    .unsafeFlags(["-Xlinker", "--no-as-needed",
                  "-Xlinker", "--start-group",
                  "-lglslang", "-lglslang-default-resource-limits", "-lSPIRV", "-lMachineIndependent",
                  "-lOSDependent", "-lGenericCodeGen", "-lOGLCompiler",
                  "-lSPIRV-Tools-opt", "-lSPIRV-Tools",
                  "-Xlinker", "--end-group",
                  "-lstdc++", "-lm", "-lpthread"]),
]

let package = Package(
    name: "depthlens",
    platforms: [.macOS(.v13)],
    products: [
        .executable(name: "depthlens", targets: ["depthlens"]),
        /// For the fuzz targets in Fuzz/ (a separate package; see scripts/fuzz).
        .library(name: "DepthKit", targets: ["DepthKit"]),
        .library(name: "Capture", targets: ["Capture"]),
        .library(name: "CaptureTesting", targets: ["CaptureTesting"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
    ],
    targets: [
        .systemLibrary(name: "CVulkan", pkgConfig: "vulkan", providers: [.apt(["libvulkan-dev"])]),
        .systemLibrary(name: "CGLFW", pkgConfig: "glfw3", providers: [.apt(["libglfw3-dev"])]),
        /// rosbag2 `.db3` recordings (ros2: sources).
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        .target(
            name: "CShim",
            cSettings: [.headerSearchPath("include")],
            linkerSettings: [.linkedLibrary("png16"), .linkedLibrary("jpeg"), .linkedLibrary("v4l2"),
                             .linkedLibrary("lz4"), .linkedLibrary("bz2"), .linkedLibrary("zstd"),
                             .linkedLibrary("z")] + glslangLinker
        ),
        /// Dear ImGui's C++ API (Debian's libimgui.a, GLFW and Vulkan backends included) behind a `dl_` C surface.
        .target(
            name: "CImGui",
            cxxSettings: [.headerSearchPath("include"), .unsafeFlags(["-isystem", "/usr/include/imgui"])],
            linkerSettings: [.linkedLibrary("imgui"), .linkedLibrary("stb"), .linkedLibrary("glfw"),
                             .linkedLibrary("vulkan"), .linkedLibrary("stdc++")]
        ),
        /// libavformat / libavcodec / libswscale behind a `dl_` C surface (Matroska recordings: mkv sources).
        .target(
            name: "CMedia",
            cSettings: [.headerSearchPath("include")],
            linkerSettings: [.linkedLibrary("avformat"), .linkedLibrary("avcodec"), .linkedLibrary("avutil"),
                             .linkedLibrary("swscale")]
        ),
        .target(name: "DepthKit", dependencies: ["CShim"]),
        .target(name: "GPUKit", dependencies: ["DepthKit", "CShim", "CVulkan"]),
        .target(name: "Capture", dependencies: ["DepthKit", "CShim", "CMedia", "CSQLite"]),
        /// Test doubles for Capture (the scripted V4L2 kernel); used by tests and Fuzz/, never by the product.
        .target(name: "CaptureTesting", dependencies: ["Capture", "CShim"]),
        .target(name: "Viewer", dependencies: ["GPUKit", "Capture", "DepthKit", "CGLFW", "CVulkan", "CShim", "CImGui"]),
        .executableTarget(
            name: "depthlens",
            dependencies: ["Viewer", "GPUKit", "Capture", "DepthKit",
                           .product(name: "ArgumentParser", package: "swift-argument-parser")]
        ),
        /// What every test target shares (paths, a process runner with a deadline, the Python references,
        /// seeded random numbers, temporary folders); never part of the product.
        .target(name: "TestSupport", path: "Tests/TestSupport"),
        .testTarget(name: "CShimTests", dependencies: ["TestSupport", "CShim"]),
        .testTarget(name: "DepthKitTests", dependencies: ["TestSupport", "DepthKit"]),
        .testTarget(name: "GPUKitTests", dependencies: ["TestSupport", "GPUKit", "DepthKit", "CShim"]),
        .testTarget(name: "CaptureTests", dependencies: ["TestSupport", "Capture", "CaptureTesting", "DepthKit"]),
        .testTarget(name: "CaptureTestingTests", dependencies: ["TestSupport", "CaptureTesting", "Capture"]),
        .testTarget(name: "ViewerTests", dependencies: ["TestSupport", "Viewer", "CaptureTesting"]),
        .testTarget(name: "depthlensTests", dependencies: ["TestSupport", "DepthKit", "Capture"]),
    ],
    swiftLanguageModes: [.v5]
)
