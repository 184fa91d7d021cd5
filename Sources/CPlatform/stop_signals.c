// SIGINT, SIGTERM and SIGHUP as a request to stop: the handler only records which signal came
// (async-signal-safe); depthlens' loops poll dl_stop_signal() and finish what they write. A second
// signal while one is pending restores the default action and re-raises it, so a stuck program
// still dies on the second Ctrl+C.
#include <signal.h>
#include <string.h>
#include "dl_platform.h"

static volatile sig_atomic_t pending_signal = 0;

static void on_stop_signal(int sig) {
    if (pending_signal != 0) {
        signal(sig, SIG_DFL);
        raise(sig);
        return;
    }
    pending_signal = sig;
}

void dl_stop_signals_install(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    // A file-size limit (ulimit -f) makes a write fail with EFBIG, reported like a full disk,
    // instead of killing the process mid-file.
    signal(SIGXFSZ, SIG_IGN);
}

int dl_stop_signal(void) { return pending_signal; }

void dl_stop_signal_clear(void) { pending_signal = 0; }
