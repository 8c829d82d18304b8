// weft_sys: the only native code in weft (N-API, plain C). The exact surface is the contract in
// lib/sys/index.ts: setns, flock, a TUN open, raw netlink sockets, an fd readiness watch and
// batched TUN/UDP packet I/O for the udp backend.
// Every call is synchronous and acts on the calling thread (the JS main thread). Failing syscalls
// throw an Error carrying code (errno name), errno (positive) and syscall; errno is copied right
// after the failing call, before anything else can overwrite it.
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <linux/if_tun.h>
#include <linux/virtio_net.h>
#include <sys/uio.h>
#include <linux/netlink.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <poll.h>
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <node_api.h>
#include <uv.h>

#ifndef SOL_NETLINK
#define SOL_NETLINK 270
#endif

// ---------------------------------------------------------------------------------------------
// Errors

static const char *errno_name(int err) {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 32))
  const char *n = strerrorname_np(err);
  if (n != NULL) return n;
#endif
  // libuv knows the common names; unknown codes are rare enough to accept its generic text.
  return uv_err_name(-err);
}

static void set_str(napi_env env, napi_value obj, const char *key, const char *val) {
  napi_value v;
  if (napi_create_string_utf8(env, val, NAPI_AUTO_LENGTH, &v) == napi_ok) napi_set_named_property(env, obj, key, v);
}

// Throws `<syscall>: <strerror> (<ENAME>)` with code/errno/syscall; always returns NULL.
static napi_value throw_errno(napi_env env, const char *syscall, int err) {
  char desc[128];
  char msg[256];
  const char *d = strerror_r(err, desc, sizeof desc); // GNU variant: returns the text
  const char *name = errno_name(err);
  snprintf(msg, sizeof msg, "%s: %s (%s)", syscall, d, name);
  napi_value m, e, num;
  if (napi_create_string_utf8(env, msg, NAPI_AUTO_LENGTH, &m) != napi_ok) return NULL;
  if (napi_create_error(env, NULL, m, &e) != napi_ok) return NULL;
  set_str(env, e, "code", name);
  set_str(env, e, "syscall", syscall);
  if (napi_create_int32(env, err, &num) == napi_ok) napi_set_named_property(env, e, "errno", num);
  napi_throw(env, e);
  return NULL;
}

// Turns a failed napi_* call into a JS exception (unless one is already pending); returns NULL.
static napi_value throw_napi(napi_env env, const char *what) {
  bool pending = false;
  if (napi_is_exception_pending(env, &pending) == napi_ok && pending) return NULL;
  const napi_extended_error_info *info = NULL;
  napi_get_last_error_info(env, &info);
  char msg[256];
  snprintf(msg, sizeof msg, "weft_sys: %s failed: %s", what,
           info != NULL && info->error_message != NULL ? info->error_message : "unknown N-API error");
  napi_throw_error(env, NULL, msg);
  return NULL;
}

