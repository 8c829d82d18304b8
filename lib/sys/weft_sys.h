// Shared between the addon's C files (weft_sys.c: core verbs and module init; packet_args.c,
// tun_io.c, udp_io.c: the udp backend's batched packet I/O). Plain C, N-API only.
#ifndef WEFT_SYS_H
#define WEFT_SYS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <node_api.h>

// Throws `<syscall>: <strerror> (<ENAME>)` with code/errno/syscall; always returns NULL.
napi_value throw_errno(napi_env env, const char *syscall, int err);
// Turns a failed napi_* call into a JS exception (unless one is already pending); returns NULL.
napi_value throw_napi(napi_env env, const char *what);
// An int32 argument; false after throwing a TypeError naming `what`.
bool get_i32(napi_env env, napi_value v, const char *what, int32_t *out);
napi_value undefined(napi_env env);

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

// packet_args.c: argument helpers of the batched calls.
bool get_bytes(napi_env env, napi_value v, const char *what, uint8_t **data, size_t *len);
bool get_u32s(napi_env env, napi_value v, const char *what, uint32_t **data, size_t *count);
napi_value u32(napi_env env, uint32_t n);
bool batch_args(napi_env env, napi_value *argv, uint8_t **buf, int32_t *slot, uint32_t **lens, int32_t *max);
bool opt_bool(napi_env env, napi_value v);

// tun_io.c
napi_value js_set_non_blocking(napi_env env, napi_callback_info info);
napi_value js_tun_read_batch(napi_env env, napi_callback_info info);
napi_value js_tun_set_offload(napi_env env, napi_callback_info info);
napi_value js_tun_write_batch(napi_env env, napi_callback_info info);
napi_value js_set_tx_queue_len(napi_env env, napi_callback_info info);

// udp_io.c
napi_value js_udp_open(napi_env env, napi_callback_info info);
napi_value js_udp_recv_batch(napi_env env, napi_callback_info info);
napi_value js_udp_send_batch(napi_env env, napi_callback_info info);

#endif
