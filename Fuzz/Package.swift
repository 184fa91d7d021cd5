// swift-tools-version:6.0
import Foundation
import PackageDescription

/// libFuzzer targets for depthlens' readers, kept out of the main package so `swift build` and
/// `swift test` never build them. Build and run with `scripts/fuzz [SECONDS]`.
/// The main package is a path dependency; its identity is its folder's name (a checkout may sit
/// in any folder), so the manifest reads it from its own location.
let root = URL(fileURLWithPath: Context.packageDirectory).deletingLastPathComponent()
let main = root.lastPathComponent.lowercased()

let package = Package(
    name: "depthlens-fuzz",
    dependencies: [.package(path: root.path)],
    targets: [
        .executableTarget(
            name: "depthlens-fuzz",
            dependencies: [.product(name: "DepthKit", package: main), .product(name: "Capture", package: main),
                           .product(name: "CaptureTesting", package: main)]
        ),
    ],
    swiftLanguageModes: [.v5]
)
