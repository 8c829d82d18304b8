// Batched TUN I/O for the udp backend's forwarder: readiness-driven reads and writes of many
// packets per call, with the virtio_net_hdr offloads (TSO on read, GRO-style coalescing on write).
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <linux/if_tun.h>
#include <linux/virtio_net.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "weft_sys.h"

// Most segments coalesced into one TUN write (64 KiB / a 1400-byte MSS is 46).
#define GSO_RUN_MAX 64

napi_value js_set_non_blocking(napi_env env, napi_callback_info info) {
  ARGS(env, info, 1);
  int32_t fd;
  if (!get_i32(env, argv[0], "fd", &fd)) return NULL;
  int fl = fcntl(fd, F_GETFL);
  if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) != 0) return throw_errno(env, "fcntl", errno);
  return undefined(env);
}

// Completes a CHECKSUM_PARTIAL packet: the ones'-complement sum from csum_start to the end, seeded
// with the pseudo-header sum already in the field, stored complemented at csum_start + csum_offset.
static bool complete_csum(uint8_t *p, uint32_t len, uint32_t start, uint32_t off) {
  if (start >= len || start + off + 2 > len) return false;
  uint32_t sum = 0;
  for (uint32_t k = start; k + 1 < len; k += 2) sum += (uint32_t)((p[k] << 8) | p[k + 1]);
  if ((len - start) & 1) sum += (uint32_t)(p[len - 1] << 8);
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  uint16_t c = (uint16_t)~sum;
  p[start + off] = (uint8_t)(c >> 8);
  p[start + off + 1] = (uint8_t)c;
  return true;
}

// tunReadBatch(fd, buf, slot, lens, max, vnet): read(2) packets until EAGAIN or max; returns the
// count. A TUN fd (IFF_NO_PI) returns exactly one packet per read (drivers/net/tun.c tun_do_read).

// Segments the TCP/IPv4 superpacket sp[0, len) (virtio_net_hdr h, GSO_TCPV4) into packets of
// at most gso_size payload in slots buf[n...], as a NIC's TSO would (net/ipv4/tcp_offload.c):
// per segment IP total length, ID + k and header checksum; TCP seq + k * mss, FIN/PSH only on
// the last, CWR only on the first, a full checksum. Returns the number of slots used, 0 to drop.
static uint16_t rd16(const uint8_t *p);
static void wr16(uint8_t *p, uint16_t v);
static uint16_t ip_header_csum(const uint8_t *ip);
static int32_t tso_split(const uint8_t *sp, uint32_t len, const struct virtio_net_hdr *h, uint8_t *buf, int32_t slot, uint32_t *lens, int32_t n, int32_t max) {
  if ((h->gso_type & ~VIRTIO_NET_HDR_GSO_ECN) != VIRTIO_NET_HDR_GSO_TCPV4 || len < 40 || (sp[0] >> 4) != 4 || sp[9] != IPPROTO_TCP) return 0;
  uint32_t ihl = (uint32_t)(sp[0] & 0x0f) * 4;
  if (ihl < 20 || ihl + 20 > len) return 0;
  uint32_t hl = ihl + (uint32_t)(sp[ihl + 12] >> 4) * 4;
  uint32_t mss = h->gso_size;
  if (hl > len || mss == 0 || hl + mss > (uint32_t)slot) return 0;
  uint32_t payload = len - hl;
  int32_t nseg = (int32_t)((payload + mss - 1) / mss);
  if (nseg == 0 || n + nseg > max) return 0;
  uint16_t id0 = rd16(sp + 4);
  uint32_t seq0 = ((uint32_t)sp[ihl + 4] << 24) | ((uint32_t)sp[ihl + 5] << 16) | ((uint32_t)sp[ihl + 6] << 8) | sp[ihl + 7];
  for (int32_t k = 0; k < nseg; k++) {
    uint8_t *q = buf + (size_t)(n + k) * (size_t)slot;
    uint32_t chunk = k == nseg - 1 ? payload - (uint32_t)k * mss : mss;
    memcpy(q, sp, hl);
    memcpy(q + hl, sp + hl + (size_t)k * mss, chunk);
    uint32_t tot = hl + chunk;
    wr16(q + 2, (uint16_t)tot);
    wr16(q + 4, (uint16_t)(id0 + k));
    wr16(q + 10, 0);
    wr16(q + 10, ip_header_csum(q));
    uint8_t *th = q + ihl;
    uint32_t seq = seq0 + (uint32_t)k * mss;
    th[4] = (uint8_t)(seq >> 24); th[5] = (uint8_t)(seq >> 16); th[6] = (uint8_t)(seq >> 8); th[7] = (uint8_t)seq;
    if (k != nseg - 1) th[13] &= (uint8_t)~0x09; // FIN, PSH
    if (k != 0) th[13] &= (uint8_t)~0x80;        // CWR
    th[16] = 0;
    th[17] = 0;
    uint32_t tlen = tot - ihl;
    uint32_t sum = rd16(q + 12) + rd16(q + 14) + rd16(q + 16) + rd16(q + 18) + IPPROTO_TCP + tlen;
    for (uint32_t b = 0; b + 1 < tlen; b += 2) sum += (uint32_t)((th[b] << 8) | th[b + 1]);
    if (tlen & 1) sum += (uint32_t)(th[tlen - 1] << 8);
    while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
    wr16(th + 16, (uint16_t)~sum);
    lens[n + k] = tot;
  }
  return nseg;
}

