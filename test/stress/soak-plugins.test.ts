// Soak (issue 20): SOAK_CYCLES (default 10,000) ADD/DEL cycles of bridge + host-local + portmap through
// the built binaries and a libcni-style runner in a node namespace, SOAK_CONCURRENCY pods at a time, with
// CHECK after every ADD and, every SOAK_GC_EVERY rounds, a GC that keeps the live attachments and a GC
// that removes one the runtime "forgot" to DEL. Afterwards the node must be exactly as after the first
// round: links, addresses, routes, nft objects (counted, not handle values), set/map elements, IPAM
// files, no stray (temp) file under /run/weft, no process left in the node and no fd left on our files.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { rootOnly } from '../../testkit/netns.ts';
import { CniRunner, type Attachment, type ConfList } from '../../testkit/cni-runner.ts';
import { DIST_BIN, makeLab, nftElements, runPlugin } from '../e2e/reliability/harness.ts';
import { bundleHashes, codeCachesOf, fdsInto, grown, nodeCensus, ownFdCount, strayRunWeftFiles, type Census } from './node-census.ts';

const CYCLES = Number(process.env['SOAK_CYCLES'] ?? 10_000);
const CONCURRENCY = Number(process.env['SOAK_CONCURRENCY'] ?? 4);
const GC_EVERY = Number(process.env['SOAK_GC_EVERY'] ?? 25);
const SAMPLE_EVERY = 1000;
const NET = 'soaknet';

function conflist(dir: string): ConfList {
  return {
    cniVersion: '1.1.0', name: NET,
    plugins: [
      { type: 'bridge', bridge: 'soakbr0', isGateway: true, ipMasq: true, ipam: { type: 'host-local', ranges: [[{ subnet: '10.63.0.0/16' }]], routes: [{ dst: '0.0.0.0/0' }], dataDir: dir } },
      { type: 'portmap', snat: true, capabilities: { portMappings: true } },
    ],
  };
}