#define CALL(env, expr)                                                                        \
  do {                                                                                         \
    if ((expr) != napi_ok) return throw_napi((env), #expr);                                    \
  } while (0)

// Reads up to `want` arguments; missing ones are `undefined`.
#define ARGS(env, info, want)                                                                  \
  size_t argc = (want);                                                                        \
  napi_value argv[(want) > 0 ? (want) : 1];                                                    \
  CALL(env, napi_get_cb_info((env), (info), &argc, argv, NULL, NULL));                         \
  for (size_t i_ = argc; i_ < (want); i_++) napi_get_undefined((env), &argv[i_])

static bool get_i32(napi_env env, napi_value v, const char *what, int32_t *out) {
  if (napi_get_value_int32(env, v, out) == napi_ok) return true;
  char msg[96];
  snprintf(msg, sizeof msg, "weft_sys: %s must be a number", what);
  napi_throw_type_error(env, NULL, msg);
  return false;
}

static napi_value undefined(napi_env env) {
  napi_value u = NULL;
  napi_get_undefined(env, &u);
  return u;
}

static napi_value boolean(napi_env env, bool b) {
  napi_value v = NULL;
  napi_get_boolean(env, b, &v);
  return v;
}

// ---------------------------------------------------------------------------------------------
// setns, flock, tunOpen

static napi_value js_setns(napi_env env, napi_callback_info info) {
  ARGS(env, info, 1);
  int32_t fd;
  if (!get_i32(env, argv[0], "fd", &fd)) return NULL;
  if (setns(fd, CLONE_NEWNET) != 0) return throw_errno(env, "setns", errno);
  return undefined(env);
}

static napi_value js_flock(napi_env env, napi_callback_info info) {
  ARGS(env, info, 3);
  int32_t fd;
  if (!get_i32(env, argv[0], "fd", &fd)) return NULL;
  char op[4] = {0};
  size_t len = 0;
  if (napi_get_value_string_utf8(env, argv[1], op, sizeof op, &len) != napi_ok) op[0] = 0;
  int how;
  if (strcmp(op, "sh") == 0) how = LOCK_SH;
  else if (strcmp(op, "ex") == 0) how = LOCK_EX;
  else if (strcmp(op, "un") == 0) how = LOCK_UN;
  else {
    napi_throw_type_error(env, NULL, "weft_sys: flock op must be 'sh', 'ex' or 'un'");
    return NULL;
  }
  bool non_blocking = false;
  napi_valuetype t;
  if (napi_typeof(env, argv[2], &t) == napi_ok && t == napi_boolean) napi_get_value_bool(env, argv[2], &non_blocking);
  if (non_blocking) how |= LOCK_NB;
  for (;;) {
    if (flock(fd, how) == 0) return boolean(env, true);
    int err = errno;
    if (err == EINTR) continue;
    if (non_blocking && err == EWOULDBLOCK) return boolean(env, false);
    return throw_errno(env, "flock", err);
  }
}

static napi_value js_tun_open(napi_env env, napi_callback_info info) {
  ARGS(env, info, 2);
  struct ifreq ifr;
  memset(&ifr, 0, sizeof ifr);
  size_t len = 0;
  CALL(env, napi_get_value_string_utf8(env, argv[0], NULL, 0, &len));
  // IFNAMSIZ includes the terminating NUL (include/uapi/linux/if.h).
  if (len >= IFNAMSIZ) return throw_errno(env, "TUNSETIFF", EINVAL);
  CALL(env, napi_get_value_string_utf8(env, argv[0], ifr.ifr_name, IFNAMSIZ, &len));
  ifr.ifr_flags = IFF_TUN | IFF_NO_PI;
  // Optional: every read/write carries a struct virtio_net_hdr first (linux/if_tun.h IFF_VNET_HDR),
  // which lets a write hand the stack one TCP superpacket (see tunWriteBatch).
  bool vnet = false;
  napi_valuetype vt;
  if (napi_typeof(env, argv[1], &vt) == napi_ok && vt == napi_boolean) napi_get_value_bool(env, argv[1], &vnet);
  if (vnet) ifr.ifr_flags |= IFF_VNET_HDR;

  int fd = open("/dev/net/tun", O_RDWR | O_CLOEXEC);
  if (fd < 0) return throw_errno(env, "open", errno);
  if (ioctl(fd, TUNSETIFF, &ifr) != 0) {
    int err = errno;
    close(fd);
    return throw_errno(env, "TUNSETIFF", err);
  }
  ifr.ifr_name[IFNAMSIZ - 1] = 0;
  napi_value obj, vfd, vname;
  if (napi_create_object(env, &obj) != napi_ok || napi_create_int32(env, fd, &vfd) != napi_ok ||
      napi_create_string_utf8(env, ifr.ifr_name, NAPI_AUTO_LENGTH, &vname) != napi_ok ||
      napi_set_named_property(env, obj, "fd", vfd) != napi_ok ||
      napi_set_named_property(env, obj, "name", vname) != napi_ok) {
    close(fd);
    return throw_napi(env, "tunOpen result");
  }
  return obj;
}

// ---------------------------------------------------------------------------------------------
// Netlink sockets

static napi_value js_nl_open(napi_env env, napi_callback_info info) {
  ARGS(env, info, 2);
  int32_t protocol;
  uint32_t groups = 0;
  if (!get_i32(env, argv[0], "protocol", &protocol)) return NULL;
  if (napi_get_value_uint32(env, argv[1], &groups) != napi_ok) {
    napi_throw_type_error(env, NULL, "weft_sys: groups must be a number");
    return NULL;
  }
  // The socket's netns is fixed here, at creation, from the calling thread (net/socket.c).
  int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, protocol);
  if (fd < 0) return throw_errno(env, "socket", errno);
  const char *step = NULL;
  int one = 1, rcvbuf = 1 << 20;
  struct sockaddr_nl sa;
  memset(&sa, 0, sizeof sa);
  sa.nl_family = AF_NETLINK;
  sa.nl_pid = 0; // the kernel assigns a unique port id
  sa.nl_groups = groups;
  if (setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf) != 0) step = "setsockopt(SO_RCVBUF)";
  else if (setsockopt(fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof one) != 0) step = "setsockopt(NETLINK_EXT_ACK)";
  else if (bind(fd, (struct sockaddr *)&sa, sizeof sa) != 0) step = "bind";
  if (step != NULL) {
    int err = errno;
    close(fd);
    return throw_errno(env, step, err);
  }
  napi_value v;
  if (napi_create_int32(env, fd, &v) != napi_ok) {
    close(fd);
    return throw_napi(env, "nlOpen result");
  }
  return v;
}

