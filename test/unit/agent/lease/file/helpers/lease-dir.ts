// Shared fixtures of the file store's unit tests (no root): temp lease directories and stores closed
// and removed after the file's tests, a net-conf, peer leases, and a lease written as another node does.
import { after } from 'node:test';
import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { normalizeNetConf } from '../../../../../../agent/config/net-conf.ts';
import type { FileLeaseStore } from '../../../../../../agent/lease/file/store.ts';
import { formatLeaseFile, leasePath } from '../../../../../../agent/lease/file/lease-io.ts';
import type { Lease } from '../../../../../../agent/lease/store.ts';

/** Temp directories and stores of a test file, torn down by its `after` hook. */
export function fixtures(prefix: string): { tempDir: () => string; keep: (s: FileLeaseStore) => FileLeaseStore } {
  const dirs: string[] = [];
  const stores: FileLeaseStore[] = [];
  after(async () => {
    for (const s of stores) await s.close();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });
  return {
    tempDir: () => {
      const d = mkdtempSync(join(tmpdir(), prefix));
      dirs.push(d);
      return d;
    },
    keep: (s) => { stores.push(s); return s; },
  };
}

/** A vxlan net-conf over 10.244.0.0/16. */
export const conf = normalizeNetConf({ Network: '10.244.0.0/16', Backend: { Type: 'vxlan' } });

/** Peer lease i: 10.244.<i>.0/24 from 192.0.2.<i>, an hour to live. */
export const peer = (i: number): Lease => ({ subnet: `10.244.${i}.0/24`, publicIp: `192.0.2.${i}`, backendType: 'vxlan', backendData: { VNI: 1, VtepMAC: '0a:58:0a:f4:03:00' }, expiration: Date.now() + 3_600_000 });

/** As another node writes it: a complete temp file renamed into place. */
export function writeLease(dir: string, l: Lease): void {
  const tmp = join(dir, `.t-${l.subnet.replace('/', '-')}`);
  writeFileSync(tmp, formatLeaseFile(l));
  renameSync(tmp, leasePath(dir, l.subnet));
}
