import XCTest
import Foundation
import TestSupport

/// Tests/Fixtures/realsense-d435-640x480.bag (librealsense's single_depth_color_640x480.bag).
let fixtureBag = Repo.fixture("realsense-d435-640x480.bag")
let referenceScript = Repo.fixture("rosbag_reference.py")

struct ReferenceFailure: Error, CustomStringConvertible { let description: String }

/// Runs Tests/Fixtures/rosbag_reference.py with /usr/bin/python3 (Debian's python3-rosbag and
/// python3-roslz4 are the independent reference). Missing packages fail the test, never skip it.
func runReference(_ args: [String]) throws {
    let python = "/usr/bin/python3"
    guard FileManager.default.isExecutableFile(atPath: python) else {
        throw ReferenceFailure(description: "\(python) is missing: install python3-rosbag and python3-roslz4 (scripts/test installs them)")
    }
    let r = try TestProcess.result(python, [referenceScript] + args, timeout: 600)
    guard r.status == 0 else {
        let text = r.stderr
        if text.contains("No module named 'rosbag'") || text.contains("roslz4") {
            throw ReferenceFailure(description: "python3-rosbag / python3-roslz4 are not installed: apt-get install python3-rosbag python3-roslz4 "
                                   + "(scripts/test installs them). \(text)")
        }
        throw ReferenceFailure(description: "rosbag_reference.py \(args.joined(separator: " ")) failed: \(text)")
    }
}

/// What python3-rosbag decodes from a bag (`rosbag_reference.py dump`).
struct BagReference {
    let dir: String
    let json: [String: Any]

    init(bag: String, test: XCTestCase) throws {
        dir = try makeTemporaryDirectory(test)
        try runReference(["dump", bag, dir])
        let data = try Data(contentsOf: URL(fileURLWithPath: dir + "/reference.json"))
        json = try JSONSerialization.jsonObject(with: data) as! [String: Any]
    }

    var messages: [[String: Any]] { json["messages"] as! [[String: Any]] }
    var images: [[String: Any]] { json["images"] as! [[String: Any]] }
    var connections: [[String: Any]] { json["connections"] as! [[String: Any]] }
    var cameraInfo: [String: [String: Any]] { json["camera_info"] as! [String: [String: Any]] }
    var tf: [String: [String: Any]] { json["tf"] as! [String: [String: Any]] }
    var deviceInfo: [String: String] { json["device_info"] as! [String: String] }
    var options: [String: Double] { (json["options"] as! [String: String]).mapValues { Double($0)! } }

    /// The data bytes of the N-th image message.
    func imageData(_ n: Int) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: URL(fileURLWithPath: "\(dir)/image-\(n).raw")))
    }
}

func int(_ v: Any?) -> Int { (v as! NSNumber).intValue }
func uint64(_ v: Any?) -> UInt64 { (v as! NSNumber).uint64Value }
/// Floats come as repr text from the reference (exact; JSONSerialization's number parsing is not).
func double(_ v: Any?) -> Double { Double(v as! String)! }
func doubles(_ v: Any?) -> [Double] { (v as! [String]).map { Double($0)! } }

/// A copy of `src` in `dir` with `change` applied to its bytes.
func modifiedCopy(_ src: String, in dir: String, name: String, _ change: (inout [UInt8]) -> Void) throws -> String {
    var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: src)))
    change(&bytes)
    let path = dir + "/" + name
    try Data(bytes).write(to: URL(fileURLWithPath: path))
    return path
}

/// Every offset of `needle` in `bytes`.
func offsets(of needle: String, in bytes: [UInt8]) -> [Int] {
    let n = Array(needle.utf8)
    guard bytes.count >= n.count else { return [] }
    return (0...(bytes.count - n.count)).filter { i in bytes[i] == n[0] && Array(bytes[i..<(i + n.count)]) == n }
}