static napi_value js_nl_add_membership(napi_env env, napi_callback_info info) {
  ARGS(env, info, 2);
  int32_t fd, group;
  if (!get_i32(env, argv[0], "fd", &fd) || !get_i32(env, argv[1], "group", &group)) return NULL;
  if (setsockopt(fd, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, &group, sizeof group) != 0)
    return throw_errno(env, "setsockopt(NETLINK_ADD_MEMBERSHIP)", errno);
  return undefined(env);
}

static napi_value js_nl_send(napi_env env, napi_callback_info info) {
  ARGS(env, info, 2);
  int32_t fd;
  if (!get_i32(env, argv[0], "fd", &fd)) return NULL;
  bool is_ta = false;
  napi_typedarray_type type;
  size_t len = 0, offset = 0;
  void *data = NULL;
  napi_value ab;
  if (napi_is_typedarray(env, argv[1], &is_ta) != napi_ok || !is_ta ||
      napi_get_typedarray_info(env, argv[1], &type, &len, &data, &ab, &offset) != napi_ok ||
      type != napi_uint8_array) {
    napi_throw_type_error(env, NULL, "weft_sys: nlSend message must be a Uint8Array");
    return NULL;
  }
  struct sockaddr_nl to;
  memset(&to, 0, sizeof to);
  to.nl_family = AF_NETLINK; // nl_pid 0: the kernel
  for (;;) {
    ssize_t n = sendto(fd, data, len, 0, (struct sockaddr *)&to, sizeof to);
    if (n < 0) {
      int err = errno;
      if (err == EINTR) continue;
      return throw_errno(env, "sendto", err);
    }
    // Netlink datagrams are all-or-nothing; a short count would mean a kernel surprise.
    if ((size_t)n != len) return throw_errno(env, "sendto", EMSGSIZE);
    return undefined(env);
  }
}

static napi_value js_nl_recv(napi_env env, napi_callback_info info) {
  ARGS(env, info, 2);
  int32_t fd, timeout;
  if (!get_i32(env, argv[0], "fd", &fd) || !get_i32(env, argv[1], "timeoutMs", &timeout)) return NULL;
  if (timeout < -1) timeout = -1;
  for (;;) {
    struct pollfd p = {.fd = fd, .events = POLLIN, .revents = 0};
    int r = poll(&p, 1, timeout);
    if (r < 0) {
      int err = errno;
      if (err == EINTR) continue;
      return throw_errno(env, "poll", err);
    }
    napi_value nul;
    if (r == 0) {
      CALL(env, napi_get_null(env, &nul));
      return nul;
    }
    // MSG_PEEK|MSG_TRUNC returns the whole datagram's length (net/netlink/af_netlink.c),
    // so the buffer is sized exactly and nothing is ever truncated.
    ssize_t want = recv(fd, NULL, 0, MSG_PEEK | MSG_TRUNC | MSG_DONTWAIT);
    if (want < 0) {
      int err = errno;
      if (err == EINTR || ((err == EAGAIN || err == EWOULDBLOCK) && timeout != 0)) continue;
      if (err == EAGAIN || err == EWOULDBLOCK) {
        CALL(env, napi_get_null(env, &nul));
        return nul;
      }
      return throw_errno(env, "recv", err);
    }
    void *data = NULL;
    napi_value buf;
    CALL(env, napi_create_buffer(env, (size_t)want, &data, &buf));
    ssize_t n = recv(fd, data, (size_t)want, MSG_DONTWAIT);
    if (n < 0) {
      int err = errno;
      if (err == EINTR || err == EAGAIN || err == EWOULDBLOCK) continue; // lost a race; the buffer is GC'd
      return throw_errno(env, "recv", err);
    }
    if (n == want) return buf;
    napi_value copy;
    CALL(env, napi_create_buffer_copy(env, (size_t)n, data, NULL, &copy));
    return copy;
  }
}

