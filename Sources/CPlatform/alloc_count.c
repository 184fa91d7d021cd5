// Counting heap allocations for the viewer's steady-state check (`view --stats`, ViewerTests).
//
// malloc, calloc, realloc, aligned_alloc, posix_memalign and memalign are defined here, in the
// executable, so they take precedence over glibc's for the whole process (Swift's runtime, the
// Vulkan loader, the driver, ImGui) and forward to glibc's own entry points (__libc_malloc and
// friends, which glibc exports for exactly this). The count is per thread and only while that
// thread has switched counting on, so the render loop counts what it (and the driver calls it
// makes) allocates, not the source's thread or the driver's worker threads. Off, each call costs
// one thread-local load. mallinfo2 deltas were not used: they report bytes in use, so a free and
// a malloc of the same size in one frame cancel out and a per-frame allocation goes unseen.
//
// Own or driver: each counted allocation is attributed by its caller. The immediate caller's
// shared object (_dl_find_object) decides when it is the executable (own) or a library that is not a
// runtime (the Vulkan driver and loader, GLFW, X11, xcb: "driver"). When it is a runtime the
// executable's code reaches through (libc, the Swift runtime and Foundation, libstdc++, libgcc,
// libdispatch, ImGui), the stack is walked (backtrace) to the first frame outside the runtimes:
// a Swift String built in depthlens is own, a strdup inside libX11 is the driver's. _dl_find_object
// and backtrace do not allocate once libgcc's unwinder is loaded (primed when counting starts).
#define _GNU_SOURCE
#include "dl_platform.h"
#include <stddef.h>
#include <errno.h>
#include <dlfcn.h>
#include <link.h>
#include <execinfo.h>
#include <string.h>
#include <stdio.h>
#include <unistd.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);

static __thread int dl_counting;
static __thread int dl_in_hook;
static __thread uint64_t dl_count;
static __thread uint64_t dl_count_driver;
static __thread int dl_trace_left;
static __thread int dl_trace_driver;

enum { OBJ_UNKNOWN = 0, OBJ_OWN, OBJ_RUNTIME, OBJ_DRIVER };

// Shared objects seen so far (their load base) and what they are; filled without allocating.
#define DL_OBJ_MAX 64
static struct { void *base; int kind; } dl_objects[DL_OBJ_MAX];
static int dl_object_count;
static void *dl_exe_base;

static int is_runtime(const char *path) {
    const char *name = strrchr(path, '/');
    name = name ? name + 1 : path;
    static const char *const runtimes[] = {
        "libc.so", "libm.so", "ld-linux", "libstdc++", "libgcc_s", "libswift", "libFoundation", "lib_Foundation",
        "libdispatch", "libBlocksRuntime", "libimgui", "libicu", "libpthread", "libdl.so",
    };
    for (size_t i = 0; i < sizeof runtimes / sizeof *runtimes; i++)
        if (strncmp(name, runtimes[i], strlen(runtimes[i])) == 0) return 1;
    return 0;
}

static int object_kind(void *address) {
    // _dl_find_object (glibc 2.35) is lock-free and does not scan symbol tables, as dladdr does.
    struct dl_find_object found;
    if (_dl_find_object(address, &found) != 0) return OBJ_UNKNOWN;
    void *base = found.dlfo_map_start;
    int n = __atomic_load_n(&dl_object_count, __ATOMIC_ACQUIRE);
    for (int i = 0; i < n; i++)
        if (dl_objects[i].base == base) return dl_objects[i].kind;
    const char *name = found.dlfo_link_map ? found.dlfo_link_map->l_name : NULL;
    int kind = base == dl_exe_base || !name || !*name ? OBJ_OWN : is_runtime(name) ? OBJ_RUNTIME : OBJ_DRIVER;
    // Only counting threads (the render loop) get here; a lost race only repeats this lookup.
    if (n < DL_OBJ_MAX) {
        dl_objects[n].base = base;
        dl_objects[n].kind = kind;
        __atomic_store_n(&dl_object_count, n + 1, __ATOMIC_RELEASE);
    }
    return kind;
}

