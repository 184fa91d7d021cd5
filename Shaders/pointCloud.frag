#version 450
// pointCloud: every fragment of a point takes the color texel its vertex chose (kept as a
// separate texture from depth, so color and depth may differ in size). Opaque.
layout(set = 1, binding = 0) uniform sampler2D colorImage;
layout(location = 0) flat in ivec2 colorTexel;
layout(location = 0) out vec4 color;

void main() {
    color = vec4(texelFetch(colorImage, colorTexel, 0).rgb, 1.0);
}
