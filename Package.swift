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

/// Every target is in the Swift 6 language mode (complete concurrency checking); said explicitly
/// where a target has settings of its own to keep.
let swift6: [SwiftSetting] = [.swiftLanguageMode(.v6)]

let package = Package(
    name: "depthlens",
    platforms: [.macOS(.v15)],  // Synchronization.Mutex (Locked, BufferPool, LatestRequestWorker)
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
        /// Eclipse Cyclone DDS 0.10 (Debian's libddsc): ROS 2's middleware, for dds: sources and `publish`.
        /// Headers in /usr/include, linked as ddsc (its pkg-config file's only flag, -DDDS_NDEBUG, is one
        /// SwiftPM refuses from pkg-config; CDDS defines it).
        .systemLibrary(name: "CCycloneDDS", providers: [.apt(["cyclonedds-dev"])]),
        /// Raw-CDR topics over Cyclone DDS behind a `dl_dds_` C surface (a sertype whose samples are bytes).
        .target(name: "CDDS", dependencies: ["CCycloneDDS"],
                cSettings: [.headerSearchPath("include"), .define("DDS_NDEBUG")], linkerSettings: [.linkedLibrary("ddsc")]),
        /// The C half of DepthKit: the CPU kernels' loops, their worker pool, libpng/libjpeg behind setjmp.
        .target(
            name: "CDepthKit",
            cSettings: [.headerSearchPath("include")],
            linkerSettings: [.linkedLibrary("png16"), .linkedLibrary("jpeg")]
        ),
        /// glslang's C interface, for GPUKit alone (its static libraries need SPIRV-Tools and libstdc++).
        .target(name: "CGlslang", cSettings: [.headerSearchPath("include")], linkerSettings: glslangLinker),
        /// The C that Capture and the Viewer call: V4L2 ioctls, inotify, stop signals, lz4/bz2/zstd
        /// decompression and CRC-32 of recordings, the allocation counter, the readout lines.
        .target(
            name: "CPlatform",
            cSettings: [.headerSearchPath("include")],
            linkerSettings: [.linkedLibrary("v4l2"), .linkedLibrary("lz4"), .linkedLibrary("bz2"), .linkedLibrary("zstd"),
                             .linkedLibrary("z")]
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
        .target(name: "DepthKit", dependencies: ["CDepthKit"], swiftSettings: swift6),
        .target(name: "GPUKit", dependencies: ["DepthKit", "CDepthKit", "CGlslang", "CVulkan"], swiftSettings: swift6),
        .target(name: "Capture", dependencies: ["DepthKit", "CDepthKit", "CPlatform", "CMedia", "CSQLite", "CDDS"], swiftSettings: swift6),
        /// Test doubles for Capture (the scripted V4L2 kernel); used by tests and Fuzz/, never by the product.
        .target(name: "CaptureTesting", dependencies: ["Capture", "CPlatform"]),
        .target(name: "Viewer", dependencies: ["GPUKit", "Capture", "DepthKit", "CGLFW", "CVulkan", "CDepthKit", "CPlatform", "CImGui"]),
        .executableTarget(
            name: "depthlens",
            dependencies: ["Viewer", "GPUKit", "Capture", "DepthKit",
                           .product(name: "ArgumentParser", package: "swift-argument-parser")]
        ),
        /// What every test target shares (paths, a process runner with a deadline, the Python references,
        /// seeded random numbers, temporary folders); never part of the product.
        .target(name: "TestSupport", dependencies: ["DepthKit", "CDepthKit"], path: "Tests/TestSupport", swiftSettings: swift6),
        .testTarget(name: "CDepthKitTests", dependencies: ["TestSupport", "CDepthKit"], swiftSettings: swift6),
        .testTarget(name: "CPlatformTests", dependencies: ["TestSupport", "CPlatform"], swiftSettings: swift6),
        .testTarget(name: "DepthKitTests", dependencies: ["TestSupport", "DepthKit", "CDepthKit", "CPlatform"], swiftSettings: swift6),
        .testTarget(name: "GPUKitTests", dependencies: ["TestSupport", "GPUKit", "DepthKit", "CDepthKit", "CGlslang"], swiftSettings: swift6),
        .testTarget(name: "CaptureTests", dependencies: ["TestSupport", "Capture", "CaptureTesting", "DepthKit"], swiftSettings: swift6),
        .testTarget(name: "CaptureTestingTests", dependencies: ["TestSupport", "CaptureTesting", "Capture"], swiftSettings: swift6),
        .testTarget(name: "ViewerTests", dependencies: ["TestSupport", "Viewer", "CaptureTesting"], swiftSettings: swift6),
        .testTarget(name: "depthlensTests", dependencies: ["TestSupport", "DepthKit", "Capture"], swiftSettings: swift6),
    ],
    swiftLanguageModes: [.v6]
)
