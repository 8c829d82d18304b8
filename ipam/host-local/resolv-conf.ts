// resolv.conf reader for ipam.resolvConf: fills the result's dns like the reference does.
import { readFileSync } from 'node:fs';
import { invalidConfig } from '../../lib/cni/errors.ts';
import type { Dns } from '../../lib/cni/types.ts';
import { errnoCode } from '../../lib/errno/errno.ts';

/**
 * Parses resolv.conf text (resolv.conf(5)): `nameserver` lines accumulate, `domain` sets the
 * domain, `search` replaces the search list, `options` accumulate. Comments (# or ;) are skipped.
 */
export function parseResolvConf(text: string): Dns {
  const dns: Dns = {};
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#') || line.startsWith(';')) continue;
    const [key, ...rest] = line.split(/\s+/);
    if (rest.length === 0) continue;
    switch (key) {
      case 'nameserver':
        (dns.nameservers ??= []).push(rest[0] as string);
        break;
      case 'domain':
        dns.domain = rest[0] as string;
        break;
      case 'search':
        dns.search = rest;
        break;
      case 'options':
        (dns.options ??= []).push(...rest);
        break;
    }
  }
  return dns;
}

/** Reads and parses the file named by ipam.resolvConf; code 7 naming the field when unreadable. */
export function readResolvConf(path: string): Dns {
  try {
    return parseResolvConf(readFileSync(path, 'utf8'));
  } catch (e) {
    const why = errnoCode(e) ?? (e as Error).message;
    throw invalidConfig('invalid configuration: ipam.resolvConf cannot be read', `${JSON.stringify(path)}: ${why}`);
  }
}
