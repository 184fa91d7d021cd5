@testable import Viewer
import XCTest

/// The progressive point-list stride: all points while still, a subset sized to the budget while moving.
final class ProgressiveStrideTests: XCTestCase {
    func testStillDrawsEverything() {
        XCTAssertEqual(PointListState.stride(moving: false, lastFullMs: 300, budgetMs: 33, current: 8), 1)
    }

    func testMovingWithinBudgetKeepsEveryPoint() {
        XCTAssertEqual(PointListState.stride(moving: true, lastFullMs: 20, budgetMs: 33, current: 1), 1)
        XCTAssertEqual(PointListState.stride(moving: true, lastFullMs: nil, budgetMs: 33, current: 1), 1)
    }

    func testMovingOverBudgetDrawsAFraction() {
        XCTAssertEqual(PointListState.stride(moving: true, lastFullMs: 34, budgetMs: 33, current: 1), 2)
        XCTAssertEqual(PointListState.stride(moving: true, lastFullMs: 132, budgetMs: 33, current: 1), 4)
        XCTAssertEqual(PointListState.stride(moving: true, lastFullMs: 10_000, budgetMs: 33, current: 1), 16)
    }

    func testGroupedCounts() {
        XCTAssertEqual(Scene3D.grouped(250_000), "250,000")
        XCTAssertEqual(Scene3D.grouped(2_000_000), "2,000,000")
        XCTAssertEqual(Scene3D.grouped(999), "999")
    }
}
