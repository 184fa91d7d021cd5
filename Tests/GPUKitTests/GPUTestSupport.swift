import XCTest
import TestSupport
import Foundation
@testable import GPUKit
import DepthKit

/// Base class of GPU tests: validation on, one shared context, and any validation warning or
/// error during a test fails it. No Vulkan device is a failure, never a skip (docs/design/testing.md).
class GPUTestCase: XCTestCase {
    private static let contextResult: Result<GPUContext, Error> = {
        setenv("DEPTHLENS_VALIDATION", "1", 1)
        return Result { try GPUContext() }
    }()

    /// The shared context, or nil after an XCTFail.
    var context: GPUContext!
    private var validationBefore = 0

    override func setUpWithError() throws {
        try super.setUpWithError()
        switch Self.contextResult {
        case .success(let c):
            context = c
            XCTAssertNotNil(c.validation, "validation layer must be on in GPU tests")
            validationBefore = c.validation?.errorAndWarningCount ?? 0
        case .failure(let e):
            XCTFail("no usable Vulkan device (GPU tests never skip): \(e)")
            throw e
        }
    }

    override func tearDownWithError() throws {
        if let log = context?.validation {
            let new = log.messages.dropFirst(validationBefore)
            for m in new { XCTFail("Vulkan validation: \(m)") }
        }
        context = nil
        try super.tearDownWithError()
    }
}

