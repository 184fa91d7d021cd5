import CVulkan
import Capture
import DepthKit
import GPUKit

/// The 3D point-cloud view. Placeholder until GPUKit's `PointCloudRenderer` is merged: `make`
/// returns nil and Tab says the 3D view is not available.
final class Scene3D {
    static func make(context: GPUContext, factory: GPUFilterFactory, renderPass: VkRenderPass) -> Scene3D? { nil }
    var overlayLines: [String] { [] }
    func record(_ cb: VkCommandBuffer, frame: FrameSet, recorder: GPUFrameRecorder, mark: (String) -> Void) throws {}
    func draw(_ cb: VkCommandBuffer, extent: VkExtent2D) {}
    func mouseButton(button: Int32, pressed: Bool, mods: Int32, x: Double, y: Double, now: Double, app: ViewerApp) {}
    func scroll(dy: Double, x: Double, y: Double) {}
    func drag(x: Double, y: Double, window: Window) {}
    func perform(_ action: ViewerAction) {}
}
