// "Measure before optimising" for the udp backend: how fast can Node read packets from a TUN?
// A namespace with a TUN, a flood of small UDP packets routed into it (python3 in the namespace,
// 2 s), read either with fs.read (libuv thread pool, one packet per call, as a naive forwarder
// would) or with the addon's readiness-driven tunReadBatch. Prints packets/s and Mbit/s for each.
// `node --import tsx scripts/bench/udp-read.ts`
import { execFileSync } from 'node:child_process';
import { closeSync, read } from 'node:fs';
import { openNetns, withNetns } from '../../lib/netns/index.ts';
import { sys } from '../../lib/sys/index.ts';
import { createTestNetnsSync, inNetns, spawnInNetns } from '../../testkit/netns.ts';

const SECONDS = 2;
const SIZE = 1400;
const FLOOD = `
import socket, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
b = b'x' * ${SIZE}
end = time.time() + ${SECONDS}
while time.time() < end:
    for _ in range(1000):
        s.sendto(b, ('10.99.0.1', 9))
`;

function ns(name: string, cmd: string[]): void {
  const [file = 'ip', ...args] = inNetns(name, cmd);
  execFileSync(file, args, { stdio: 'ignore' });
}

async function measure(name: string, mode: 'fs.read' | 'tunReadBatch'): Promise<{ pps: number; mbps: number }> {
  const h = openNetns(`/run/netns/${name}`);
  const { fd } = withNetns(h, () => sys().tunOpen('tunbench'));
  h.close();
  ns(name, ['ip', 'link', 'set', 'tunbench', 'up', 'txqueuelen', '5000']);
  ns(name, ['ip', 'route', 'replace', '10.99.0.0/16', 'dev', 'tunbench']);
  let pkts = 0;
  let bytes = 0;
  let stop = false;
  let watch = 0;
  if (mode === 'fs.read') {
    const buf = Buffer.alloc(2048);
    const loop = () => read(fd, buf, 0, buf.length, null, (err, n) => {
      if (err || stop) return;
      pkts++;
      bytes += n;
      loop();
    });
    loop();
  } else {
    sys().setNonBlocking(fd);
    const buf = Buffer.alloc(64 * 2048);
    const lens = new Uint32Array(64);
    watch = sys().pollStart(fd, () => {
      for (;;) {
        const n = sys().tunReadBatch(fd, buf, 2048, lens, 64);
        for (let i = 0; i < n; i++) bytes += lens[i] as number;
        pkts += n;
        if (n < 64) break;
      }
    }, true);
  }
  const flood = spawnInNetns(name, ['/usr/bin/python3', '-c', FLOOD], { stdio: 'ignore' });
  const t0 = performance.now();
  await new Promise((r) => flood.once('close', r));
  const s = (performance.now() - t0) / 1000;
  stop = true;
  if (watch) sys().pollStop(watch);
  const [ip = 'ip', ...catArgs] = inNetns(name, ['cat', '/sys/class/net/tunbench/statistics/tx_dropped']);
  const dropped = Number(execFileSync(ip, catArgs, { encoding: 'utf8' }));
  // fs.read may still sit in a thread-pool read: the fd is closed after the device is removed.
  ns(name, ['ip', 'link', 'del', 'tunbench']);
  if (mode === 'tunReadBatch') closeSync(fd);
  process.stderr.write(`  ${mode}: ${pkts} packets read, ${dropped} dropped at the TUN queue\n`);
  return { pps: pkts / s, mbps: (bytes * 8) / s / 1e6 };
}

async function main(): Promise<void> {
  const netns = createTestNetnsSync('weft-b');
  const { name } = netns;
  try {
    ns(name, ['ip', 'link', 'set', 'lo', 'up']);
    for (const mode of ['fs.read', 'tunReadBatch'] as const) {
      const r = await measure(name, mode);
      process.stdout.write(`${mode}: ${Math.round(r.pps)} packets/s, ${Math.round(r.mbps)} Mbit/s of ${SIZE + 28}-byte packets\n`);
    }
  } finally {
    netns.destroySync();
  }
  process.exit(0);
}

void main();
