import XCTest
import Foundation
import DepthKit
@testable import Capture
import CaptureTesting

/// A fake `/sys/class/thermal`: zones with temperatures and trip points in millidegrees.
func writeThermalTree(_ test: XCTestCase, zones: [(type: String, milli: String?, trips: [(String, Int)])]) throws -> String {
    let dir = try makeTemporaryDirectory(test) + "/thermal"
    for (i, z) in zones.enumerated() {
        let zd = "\(dir)/thermal_zone\(i)"
        try FileManager.default.createDirectory(atPath: zd, withIntermediateDirectories: true)
        try (z.type + "\n").write(toFile: zd + "/type", atomically: true, encoding: .utf8)
        if let m = z.milli { try (m + "\n").write(toFile: zd + "/temp", atomically: true, encoding: .utf8) }
        for (k, t) in z.trips.enumerated() {
            try (t.0 + "\n").write(toFile: zd + "/trip_point_\(k)_type", atomically: true, encoding: .utf8)
            try "\(t.1)\n".write(toFile: zd + "/trip_point_\(k)_temp", atomically: true, encoding: .utf8)
        }
    }
    // Not a zone: cooling devices live in the same folder.
    try FileManager.default.createDirectory(atPath: dir + "/cooling_device0", withIntermediateDirectories: true)
    return dir
}

final class ThermalTests: XCTestCase {
    func testStatesFollowTheZonesOwnTripPoints() throws {
        let trips = [("active", 60_000), ("passive", 90_000), ("critical", 105_000)]
        func state(_ milli: Int) throws -> ThermalState {
            ThermalZones.read(directory: try writeThermalTree(self, zones: [("x86_pkg_temp", "\(milli)", trips)])).state
        }
        // The active (fan) trip does not count; fair from passive − 10, serious at passive, critical at critical.
        XCTAssertEqual(try state(65_000), .nominal)
        XCTAssertEqual(try state(80_000), .fair)
        XCTAssertEqual(try state(90_000), .serious)
        XCTAssertEqual(try state(104_999), .serious)
        XCTAssertEqual(try state(105_000), .critical)
        // A hot trip below critical is where critical starts.
        let hot = try writeThermalTree(self, zones: [("acpitz", "97000", [("passive", 90_000), ("hot", 95_000), ("critical", 110_000)])])
        XCTAssertEqual(ThermalZones.read(directory: hot).state, .critical)
    }

    func testMissingTripsFallBack() throws {
        // Critical only: serious 10 °C below it.
        let crit = try writeThermalTree(self, zones: [("cpu-thermal", "76000", [("critical", 85_000)])])
        XCTAssertEqual(ThermalZones.read(directory: crit).state, .serious)
        XCTAssertEqual(ThermalZones.read(directory: crit).zones[0].thresholds, [65, 75, 85])
        // No trips (or only disabled ones at 0): the fixed 70 / 85 / 95 °C.
        let none = try writeThermalTree(self, zones: [("soc", "72000", [("passive", 0)])])
        let r = ThermalZones.read(directory: none)
        XCTAssertEqual(r.zones[0].trips, [])
        XCTAssertEqual(r.zones[0].thresholds, [70, 85, 95])
        XCTAssertEqual(r.state, .fair)
    }

    func testWorstZoneWinsAndUnreadableZonesAreNamed() throws {
        let dir = try writeThermalTree(self, zones: [
            ("acpitz", "40000", [("critical", 100_000)]),
            ("x86_pkg_temp", "91000", [("passive", 90_000)]),
            ("broken", nil, []),
            ("garbage", "hot", []),
        ])
        let r = ThermalZones.read(directory: dir)
        XCTAssertEqual(r.state, .serious)
        XCTAssertEqual(r.zones.map(\.name), ["thermal_zone0", "thermal_zone1"])
        XCTAssertEqual(r.zones[1].celsius, 91)
        XCTAssertEqual(r.problems.count, 2)
        XCTAssertTrue(r.problems[0].contains("thermal_zone2"), r.problems[0])
        XCTAssertEqual(r.summary, "serious (x86_pkg_temp 91 °C)")
    }

    func testAbsentZonesAreUnknownAndSaidOnce() throws {
        let empty = try makeTemporaryDirectory(self)
        XCTAssertEqual(ThermalZones.read(directory: empty).state, .unknown)
        XCTAssertEqual(ThermalZones.read(directory: empty + "/nope").state, .unknown)
        let m = ThermalMonitor(directory: empty + "/nope", interval: 1)
        let first = try XCTUnwrap(m.poll(now: 100))
        XCTAssertEqual(first.newProblems.count, 1)
        XCTAssertNil(m.poll(now: 100.5), "once a second")
        let second = try XCTUnwrap(m.poll(now: 101))
        XCTAssertEqual(second.newProblems, [], "a problem is said once")
        XCTAssertEqual(second.reading.state, .unknown)
    }