// ---------------------------------------------------------------------------------------------
// Readiness watch (uv_poll). Entries live in a per-env list so worker threads stay separate.

typedef struct poll_entry {
  uv_poll_t handle; // handle.data points back at the entry
  napi_env env;
  napi_ref cb;
  napi_async_context ctx;
  uint32_t id;
  struct poll_entry *next;
} poll_entry;

typedef struct {
  uint32_t next_id;
  poll_entry *head;
} addon_state;

// Close callback: libc's free, never a function of this addon. Node dlclose()s addons when a
// worker's env is torn down, before its loop runs the pending close callbacks; a callback in our
// own code would then jump into unmapped memory. The handle is the entry's first member, so the
// handle pointer is the malloc'd pointer.
_Static_assert(offsetof(poll_entry, handle) == 0, "uv_poll_t must be the first member of poll_entry");
static void close_and_free(poll_entry *e) {
  uv_close((uv_handle_t *)&e->handle, (uv_close_cb)(void (*)(void))free);
}

static void on_poll(uv_poll_t *h, int status, int events) {
  (void)status; // on error the callback still runs: its read then reports the real errno
  (void)events;
  poll_entry *e = h->data;
  napi_env env = e->env;
  napi_handle_scope scope;
  if (napi_open_handle_scope(env, &scope) != napi_ok) return;
  napi_value cb, global, result;
  if (napi_get_reference_value(env, e->cb, &cb) == napi_ok && napi_get_global(env, &global) == napi_ok) {
    // make_callback (not call_function) so microtasks and async hooks run as for any libuv callback.
    // `e` may be freed by pollStop inside the callback: it is not touched after this call.
    napi_status s = napi_make_callback(env, e->ctx, global, cb, 0, NULL, &result);
    if (s == napi_pending_exception) {
      napi_value exc;
      if (napi_get_and_clear_last_exception(env, &exc) == napi_ok) napi_fatal_exception(env, exc);
    }
  }
  napi_close_handle_scope(env, scope);
}

static napi_value js_poll_start(napi_env env, napi_callback_info info) {
  ARGS(env, info, 3);
  int32_t fd;
  if (!get_i32(env, argv[0], "fd", &fd)) return NULL;
  napi_valuetype t;
  CALL(env, napi_typeof(env, argv[1], &t));
  if (t != napi_function) {
    napi_throw_type_error(env, NULL, "weft_sys: pollStart callback must be a function");
    return NULL;
  }
  bool ref = false;
  if (napi_typeof(env, argv[2], &t) == napi_ok && t == napi_boolean) napi_get_value_bool(env, argv[2], &ref);
  addon_state *st = NULL;
  uv_loop_t *loop = NULL;
  CALL(env, napi_get_instance_data(env, (void **)&st));
  CALL(env, napi_get_uv_event_loop(env, &loop));

  poll_entry *e = calloc(1, sizeof *e);
  if (e == NULL) return throw_errno(env, "malloc", ENOMEM);
  e->env = env;
  napi_value name;
  if (napi_create_string_utf8(env, "weft_sys.poll", NAPI_AUTO_LENGTH, &name) != napi_ok ||
      napi_create_reference(env, argv[1], 1, &e->cb) != napi_ok) {
    free(e);
    return throw_napi(env, "pollStart");
  }
  if (napi_async_init(env, NULL, name, &e->ctx) != napi_ok) {
    napi_delete_reference(env, e->cb);
    free(e);
    return throw_napi(env, "napi_async_init");
  }
  int r = uv_poll_init(loop, &e->handle, fd);
  if (r != 0) {
    napi_delete_reference(env, e->cb);
    napi_async_destroy(env, e->ctx);
    free(e);
    return throw_errno(env, "uv_poll_init", -r); // libuv errors are negated errnos on Linux
  }
  e->handle.data = e;
  r = uv_poll_start(&e->handle, UV_READABLE, on_poll);
  if (r != 0) {
    napi_delete_reference(env, e->cb);
    napi_async_destroy(env, e->ctx);
    close_and_free(e);
    return throw_errno(env, "uv_poll_start", -r);
  }
  if (!ref) uv_unref((uv_handle_t *)&e->handle);
  e->id = ++st->next_id;
  e->next = st->head;
  st->head = e;
  napi_value id;
  CALL(env, napi_create_uint32(env, e->id, &id));
  return id;
}