describe('soak: bridge + host-local + portmap', rootOnly(), () => {
  test(`${CYCLES} ADD/CHECK/DEL cycles, ${CONCURRENCY} pods at a time, GC every ${GC_EVERY} rounds: nothing grows`, { timeout: 6 * 3600_000 }, async (t) => {
    const lab = await makeLab(CONCURRENCY, 'soak');
    const conf = conflist(lab.dir);
    const runner = new CniRunner(conf, { binDirs: [DIST_BIN], nodeNetns: lab.node.name, timeoutMs: 120_000 });
    const att = (s: number, round: number): Attachment => ({
      containerId: `soak${s}-${round}`, netns: lab.pods[s]?.path ?? '', ifName: 'eth0',
      runtimeConfig: { portMappings: [{ hostPort: 31000 + s, containerPort: 80, protocol: 'tcp' }, { hostPort: 31000 + s, containerPort: 53, protocol: 'udp' }] },
    });
    const gc = async (valid: Attachment[]): Promise<void> => {
      for (const p of conf.plugins) {
        const g = await runPlugin(lab.node, p.type, { command: 'GC' }, {
          ...p, cniVersion: conf.cniVersion, name: NET, 'cni.dev/valid-attachments': valid.map((a) => ({ containerID: a.containerId, ifname: a.ifName })),
        });
        assert.equal(g.code, 0, `GC ${p.type}: ${g.stdout}`);
      }
    };
    const hashes = bundleHashes(DIST_BIN, ['bridge', 'host-local', 'portmap']);
    const census = async (): Promise<Census> => ({
      ...(await nodeCensus(lab.node, [lab.dir])),
      'stray files under /run/weft': strayRunWeftFiles().length,
      'fds on our files': fdsInto([lab.dir, DIST_BIN]).length,
    });
    const counts = { ADD: 0, CHECK: 0, DEL: 0, GC: 0, 'removed by GC': 0 };
    const round = async (r: number): Promise<void> => {
      const atts = Array.from({ length: CONCURRENCY }, (_, s) => att(s, r));
      await Promise.all(atts.map((a) => runner.add(a)));
      counts.ADD += atts.length;
      await Promise.all(atts.map((a) => runner.check(a)));
      counts.CHECK += atts.length;
      if (r % GC_EVERY === 0) {
        // GC with every live attachment listed must keep them all (CHECK proves it), then one
        // attachment is left without DEL and a GC listing none must remove it.
        await gc(atts);
        await Promise.all(atts.map((a) => runner.check(a)));
        const [forgotten, ...rest] = atts;
        await Promise.all(rest.map((a) => runner.del(a)));
        counts.DEL += rest.length;
        await gc([]);
        counts.GC += 4;
        counts['removed by GC'] += forgotten === undefined ? 0 : 1;
      } else {
        await Promise.all(atts.map((a) => runner.del(a)));
        counts.DEL += atts.length;
      }
    };

    try {
      await round(0); // first round: bridge and nft tables exist from here on (code caches from the second)
      const fds0 = ownFdCount();
      // The kernel finishes the bridge asynchronously after its first port (IPv6 link-local address and
      // its routes once carrier is on, net/ipv6/addrconf.c): the baseline is taken once two censuses 1 s
      // apart agree, so that only what the plugins leave counts.
      let base = await census();
      for (let i = 0; i < 15; i++) {
        await new Promise((res) => setTimeout(res, 1000));
        const again = await census();
        const same = JSON.stringify(again) === JSON.stringify(base);
        base = again;
        if (same) break;
      }
      const samples: string[] = [];
      const growth: string[] = [];
      const t0 = performance.now();
      const rounds = Math.ceil(CYCLES / CONCURRENCY);
      let nextSample = SAMPLE_EVERY;
      for (let r = 1; r <= rounds; r++) {
        await round(r);
        const cycles = r * CONCURRENCY;
        if (cycles >= nextSample || r === rounds) {
          nextSample += SAMPLE_EVERY;
          const c = await census();
          const g = grown(base, c);
          growth.push(...g.map((x) => `after ${cycles} cycles: ${x}`));
          samples.push(`${cycles}:${((performance.now() - t0) / 1000).toFixed(0)}s links=${c['links']} nft-rules=${c['nft rules'] ?? 0} elements=${c['nft elements']} ipam=${c[`files in ${lab.dir}`]} fds=${ownFdCount()}`);
          t.diagnostic(`soak sample ${samples.at(-1) ?? ''}`);
        }
      }
      const secs = (performance.now() - t0) / 1000;
      const end = await census();
      t.diagnostic(`soak cycles ${rounds * CONCURRENCY} in ${secs.toFixed(0)} s (${((rounds * CONCURRENCY) / secs).toFixed(1)}/s): ADD ${counts.ADD}, CHECK ${counts.CHECK}, DEL ${counts.DEL}, GC ${counts.GC}, removed by GC ${counts['removed by GC']}`);
      t.diagnostic(`soak baseline ${JSON.stringify(base)}`);
      t.diagnostic(`soak end      ${JSON.stringify(end)}; runner fds ${fds0} -> ${ownFdCount()}`);
      t.diagnostic(`soak code caches of these bundles in /run/weft: ${codeCachesOf(hashes).length} (one per bundle and command)`);
      assert.deepEqual(growth, [], 'the node grew during the soak');
      assert.deepEqual(end, base, 'the node after the soak differs from the baseline');
      assert.deepEqual(await nftElements(lab.node, /^(bridge-pods|portmap)/), [], 'per-attachment set/map elements left');
      assert.equal(end['processes in node'], 0, 'plugin processes left in the node');
      assert.ok(ownFdCount() <= fds0 + 2, `runner fds grew: ${fds0} -> ${ownFdCount()}`);
    } finally {
      await lab.destroy();
      rmSync(lab.dir, { recursive: true, force: true });
    }
  });
});
