import Capture
import DepthKit
import Foundation

/// `ViewerOptions.pointList`: a PLY the CLI read (with its progress bar) before the window opened,
/// handed to the window once so that no copy of the points outlives their upload.
public final class PointListHandoff: Sendable {
    private let contents: Locked<PLYContents?>
    /// How long the CLI took to read and parse the file (`--stats` prints it).
    public let readSeconds: Double?

    public init(_ contents: PLYContents, readSeconds: Double? = nil) {
        self.contents = Locked(contents)
        self.readSeconds = readSeconds
    }

    /// The contents on the first call, nil after.
    func take() -> PLYContents? {
        contents.withLock { c in
            defer { c = nil }
            return c
        }
    }
}
