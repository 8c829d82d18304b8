// Issue 20, "validate before touching": every bad input in corpus/ is run through the built binary
// (dist/bin) inside a node namespace, as a runtime would; each must be refused with one CNI error JSON
// with a sensible code, and the node (links, addresses, routes, qdiscs, sysctls, nft and iptables
// rulesets) and the IPAM/data dirs must be exactly as before. The base config itself is then accepted,
// so each case differs from a working ADD by its bad input only.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { execPlugin } from '../../../testkit/cni-runner.ts';
import { Topology, nsRun, type SimNode, type SimPod } from '../../../testkit/topology.ts';
import { isRoot } from '../../../testkit/netns.ts';
import { fill, loadCorpus, renderCase } from './corpus.ts';
import { diffLines, fingerprint } from './fingerprint.ts';

const BIN_DIR = join(import.meta.dirname, '..', '..', '..', 'dist', 'bin');
const PLUGINS = (process.env['WEFT_VF_PLUGINS'] ?? 'bridge,host-local,portmap,loopback,flannel,bandwidth,firewall,tuning').split(',');
const skip = !isRoot() ? 'needs root' : !existsSync(join(BIN_DIR, 'bridge')) ? 'dist/bin missing: run npm run build' : false;

// `npm test` runs an evenly spread sample of each corpus (WEFT_VF_SAMPLE cases per plugin, set by
// scripts/test.sh); `npm run test:stress` and a run without the variable take every case.
const SAMPLE = Number(process.env['WEFT_VF_SAMPLE'] ?? 0);

/** Every case, or SAMPLE of them spread evenly over the corpus (first and last included). */
function sampled<T>(all: readonly T[]): readonly T[] {
  if (!(SAMPLE > 1) || all.length <= SAMPLE) return all;
  return Array.from({ length: SAMPLE }, (_, i) => all[Math.round((i * (all.length - 1)) / (SAMPLE - 1))] as T);
}

for (const plugin of PLUGINS) {
  const { corpus, cases: all } = loadCorpus(plugin);
  const cases = sampled(all);
  describe(`validate first: ${plugin} (${cases.length} of ${all.length} bad inputs, built binary in a node netns)`, { skip, timeout: 600_000 }, () => {
    let topo: Topology;
    let node: SimNode;
    let pod: SimPod;
    let vars: Record<string, string>;
    let dirs: string[];
    let baseline = '';
    const codes = new Map<number, number>();

    const run = (stdin: string, envChanges: Record<string, string | null>) => {
      const env: NodeJS.ProcessEnv = {
        CNI_COMMAND: 'ADD', CNI_CONTAINERID: 'vf-ctr-1', CNI_NETNS: vars['POD'], CNI_IFNAME: 'eth0', CNI_ARGS: '', CNI_PATH: BIN_DIR,
        ...fill(corpus.env ?? {}, vars),
      };
      for (const [k, v] of Object.entries(fill(envChanges, vars))) {
        if (v === null) delete env[k];
        else env[k] = v;
      }
      return execPlugin(join(BIN_DIR, plugin), env, stdin, { binDirs: [BIN_DIR], nodeNetns: node.netns });
    };
    const fp = () => fingerprint(node.netns, pod.netns, dirs);

    before(async () => {
      topo = await Topology.create({ nodes: 1, prefix: `wvf${randomBytes(2).toString('hex')}` });
      node = topo.nodes[0] as SimNode;
      pod = await topo.addPod(node, 1);
      const hostVeth = `vfh${randomBytes(3).toString('hex')}`;
      await nsRun(pod.netns, ['ip', 'link', 'add', 'eth0', 'type', 'veth', 'peer', 'name', hostVeth, 'netns', node.netns]);
      await nsRun(pod.netns, ['ip', 'addr', 'add', '10.99.0.5/24', 'dev', 'eth0']);
      await nsRun(pod.netns, ['ip', 'link', 'set', 'eth0', 'up']);
      await nsRun(node.netns, ['ip', 'link', 'set', hostVeth, 'up']);
      const data = join(topo.dir, 'data');
      const scratch = join(topo.dir, 'scratch');
      mkdirSync(data);
      mkdirSync(scratch);
      const subnetFile = join(topo.dir, 'subnet.env');
      writeFileSync(subnetFile, 'FLANNEL_NETWORK=10.98.0.0/16\nFLANNEL_SUBNET=10.98.5.1/24\nFLANNEL_MTU=1450\nFLANNEL_IPMASQ=true\n');
      const extra = { BADSUBNET: 'FLANNEL_NETWORK=10.98.0.0/16\nFLANNEL_SUBNET=nope\nFLANNEL_MTU=1450\n', EMPTYSUBNET: '', BADMTU: 'FLANNEL_NETWORK=10.98.0.0/16\nFLANNEL_SUBNET=10.98.5.1/24\nFLANNEL_MTU=abc\n' };
      const extraPaths: Record<string, string> = {};
      for (const [k, text] of Object.entries(extra)) {
        extraPaths[k] = join(topo.dir, `${k.toLowerCase()}.env`);
        writeFileSync(extraPaths[k], text);
      }
      vars = { ...extraPaths, DATA: data, SCRATCH: scratch, POD: pod.path, NODE: node.path, SUBNETFILE: subnetFile, HOSTVETH: hostVeth };
      dirs = [data, scratch];
      // Settle (link-local addresses, carrier) until two fingerprints agree.
      for (let i = 0; i < 20; i++) {
        const a = await fp();
        await new Promise((r) => setTimeout(r, 300));
        baseline = await fp();
        if (a === baseline) break;
      }
    });
    after(() => {
      const total = [...codes.values()].reduce((s, n) => s + n, 0);
      console.log(`validate-first ${plugin}: ${total} refused of ${cases.length}, codes ${JSON.stringify(Object.fromEntries([...codes].sort((x, y) => x[0] - y[0])))}`);
      topo?.destroySync();
    });

    for (const c of cases) {
      it(c.name, async () => {
        const { stdin, env } = renderCase(fill(corpus.base, vars), fill(c, vars));
        const r = await run(stdin, env);
        const now = await fp();
        const was = baseline;
        baseline = now; // each case is judged on its own change, not on an earlier case's leftovers
        assert.equal(r.code, 1, `not refused (exit ${String(r.code)}): ${r.stdout}${r.stderr}`);
        assert.equal(now, was, `the node changed:\n${diffLines(was, now)}\n(${r.stdout.trim()})`);
        const docs = r.stdout.trim().split('\n').filter((l) => l.trim() !== '');
        assert.ok(r.json !== undefined, `stdout is not one JSON document: ${r.stdout}`);
        assert.ok(docs.length >= 1);
        const code = r.json['code'];
        assert.equal(typeof code, 'number', r.stdout);
        assert.equal(typeof r.json['msg'], 'string', r.stdout);
        codes.set(code as number, (codes.get(code as number) ?? 0) + 1);
        if (c.codes !== undefined) assert.ok(c.codes.includes(code as number), `code ${String(code)} not in ${JSON.stringify(c.codes)}: ${r.stdout}`);
        else assert.ok(code !== 999 && code !== 11, `code ${String(code)} is not a sensible refusal: ${r.stdout}`);
      });
    }

    it('control: the base config itself is accepted (then deleted)', async () => {
      const stdin = JSON.stringify(fill(corpus.base, vars));
      const add = await run(stdin, {});
      assert.equal(add.code, 0, add.stdout + add.stderr);
      const del = await run(stdin, { CNI_COMMAND: 'DEL' });
      assert.equal(del.code, 0, del.stdout + del.stderr);
    });
  });
}
