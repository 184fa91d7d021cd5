#version 450
// A full-target quad as a 4-vertex triangle strip, no vertex buffer.
void main() {
    vec2 p = vec2(float(gl_VertexIndex & 1), float(gl_VertexIndex >> 1));
    gl_Position = vec4(p * 2.0 - 1.0, 0.0, 1.0);
}
