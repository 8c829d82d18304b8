// Shared fixtures for the unit tests: a fake plugin that records its calls, a runner asserting the
// CNI stdout contract (one JSON document, exit 0/1), and the CniError code a config parser throws.
import assert from 'node:assert/strict';
import { CniError } from '../../../../lib/cni/errors.ts';
import { runPlugin } from '../../../../lib/cni/skel.ts';
import type { CmdArgs, Plugin } from '../../../../lib/cni/skel.ts';
import type { Result } from '../../../../lib/cni/types.ts';

/** A result using every 1.1.0 field, with an IPv4 and an IPv6 address. */
export const FULL_RESULT: Result = {
  interfaces: [
    { name: 'cni0', mac: '0a:58:0a:f4:01:01', mtu: 1450 },
    { name: 'veth1234abcd', mac: '12:34:56:78:9a:bc' },
    { name: 'eth0', mac: '0a:58:0a:f4:01:05', sandbox: '/var/run/netns/pod', socketPath: '/run/x.sock', pciID: '0000:00:1f.6' },
  ],
  ips: [
    { address: '10.244.1.5/24', gateway: '10.244.1.1', interface: 2 },
    { address: 'fd00::5/64', gateway: 'fd00::1', interface: 2 },
    { address: '10.9.9.9/32', interface: 2 },
  ],
  routes: [
    { dst: '0.0.0.0/0', gw: '10.244.1.1', mtu: 1400, advmss: 1360, priority: 10, table: 100, scope: 0 },
    { dst: '::/0', gw: 'fd00::1' },
    { dst: '10.244.0.0/16' },
  ],
  dns: { nameservers: ['10.96.0.10'], domain: 'cluster.local', search: ['svc.cluster.local'], options: ['ndots:5'] },
};

/** A plugin whose handlers record the CmdArgs they got; ADD returns FULL_RESULT. */
/** Handlers set to undefined in `overrides` are removed (to test a plugin lacking them). */
export function fakePlugin(overrides: { [K in keyof Plugin]?: Plugin[K] | undefined } = {}): Plugin & { calls: CmdArgs[] } {
  const calls: CmdArgs[] = [];
  const p = {
    name: 'fake',
    version: '0.1.0',
    supportedVersions: ['0.1.0', '0.2.0', '0.3.0', '0.3.1', '0.4.0', '1.0.0', '1.1.0'],
    add: (a: CmdArgs) => {
      calls.push(a);
      return FULL_RESULT;
    },
    del: (a: CmdArgs) => void calls.push(a),
    check: (a: CmdArgs) => void calls.push(a),
    gc: (a: CmdArgs) => void calls.push(a),
    status: (a: CmdArgs) => void calls.push(a),
    calls,
    ...overrides,
  };
  for (const k of Object.keys(p) as (keyof typeof p)[]) if (p[k] === undefined) delete p[k];
  return p as Plugin & { calls: CmdArgs[] };
}

/** A complete, valid ADD environment (CNI_NETNS need not exist for the skeleton). */
export function addEnv(extra: Record<string, string | undefined> = {}): Record<string, string | undefined> {
  return {
    CNI_COMMAND: 'ADD',
    CNI_CONTAINERID: 'c0ffee',
    CNI_NETNS: '/var/run/netns/weft-does-not-exist',
    CNI_IFNAME: 'eth0',
    CNI_PATH: '/opt/cni/bin',
    ...extra,
  };
}

/** Stdin bytes of a minimal config. */
export function conf(fields: Record<string, unknown> = {}): Buffer {
  return Buffer.from(JSON.stringify({ cniVersion: '1.1.0', name: 'net', type: 'fake', ...fields }));
}

/** Run the plugin and return the single parsed stdout document (asserting there is exactly one). */
export async function runJson(
  plugin: Plugin,
  env: Record<string, string | undefined>,
  stdin: Buffer,
): Promise<{ doc: Record<string, unknown>; exitCode: 0 | 1; stdout: string }> {
  const out = await runPlugin(plugin, { env, stdin });
  assert.equal(out.stderr, '');
  // JSON.parse rejects two concatenated documents or trailing garbage: exactly one document.
  const doc = JSON.parse(out.stdout) as Record<string, unknown>;
  assert.equal(typeof doc, 'object');
  return { doc, exitCode: out.exitCode, stdout: out.stdout };
}

/** Run and assert an error document with `code` and exit 1; returns the document. */
export async function expectError(
  plugin: Plugin,
  env: Record<string, string | undefined>,
  stdin: Buffer,
  code: number,
): Promise<Record<string, unknown>> {
  const { doc, exitCode } = await runJson(plugin, env, stdin);
  assert.equal(exitCode, 1, `exit code for ${JSON.stringify(doc)}`);
  assert.equal(doc['code'], code, `error code in ${JSON.stringify(doc)}`);
  assert.equal(typeof doc['msg'], 'string');
  assert.equal(typeof doc['cniVersion'], 'string');
  return doc;
}

/** The CniError code `fn` throws (-1 for any other error), or undefined when it returns: config tests compare codes. */
export function cniCode(fn: () => unknown): number | undefined {
  try {
    fn();
  } catch (e) {
    return e instanceof CniError ? e.code : -1;
  }
  return undefined;
}
