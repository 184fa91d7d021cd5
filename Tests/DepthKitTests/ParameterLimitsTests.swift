import DepthKit
import XCTest

/// The shared limits: the CLI's check and the viewer's clamp agree on every range.
final class ParameterLimitsTests: XCTestCase {
    func testClampKeepsValuesInRangeAndNaNAtTheLowerBound() {
        XCTAssertEqual(Limits.mix.clamp(4), 1)
        XCTAssertEqual(Limits.mix.clamp(-3), 0)
        XCTAssertEqual(Limits.mix.clamp(0.25), 0.25)
        XCTAssertEqual(Limits.focus.clamp(.nan), 0)
        XCTAssertEqual(Limits.pointSize.clamp(.infinity), Limits.pointSize.upperBound)
        XCTAssertEqual(Limits.fps.clamp(0), Limits.fps.lowerBound)
    }

    func testCheckNamesTheOptionAndTheRange() {
        XCTAssertNoThrow(try Limits.mix.check(Float(1)))
        XCTAssertNoThrow(try Limits.mix.check(Float?.none))
        XCTAssertThrowsError(try Limits.mix.check(Float(4))) { e in
            XCTAssertEqual("\(e)".contains("--mix must be in 0…1, got 4"), true, "\(e)")
        }
        XCTAssertThrowsError(try Limits.fps.check(Double.nan)) { e in XCTAssertTrue("\(e)".contains("--fps"), "\(e)") }
        XCTAssertThrowsError(try Limits.depthMax.check(Float(20))) { e in XCTAssertTrue("\(e)".contains("--max"), "\(e)") }
        XCTAssertThrowsError(try Limits.depthMin.check(Float(-1))) { e in XCTAssertTrue("\(e)".contains("--min"), "\(e)") }
        // Every value `clamp` gives passes `check`.
        for r in [Limits.mix, Limits.focus, Limits.depthMin, Limits.depthMax, Limits.fps, Limits.pointSize] {
            for v: Float in [-1e9, -1, 0, 0.5, 1, 7, 100, 1e9, .nan] { XCTAssertNoThrow(try r.check(r.clamp(v)), "\(r.option) \(v)") }
        }
    }

    func testOrderedDepthRangeKeepsTheEditedEndAndMinBelowMax() {
        var r = Limits.orderedDepthRange(min: 5, max: 3, editedMax: false)
        XCTAssertEqual(r.min, 5)
        XCTAssertGreaterThanOrEqual(r.max - r.min, Limits.depthRangeGap - 1e-6)
        r = Limits.orderedDepthRange(min: 5, max: 3, editedMax: true)
        XCTAssertEqual(r.max, 3)
        XCTAssertLessThan(r.min, r.max)
        r = Limits.orderedDepthRange(min: 16, max: 16, editedMax: false)
        XCTAssertLessThan(r.min, r.max)
        XCTAssertLessThanOrEqual(r.max, Limits.depthMax.upperBound)
        r = Limits.orderedDepthRange(min: 0, max: 0, editedMax: true)
        XCTAssertEqual(r.min, 0)
        XCTAssertLessThan(r.min, r.max)
        r = Limits.orderedDepthRange(min: 1, max: 3, editedMax: true)
        XCTAssertEqual(r.min, 1)
        XCTAssertEqual(r.max, 3)
    }
}
