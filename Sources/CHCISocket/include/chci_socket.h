// Kernel HCI socket structures and constants for the HCI user channel, from the Linux UAPI
// (include/net/bluetooth/hci_sock.h). Declared here so gyrogate needs neither BlueZ's headers
// nor its GPL libbluetooth: the kernel ABI is all the user channel needs.
#ifndef CHCI_SOCKET_H
#define CHCI_SOCKET_H

#include <stdint.h>

#define CHCI_AF_BLUETOOTH 31
#define CHCI_BTPROTO_HCI 1
#define CHCI_HCI_CHANNEL_USER 1
#define CHCI_HCI_DEV_NONE 0xffff

/// Opens an HCI socket and binds it to `dev_id` on the user channel.
/// Returns the descriptor, or -1 with `*error_number` set and `*failed_step` naming the call
/// ("socket" or "bind").
int chci_open_user_channel(uint16_t dev_id, int *error_number, const char **failed_step);

/// Raises the socket's receive buffer limit to `bytes` (SO_RCVBUFFORCE, which needs
/// CAP_NET_ADMIN and passes net.core.rmem_max; SO_RCVBUF, capped there, otherwise).
/// Returns the limit in force afterwards (as getsockopt reports it), or -1 with errno set.
int chci_grow_receive_buffer(int fd, int bytes);

/// Puts a serial descriptor in raw mode at `baud` with RTS/CTS flow control when `rtscts` is
/// non-zero. Returns 0, or -1 with errno set; -2 when the baud rate is not supported.
int chci_configure_serial(int fd, int baud, int rtscts);

/// A close-on-exec, non-blocking pipe (pipe2 needs _GNU_SOURCE, which Swift's Glibc lacks).
int chci_pipe(int fds[2]);

#endif
