// weftd's --etcd-cafile/-certfile/-keyfile/-username/-password against a real etcd that requires
// client certificates and password auth. etcd runs in a network namespace the test creates (on its
// own 127.0.0.1), certificates are made by openssl in a temp dir; weftd's flag parsing and store
// opening run inside that namespace (`ip netns exec`). Namespace, etcd and files always go at the end.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestNetnsSync, inNetns } from '../../../testkit/netns.ts';

const ROOT = join(import.meta.dirname, '..', '..', '..');
const URL = 'https://127.0.0.1:2379';

function has(cmd: string, arg: string): boolean {
  try {
    execFileSync(cmd, [arg], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}
const skip = process.getuid?.() !== 0 ? 'needs root' : !has('etcd', '--version') ? 'etcd not installed' : !has('openssl', 'version') ? 'openssl not installed' : false;

/** weftd's flags -> openLeaseStore, inside the namespace; prints the net-conf etcd holds. */
const PROBE = `
import { normalizeWeftdFlags, weftdCommand } from './agent/flags.ts';
import { openLeaseStore } from './agent/lease/open-store.ts';
const c = weftdCommand('0').exitOverride();
c.parse(['node', 'weftd', ...JSON.parse(process.env.WEFT_ARGS)]);
const s = await openLeaseStore(normalizeWeftdFlags(c.opts()).store);
process.stdout.write(JSON.stringify(s.netConf));
await s.close();
process.exit(0);
`;

describe('weftd with a TLS and password-protected etcd', { skip, timeout: 120_000 }, () => {
  let ns: ReturnType<typeof createTestNetnsSync> | undefined;
  const dir = mkdtempSync(join(tmpdir(), 'weft-etcd-tls-'));
  const pem = (n: string): string => join(dir, n);
  let etcd: ChildProcess | undefined;

  const inNs = (argv: string[]): { code: number; stdout: string; stderr: string } => {
    const [file = 'ip', ...args] = inNetns(ns?.name ?? 'weft-t-tls-not-created', argv);
    try {
      return { code: 0, stdout: execFileSync(file, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], cwd: ROOT, env: process.env }), stderr: '' };
    } catch (e) {
      const x = e as { status?: number; stdout?: string; stderr?: string };
      return { code: x.status ?? 1, stdout: x.stdout ?? '', stderr: x.stderr ?? '' };
    }
  };
  const probe = (args: string[]): { code: number; stdout: string; stderr: string } => {
    process.env['WEFT_ARGS'] = JSON.stringify(args);
    return inNs([process.execPath, '--import', 'tsx', '--input-type=module', '-e', PROBE]);
  };
  const etcdctl = (...args: string[]): void => {
    const r = inNs(['env', 'ETCDCTL_API=3', 'etcdctl', '--endpoints', URL, '--cacert', pem('ca.pem'), '--cert', pem('client.pem'), '--key', pem('client.key'), ...args]);
    assert.equal(r.code, 0, `etcdctl ${args.join(' ')}: ${r.stderr}`);
  };

  before(async () => {
    const ssl = (...a: string[]): void => void execFileSync('openssl', a, { cwd: dir, stdio: 'ignore' });
    const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
    ssl('req', '-x509', ...ec, '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '1', '-subj', '/CN=weft-test-ca');
    writeFileSync(pem('server.ext'), 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n');
    writeFileSync(pem('client.ext'), 'extendedKeyUsage=clientAuth\n');
    for (const [name, cn] of [['server', 'etcd'], ['client', 'root']] as const) {
      ssl('req', ...ec, '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${cn}`);
      ssl('x509', '-req', '-in', `${name}.csr`, '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', `${name}.pem`, '-days', '1', '-extfile', `${name}.ext`);
    }
    ns = createTestNetnsSync('weft-t-tls');
    execFileSync('ip', ['-n', ns.name, 'link', 'set', 'lo', 'up']);
    const [file = 'ip', ...args] = inNetns(ns.name, ['etcd', '--name', 't', '--data-dir', join(dir, 'data'), '--listen-client-urls', URL, '--advertise-client-urls', URL,
      '--listen-peer-urls', 'http://127.0.0.1:2380', '--initial-advertise-peer-urls', 'http://127.0.0.1:2380', '--initial-cluster', 't=http://127.0.0.1:2380',
      '--cert-file', pem('server.pem'), '--key-file', pem('server.key'), '--trusted-ca-file', pem('ca.pem'), '--client-cert-auth', '--log-level', 'error']);
    etcd = spawn(file, args, { stdio: 'ignore' });
    for (let i = 0; ; i++) {
      const r = inNs(['curl', '-fsS', '--max-time', '1', '--cacert', pem('ca.pem'), '--cert', pem('client.pem'), '--key', pem('client.key'), `${URL}/health`]);
      if (r.code === 0 && r.stdout.includes('"true"')) break;
      if (i > 200) throw new Error(`etcd did not become healthy: ${r.stderr}`);
      await new Promise((res) => setTimeout(res, 100));
    }
    etcdctl('put', '/tls-test/config', '{"Network":"10.123.0.0/16","Backend":{"Type":"vxlan"}}');
    etcdctl('user', 'add', 'root:s3cret');
    etcdctl('auth', 'enable');
  });

  after(() => {
    etcd?.kill('SIGKILL');
    ns?.destroySync(); // kills what still runs inside (etcd) first
    rmSync(dir, { recursive: true, force: true });
  });

  const tls = (): string[] => ['--etcd-endpoints', URL, '--etcd-prefix', '/tls-test', '--etcd-cafile', pem('ca.pem'), '--etcd-certfile', pem('client.pem'), '--etcd-keyfile', pem('client.key')];

  test('CA, client certificate and password: weftd reads <prefix>/config', () => {
    const r = probe([...tls(), '--etcd-username', 'root', '--etcd-password', 's3cret']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /10\.123\.0\.0\/16/);
  });

  test('CA and client certificate alone (its Common Name is the etcd user): etcd refuses it on the JSON gateway, weftd reads through gRPC', () => {
    const r = probe(tls());
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /10\.123\.0\.0\/16/);
  });

  test('a wrong password is refused by etcd', () => {
    const r = probe([...tls(), '--etcd-username', 'root', '--etcd-password', 'wrong']);
    assert.notEqual(r.code, 0, r.stdout);
    assert.match(r.stderr, /authentication failed|invalid user ID or password/i);
  });

  test('without the client certificate the TLS handshake fails', () => {
    const r = probe(['--etcd-endpoints', URL, '--etcd-prefix', '/tls-test', '--etcd-cafile', pem('ca.pem'), '--etcd-username', 'root', '--etcd-password', 's3cret']);
    assert.notEqual(r.code, 0, r.stdout);
    assert.match(r.stderr, /etcd refused the TLS handshake \(.*\): it wants a client certificate/, 'etcd closed the TLS connection');
  });
});
