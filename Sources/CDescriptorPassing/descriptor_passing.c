#define _GNU_SOURCE
#include "descriptor_passing.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

ssize_t tactus_send_with_descriptors(int socket, const void *bytes, size_t count, const int *descriptors, int descriptor_count) {
    if (descriptor_count < 0 || descriptor_count > TACTUS_MAX_PASSED_DESCRIPTORS) {
        errno = EINVAL;
        return -1;
    }
    struct iovec vector = {.iov_base = (void *)bytes, .iov_len = count};
    struct msghdr message = {0};
    message.msg_iov = &vector;
    message.msg_iovlen = 1;
    union {
        char buffer[CMSG_SPACE(sizeof(int) * TACTUS_MAX_PASSED_DESCRIPTORS)];
        struct cmsghdr align;
    } control;
    if (descriptor_count > 0) {
        memset(&control, 0, sizeof control);
        message.msg_control = control.buffer;
        message.msg_controllen = CMSG_SPACE(sizeof(int) * descriptor_count);
        struct cmsghdr *header = CMSG_FIRSTHDR(&message);
        header->cmsg_level = SOL_SOCKET;
        header->cmsg_type = SCM_RIGHTS;
        header->cmsg_len = CMSG_LEN(sizeof(int) * descriptor_count);
        memcpy(CMSG_DATA(header), descriptors, sizeof(int) * descriptor_count);
    }
    ssize_t sent;
    do {
        sent = sendmsg(socket, &message, MSG_NOSIGNAL);
    } while (sent < 0 && errno == EINTR);
    return sent;
}

ssize_t tactus_receive_with_descriptors(
    int socket, void *bytes, size_t count, int *descriptors, int max_descriptors, int *received_descriptors) {
    *received_descriptors = 0;
    struct iovec vector = {.iov_base = bytes, .iov_len = count};
    struct msghdr message = {0};
    message.msg_iov = &vector;
    message.msg_iovlen = 1;
    union {
        char buffer[CMSG_SPACE(sizeof(int) * TACTUS_MAX_PASSED_DESCRIPTORS)];
        struct cmsghdr align;
    } control;
    message.msg_control = control.buffer;
    message.msg_controllen = sizeof control.buffer;
    ssize_t received;
    do {
        received = recvmsg(socket, &message, MSG_CMSG_CLOEXEC);
    } while (received < 0 && errno == EINTR);
    if (received < 0) return received;
    int kept = 0;
    int overflow = (message.msg_flags & MSG_CTRUNC) != 0;
    for (struct cmsghdr *header = CMSG_FIRSTHDR(&message); header != NULL; header = CMSG_NXTHDR(&message, header)) {
        if (header->cmsg_level != SOL_SOCKET || header->cmsg_type != SCM_RIGHTS) continue;
        size_t n = (header->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        int *passed = (int *)CMSG_DATA(header);
        for (size_t i = 0; i < n; i++) {
            if (kept < max_descriptors) {
                descriptors[kept++] = passed[i];
            } else {
                close(passed[i]);
                overflow = 1;
            }
        }
    }
    if (overflow) {
        for (int i = 0; i < kept; i++) close(descriptors[i]);
        errno = EMSGSIZE;
        return -1;
    }
    *received_descriptors = kept;
    return received;
}