// Slots a vnet read must have free: a superpacket of 64 KiB at an MSS >= 1024 fits in 64.
#define TSO_MAX_SEGS 64

napi_value js_tun_read_batch(napi_env env, napi_callback_info info) {
  ARGS(env, info, 6);
  int32_t fd, slot, max;
  uint8_t *buf;
  uint32_t *lens;
  if (!get_i32(env, argv[0], "fd", &fd) || !batch_args(env, argv + 1, &buf, &slot, &lens, &max)) return NULL;
  bool vnet = opt_bool(env, argv[5]);
  static __thread uint8_t scratch[65536 + 512];
  struct virtio_net_hdr hdr;
  int32_t n = 0;
  while (n < max) {
    uint8_t *p = buf + (size_t)n * (size_t)slot;
    ssize_t r;
    if (vnet) {
      // With TUNSETOFFLOAD (tunSetOffload) the stack may hand us TCP superpackets (segmented
      // here) and checksum-partial packets (completed here); without it the header is all zeros.
      if (max - n < TSO_MAX_SEGS && n > 0) break; // the caller comes back with room
      struct iovec iov[2] = {{.iov_base = &hdr, .iov_len = sizeof hdr}, {.iov_base = scratch, .iov_len = sizeof scratch}};
      r = readv(fd, iov, 2);
      if (r >= 0) {
        uint32_t len = r >= (ssize_t)sizeof hdr ? (uint32_t)(r - (ssize_t)sizeof hdr) : 0;
        if (hdr.gso_type != VIRTIO_NET_HDR_GSO_NONE) {
          int32_t used = tso_split(scratch, len, &hdr, buf, slot, lens, n, max);
          if (used > 0) {
            n += used;
            continue;
          }
          r = 0; // unsplittable: reported as an empty (malformed) packet
        } else if (len > (uint32_t)slot) {
          r = 0;
        } else {
          if ((hdr.flags & VIRTIO_NET_HDR_F_NEEDS_CSUM) && !complete_csum(scratch, len, hdr.csum_start, hdr.csum_offset)) len = 0;
          memcpy(p, scratch, len);
          r = (ssize_t)len;
        }
      }
    } else {
      r = read(fd, p, (size_t)slot);
    }
    if (r < 0) {
      int err = errno;
      if (err == EINTR) continue;
      if (err == EAGAIN || err == EWOULDBLOCK) break;
      if (n > 0) break; // report what we have; the error comes back on the next call
      return throw_errno(env, "read", err);
    }
    lens[n++] = (uint32_t)r;
  }
  return u32(env, (uint32_t)n);
}

// tunSetOffload(fd, tso): TUNSETOFFLOAD (linux/if_tun.h) on a vnet TUN: TUN_F_CSUM | TUN_F_TSO4
// with tso, else 0. The stack then skips segmenting and checksumming what it routes to us.
napi_value js_tun_set_offload(napi_env env, napi_callback_info info) {
  ARGS(env, info, 2);
  int32_t fd;
  if (!get_i32(env, argv[0], "fd", &fd)) return NULL;
  unsigned long flags = opt_bool(env, argv[1]) ? (TUN_F_CSUM | TUN_F_TSO4) : 0;
  if (ioctl(fd, TUNSETOFFLOAD, flags) != 0) return throw_errno(env, "TUNSETOFFLOAD", errno);
  return undefined(env);
}

