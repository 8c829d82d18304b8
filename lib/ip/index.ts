// lib/ip: dependency-free IP and CIDR arithmetic (bigint based) with Go-compatible text forms.
export type { Family, IpAddr } from './addr.ts';
export {
  compareIp,
  familyBits,
  formatIp,
  ipAddr,
  ipEqual,
  isMapped,
  maxValue,
  nextIp,
  normalizeIp,
  parseIp,
  prevIp,
  toMapped,
} from './addr.ts';
export type { Cidr } from './cidr.ts';
export {
  canonicalCidr,
  cidrContains,
  cidrOverlaps,
  cidrSize,
  formatCidr,
  hasHostBits,
  lastOf,
  maskValue,
  networkOf,
  parseCidr,
} from './cidr.ts';
