// lib/ip: the one IP library of the project: IP and CIDR arithmetic (bigint, IPv4 and IPv6) with
// Go-compatible text forms, and IPv4 prefixes as numbers for the flannel contract and weftd.
export type { Family, IpAddr } from './addr.ts';
export {
  compareIp,
  familyBits,
  familyOfText,
  formatIp,
  ipAddr,
  ipEqual,
  isMapped,
  maxValue,
  nextIp,
  normalizeIp,
  parseIp,
  parseV4Number,
  prevIp,
  toMapped,
} from './addr.ts';
export type { Cidr } from './cidr.ts';
export {
  canonicalCidr,
  cidrContains,
  cidrOverlaps,
  broadcastOf,
  cidrSize,
  formatCidr,
  hasHostBits,
  lastOf,
  maskValue,
  networkOf,
  parseCidr,
  subnetOf,
} from './cidr.ts';
export type { Cidr4 } from './ipv4.ts';
export {
  containsIPv4,
  formatCidr4,
  formatIPv4,
  lastIPv4,
  maskIPv4,
  overlapsCidr4,
  parseCidr4,
  parseCidr4Loose,
  parseIPv4,
  prefixSize,
} from './ipv4.ts';
