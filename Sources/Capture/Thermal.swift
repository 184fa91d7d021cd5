import Foundation

/// The machine's thermal pressure, in the four steps of Apple's `ProcessInfo.ThermalState`
/// that AVCamFilter / TrueDepthStreamer react to. `unknown` when no thermal zone could be read.
public enum ThermalState: String, Codable, Comparable, CaseIterable, Sendable {
    case unknown, nominal, fair, serious, critical

    private var rank: Int { Self.allCases.firstIndex(of: self)! }
    public static func < (a: ThermalState, b: ThermalState) -> Bool { a.rank < b.rank }

    /// What the viewer does about it (the seed's reaction): at serious or worse, depth drops to this rate.
    public static let reducedDepthFPS = 15.0
}

/// One `/sys/class/thermal/thermal_zoneN`: its temperature, its trip points and the state they give.
public struct ThermalZone: Codable, Equatable, Sendable {
    public struct Trip: Codable, Equatable, Sendable {
        /// Kernel trip type: passive, active, hot or critical.
        public var type: String
        public var celsius: Double
    }
    /// Directory name ("thermal_zone0").
    public var name: String
    /// The zone's `type` ("x86_pkg_temp", "acpitz", "cpu-thermal").
    public var type: String
    public var celsius: Double
    public var trips: [Trip]
    public var state: ThermalState
    /// The temperatures (°C) at which this zone becomes fair, serious and critical.
    public var thresholds: [Double]

    /// Fair / serious / critical thresholds from the zone's own trip points: serious at the first
    /// passive trip (where the kernel starts throttling), fair 10 °C below it, critical at the
    /// lowest hot or critical trip. A missing passive trip is put 10 °C below critical; a missing
    /// critical one 15 °C above passive. With neither, the fixed `fallbackThresholds`.
    public static func thresholds(trips: [Trip]) -> (fair: Double, serious: Double, critical: Double) {
        let passive = trips.filter { $0.type == "passive" }.map(\.celsius).min()
        let critical = trips.filter { $0.type == "hot" || $0.type == "critical" }.map(\.celsius).min()
        switch (passive, critical) {
        case let (p?, c?): return (p - 10, min(p, c), c)
        case let (p?, nil): return (p - 10, p, p + 15)
        case let (nil, c?): return (c - 20, c - 10, c)
        case (nil, nil): return fallbackThresholds
        }
    }

    /// Used for zones without passive, hot or critical trip points (°C).
    public static let fallbackThresholds = (fair: 70.0, serious: 85.0, critical: 95.0)

    public static func state(celsius t: Double, trips: [Trip]) -> ThermalState {
        let th = thresholds(trips: trips)
        if t >= th.critical { return .critical }
        if t >= th.serious { return .serious }
        if t >= th.fair { return .fair }
        return .nominal
    }
}

/// One look at every thermal zone: the worst state over them, and what could not be read.
public struct ThermalReading: Codable, Equatable, Sendable {
    public var state: ThermalState
    public var zones: [ThermalZone]
    /// Zones (or the directory) that could not be read, one line each; they do not count.
    public var problems: [String]

    /// "fair (x86_pkg_temp 74 °C)": the state and the hottest zone.
    public var summary: String {
        guard let hot = zones.max(by: { ($0.state, $0.celsius) < ($1.state, $1.celsius) }) else { return state.rawValue }
        return String(format: "%@ (%@ %.0f °C)", state.rawValue, hot.type, hot.celsius)
    }
}

/// Reads the Linux thermal zones from sysfs: `thermal_zone*/{type,temp,trip_point_N_type,trip_point_N_temp}`
/// (temperatures in millidegrees Celsius). The directory is `/sys/class/thermal`, or
/// `DEPTHLENS_THERMAL_DIR` when set (tests, odd systems).
public enum ThermalZones {
    public static var defaultDirectory: String {
        ProcessInfo.processInfo.environment["DEPTHLENS_THERMAL_DIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/sys/class/thermal"
    }

    public static func read(directory: String = defaultDirectory) -> ThermalReading {
        let fm = FileManager.default
        guard let names = try? fm.contentsOfDirectory(atPath: directory) else {
            return ThermalReading(state: .unknown, zones: [], problems: ["\(directory): cannot be read; thermal state unknown"])
        }
        let zoneNames = names.filter { $0.hasPrefix("thermal_zone") }
            .sorted { (Int($0.dropFirst(12)) ?? 0, $0) < (Int($1.dropFirst(12)) ?? 0, $1) }
        if zoneNames.isEmpty {
            return ThermalReading(state: .unknown, zones: [], problems: ["\(directory): no thermal zones; thermal state unknown"])
        }
        var zones: [ThermalZone] = [], problems: [String] = []
        for name in zoneNames {
            let dir = (directory as NSString).appendingPathComponent(name)
            func text(_ file: String) -> String? {
                (try? String(contentsOfFile: (dir as NSString).appendingPathComponent(file), encoding: .utf8))?
                    .trimmingCharacters(in: .whitespacesAndNewlines)
            }
            func celsius(_ file: String) -> Double? { text(file).flatMap { Int($0) }.map { Double($0) / 1000 } }
            let type = text("type") ?? name
            guard let t = celsius("temp") else {
                problems.append("\(dir): temp unreadable; zone ignored")
                continue
            }
            var trips: [ThermalZone.Trip] = []
            for k in 0..<64 {
                guard let tt = text("trip_point_\(k)_type") else { break }
                // Disabled trips read as 0 or negative, or are out of any sensible range.
                if let c = celsius("trip_point_\(k)_temp"), c > 0, c < 250 { trips.append(.init(type: tt, celsius: c)) }
            }
            let th = ThermalZone.thresholds(trips: trips)
            zones.append(ThermalZone(name: name, type: type, celsius: t, trips: trips,
                                     state: ThermalZone.state(celsius: t, trips: trips),
                                     thresholds: [th.fair, th.serious, th.critical]))
        }
        return ThermalReading(state: zones.map(\.state).max() ?? .unknown, zones: zones, problems: problems)
    }
}

/// Polls the thermal zones at most once per `interval` seconds (the viewer calls it every frame;
/// the read itself is a few small sysfs files). Each problem is reported once.
public final class ThermalMonitor {
    public let directory: String
    public let interval: Double
    public private(set) var reading: ThermalReading?
    private var lastPoll = -Double.infinity
    private var reported: Set<String> = []

    public init(directory: String = ThermalZones.defaultDirectory, interval: Double = 1) {
        self.directory = directory
        self.interval = interval
    }

    /// Reads again when `interval` has passed since the last read; returns the new reading and
    /// the problems not reported before, or nil when it is not time yet.
    public func poll(now: Double) -> (reading: ThermalReading, newProblems: [String])? {
        guard now - lastPoll >= interval else { return nil }
        lastPoll = now
        let r = ThermalZones.read(directory: directory)
        reading = r
        let fresh = r.problems.filter { reported.insert($0).inserted }
        return (r, fresh)
    }
}
