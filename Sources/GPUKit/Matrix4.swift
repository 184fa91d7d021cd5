import Foundation

/// A column-major 4×4 float matrix (Linux has no `simd_float4x4`), laid out as GLSL's `mat4`
/// so it can be pushed to shaders as is.
public struct Matrix4: Equatable, Sendable {
    public var c0, c1, c2, c3: SIMD4<Float>

    public init(_ c0: SIMD4<Float>, _ c1: SIMD4<Float>, _ c2: SIMD4<Float>, _ c3: SIMD4<Float>) {
        self.c0 = c0; self.c1 = c1; self.c2 = c2; self.c3 = c3
    }

    public static let identity = Matrix4([1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1])

    /// From a 3×3 rotation (columns) and a translation.
    public init(rotation r: Matrix3, translation t: SIMD3<Float>) {
        self.init(SIMD4(r.c0, 0), SIMD4(r.c1, 0), SIMD4(r.c2, 0), SIMD4(t, 1))
    }

    public static func * (a: Matrix4, b: Matrix4) -> Matrix4 {
        Matrix4(a * b.c0, a * b.c1, a * b.c2, a * b.c3)
    }

    public static func * (m: Matrix4, v: SIMD4<Float>) -> SIMD4<Float> {
        m.c0 * v.x + m.c1 * v.y + m.c2 * v.z + m.c3 * v.w
    }

    /// The 16 floats, column by column.
    public var floats: [Float] {
        [c0.x, c0.y, c0.z, c0.w, c1.x, c1.y, c1.z, c1.w, c2.x, c2.y, c2.z, c2.w, c3.x, c3.y, c3.z, c3.w]
    }

    /// Pinhole projection for Vulkan clip space from camera coordinates x right, y down, z forward:
    /// pixel u = fx·x/z + cx lands on the pixel center u of a `width`×`height` image, depth maps to
    /// [0, 1] between `near` and `far`. Vulkan's NDC has y down, as the camera frame does.
    public static func projection(fx: Float, fy: Float, cx: Float, cy: Float, width: Int, height: Int,
                                  near: Float, far: Float) -> Matrix4 {
        let w = Float(width), h = Float(height)
        // ndc = (u + 0.5) / w * 2 − 1 with u = fx·x/z + cx  ⇒  ndc·z = (2fx/w)·x + ((2cx + 1)/w − 1)·z
        let a = far / (far - near), b = -far * near / (far - near)
        // SIMD4(…) rather than array literals: a literal builds an array on the heap, and the point
        // list's projection is made every frame.
        return Matrix4(SIMD4(2 * fx / w, 0, 0, 0),
                       SIMD4(0, 2 * fy / h, 0, 0),
                       SIMD4((2 * cx + 1) / w - 1, (2 * cy + 1) / h - 1, a, 1),
                       SIMD4(0, 0, b, 0))
    }
}

/// A 3×3 float matrix (columns), for rotations.
public struct Matrix3: Equatable, Sendable {
    public var c0, c1, c2: SIMD3<Float>

    public init(_ c0: SIMD3<Float>, _ c1: SIMD3<Float>, _ c2: SIMD3<Float>) { self.c0 = c0; self.c1 = c1; self.c2 = c2 }

    public static let identity = Matrix3([1, 0, 0], [0, 1, 0], [0, 0, 1])

    public static func * (m: Matrix3, v: SIMD3<Float>) -> SIMD3<Float> { m.c0 * v.x + m.c1 * v.y + m.c2 * v.z }
    public static func * (a: Matrix3, b: Matrix3) -> Matrix3 { Matrix3(a * b.c0, a * b.c1, a * b.c2) }

    public var transposed: Matrix3 {
        Matrix3([c0.x, c1.x, c2.x], [c0.y, c1.y, c2.y], [c0.z, c1.z, c2.z])
    }

    /// Rotation by `angle` radians about the x axis.
    public static func rotationX(_ a: Float) -> Matrix3 {
        Matrix3([1, 0, 0], [0, cos(a), sin(a)], [0, -sin(a), cos(a)])
    }
    public static func rotationY(_ a: Float) -> Matrix3 {
        Matrix3([cos(a), 0, -sin(a)], [0, 1, 0], [sin(a), 0, cos(a)])
    }
    public static func rotationZ(_ a: Float) -> Matrix3 {
        Matrix3([cos(a), sin(a), 0], [-sin(a), cos(a), 0], [0, 0, 1])
    }
}
