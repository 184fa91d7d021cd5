#ifndef DL_CGLFW_SHIM_H
#define DL_CGLFW_SHIM_H
// GLFW's Vulkan helpers (glfwCreateWindowSurface) are declared only when Vulkan's header comes first.
#define GLFW_INCLUDE_VULKAN
#include <GLFW/glfw3.h>
#endif
