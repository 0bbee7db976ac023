#define _GNU_SOURCE
#include <fcntl.h>
#include "chci_socket.h"

#include <errno.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <termios.h>
#include <unistd.h>

// BlueZ's headers (libbluetooth-dev) for the kernel's HCI socket ABI: sockaddr_hci, the
// channels, the HCIDEV* ioctls. Headers only: nothing here calls into libbluetooth (GPL), and
// the binary does not link it (Tests/run-tests.sh checks).
#include <bluetooth/bluetooth.h>
#include <bluetooth/hci.h>

int chci_open_user_channel(uint16_t dev_id, int *error_number, const char **failed_step) {
    int fd = socket(AF_BLUETOOTH, SOCK_RAW | SOCK_CLOEXEC, BTPROTO_HCI);
    if (fd < 0) {
        *error_number = errno;
        *failed_step = "socket";
        return -1;
    }
    struct sockaddr_hci address;
    memset(&address, 0, sizeof(address));
    address.hci_family = AF_BLUETOOTH;
    address.hci_dev = dev_id;
    address.hci_channel = HCI_CHANNEL_USER;
    if (bind(fd, (struct sockaddr *)&address, sizeof(address)) < 0) {
        *error_number = errno;
        *failed_step = "bind";
        close(fd);
        return -1;
    }
    return fd;
}

int chci_adapter_is_up(uint16_t dev_id) {
    int fd = socket(AF_BLUETOOTH, SOCK_RAW | SOCK_CLOEXEC, BTPROTO_HCI);
    if (fd < 0) return -1;
    struct hci_dev_info info;
    memset(&info, 0, sizeof(info));
    info.dev_id = dev_id;
    int result = ioctl(fd, HCIGETDEVINFO, &info);
    int saved = errno;
    close(fd);
    if (result < 0) {
        errno = saved;
        return -1;
    }
    return (info.flags & (1u << HCI_UP)) ? 1 : 0;
}

int chci_adapter_down(uint16_t dev_id) {
    int fd = socket(AF_BLUETOOTH, SOCK_RAW | SOCK_CLOEXEC, BTPROTO_HCI);
    if (fd < 0) return -1;
    int result = ioctl(fd, HCIDEVDOWN, (unsigned long)dev_id);
    int saved = errno;
    close(fd);
    errno = saved;
    return result < 0 ? -1 : 0;
}

int chci_open_adapter_events(void) {
    int fd = socket(AF_BLUETOOTH, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, BTPROTO_HCI);
    if (fd < 0) return -1;
    struct sockaddr_hci address;
    memset(&address, 0, sizeof(address));
    address.hci_family = AF_BLUETOOTH;
    address.hci_dev = HCI_DEV_NONE;
    address.hci_channel = HCI_CHANNEL_RAW;
    // Only the stack's internal events. The kernel tests event code & HCI_FLT_EVENT_BITS (63)
    // in a 64-bit mask, as hci_lib.h's inline hci_filter_set_event does.
    struct hci_filter filter;
    memset(&filter, 0, sizeof(filter));
    filter.type_mask = 1u << HCI_EVENT_PKT;
    unsigned bit = EVT_STACK_INTERNAL & HCI_FLT_EVENT_BITS;
    filter.event_mask[bit >> 5] = 1u << (bit & 31);
    if (bind(fd, (struct sockaddr *)&address, sizeof(address)) < 0 ||
        setsockopt(fd, SOL_HCI, HCI_FILTER, &filter, sizeof(filter)) < 0) {
        int saved = errno;
        close(fd);
        errno = saved;
        return -1;
    }
    return fd;
}

int chci_read_adapter_event(int fd, uint16_t *dev_id) {
    uint8_t packet[HCI_MAX_EVENT_SIZE + 2];
    for (;;) {
        ssize_t count = read(fd, packet, sizeof(packet));
        if (count < 0) return (errno == EAGAIN || errno == EINTR) ? 0 : -1;
        // H4 type, event code, length, then evt_stack_internal { type; evt_si_device { event; dev_id } }.
        size_t need = 3 + sizeof(uint16_t) + sizeof(evt_si_device);
        if ((size_t)count < need || packet[0] != HCI_EVENT_PKT || packet[1] != EVT_STACK_INTERNAL) continue;
        uint16_t type = (uint16_t)(packet[3] | packet[4] << 8);
        if (type != EVT_SI_DEVICE) continue;
        uint16_t event = (uint16_t)(packet[5] | packet[6] << 8);
        *dev_id = (uint16_t)(packet[7] | packet[8] << 8);
        return event;
    }
}

int chci_grow_receive_buffer(int fd, int bytes) {
    if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &bytes, sizeof(bytes)) < 0 &&
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &bytes, sizeof(bytes)) < 0) {
        return -1;
    }
    int size = 0;
    socklen_t length = sizeof(size);
    if (getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, &length) < 0) return -1;
    return size;
}

static speed_t chci_speed(int baud) {
    switch (baud) {
    case 9600: return B9600;
    case 19200: return B19200;
    case 38400: return B38400;
    case 57600: return B57600;
    case 115200: return B115200;
    case 230400: return B230400;
    case 460800: return B460800;
    case 921600: return B921600;
    case 1000000: return B1000000;
    case 2000000: return B2000000;
    case 3000000: return B3000000;
    default: return 0;
    }
}

int chci_configure_serial(int fd, int baud, int rtscts) {
    speed_t speed = chci_speed(baud);
    if (speed == 0) return -2;
    struct termios tio;
    if (tcgetattr(fd, &tio) < 0) return -1;
    cfmakeraw(&tio);
    tio.c_cflag |= CLOCAL | CREAD;
    if (rtscts) tio.c_cflag |= CRTSCTS; else tio.c_cflag &= ~CRTSCTS;
    tio.c_cc[VMIN] = 1;
    tio.c_cc[VTIME] = 0;
    if (cfsetispeed(&tio, speed) < 0 || cfsetospeed(&tio, speed) < 0) return -1;
    if (tcsetattr(fd, TCSANOW, &tio) < 0) return -1;
    tcflush(fd, TCIOFLUSH);
    return 0;
}

int chci_pipe(int fds[2]) {
    return pipe2(fds, O_CLOEXEC | O_NONBLOCK);
}
