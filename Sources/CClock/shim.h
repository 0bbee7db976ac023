// The kernel's clock interfaces that Swift's Glibc module does not export: timerfd's
// cancel-on-set (a read fails with ECANCELED whenever CLOCK_REALTIME is set) and adjtimex's
// synchronisation state (man timerfd_create, man adjtimex).
#include <errno.h>
#include <stdint.h>
#include <sys/timerfd.h>
#include <sys/timex.h>
#include <time.h>
#include <unistd.h>

// Arms `fd` for an absolute time ten years ahead with TFD_TIMER_CANCEL_ON_SET: it never
// expires, and any discontinuous change of CLOCK_REALTIME cancels it.
static inline int cclock_arm_step_timer(int fd) {
    struct timespec now;
    if (clock_gettime(CLOCK_REALTIME, &now) != 0) return -1;
    struct itimerspec spec = {{0, 0}, {now.tv_sec + 10L * 365 * 86400, 0}};
    return timerfd_settime(fd, TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET, &spec, NULL);
}

// A non-blocking timerfd on CLOCK_REALTIME, armed as above; -1 with errno set on failure.
static inline int cclock_step_timer(void) {
    int fd = timerfd_create(CLOCK_REALTIME, TFD_CLOEXEC | TFD_NONBLOCK);
    if (fd < 0) return -1;
    if (cclock_arm_step_timer(fd) != 0) {
        int saved = errno;
        close(fd);
        errno = saved;
        return -1;
    }
    return fd;
}

// Reads the step timer: 1 when the clock was set since it was armed (ECANCELED; arm it again),
// 0 when nothing happened, -1 with errno set on another error.
static inline int cclock_read_step_timer(int fd) {
    uint64_t expirations = 0;
    ssize_t got = read(fd, &expirations, sizeof expirations);
    if (got >= 0) return 0;
    if (errno == ECANCELED) return 1;
    if (errno == EAGAIN || errno == EINTR) return 0;
    return -1;
}

// The kernel's NTP state without changing it (modes 0): 1 when synchronised (adjtimex does not
// return TIME_ERROR and STA_UNSYNC is clear), 0 when not, -1 with errno set when adjtimex fails.
// `maxerror_us` is the kernel's bound on the clock's error (it grows by 500 ppm while no NTP
// client disciplines the clock).
static inline int cclock_kernel_synchronised(long *maxerror_us) {
    struct timex tx = {0};
    int state = adjtimex(&tx);
    if (state < 0) return -1;
    *maxerror_us = tx.maxerror;
    return (state != TIME_ERROR && (tx.status & STA_UNSYNC) == 0) ? 1 : 0;
}
