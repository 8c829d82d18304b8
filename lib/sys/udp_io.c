// Batched UDP I/O for the udp backend's forwarder: a bound non-blocking socket, recvmmsg and
// sendmmsg (with UDP GSO runs) over the same slot layout as tun_io.c.
#include <errno.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "weft_sys.h"

// udpOpen(addr, port, bufBytes): a non-blocking IPv4 UDP socket bound to addr:port with
// SO_RCVBUF/SO_SNDBUF raised to bufBytes (the forwarder drains in batches, so bursts queue here).
napi_value js_udp_open(napi_env env, napi_callback_info info) {
  ARGS(env, info, 3);
  char addr[INET_ADDRSTRLEN] = {0};
  size_t len = 0;
  int32_t port, bytes;
  if (napi_get_value_string_utf8(env, argv[0], addr, sizeof addr, &len) != napi_ok) {
    napi_throw_type_error(env, NULL, "weft_sys: udpOpen addr must be a string");
    return NULL;
  }
  if (!get_i32(env, argv[1], "port", &port) || !get_i32(env, argv[2], "bufBytes", &bytes)) return NULL;
  struct sockaddr_in sin;
  memset(&sin, 0, sizeof sin);
  sin.sin_family = AF_INET;
  sin.sin_port = htons((uint16_t)port);
  if (port < 0 || port > 65535 || inet_pton(AF_INET, addr, &sin.sin_addr) != 1) return throw_errno(env, "udpOpen", EINVAL);
  int fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return throw_errno(env, "socket", errno);
  if (bytes > 0) {
    // SO_*BUFFORCE ignores rmem_max/wmem_max (we are root); fall back to the capped variant.
    if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &bytes, sizeof bytes) != 0) setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &bytes, sizeof bytes);
    if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &bytes, sizeof bytes) != 0) setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &bytes, sizeof bytes);
  }
  if (bind(fd, (struct sockaddr *)&sin, sizeof sin) != 0) {
    int err = errno;
    close(fd);
    return throw_errno(env, "bind", err);
  }
  napi_value v;
  if (napi_create_int32(env, fd, &v) != napi_ok) {
    close(fd);
    return throw_napi(env, "udpOpen result");
  }
  return v;
}

#define MAX_BATCH 1024

// udpRecvBatch(fd, buf, slot, lens, max, srcs): recvmmsg(2) without waiting; srcs[i] receives the
// sender's IPv4 address as a host-order integer. Truncated datagrams (bigger than a slot) get
// length 0 so the caller drops them. Returns the count.
napi_value js_udp_recv_batch(napi_env env, napi_callback_info info) {
  ARGS(env, info, 6);
  int32_t fd, slot, max;
  uint8_t *buf;
  uint32_t *lens, *srcs;
  size_t nsrcs = 0;
  if (!get_i32(env, argv[0], "fd", &fd) || !batch_args(env, argv + 1, &buf, &slot, &lens, &max) ||
      !get_u32s(env, argv[5], "srcs", &srcs, &nsrcs)) {
    return NULL;
  }
  if ((size_t)max > nsrcs) {
    napi_throw_range_error(env, NULL, "weft_sys: srcs is shorter than max");
    return NULL;
  }
  static __thread struct mmsghdr msgs[MAX_BATCH];
  static __thread struct iovec iovs[MAX_BATCH];
  static __thread struct sockaddr_in from[MAX_BATCH];
  for (int32_t i = 0; i < max; i++) {
    iovs[i].iov_base = buf + (size_t)i * (size_t)slot;
    iovs[i].iov_len = (size_t)slot;
    memset(&msgs[i].msg_hdr, 0, sizeof msgs[i].msg_hdr);
    msgs[i].msg_hdr.msg_iov = &iovs[i];
    msgs[i].msg_hdr.msg_iovlen = 1;
    msgs[i].msg_hdr.msg_name = &from[i];
    msgs[i].msg_hdr.msg_namelen = sizeof from[i];
  }
  int n;
  do n = recvmmsg(fd, msgs, (unsigned)max, MSG_DONTWAIT, NULL);
  while (n < 0 && errno == EINTR);
  if (n < 0) {
    int err = errno;
    if (err == EAGAIN || err == EWOULDBLOCK) return u32(env, 0);
    return throw_errno(env, "recvmmsg", err);
  }
  for (int i = 0; i < n; i++) {
    bool trunc = (msgs[i].msg_hdr.msg_flags & MSG_TRUNC) != 0;
    lens[i] = trunc ? 0 : msgs[i].msg_len;
    srcs[i] = from[i].sin_family == AF_INET ? ntohl(from[i].sin_addr.s_addr) : 0;
  }
  return u32(env, (uint32_t)n);
}

#ifndef UDP_SEGMENT
#define UDP_SEGMENT 103 // linux/udp.h, since 4.18
#endif
// linux/udp.h UDP_MAX_SEGMENTS was 64 before 5.x raised it; 64 fits every kernel that has GSO.
#define GSO_MAX_SEGS 64
// The largest UDP payload of one GSO send (IPv4: 65535 - 20 - 8).
#define GSO_MAX_BYTES 65507

