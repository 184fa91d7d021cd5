import Foundation
import XCTest

/// `view --spin DEG` (the 3D view orbiting by itself, for timing): a rate that is not a finite
/// number of degrees a second within ±3600 is one line and exit 1, before any window.
final class ViewSpinOptionTests: CLITestCase {
    func testBadSpinIsOneLine() throws {
        try assertBadInput(["view", "--spin", "nan", "--exit-after", "1"], mentioning: "--spin")
        try assertBadInput(["view", "--spin", "5000", "--exit-after", "1"], mentioning: "--spin")
    }
}
