// Preload for weftd in the soak (test/stress/soak-weftd.test.ts, through NODE_OPTIONS --require): on
// SIGUSR2, one full garbage collection, then "<count> <VmRSS kB>" written to $WEFTD_SOAK_GC_FILE, so
// that the soak samples RSS at live memory instead of wherever V8's collection cycle happens to be
// (a 2-3 MB saw-tooth of garbage and netlink buffers between collections). Test-only: never shipped.
'use strict';
/* global process */
const { readFileSync, writeFileSync } = process.getBuiltinModule('node:fs');

const out = process.env.WEFTD_SOAK_GC_FILE;
if (out) {
  process.getBuiltinModule('node:v8').setFlagsFromString('--expose-gc');
  const gc = process.getBuiltinModule('node:vm').runInNewContext('gc');
  let count = 0;
  process.on('SIGUSR2', () => {
    gc();
    const rss = /VmRSS:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'));
    writeFileSync(out, `${++count} ${rss ? rss[1] : 'NaN'}\n`);
  });
}