// Stops and releases one watch; an unknown or already stopped id is a no-op.
static napi_value js_poll_stop(napi_env env, napi_callback_info info) {
  ARGS(env, info, 1);
  uint32_t id = 0;
  if (napi_get_value_uint32(env, argv[0], &id) != napi_ok) return undefined(env);
  addon_state *st = NULL;
  CALL(env, napi_get_instance_data(env, (void **)&st));
  for (poll_entry **pp = &st->head; *pp != NULL; pp = &(*pp)->next) {
    poll_entry *e = *pp;
    if (e->id != id) continue;
    *pp = e->next;
    uv_poll_stop(&e->handle);
    napi_delete_reference(env, e->cb);
    napi_async_destroy(env, e->ctx);
    close_and_free(e); // freed by libuv's close callback
    break;
  }
  return undefined(env);
}

// At env teardown (e.g. a worker exits) close every remaining watch and free the state.
static void cleanup_state(void *arg) {
  addon_state *st = arg;
  for (poll_entry *e = st->head, *next; e != NULL; e = next) {
    next = e->next;
    uv_poll_stop(&e->handle);
    close_and_free(e);
  }
  free(st);
}

// ---------------------------------------------------------------------------------------------
// Batched packet I/O for the udp backend's forwarder (agent/udp/). One preallocated Buffer is
// cut into fixed-size slots; packet i lives at i*slot with its length in lens[i]. The calls are
// readiness-driven: the fd is non-blocking and each call does as much as the kernel has ready, so
// one uv_poll wake-up moves a whole batch with no per-packet JS allocation or thread-pool hop.

// Reads a Buffer/Uint8Array argument (data pointer and length); false after throwing.
static bool get_bytes(napi_env env, napi_value v, const char *what, uint8_t **data, size_t *len) {
  bool is_ta = false;
  napi_typedarray_type type;
  napi_value ab;
  size_t off = 0;
  if (napi_is_typedarray(env, v, &is_ta) == napi_ok && is_ta &&
      napi_get_typedarray_info(env, v, &type, len, (void **)data, &ab, &off) == napi_ok && type == napi_uint8_array) {
    return true;
  }
  char msg[96];
  snprintf(msg, sizeof msg, "weft_sys: %s must be a Uint8Array", what);
  napi_throw_type_error(env, NULL, msg);
  return false;
}

// Reads a Uint32Array/Int32Array argument; false after throwing.
static bool get_u32s(napi_env env, napi_value v, const char *what, uint32_t **data, size_t *count) {
  bool is_ta = false;
  napi_typedarray_type type;
  napi_value ab;
  size_t off = 0;
  if (napi_is_typedarray(env, v, &is_ta) == napi_ok && is_ta &&
      napi_get_typedarray_info(env, v, &type, count, (void **)data, &ab, &off) == napi_ok &&
      (type == napi_uint32_array || type == napi_int32_array)) {
    return true;
  }
  char msg[96];
  snprintf(msg, sizeof msg, "weft_sys: %s must be a Uint32Array", what);
  napi_throw_type_error(env, NULL, msg);
  return false;
}

static napi_value u32(napi_env env, uint32_t n) {
  napi_value v = NULL;
  napi_create_uint32(env, n, &v);
  return v;
}

// Common checks of (buf, slot, lens, max): slots must fit the buffer and the arrays.
static bool batch_args(napi_env env, napi_value *argv, uint8_t **buf, int32_t *slot, uint32_t **lens, int32_t *max) {
  size_t blen = 0, nlens = 0;
  if (!get_bytes(env, argv[0], "buf", buf, &blen) || !get_i32(env, argv[1], "slot", slot) ||
      !get_u32s(env, argv[2], "lens", lens, &nlens) || !get_i32(env, argv[3], "count", max)) {
    return false;
  }
  if (*slot <= 0 || *max < 0 || (size_t)*max > nlens || (size_t)*max * (size_t)*slot > blen || *max > 1024) {
    napi_throw_range_error(env, NULL, "weft_sys: batch does not fit buf/lens (slot, count <= 1024)");
    return false;
  }
  return true;
}

// Most segments coalesced into one TUN write (64 KiB / a 1400-byte MSS is 46).
#define GSO_RUN_MAX 64

