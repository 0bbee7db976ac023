// The calling thread's I/O and CPU priority, for work that must yield to everything else (the
// store's full integrity check). ioprio_set has no glibc wrapper, and syscall(2) is variadic,
// which Swift does not import.
#ifdef __linux__
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

// IOPRIO_WHO_PROCESS with pid 0 is the calling thread; IOPRIO_CLASS_IDLE (3) in the top bits:
// the thread's reads are served only when no other I/O waits for the device.
static inline int cioprio_idle_this_thread(void) {
    return (int)syscall(SYS_ioprio_set, 1, 0, 3 << 13);
}

// setpriority on a thread id (Linux's, not POSIX's) lowers that thread alone.
static inline int cioprio_nice_this_thread(int nice) {
    return setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), nice);
}
#else
static inline int cioprio_idle_this_thread(void) { return -1; }
static inline int cioprio_nice_this_thread(int nice) { (void)nice; return -1; }
#endif