    func testMonitorSeesTheTemperatureChange() throws {
        let dir = try writeThermalTree(self, zones: [("x86_pkg_temp", "50000", [("passive", 90_000), ("critical", 100_000)])])
        let m = ThermalMonitor(directory: dir, interval: 1)
        XCTAssertEqual(m.poll(now: 0)?.reading.state, .nominal)
        try "100000\n".write(toFile: dir + "/thermal_zone0/temp", atomically: true, encoding: .utf8)
        XCTAssertEqual(m.poll(now: 1)?.reading.state, .critical)
    }

    func testEnvironmentOverridesTheDirectory() {
        // The default reads DEPTHLENS_THERMAL_DIR when set (the CLI test sets it for the child process).
        if let d = ProcessInfo.processInfo.environment["DEPTHLENS_THERMAL_DIR"], !d.isEmpty {
            XCTAssertEqual(ThermalZones.defaultDirectory, d)
        } else {
            XCTAssertEqual(ThermalZones.defaultDirectory, "/sys/class/thermal")
        }
    }
}

final class DepthRateTests: XCTestCase {
    func testGateKeepsEverySecondFrameOf30At15() {
        var g = DepthRateGate(limit: 15)
        let admitted = (0..<8).map { g.admits(timestamp: Double($0) / 30 + ($0 == 4 ? 0.002 : 0)) }
        XCTAssertEqual(admitted, [true, false, true, false, true, false, true, false])
        XCTAssertTrue(g.admits(timestamp: 0), "time going back (seek, loop) admits")
        g.limit = nil
        XCTAssertTrue((0..<4).allSatisfy { g.admits(timestamp: Double($0) / 30) })
    }

    func testSyntheticSkipsTheDepthPassBetweenDepthFrames() throws {
        let s = SyntheticSource(width: 32, height: 24)
        s.depthRateLimit = 15
        try s.start()
        var maps: [ObjectIdentifier] = []
        for i in 0..<6 {
            try s.recording.seek(toFrame: i)
            let f = try XCTUnwrap(try s.nextFrame(now: Double(i)))
            maps.append(ObjectIdentifier(try XCTUnwrap(f.depth).map))
        }
        XCTAssertEqual(maps[0], maps[1]); XCTAssertNotEqual(maps[1], maps[2])
        XCTAssertEqual(maps[2], maps[3]); XCTAssertNotEqual(maps[3], maps[4])
        s.depthRateLimit = nil
        try s.recording.seek(toFrame: 6)
        let a = try XCTUnwrap(try s.nextFrame(now: 6)).depth!.map
        try s.recording.seek(toFrame: 7)
        let b = try XCTUnwrap(try s.nextFrame(now: 7)).depth!.map
        XCTAssertFalse(a === b, "no limit: fresh depth every frame")
    }

    func testV4L2PassesMatchedDepthAtTheLimitedRate() throws {
        let system = ScriptedV4L2System()
        let color = system.addDevice(path: "/dev/video0", formats: [.init(.yuyv, sizes: [(4, 2)], frameRates: [30])])
        let depth = system.addDevice(path: "/dev/video2", formats: [.init(.z16, sizes: [(4, 2)], frameRates: [30])])
        color.frameProvider = { n in .init(payload: [UInt8](repeating: 128, count: 16), timestamp: 5 + Double(n) / 30) }
        // Depth frame n reads (n + 1) mm everywhere.
        depth.frameProvider = { n in .init(payload: (0..<8).flatMap { _ in [UInt8(n + 1), 0] }, timestamp: 5 + Double(n) / 30) }
        let s = V4L2Source(colorPath: "/dev/video0", depthPath: "/dev/video2", system: system,
                           colorRequest: .color(width: 4, height: 2), depthRequest: .depth(width: 4, height: 2))
        try s.start()
        defer { s.stop() }
        s.depthRateLimit = 15
        var mm: [Float] = []
        for i in 0..<6 {
            depth.readyFrames = 1
            let f = try XCTUnwrap(try s.nextFrame(now: Double(i) / 30))
            mm.append(((f.depth?.map.sample(x: 0, y: 0) ?? 0) * 1000).rounded())
        }
        XCTAssertEqual(mm, [1, 1, 3, 3, 5, 5])
    }

    func testTUMCarriesTheLastDepthAndStillLoadsEveryColor() throws {
        let dir = try writeTUMFolder(self, timestamps: (0..<6).map { 1000 + Double($0) / 30 })
        let s = TUMSource(directory: dir)
        try s.start()
        XCTAssertEqual(try XCTUnwrap(s.nominalFrameRate), 30, accuracy: 0.01)
        s.depthRateLimit = 15
        var depths: [Float] = [], reds: [UInt8] = []
        for i in 0..<6 {
            try s.recording.seek(toFrame: i)
            let f = try XCTUnwrap(try s.nextFrame(now: Double(i)))
            depths.append(f.depth!.map.sample(x: 1, y: 1))
            reds.append(f.color.rgba(x: 1, y: 1).0)
        }
        XCTAssertEqual(depths, [1, 1, 3, 3, 5, 5], "depth of frames 0, 2, 4 (meters = index + 1)")
        XCTAssertEqual(reds, [0, 10, 20, 30, 40, 50], "every color frame")
    }
}
