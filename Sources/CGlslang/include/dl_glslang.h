#ifndef DL_GLSLANG_H
#define DL_GLSLANG_H
// glslang's C interface (GLSL -> SPIR-V at run time, GPUKit's ShaderLibrary). It is plain C and
// callable from Swift; this target exists so that only GPUKit, and what links it, links glslang's
// static libraries (with SPIRV-Tools and the C++ runtime).
#include <glslang/Include/glslang_c_interface.h>
#include <glslang/Public/resource_limits_c.h>

/// The glslang release built against, "MAJOR.MINOR.PATCH" (build_info.h's macros are not
/// visible to Swift).
const char *dl_glslang_version(void);
#endif
