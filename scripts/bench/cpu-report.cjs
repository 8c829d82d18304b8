// Preloaded into node processes by the benchmarks (NODE_OPTIONS=--require): at exit, writes the
// process's CPU time (user + system, all threads, microseconds) to stderr, a figure that machine
// load disturbs far less than wall time. CommonJS so that --require loads it anywhere.
'use strict';
/* global process, require */
process.on('exit', () => {
  const u = process.cpuUsage();
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- a --require preload is CommonJS; fs is already loaded, process.stderr would load streams
  require('node:fs').writeSync(2, `\nweft-bench-cpu-us ${u.user + u.system}\n`);
});
