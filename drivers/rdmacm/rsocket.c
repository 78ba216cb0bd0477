/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rsockets (rdma/rsocket.h): not provided yet; every call fails with ENOSYS, so a program
 * linked against them loads and reports the error (rstream: "rsocket failed: Function not
 * implemented").
 */
#include <errno.h>
#include <poll.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>

#include <rdma/rsocket.h>

#define EXPORT __attribute__((visibility("default")))

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#define NOSYS_FN(type, name, ...) \
	EXPORT type name(__VA_ARGS__) \
	{ \
		errno = ENOSYS; \
		return (type)-1; \
	}

NOSYS_FN(int, rsocket, int domain, int type, int protocol)
NOSYS_FN(int, rbind, int s, const struct sockaddr *addr, socklen_t len)
NOSYS_FN(int, rlisten, int s, int backlog)
NOSYS_FN(int, raccept, int s, struct sockaddr *addr, socklen_t *len)
NOSYS_FN(int, rconnect, int s, const struct sockaddr *addr, socklen_t len)
NOSYS_FN(int, rshutdown, int s, int how)
NOSYS_FN(int, rclose, int s)
NOSYS_FN(ssize_t, rrecv, int s, void *buf, size_t len, int flags)
NOSYS_FN(ssize_t, rrecvfrom, int s, void *buf, size_t len, int flags, struct sockaddr *src,
	 socklen_t *addrlen)
NOSYS_FN(ssize_t, rrecvmsg, int s, struct msghdr *msg, int flags)
NOSYS_FN(ssize_t, rsend, int s, const void *buf, size_t len, int flags)
NOSYS_FN(ssize_t, rsendto, int s, const void *buf, size_t len, int flags,
	 const struct sockaddr *dest, socklen_t addrlen)
NOSYS_FN(ssize_t, rsendmsg, int s, const struct msghdr *msg, int flags)
NOSYS_FN(ssize_t, rread, int s, void *buf, size_t count)
NOSYS_FN(ssize_t, rreadv, int s, const struct iovec *iov, int iovcnt)
NOSYS_FN(ssize_t, rwrite, int s, const void *buf, size_t count)
NOSYS_FN(ssize_t, rwritev, int s, const struct iovec *iov, int iovcnt)
NOSYS_FN(int, rpoll, struct pollfd *fds, nfds_t nfds, int timeout)
NOSYS_FN(int, rselect, int nfds, fd_set *readfds, fd_set *writefds, fd_set *exceptfds,
	 struct timeval *timeout)
NOSYS_FN(int, rgetpeername, int s, struct sockaddr *addr, socklen_t *addrlen)
NOSYS_FN(int, rgetsockname, int s, struct sockaddr *addr, socklen_t *addrlen)
NOSYS_FN(int, rsetsockopt, int s, int level, int optname, const void *optval, socklen_t optlen)
NOSYS_FN(int, rgetsockopt, int s, int level, int optname, void *optval, socklen_t *optlen)
NOSYS_FN(int, rfcntl, int s, int cmd, ...)
NOSYS_FN(off_t, riomap, int s, void *buf, size_t len, int prot, int flags, off_t offset)
NOSYS_FN(int, riounmap, int s, void *buf, size_t len)
NOSYS_FN(size_t, riowrite, int s, const void *buf, size_t count, off_t offset, int flags)
#pragma GCC diagnostic pop