// Counts one allocation made from `caller` (the hook's return address); own or driver.
__attribute__((noinline)) static void count(void *caller, size_t size) {
    dl_in_hook = 1;
    dl_count++;
    int kind = object_kind(caller);
    void *frames[32];
    int depth = 0;
    if (kind == OBJ_RUNTIME || kind == OBJ_UNKNOWN || dl_trace_left > 0) {
        depth = backtrace(frames, 32);
        // frames[0] is this function, frames[1] the hook, frames[2] its caller.
        for (int i = 2; i < depth && (kind == OBJ_RUNTIME || kind == OBJ_UNKNOWN); i++) {
            int k = object_kind(frames[i]);
            if (k != OBJ_RUNTIME && k != OBJ_UNKNOWN) kind = k;
        }
    }
    int driver = kind == OBJ_DRIVER;
    if (driver) dl_count_driver++;
    if (dl_trace_left > 0 && (!driver || dl_trace_driver)) {
        dl_trace_left--;
        char line[96];
        int n = snprintf(line, sizeof line, "alloc trace: %s allocation of %zu bytes\n", driver ? "driver" : "own", size);
        if (n > 0) (void)!write(2, line, (size_t)n);
        if (depth > 2) backtrace_symbols_fd(frames + 2, depth - 2, 2);
    }
    dl_in_hook = 0;
}

#define COUNT(size) do { if (dl_counting && !dl_in_hook) count(__builtin_return_address(0), (size)); } while (0)

void dl_alloc_counting(int on) {
    if (on && !dl_exe_base) {
        struct dl_find_object found;
        if (_dl_find_object((void *)&dl_alloc_counting, &found) == 0) dl_exe_base = found.dlfo_map_start;
        // The first backtrace loads libgcc's unwinder (which allocates); do it here, uncounted.
        void *frames[4];
        backtrace(frames, 4);
    }
    dl_counting = on;
}
uint64_t dl_alloc_count(void) { return dl_count; }
uint64_t dl_alloc_count_driver(void) { return dl_count_driver; }
void dl_alloc_trace(int limit, int driver_too) { dl_trace_left = limit; dl_trace_driver = driver_too; }

// Under AddressSanitizer (the scripts/fuzz build) ASan owns malloc: an interposer here would hide
// every heap error from it, and it runs before ASan has set up thread-local storage (a crash at
// start-up). Under ThreadSanitizer (`swift build --sanitize=thread`) likewise: TSan's start-up
// calls dlsym, which calls malloc, which would enter this instrumented interposer before TSan is
// initialized (a crash before main), and TSan must see every heap block to check accesses to it.
// The count then stays 0.
#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define DL_NO_INTERPOSER 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define DL_NO_INTERPOSER 1
#endif
#ifndef DL_NO_INTERPOSER

void *malloc(size_t n) {
    COUNT(n);
    return __libc_malloc(n);
}

void *calloc(size_t n, size_t size) {
    COUNT(n * size);
    return __libc_calloc(n, size);
}

void *realloc(void *p, size_t n) {
    COUNT(n);
    return __libc_realloc(p, n);
}

void *memalign(size_t alignment, size_t n) {
    COUNT(n);
    return __libc_memalign(alignment, n);
}

void *aligned_alloc(size_t alignment, size_t n) {
    COUNT(n);
    return __libc_memalign(alignment, n);
}

int posix_memalign(void **out, size_t alignment, size_t n) {
    if (alignment < sizeof(void *) || (alignment & (alignment - 1)) != 0) return EINVAL;
    COUNT(n);
    void *p = __libc_memalign(alignment, n);
    if (!p && n) return ENOMEM;
    *out = p;
    return 0;
}
#endif  // DL_NO_INTERPOSER
