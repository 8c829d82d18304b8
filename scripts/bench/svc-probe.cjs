// The Service benchmark's traffic ends, run inside the bench's namespaces: `server <port> <addr>...`
// answers each connection's first bytes with "ok" and closes; `client <hosts> <port> <connects>
// <seconds> [<local address>]` measures TCP connect time (sequential connects) and then the rate of
// connect + request + answer + close, going round the comma-separated hosts (so a direct run loads the
// same servers a ClusterIP spreads over), from the local address when given, and prints one JSON line. CommonJS and dependency-free: run as `node svc-probe.cjs`.
'use strict';
/* global process, require */
// eslint-disable-next-line @typescript-eslint/no-require-imports -- a plain CommonJS helper run by node directly
const net = require('node:net');
const [mode, ...args] = process.argv.slice(2);

if (mode === 'server') {
  const port = Number(args[0]);
  for (const addr of args.slice(1)) {
    net.createServer((s) => { s.once('data', () => s.end('ok')); s.on('error', () => {}); }).listen(port, addr);
  }
  process.stdout.write('listening\n');
} else if (mode === 'client') {
  const [hostsText, portText, connectsText, secondsText, localAddress] = args;
  const hosts = hostsText.split(',');
  const port = Number(portText);
  let turn = 0;
  const once = (request) => new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint();
    const host = hosts[turn++ % hosts.length];
    const s = net.connect({ host, port, ...(localAddress ? { localAddress } : {}) });
    s.setTimeout(3000, () => s.destroy(new Error('timeout')));
    s.once('connect', () => {
      const connectUs = Number(process.hrtime.bigint() - t0) / 1000;
      if (!request) { s.destroy(); resolve(connectUs); return; }
      s.write('x');
    });
    // The server closes first (it ends right after its answer), so the TIME_WAIT is the server's: a
    // client closing first would keep one TIME_WAIT per connection on its own address and, tens of
    // thousands of connects later, its bind() to that address slows down round after round.
    s.on('data', () => {});
    s.once('end', () => { s.destroy(); resolve(0); });
    s.once('error', reject);
  });
  (async () => {
    const connects = [];
    for (let i = 0; i < Number(connectsText); i++) connects.push(await once(false));
    connects.sort((a, b) => a - b);
    const end = Date.now() + Number(secondsText) * 1000;
    let n = 0;
    const t0 = Date.now();
    while (Date.now() < end) { await once(true); n++; }
    const q = (p) => connects[Math.min(connects.length - 1, Math.floor(p * connects.length))];
    process.stdout.write(`${JSON.stringify({ connectP50Us: q(0.5), connectP90Us: q(0.9), rps: n / ((Date.now() - t0) / 1000) })}\n`);
  })().catch((e) => { process.stderr.write(`${e.message}\n`); process.exit(1); });
} else {
  process.stderr.write('usage: svc-probe.cjs server <port> <addr>... | client <hosts> <port> <connects> <seconds> [<local address>]\n');
  process.exit(2);
}
