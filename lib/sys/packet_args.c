// Argument helpers of the batched packet I/O calls (tun_io.c, udp_io.c).
#include <stdio.h>

#include "weft_sys.h"

// Batched packet I/O for the udp backend's forwarder (agent/udp/). One preallocated Buffer is
// cut into fixed-size slots; packet i lives at i*slot with its length in lens[i]. The calls are
// readiness-driven: the fd is non-blocking and each call does as much as the kernel has ready, so
// one uv_poll wake-up moves a whole batch with no per-packet JS allocation or thread-pool hop.

// Reads a Buffer/Uint8Array argument (data pointer and length); false after throwing.
bool get_bytes(napi_env env, napi_value v, const char *what, uint8_t **data, size_t *len) {
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
bool get_u32s(napi_env env, napi_value v, const char *what, uint32_t **data, size_t *count) {
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

napi_value u32(napi_env env, uint32_t n) {
  napi_value v = NULL;
  napi_create_uint32(env, n, &v);
  return v;
}

// Common checks of (buf, slot, lens, max): slots must fit the buffer and the arrays.
bool batch_args(napi_env env, napi_value *argv, uint8_t **buf, int32_t *slot, uint32_t **lens, int32_t *max) {
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

// An optional boolean argument (undefined = false).
bool opt_bool(napi_env env, napi_value v) {
  bool b = false;
  napi_valuetype t;
  if (napi_typeof(env, v, &t) == napi_ok && t == napi_boolean) napi_get_value_bool(env, v, &b);
  return b;
}