// Set once the kernel refused UDP_SEGMENT (old kernel, or an egress device without checksum
// offload answers EIO): every later batch is sent one datagram per message.
static bool gso_broken = false;

// udpSendBatch(fd, buf, slot, lens, count, dsts, port, gso): sendmmsg(2) of every packet with
// lens[i] > 0 to dsts[i]:port (host-order IPv4). With gso, runs of packets to the same peer with
// the same length (the last may be shorter) go as one message with UDP_SEGMENT = that length: the
// kernel splits it into exactly those datagrams (net/ipv4/udp_offload.c), so the wire carries the
// same datagrams, but the stack below the socket is walked once per run instead of per packet.
// A full socket buffer (EAGAIN) drops the rest, as a NIC queue would. Returns packets sent, in order.
napi_value js_udp_send_batch(napi_env env, napi_callback_info info) {
  ARGS(env, info, 8);
  int32_t fd, slot, count, port;
  uint8_t *buf;
  uint32_t *lens, *dsts;
  size_t ndsts = 0;
  if (!get_i32(env, argv[0], "fd", &fd) || !batch_args(env, argv + 1, &buf, &slot, &lens, &count) ||
      !get_u32s(env, argv[5], "dsts", &dsts, &ndsts) || !get_i32(env, argv[6], "port", &port)) {
    return NULL;
  }
  if ((size_t)count > ndsts) {
    napi_throw_range_error(env, NULL, "weft_sys: dsts is shorter than count");
    return NULL;
  }
  bool want_gso = false;
  napi_valuetype t;
  if (napi_typeof(env, argv[7], &t) == napi_ok && t == napi_boolean) napi_get_value_bool(env, argv[7], &want_gso);
  static __thread struct mmsghdr msgs[MAX_BATCH];
  static __thread struct iovec iovs[MAX_BATCH];
  static __thread struct sockaddr_in to[MAX_BATCH];
  static __thread uint32_t npkts[MAX_BATCH];
  static __thread union {
    char buf[CMSG_SPACE(sizeof(uint16_t))];
    struct cmsghdr align;
  } ctrl[MAX_BATCH];
retry:;
  bool gso = want_gso && !gso_broken;
  unsigned m = 0, niov = 0;
  for (int32_t i = 0; i < count; i++) {
    uint32_t len = lens[i];
    if (len == 0 || len > (uint32_t)slot) continue;
    struct msghdr *h = &msgs[m].msg_hdr;
    memset(h, 0, sizeof *h);
    memset(&to[m], 0, sizeof to[m]);
    to[m].sin_family = AF_INET;
    to[m].sin_port = htons((uint16_t)port);
    to[m].sin_addr.s_addr = htonl(dsts[i]);
    h->msg_name = &to[m];
    h->msg_namelen = sizeof to[m];
    h->msg_iov = &iovs[niov];
    iovs[niov].iov_base = buf + (size_t)i * (size_t)slot;
    iovs[niov].iov_len = len;
    niov++;
    uint32_t n = 1, bytes = len;
    // Extend the run: same peer, same size; a shorter packet may close it (the GSO tail).
    while (gso && n < GSO_MAX_SEGS && i + 1 < count) {
      uint32_t next = lens[i + 1];
      if (next == 0 || next > len || dsts[i + 1] != dsts[i] || bytes + next > GSO_MAX_BYTES) break;
      i++;
      iovs[niov].iov_base = buf + (size_t)i * (size_t)slot;
      iovs[niov].iov_len = next;
      niov++;
      n++;
      bytes += next;
      if (next < len) break;
    }
    h->msg_iovlen = n;
    if (n > 1) {
      h->msg_control = ctrl[m].buf;
      h->msg_controllen = sizeof ctrl[m].buf;
      struct cmsghdr *cm = CMSG_FIRSTHDR(h);
      cm->cmsg_level = SOL_UDP;
      cm->cmsg_type = UDP_SEGMENT;
      cm->cmsg_len = CMSG_LEN(sizeof(uint16_t));
      uint16_t seg = (uint16_t)len;
      memcpy(CMSG_DATA(cm), &seg, sizeof seg);
    }
    npkts[m] = n;
    m++;
  }
  unsigned sent = 0, pkts = 0;
  while (sent < m) {
    int r = sendmmsg(fd, msgs + sent, m - sent, MSG_DONTWAIT);
    if (r < 0) {
      int err = errno;
      if (err == EINTR) continue;
      if (err == EAGAIN || err == EWOULDBLOCK || err == ENOBUFS) break;
      if (gso && (err == EIO || err == EINVAL || err == ENOPROTOOPT) && msgs[sent].msg_hdr.msg_iovlen > 1 && pkts == 0 && sent == 0) {
        gso_broken = true; // nothing went out yet: resend the whole batch without GSO
        goto retry;
      }
      // A per-destination error (e.g. EHOSTUNREACH) fails only the first message: skip it.
      sent++;
      continue;
    }
    for (int k = 0; k < r; k++) pkts += npkts[sent + (unsigned)k];
    sent += (unsigned)r;
    if (r == 0) break;
  }
  return u32(env, pkts);
}