static napi_value js_set_non_blocking(napi_env env, napi_callback_info info) {
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

// An optional boolean argument (undefined = false).
static bool opt_bool(napi_env env, napi_value v) {
  bool b = false;
  napi_valuetype t;
  if (napi_typeof(env, v, &t) == napi_ok && t == napi_boolean) napi_get_value_bool(env, v, &b);
  return b;
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

static napi_value js_tun_read_batch(napi_env env, napi_callback_info info) {
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
static napi_value js_tun_set_offload(napi_env env, napi_callback_info info) {
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
static napi_value js_tun_write_batch(napi_env env, napi_callback_info info) {
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

// udpOpen(addr, port, bufBytes): a non-blocking IPv4 UDP socket bound to addr:port with
// SO_RCVBUF/SO_SNDBUF raised to bufBytes (the forwarder drains in batches, so bursts queue here).
static napi_value js_udp_open(napi_env env, napi_callback_info info) {
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

// setTxQueueLen(name, qlen): SIOCSIFTXQLEN (linux/sockios.h) in the calling thread's netns. A TUN
// device starts with 500, which a userspace forwarder under load overflows (drops = TCP retransmits).
static napi_value js_set_tx_queue_len(napi_env env, napi_callback_info info) {
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

#define MAX_BATCH 1024

// udpRecvBatch(fd, buf, slot, lens, max, srcs): recvmmsg(2) without waiting; srcs[i] receives the
// sender's IPv4 address as a host-order integer. Truncated datagrams (bigger than a slot) get
// length 0 so the caller drops them. Returns the count.
static napi_value js_udp_recv_batch(napi_env env, napi_callback_info info) {
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
static napi_value js_udp_send_batch(napi_env env, napi_callback_info info) {
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

// ---------------------------------------------------------------------------------------------

NAPI_MODULE_INIT() {
  addon_state *st = calloc(1, sizeof *st);
  if (st == NULL) return throw_errno(env, "malloc", ENOMEM);
  if (napi_set_instance_data(env, st, NULL, NULL) != napi_ok ||
      napi_add_env_cleanup_hook(env, cleanup_state, st) != napi_ok) {
    free(st);
    return throw_napi(env, "weft_sys init");
  }
  napi_property_descriptor props[] = {
      {"setns", NULL, js_setns, NULL, NULL, NULL, napi_enumerable, NULL},
      {"flock", NULL, js_flock, NULL, NULL, NULL, napi_enumerable, NULL},
      {"tunOpen", NULL, js_tun_open, NULL, NULL, NULL, napi_enumerable, NULL},
      {"nlOpen", NULL, js_nl_open, NULL, NULL, NULL, napi_enumerable, NULL},
      {"nlAddMembership", NULL, js_nl_add_membership, NULL, NULL, NULL, napi_enumerable, NULL},
      {"nlSend", NULL, js_nl_send, NULL, NULL, NULL, napi_enumerable, NULL},
      {"nlRecv", NULL, js_nl_recv, NULL, NULL, NULL, napi_enumerable, NULL},
      {"pollStart", NULL, js_poll_start, NULL, NULL, NULL, napi_enumerable, NULL},
      {"pollStop", NULL, js_poll_stop, NULL, NULL, NULL, napi_enumerable, NULL},
      {"setNonBlocking", NULL, js_set_non_blocking, NULL, NULL, NULL, napi_enumerable, NULL},
      {"tunReadBatch", NULL, js_tun_read_batch, NULL, NULL, NULL, napi_enumerable, NULL},
      {"tunSetOffload", NULL, js_tun_set_offload, NULL, NULL, NULL, napi_enumerable, NULL},
      {"tunWriteBatch", NULL, js_tun_write_batch, NULL, NULL, NULL, napi_enumerable, NULL},
      {"setTxQueueLen", NULL, js_set_tx_queue_len, NULL, NULL, NULL, napi_enumerable, NULL},
      {"udpOpen", NULL, js_udp_open, NULL, NULL, NULL, napi_enumerable, NULL},
      {"udpRecvBatch", NULL, js_udp_recv_batch, NULL, NULL, NULL, napi_enumerable, NULL},
      {"udpSendBatch", NULL, js_udp_send_batch, NULL, NULL, NULL, napi_enumerable, NULL},
  };
  CALL(env, napi_define_properties(env, exports, sizeof props / sizeof props[0], props));
  return exports;
}
