{
  "targets": [
    {
      "target_name": "weft_sys",
      "sources": ["weft_sys.c", "packet_args.c", "tun_io.c", "udp_io.c"],
      "cflags": ["-std=gnu11", "-Wall", "-Wextra", "-Werror=implicit-function-declaration", "-O2"],
      "ldflags": ["-s"],
      "defines": ["_GNU_SOURCE", "NAPI_VERSION=8"]
    },
    {
      "target_name": "weft_sys_lean",
      "sources": ["weft_sys.c"],
      "cflags": ["-std=gnu11", "-Wall", "-Wextra", "-Werror=implicit-function-declaration", "-O2"],
      "ldflags": ["-s"],
      "defines": ["_GNU_SOURCE", "NAPI_VERSION=8", "WEFT_SYS_LEAN"]
    }
  ]
}
