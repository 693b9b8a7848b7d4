#ifndef TACTUS_DESCRIPTOR_PASSING_H
#define TACTUS_DESCRIPTOR_PASSING_H

#include <stddef.h>
#include <sys/types.h>

/// The most file descriptors one message carries (the kernel's SCM_MAX_FD).
#define TACTUS_MAX_PASSED_DESCRIPTORS 253

/// Sends `count` bytes of `bytes` on the Unix socket `socket` (sendmsg, MSG_NOSIGNAL), with the
/// `descriptor_count` file descriptors of `descriptors` attached (SCM_RIGHTS) when it is above 0.
/// Returns what sendmsg returns (bytes sent, or -1 with errno set).
ssize_t tactus_send_with_descriptors(int socket, const void *bytes, size_t count, const int *descriptors, int descriptor_count);

/// Receives at most `count` bytes into `bytes` from the Unix socket `socket` (recvmsg), and the
/// file descriptors attached, close-on-exec, into `descriptors` (room for `max_descriptors`);
/// `*received_descriptors` is set to how many. Descriptors beyond the room, or a truncated
/// control message, are closed and make the call fail with EMSGSIZE. Returns what recvmsg returns.
ssize_t tactus_receive_with_descriptors(
    int socket, void *bytes, size_t count, int *descriptors, int max_descriptors, int *received_descriptors);

#endif
