// weft_sys: the only native code in weft (N-API, plain C). The exact surface is the contract in
// lib/sys/index.ts: setns, a namespace file's type, flock, raw netlink sockets, an fd readiness watch and, for weftd's udp
// backend only, a TUN open and (in tun_io.c and udp_io.c) batched TUN/UDP packet I/O. Built twice
// (binding.gyp): weft_sys for weftd, and weft_sys_lean (WEFT_SYS_LEAN: no packet I/O) that the
// plugins embed, since they never move packets and every byte of the addon is in their start-up.
// Every call is synchronous and acts on the calling thread (the JS main thread). Failing syscalls
// throw an Error carrying code (errno name), errno (positive) and syscall; errno is copied right
// after the failing call, before anything else can overwrite it.
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <linux/if_tun.h>
#include <linux/netlink.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <node_api.h>
#include <uv.h>

#include "weft_sys.h"

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
napi_value throw_errno(napi_env env, const char *syscall, int err) {
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
napi_value throw_napi(napi_env env, const char *what) {
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

bool get_i32(napi_env env, napi_value v, const char *what, int32_t *out) {
  if (napi_get_value_int32(env, v, out) == napi_ok) return true;
  char msg[96];
  snprintf(msg, sizeof msg, "weft_sys: %s must be a number", what);
  napi_throw_type_error(env, NULL, msg);
  return false;
}

napi_value undefined(napi_env env) {
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

#ifndef NS_GET_NSTYPE
#define NS_GET_NSTYPE _IO(0xb7, 0x3) // linux/nsfs.h, Linux 4.11
#endif

// The CLONE_NEW* type of the namespace open at fd (ioctl NS_GET_NSTYPE); ENOTTY when fd is not a namespace file.
static napi_value js_ns_type(napi_env env, napi_callback_info info) {
  ARGS(env, info, 1);
  int32_t fd;
  if (!get_i32(env, argv[0], "fd", &fd)) return NULL;
  int type = ioctl(fd, NS_GET_NSTYPE);
  if (type < 0) return throw_errno(env, "NS_GET_NSTYPE", errno);
  napi_value v;
  CALL(env, napi_create_int32(env, type, &v));
  return v;
}

static void wake_noop(int sig) { (void)sig; }

#ifndef sigev_notify_thread_id
#define sigev_notify_thread_id _sigev_un._tid
#endif

// A blocking flock(how) that gives up after ms: a timer aimed at this thread (SIGEV_THREAD_ID)
// raises SIGALRM, whose handler (installed without SA_RESTART for the wait, Node uses no SIGALRM)
// makes flock fail with EINTR. The timer repeats every 5 ms after the deadline, so a signal that
// lands just before flock starts to sleep costs 5 ms, not the wait. Returns 0, -1 with errno, or 1
// when the deadline passed. The kernel queues us behind the holder, so we wake when it lets go.
static int flock_bounded(int fd, int how, int32_t ms) {
  struct sigaction sa, old_sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = wake_noop;
  sigemptyset(&sa.sa_mask);
  if (sigaction(SIGALRM, &sa, &old_sa) != 0) return -1;
  sigset_t alrm, old_mask;
  sigemptyset(&alrm);
  sigaddset(&alrm, SIGALRM);
  pthread_sigmask(SIG_UNBLOCK, &alrm, &old_mask);
  struct sigevent sev;
  memset(&sev, 0, sizeof sev);
  sev.sigev_notify = SIGEV_THREAD_ID;
  sev.sigev_signo = SIGALRM;
  sev.sigev_notify_thread_id = (pid_t)syscall(SYS_gettid);
  timer_t timer;
  int rc = -1, err = 0;
  if (timer_create(CLOCK_MONOTONIC, &sev, &timer) != 0) {
    err = errno;
  } else {
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    struct itimerspec its = {.it_interval = {0, 5 * 1000000L}, .it_value = {ms / 1000, (long)(ms % 1000) * 1000000L}};
    if (its.it_value.tv_sec == 0 && its.it_value.tv_nsec == 0) its.it_value.tv_nsec = 1;
    if (timer_settime(timer, 0, &its, NULL) != 0) err = errno;
    while (err == 0) {
      if (flock(fd, how) == 0) {
        rc = 0;
        break;
      }
      if (errno != EINTR) {
        err = errno;
        break;
      }
      clock_gettime(CLOCK_MONOTONIC, &now);
      if ((now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000 >= ms) {
        rc = 1;
        break;
      }
    }
    timer_delete(timer);
  }
  pthread_sigmask(SIG_SETMASK, &old_mask, NULL);
  sigaction(SIGALRM, &old_sa, NULL);
  if (rc < 0) errno = err;
  return rc;
}

// flock(fd, op[, wait]): wait true = LOCK_NB (false when held); a number = block at most that many ms
// (false when still held then); absent = block.
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
  napi_valuetype t = napi_undefined;
  if (napi_typeof(env, argv[2], &t) == napi_ok && t == napi_number) {
    int32_t ms;
    if (!get_i32(env, argv[2], "wait", &ms)) return NULL;
    if (ms < 0) ms = 0;
    if (how != LOCK_UN) {
      int rc = flock_bounded(fd, how, ms);
      if (rc < 0) return throw_errno(env, "flock", errno);
      return boolean(env, rc == 0);
    }
  }
  if (t == napi_boolean) napi_get_value_bool(env, argv[2], &non_blocking);
  if (non_blocking) how |= LOCK_NB;
  for (;;) {
    if (flock(fd, how) == 0) return boolean(env, true);
    int err = errno;
    if (err == EINTR) continue;
    if (non_blocking && err == EWOULDBLOCK) return boolean(env, false);
    return throw_errno(env, "flock", err);
  }
}

#ifndef WEFT_SYS_LEAN
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
  if (fd < 0) return throw_errno(env, "open /dev/net/tun", errno); // a container without the device: name it
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
#endif

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

/** What a peek offers the kernel: the dump skb size netlink_dump grows to (SKB_WITH_OVERHEAD(32768) caps it). */
#define NL_PEEK_LEN 32768

static napi_value js_nl_recv(napi_env env, napi_callback_info info) {
  ARGS(env, info, 2);
  int32_t fd, timeout;
  if (!get_i32(env, argv[0], "fd", &fd) || !get_i32(env, argv[1], "timeoutMs", &timeout)) return NULL;
  if (timeout < -1) timeout = -1;
  // The kernel answers an rtnetlink request inside the sending sendmsg (netlink_unicast_kernel), so
  // the reply is usually queued already: look first, poll only when nothing is there yet.
  int queued = 1;
  for (;;) {
    napi_value nul;
    if (!queued) {
      struct pollfd p = {.fd = fd, .events = POLLIN, .revents = 0};
      int r = poll(&p, 1, timeout);
      if (r < 0) {
        int err = errno;
        if (err == EINTR) continue;
        return throw_errno(env, "poll", err);
      }
      if (r == 0) {
        CALL(env, napi_get_null(env, &nul));
        return nul;
      }
    }
    // MSG_PEEK|MSG_TRUNC returns the whole datagram's length (net/netlink/af_netlink.c),
    // so the buffer is sized exactly and nothing is ever truncated. The peek offers NL_PEEK_LEN
    // bytes, not 0: netlink_recvmsg records the largest length a reader offered
    // (nlk->max_recvmsg_len) and netlink_dump then fills skbs of that size (up to 32 KiB) instead of
    // NLMSG_GOODSIZE (~4 KiB). A set dump restarts its walk from the first element for every skb
    // (nf_tables_dump_set skips what was sent), so 8x larger skbs make a 100,000-element dump 8x
    // cheaper in the kernel. What the peek copies is never read, so one static buffer serves every
    // thread (a stack one grew the addon's file by a page).
    static char peek[NL_PEEK_LEN];
    ssize_t want = recv(fd, peek, sizeof peek, MSG_PEEK | MSG_TRUNC | MSG_DONTWAIT);
    if (want < 0) {
      int err = errno;
      if (err == EINTR) continue;
      if (err == EAGAIN || err == EWOULDBLOCK) {
        if (queued && timeout != 0) {
          queued = 0; // nothing yet: wait in poll
          continue;
        }
        if (timeout != 0) continue;
        CALL(env, napi_get_null(env, &nul));
        return nul;
      }
      return throw_errno(env, "recv", err);
    }
    queued = 1;
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
      {"nsType", NULL, js_ns_type, NULL, NULL, NULL, napi_enumerable, NULL},
      {"flock", NULL, js_flock, NULL, NULL, NULL, napi_enumerable, NULL},
      {"nlOpen", NULL, js_nl_open, NULL, NULL, NULL, napi_enumerable, NULL},
      {"nlAddMembership", NULL, js_nl_add_membership, NULL, NULL, NULL, napi_enumerable, NULL},
      {"nlSend", NULL, js_nl_send, NULL, NULL, NULL, napi_enumerable, NULL},
      {"nlRecv", NULL, js_nl_recv, NULL, NULL, NULL, napi_enumerable, NULL},
      {"pollStart", NULL, js_poll_start, NULL, NULL, NULL, napi_enumerable, NULL},
      {"pollStop", NULL, js_poll_stop, NULL, NULL, NULL, napi_enumerable, NULL},
#ifndef WEFT_SYS_LEAN
      {"tunOpen", NULL, js_tun_open, NULL, NULL, NULL, napi_enumerable, NULL},
      {"setNonBlocking", NULL, js_set_non_blocking, NULL, NULL, NULL, napi_enumerable, NULL},
      {"tunReadBatch", NULL, js_tun_read_batch, NULL, NULL, NULL, napi_enumerable, NULL},
      {"tunSetOffload", NULL, js_tun_set_offload, NULL, NULL, NULL, napi_enumerable, NULL},
      {"tunWriteBatch", NULL, js_tun_write_batch, NULL, NULL, NULL, napi_enumerable, NULL},
      {"setTxQueueLen", NULL, js_set_tx_queue_len, NULL, NULL, NULL, napi_enumerable, NULL},
      {"udpOpen", NULL, js_udp_open, NULL, NULL, NULL, napi_enumerable, NULL},
      {"udpRecvBatch", NULL, js_udp_recv_batch, NULL, NULL, NULL, napi_enumerable, NULL},
      {"udpSendBatch", NULL, js_udp_send_batch, NULL, NULL, NULL, napi_enumerable, NULL},
#endif
  };
  CALL(env, napi_define_properties(env, exports, sizeof props / sizeof props[0], props));
  return exports;
}
