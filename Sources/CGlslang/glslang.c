#include "dl_glslang.h"
#include <glslang/build_info.h>

// The one translation unit a C target needs; it also names glslang's release.
#define DL_STR2(x) #x
#define DL_STR(x) DL_STR2(x)
const char *dl_glslang_version(void) {
    return DL_STR(GLSLANG_VERSION_MAJOR) "." DL_STR(GLSLANG_VERSION_MINOR) "." DL_STR(GLSLANG_VERSION_PATCH);
}