// ---- Receive-side coalescing for a vnet TUN (what GRO does in a NIC driver) ----
// Consecutive TCP/IPv4 segments of one flow, in order, are handed to the stack as one packet
// with a virtio_net_hdr asking for TCP segmentation (VIRTIO_NET_HDR_GSO_TCPV4) and a partial
// checksum, so routing, the bridge, the veth and the pod's TCP see one skb instead of up to 44.
// The conditions mirror tcp_gro_receive (net/ipv4/tcp_offload.c), conservatively: no IP options
// or fragments, same addresses/TOS/TTL/ports/ack/window/options, contiguous sequence numbers,
// ACK-only flags (PSH may end a run), every segment but the last exactly gso_size long.

static uint16_t rd16(const uint8_t *p) { return (uint16_t)((p[0] << 8) | p[1]); }
static uint32_t rd32(const uint8_t *p) { return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3]; }
static void wr16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)(v >> 8); p[1] = (uint8_t)v; }

// Header length (IP 20 + TCP) of a plain TCP/IPv4 segment with payload, else 0.
static uint32_t tcp4_hlen(const uint8_t *p, uint32_t len) {
  if (len < 40 || p[0] != 0x45 || p[9] != IPPROTO_TCP || rd16(p + 2) != len || (rd16(p + 6) & 0x3fff) != 0) return 0;
  uint32_t hl = 20 + (uint32_t)(p[32] >> 4) * 4;
  return hl >= 40 && hl < len ? hl : 0;
}

// True when q (header length hl, same as f's) continues the run whose previous segment is prev.
static bool tcp4_continues(const uint8_t *f, const uint8_t *prev, uint32_t prev_len, const uint8_t *q, uint32_t hl) {
  if (q[1] != f[1] || q[8] != f[8] || memcmp(q + 12, f + 12, 8) != 0) return false; // TOS, TTL, addresses
  if (memcmp(q + 20, f + 20, 4) != 0 || memcmp(q + 28, f + 28, 4) != 0) return false;  // ports, ack
  if (q[32] != f[32] || (q[33] & ~0x08) != 0x10 || memcmp(q + 34, f + 34, 2) != 0) return false; // offset, ACK(+PSH), window
  if (hl > 40 && memcmp(q + 40, f + 40, hl - 40) != 0) return false; // options (timestamps) identical
  return rd32(q + 24) == rd32(prev + 24) + (prev_len - hl);
}

// Folded ones'-complement sum of the TCP pseudo-header (not complemented): the partial checksum
// a CHECKSUM_PARTIAL packet carries (as tcp_v4_send_check leaves it).
static uint16_t tcp4_pseudo(const uint8_t *ip, uint32_t tcp_len) {
  uint32_t sum = rd16(ip + 12) + rd16(ip + 14) + rd16(ip + 16) + rd16(ip + 18) + IPPROTO_TCP + tcp_len;
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  return (uint16_t)sum;
}

static uint16_t ip_header_csum(const uint8_t *ip) {
  uint32_t sum = 0;
  for (int k = 0; k < 20; k += 2) sum += k == 10 ? 0 : rd16(ip + k);
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  return (uint16_t)~sum;
}

// Writes packets [i, end) of the batch as one coalesced TCP superpacket (end - i >= 2).
static bool tun_write_run(int fd, uint8_t *buf, int32_t slot, uint32_t *lens, int32_t i, int32_t end, uint32_t hl) {
  static __thread struct iovec iov[GSO_RUN_MAX + 1];
  uint8_t *f = buf + (size_t)i * (size_t)slot;
  uint32_t mss = lens[i] - hl, total = lens[i];
  struct virtio_net_hdr h;
  memset(&h, 0, sizeof h);
  iov[0].iov_base = &h;
  iov[0].iov_len = sizeof h;
  iov[1].iov_base = f;
  iov[1].iov_len = lens[i];
  int n = 2;
  for (int32_t k = i + 1; k < end; k++) {
    uint8_t *q = buf + (size_t)k * (size_t)slot;
    iov[n].iov_base = q + hl;
    iov[n].iov_len = lens[k] - hl;
    total += lens[k] - hl;
    n++;
    if (k == end - 1) f[33] |= (uint8_t)(q[33] & 0x08); // PSH of the last segment
  }
  wr16(f + 2, (uint16_t)total);
  wr16(f + 10, ip_header_csum(f));
  wr16(f + 36, tcp4_pseudo(f, total - 20));
  h.flags = VIRTIO_NET_HDR_F_NEEDS_CSUM;
  h.gso_type = VIRTIO_NET_HDR_GSO_TCPV4;
  h.hdr_len = (uint16_t)hl;
  h.gso_size = (uint16_t)mss;
  h.csum_start = 20;
  h.csum_offset = 16;
  ssize_t r;
  do r = writev(fd, iov, n);
  while (r < 0 && errno == EINTR);
  return r >= 0;
}

