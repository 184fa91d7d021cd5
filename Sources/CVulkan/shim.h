#ifndef DL_CVULKAN_SHIM_H
#define DL_CVULKAN_SHIM_H
#include <vulkan/vulkan.h>
#endif
