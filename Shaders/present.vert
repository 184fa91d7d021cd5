#version 450
// The window's own pass: a quad covering the viewport (the letterbox rectangle the viewer sets)
// as a 4-vertex triangle strip, no vertex buffer; uv (0,0) is the image's top-left pixel.
layout(location = 0) out vec2 uv;
void main() {
    vec2 p = vec2(float(gl_VertexIndex & 1), float(gl_VertexIndex >> 1));
    uv = p;
    gl_Position = vec4(p * 2.0 - 1.0, 0.0, 1.0);
}