// tunWriteBatch(fd, buf, slot, lens, count, vnet, noCoalesce): write(2) each packet with
// lens[i] > 0. A TUN write never blocks for long (it queues to the stack); a refused packet
// (EINVAL, EAGAIN) is dropped. With vnet (a TUN opened with vnetHdr), runs of one TCP flow are
// coalesced as above unless noCoalesce (then each packet goes with an all-zero header).
// Returns the number of packets written (a coalesced run counts each of its segments).
napi_value js_tun_write_batch(napi_env env, napi_callback_info info) {
  ARGS(env, info, 7);
  int32_t fd, slot, count;
  uint8_t *buf;
  uint32_t *lens;
  if (!get_i32(env, argv[0], "fd", &fd) || !batch_args(env, argv + 1, &buf, &slot, &lens, &count)) return NULL;
  bool vnet = opt_bool(env, argv[5]);
  bool coalesce = vnet && !opt_bool(env, argv[6]);
  uint32_t ok = 0;
  for (int32_t i = 0; i < count; i++) {
    if (lens[i] == 0 || lens[i] > (uint32_t)slot) continue;
    uint8_t *p = buf + (size_t)i * (size_t)slot;
    if (vnet) {
      uint32_t hl = tcp4_hlen(p, lens[i]);
      int32_t end = i + 1;
      if (coalesce && hl != 0 && (p[33] & 0xff) == 0x10) {
        uint32_t mss = lens[i] - hl, total = lens[i], prev_len = lens[i];
        const uint8_t *prev = p;
        while (end < count && end - i < GSO_RUN_MAX && prev_len - hl == mss) {
          uint32_t ql = lens[end];
          const uint8_t *q = buf + (size_t)end * (size_t)slot;
          if (ql == 0 || ql > (uint32_t)slot || tcp4_hlen(q, ql) != hl || ql - hl > mss || total + ql - hl > 65535) break;
          if (!tcp4_continues(p, prev, prev_len, q, hl)) break;
          total += ql - hl;
          prev = q;
          prev_len = ql;
          end++;
          if (q[33] & 0x08) break; // PSH closes the run
        }
      }
      if (end - i >= 2) {
        if (tun_write_run(fd, buf, slot, lens, i, end, hl)) ok += (uint32_t)(end - i);
        i = end - 1;
        continue;
      }
      struct virtio_net_hdr h;
      memset(&h, 0, sizeof h);
      struct iovec iov[2] = {{.iov_base = &h, .iov_len = sizeof h}, {.iov_base = p, .iov_len = lens[i]}};
      ssize_t r;
      do r = writev(fd, iov, 2);
      while (r < 0 && errno == EINTR);
      if (r >= 0) ok++;
      continue;
    }
    ssize_t r;
    do r = write(fd, p, lens[i]);
    while (r < 0 && errno == EINTR);
    if (r >= 0) ok++;
  }
  return u32(env, ok);
}

// setTxQueueLen(name, qlen): SIOCSIFTXQLEN (linux/sockios.h) in the calling thread's netns. A TUN
// device starts with 500, which a userspace forwarder under load overflows (drops = TCP retransmits).
napi_value js_set_tx_queue_len(napi_env env, napi_callback_info info) {
  ARGS(env, info, 2);
  struct ifreq ifr;
  memset(&ifr, 0, sizeof ifr);
  size_t len = 0;
  CALL(env, napi_get_value_string_utf8(env, argv[0], NULL, 0, &len));
  if (len >= IFNAMSIZ) return throw_errno(env, "SIOCSIFTXQLEN", EINVAL);
  CALL(env, napi_get_value_string_utf8(env, argv[0], ifr.ifr_name, IFNAMSIZ, &len));
  int32_t qlen;
  if (!get_i32(env, argv[1], "qlen", &qlen)) return NULL;
  ifr.ifr_qlen = qlen;
  int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return throw_errno(env, "socket", errno);
  if (ioctl(fd, SIOCSIFTXQLEN, &ifr) != 0) {
    int err = errno;
    close(fd);
    return throw_errno(env, "SIOCSIFTXQLEN", err);
  }
  close(fd);
  return undefined(env);
}

