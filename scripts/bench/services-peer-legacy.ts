// kube-proxy iptables mode on the iptables-legacy backend, for the side-by-side Service benchmark.
// kube-proxy runs the `iptables`, `iptables-save` and `iptables-restore` it finds on PATH: the peer
// gets a private PATH directory whose names lead to Debian's xtables-legacy-multi (legacy tables are
// per network namespace, like nf_tables ones, so the peer stays in its node namespace). Legacy
// rules raise no nf_tables notification and are no nf_tables chains, so they are seen another way:
// that directory's `iptables-restore` is a bash wrapper that passes its input through `tee` to a file
// and, when the real restore has exited, appends "<wall seconds> <exit code> <input file>" to a
// record. The restore commits each table before it exits, so a restore that exited 0 and whose input
// declares a chain is the moment that chain (a new endpoint's KUBE-SEP-, the last Service's
// KUBE-SVC-) was in the kernel. The wrapper's cost (bash, tee) is on kube-proxy's path, not the bench's.
import { execFileSync } from 'node:child_process';
import { chmodSync, closeSync, mkdirSync, openSync, readFileSync, readSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ClusterNode } from '../../testkit/cluster.ts';
import { inNetns } from '../../testkit/netns.ts';
import { nsExec } from '../../testkit/topology.ts';
import type { ChainPoller } from './services-peer-chains.ts';

/** The legacy tools kube-proxy calls, by the names it calls them (xtables-legacy-multi picks its tool from argv[0]). */
const TOOLS = ['iptables', 'iptables-save', 'ip6tables', 'ip6tables-save', 'ip6tables-restore'] as const;
const MULTI = '/usr/sbin/xtables-legacy-multi';

/** The recording wrapper: the real restore's exit code is kept, and the stamp is taken after it exited. */
const WRAPPER = `#!/bin/bash
in="$(dirname "$0")/restore.$$.in"
tee "$in" | /usr/sbin/iptables-legacy-restore "$@"
rc=\${PIPESTATUS[1]}
printf '%s %s %s\\n' "$EPOCHREALTIME" "$rc" "$in" >> "$(dirname "$0")/restores.log"
exit "$rc"
`;

/** Writes the private PATH directory under `dir`; returns it and its restore record. Idempotent. */
export function writeLegacyBin(dir: string): { bin: string; record: string } {
  const bin = join(dir, 'legacy-bin');
  rmSync(bin, { recursive: true, force: true });
  mkdirSync(bin, { recursive: true });
  for (const t of TOOLS) symlinkSync(MULTI, join(bin, t));
  writeFileSync(join(bin, 'iptables-restore'), WRAPPER);
  chmodSync(join(bin, 'iptables-restore'), 0o755);
  writeFileSync(join(bin, 'restores.log'), '');
  return { bin, record: join(bin, 'restores.log') };
}

/** One line of the record: wall ms of the restore's exit, its exit code, its saved input. Pure. */
export function parseRestoreLine(line: string): { atMs: number; rc: number; input: string } | undefined {
  const m = /^(\d+)[.,](\d{6}) (\d+) (\S+)$/.exec(line.trim());
  if (m === null) return undefined;
  return { atMs: Number(m[1]) * 1000 + Number(m[2]) / 1000, rc: Number(m[3]), input: m[4] as string };
}

/** True when iptables-restore input declares `chain` (its ":CHAIN - [0:0]" line; a partial sync declares every chain it rewrites). Pure. */
export function declaresChain(input: string, chain: string): boolean {
  return input.startsWith(`:${chain} `) || input.includes(`\n:${chain} `);
}

/** Follows the record of `n`'s legacy peer, every `intervalMs`; `next` resolves with the exit stamp of the first successful restore declaring the chain. */
export function watchRestores(n: ClusterNode, record: string, intervalMs: number): ChainPoller {
  const waiters = new Set<{ chain: string; done: (at: number) => void }>();
  let offset = 0;
  let rest = '';
  const tick = (): void => {
    const fd = openSync(record, 'r');
    let text = '';
    try {
      const buf = Buffer.alloc(65536);
      for (let k = readSync(fd, buf, 0, buf.length, offset); k > 0; k = readSync(fd, buf, 0, buf.length, offset)) { offset += k; text += buf.toString('utf8', 0, k); }
    } finally {
      closeSync(fd);
    }
    const lines = (rest + text).split('\n');
    rest = lines.pop() ?? '';
    for (const l of lines) {
      const r = parseRestoreLine(l);
      if (r === undefined) continue;
      let input = '';
      try { input = readFileSync(r.input, 'utf8'); } catch { /* a --version call writes none worth reading */ }
      rmSync(r.input, { force: true });
      if (r.rc !== 0) continue;
      for (const w of waiters) if (declaresChain(input, w.chain)) { waiters.delete(w); w.done(r.atMs); }
    }
  };
  const timer = setInterval(tick, intervalMs);
  return {
    what: `the recording iptables-restore wrapper (read every ${intervalMs} ms, stamped at the restore's exit)`,
    // One look at the kernel (a whole-table read: seconds at 10,000 Services), for the check of the name only.
    exists: (table, chain) => {
      const [file = 'ip', ...args] = inNetns(n.netns, ['iptables-legacy', '-w', '-t', table, '-S', chain]);
      try { execFileSync(file, args, { stdio: 'ignore' }); return true; } catch { return false; }
    },
    next: (_table, chain, timeoutMs) => new Promise((resolve, reject) => {
      const w = { chain, done: (at: number) => { clearTimeout(limit); resolve(at); } };
      const limit = setTimeout(() => { waiters.delete(w); reject(new Error(`no successful iptables-restore declared ${chain} in ${timeoutMs} ms`)); }, timeoutMs);
      waiters.add(w);
    }),
    close: () => { clearInterval(timer); waiters.clear(); },
  };
}

/** Rules of the legacy tables (IPv4 and IPv6) in `n`'s namespace: the `-A` lines of iptables-legacy-save. */
export async function legacyRuleCount(n: ClusterNode): Promise<number> {
  let rules = 0;
  for (const save of ['iptables-legacy-save', 'ip6tables-legacy-save']) {
    const r = await nsExec(n.netns, [save], { timeoutMs: 600_000 });
    rules += r.stdout.split('\n').filter((l) => l.startsWith('-A ')).length;
  }
  return rules;
}

/** Empties the legacy tables kube-proxy writes in `n`'s namespace (a restore without --noflush flushes and deletes user chains). */
export async function clearLegacy(n: ClusterNode): Promise<void> {
  const empty = '*filter\nCOMMIT\n*nat\nCOMMIT\n*mangle\nCOMMIT\n';
  for (const restore of ['iptables-legacy-restore', 'ip6tables-legacy-restore']) await nsExec(n.netns, [restore], { input: empty, timeoutMs: 600_000 });
}
