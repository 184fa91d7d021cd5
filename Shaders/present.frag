#version 450
// Draws the frame's final image (rgba8, any size) into the letterbox rectangle of the swapchain
// image, filtered linearly by the texture cache's clamp-to-edge sampler.
layout(set = 0, binding = 0) uniform sampler2D image;
layout(location = 0) in vec2 uv;
layout(location = 0) out vec4 color;
void main() {
    color = vec4(texture(image, uv).rgb, 1.0);
}
