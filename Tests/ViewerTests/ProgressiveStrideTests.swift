@testable import Viewer
import TestSupport
import XCTest

/// The progressive point-list stride: all points while still, a subset sized to the budget while
/// moving (from the last whole draw when a move starts, then from the moving frames' own cost).
final class ProgressiveStrideTests: XCTestCase {
    private func stride(moving: Bool = true, full: Double?, last: (ms: Double, stride: Int)? = nil, current: Int,
                        max: Int = 16) -> Int {
        PointListState.stride(moving: moving, lastFullMs: full, lastMoving: last, budgetMs: 33, current: current, maxStride: max)
    }

    func testStillDrawsEverything() {
        XCTAssertEqual(stride(moving: false, full: 300, current: 8), 1)
        XCTAssertEqual(stride(moving: false, full: 300, last: (80, 8), current: 8), 1)
    }

    func testMovingWithinBudgetKeepsEveryPoint() {
        XCTAssertEqual(stride(full: 20, current: 1), 1)
        XCTAssertEqual(stride(full: nil, current: 1), 1)
    }

    func testAMoveStartsFromTheLastWholeDraw() {
        // ⌈ms / (0.9 × 33 = 29.7)⌉, at most the largest stride.
        XCTAssertEqual(stride(full: 34, current: 1), 2)
        XCTAssertEqual(stride(full: 132, current: 1), 5)
        XCTAssertEqual(stride(full: 10_000, current: 1), 16)
        XCTAssertEqual(stride(full: 10_000, current: 1, max: 256), 256)
        // A stride chosen so, not yet measured moving, is kept.
        XCTAssertEqual(stride(full: 132, current: 5), 5)
        XCTAssertEqual(stride(full: 132, last: (80, 8), current: 5), 5)
    }

    func testMovingFramesSteerTheStride() {
        // Whole draw 130 ms, a moving frame at 8 took 30: C = 100 / (7/8) = 114.3, F = 15.7;
        // least n with F + C/n ≤ 29.7: ⌈114.3 / 14.0⌉ = 9, within a quarter of 8: kept.
        XCTAssertEqual(stride(full: 130, last: (30, 8), current: 8), 8)
        // At 4 it took 60: C = 70 / (3/4) = 93.3, F = 36.7 over the target: goal 1.2 F = 44,
        // n = ⌈93.3 / 7.33⌉ = 13 (not the largest: fewer points would buy little).
        XCTAssertEqual(stride(full: 130, last: (60, 4), current: 4), 13)
        // Cheap moving frames lower it: whole 100, at 16 it took 8: C = 92 / (15/16) = 98.1, F = 1.9,
        // n = ⌈98.1 / 27.8⌉ = 4.
        XCTAssertEqual(stride(full: 100, last: (8, 16), current: 16), 4)
        // Never past the largest, never below 1 (a moving frame no cheaper than the whole: C = 0).
        XCTAssertEqual(stride(full: 10_000, last: (2_000, 2), current: 2), 16)
        XCTAssertEqual(stride(full: 40, last: (45, 2), current: 2), 1)
    }

    func testWithASubsetStridesBelowSixteenAreNotOffered() {
        // A cloud with a subset (largest stride 256): ⌈310 / 29.7⌉ = 11 → 16, the subset read whole.
        XCTAssertEqual(stride(full: 310, current: 1, max: 256), 16)
        // A moving frame at 4 as dear as a whole draw would give n = 5; 16 instead.
        XCTAssertEqual(stride(full: 310, last: (200, 4), current: 4, max: 256), 16)
        // Measured at 16: 310 whole, 40 at 16: C = 270 / (15/16) = 288, F = 22, n = ⌈288 / 7.7⌉ = 38.
        XCTAssertEqual(stride(full: 310, last: (40, 16), current: 16, max: 256), 38)
        // Within budget it stays whole; without a subset 2…15 remain.
        XCTAssertEqual(stride(full: 20, current: 1, max: 256), 1)
        XCTAssertEqual(stride(full: 132, current: 1), 5)
    }

    func testTheSubsetServesStridesFromSixteen() throws {
        let calls = [(2_000_000, 1), (2_000_000, 8), (2_000_000, 16), (2_000_000, 17), (2_000_000, 40), (2_000_000, 256)]
        // Without a subset the whole cloud is read at min(n, 16); with one, n ≥ 16 reads it at ⌊n/16⌋.
        for (count, n) in calls {
            let expected = n >= 16 ? (true, min(16, n / 16)) : (false, n)
            let subsetPoints = (count + 15) / 16
            let drawn = expected.0 ? (subsetPoints + expected.1 - 1) / expected.1 : (count + n - 1) / n
            XCTAssertEqual(PointListState.source(stride: n, hasSubset: true).subset, expected.0, "\(n)")
            XCTAssertEqual(PointListState.source(stride: n, hasSubset: true).stride, expected.1, "\(n)")
            XCTAssertEqual(PointListState.drawnPoints(count: count, stride: n, hasSubset: true), drawn, "\(n)")
            XCTAssertEqual(PointListState.source(stride: n, hasSubset: false).stride, min(n, 16), "\(n)")
        }
        // 2,000,000 at 40: the subset's 125,000 points at stride 2 = 62,500 (the whole cloud's every 32nd).
        XCTAssertEqual(PointListState.drawnPoints(count: 2_000_000, stride: 40, hasSubset: true), 62_500)
        XCTAssertEqual(PointListState.drawnPoints(count: 2_000_000, stride: 32, hasSubset: false), 125_000)
    }

    func testDrawnPointsLineGroupsItsCounts() {
        XCTAssertEqual(Scene3D.drawnPointsText(drawn: 250_000, total: 250_000), "drawing 250,000 of 250,000 points")
        XCTAssertEqual(Scene3D.drawnPointsText(drawn: 62_500, total: 2_000_000), "drawing 62,500 of 2,000,000 points (moving)")
        XCTAssertEqual(Scene3D.drawnPointsText(drawn: 999, total: 1_000), "drawing 999 of 1,000 points (moving)")
        XCTAssertEqual(Scene3D.drawnPointsText(drawn: 0, total: 20_000_000), "drawing 0 of 20,000,000 points (moving)")
    }
}
