import TestSupport
import CGLFW
import XCTest
@testable import Viewer

/// Which keys the panel gets: text while a field is edited, never Tab, always the modifiers.
final class KeyRouteTests: XCTestCase {
    func testKeysGoToTheKeyTableUnlessATextFieldIsEdited() {
        for b in KeyBindings.all {
            for key in b.keys where key != GLFW_KEY_TAB {
                for action in [GLFW_PRESS, GLFW_REPEAT] {
                    XCTAssertEqual(KeyRoute(key: key, action: action, textInput: false), KeyRoute(toPanel: false, toViewer: true), b.label)
                    XCTAssertEqual(KeyRoute(key: key, action: action, textInput: true), KeyRoute(toPanel: true, toViewer: false), b.label)
                }
            }
        }
    }

    func testTabIsAlwaysTheViewToggle() {
        for textInput in [false, true] {
            for action in [GLFW_PRESS, GLFW_REPEAT, GLFW_RELEASE] {
                XCTAssertEqual(KeyRoute(key: GLFW_KEY_TAB, action: action, textInput: textInput), KeyRoute(toPanel: false, toViewer: true))
            }
        }
        XCTAssertEqual(KeyBindings.action(key: GLFW_KEY_TAB, shift: false, in3D: false), .toggleView)
    }

    func testModifiersAndReleasesKeepImGuiInStep() {
        XCTAssertEqual(KeyRoute(key: GLFW_KEY_LEFT_CONTROL, action: GLFW_PRESS, textInput: false), KeyRoute(toPanel: true, toViewer: true))
        XCTAssertEqual(KeyRoute(key: GLFW_KEY_RIGHT_SHIFT, action: GLFW_RELEASE, textInput: true), KeyRoute(toPanel: true, toViewer: true))
        XCTAssertEqual(KeyRoute(key: GLFW_KEY_4, action: GLFW_RELEASE, textInput: false), KeyRoute(toPanel: true, toViewer: false))
        XCTAssertEqual(KeyRoute(key: GLFW_KEY_ESCAPE, action: GLFW_PRESS, textInput: true), KeyRoute(toPanel: true, toViewer: false),
                       "Esc leaves the text field before it quits")
    }
}
