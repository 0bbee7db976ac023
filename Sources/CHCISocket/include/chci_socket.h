// The kernel's HCI sockets (user channel, adapter ioctls) and termios setup for gyrogate's
// transports. The C side uses BlueZ's headers (libbluetooth-dev) for the kernel ABI; it never
// calls or links libbluetooth (GPL). This header stays free of them, so Swift sees only these
// functions.
#ifndef CHCI_SOCKET_H
#define CHCI_SOCKET_H

#include <stdint.h>

/// Opens an HCI socket and binds it to `dev_id` on the user channel.
/// Returns the descriptor, or -1 with `*error_number` set and `*failed_step` naming the call
/// ("socket" or "bind").
int chci_open_user_channel(uint16_t dev_id, int *error_number, const char **failed_step);

/// Whether adapter `dev_id` is up (HCIGETDEVINFO on a raw HCI socket): 1 up, 0 down, or -1
/// with errno set (ENODEV: no such adapter).
int chci_adapter_is_up(uint16_t dev_id);

/// Brings adapter `dev_id` down (HCIDEVDOWN, as `hciconfig hciN down` or `btmgmt power off`
/// would; needs CAP_NET_ADMIN). Returns 0, or -1 with errno set.
int chci_adapter_down(uint16_t dev_id);

/// Opens a non-blocking raw HCI socket that receives the kernel's adapter events (the stack's
/// internal EVT_SI_DEVICE: an adapter registered, unregistered, up or down). Returns the
/// descriptor, or -1 with errno set.
int chci_open_adapter_events(void);

/// Reads the next queued adapter event from `fd`: returns it (1 registered, 2 unregistered,
/// 3 up, 4 down) with `*dev_id` set, 0 when none is queued, -1 with errno set on an error.
int chci_read_adapter_event(int fd, uint16_t *dev_id);

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
