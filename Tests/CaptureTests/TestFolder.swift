import XCTest
import Foundation
import DepthKit

/// A temporary folder removed at the end of the test.
func makeTemporaryDirectory(_ test: XCTestCase) throws -> String {
    let dir = NSTemporaryDirectory() + "capture-tests-" + UUID().uuidString
    try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    test.addTeardownBlock { try? FileManager.default.removeItem(atPath: dir) }
    return dir
}

/// Writes a small TUM folder whose frame i has color (10·i, 100, 200) everywhere and depth
/// (i + 1) meters, at the given color timestamps; returns its path.
func writeTUMFolder(_ test: XCTestCase, timestamps: [Double], width: Int = 8, height: Int = 6) throws -> String {
    let dir = try makeTemporaryDirectory(test) + "/seq"
    let writer = try TUMWriter(directory: dir)
    for (i, t) in timestamps.enumerated() {
        let color = PixelBuffer(width: width, height: height, format: .rgba8)
        let depth = PixelBuffer(width: width, height: height, format: .depthFloat32)
        for y in 0..<height {
            for x in 0..<width {
                color.setRGBA(x: x, y: y, (UInt8(10 * i), 100, 200, 255))
                depth.setSample(x: x, y: y, Float(i + 1))
            }
        }
        try writer.append(RGBDFrame(color: color, depth: DepthData(map: depth), timestamp: t))
    }
    try writer.finish()
    return dir
}
