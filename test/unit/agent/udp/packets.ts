// Test packets for the udp forwarder's unit tests.
import { internetChecksum } from '../../../../agent/udp/ipv4.ts';

/** An IPv4 packet src -> dst with `proto` and `payload`, valid header checksum. */
export function packet(src: string, dst: string, opts: { ttl?: number; proto?: number; payload?: Buffer; frag?: number } = {}): Buffer {
  const payload = opts.payload ?? Buffer.from('0800f7ff00000000', 'hex'); // ICMP echo request, id 0 seq 0
  const b = Buffer.alloc(20 + payload.length);
  b[0] = 0x45;
  b.writeUInt16BE(b.length, 2);
  b.writeUInt16BE(opts.frag ?? 0, 6);
  b[8] = opts.ttl ?? 64;
  b[9] = opts.proto ?? 1;
  Buffer.from(src.split('.').map(Number)).copy(b, 12);
  Buffer.from(dst.split('.').map(Number)).copy(b, 16);
  b.writeUInt16BE(internetChecksum(b, 0, 20), 10);
  payload.copy(b, 20);
  return b;
}
