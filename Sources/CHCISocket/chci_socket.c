#define _GNU_SOURCE
#include <fcntl.h>
#include "chci_socket.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <termios.h>
#include <unistd.h>

// struct sockaddr_hci from include/net/bluetooth/hci_sock.h (kernel UAPI).
struct chci_sockaddr_hci {
    sa_family_t hci_family;
    unsigned short hci_dev;
    unsigned short hci_channel;
};

int chci_open_user_channel(uint16_t dev_id, int *error_number, const char **failed_step) {
    int fd = socket(CHCI_AF_BLUETOOTH, SOCK_RAW | SOCK_CLOEXEC, CHCI_BTPROTO_HCI);
    if (fd < 0) {
        *error_number = errno;
        *failed_step = "socket";
        return -1;
    }
    struct chci_sockaddr_hci address;
    memset(&address, 0, sizeof(address));
    address.hci_family = CHCI_AF_BLUETOOTH;
    address.hci_dev = dev_id;
    address.hci_channel = CHCI_HCI_CHANNEL_USER;
    if (bind(fd, (struct sockaddr *)&address, sizeof(address)) < 0) {
        *error_number = errno;
        *failed_step = "bind";
        close(fd);
        return -1;
    }
    return fd;
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
