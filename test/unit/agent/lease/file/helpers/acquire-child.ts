// Child process for the file-store concurrency test: acquires one lease in DIR for PUBLIC_IP and prints it.
import { normalizeNetConf } from '../../../../../../agent/config/net-conf.ts';
import { FileLeaseStore } from '../../../../../../agent/lease/file/store.ts';

const [dir, publicIp, confJson] = process.argv.slice(2);
if (!dir || !publicIp || !confJson) throw new Error('usage: acquire-child DIR PUBLIC_IP NETCONF_JSON');
const store = new FileLeaseStore({ dir, netConf: normalizeNetConf(JSON.parse(confJson)) });
try {
  const lease = await store.acquire({ publicIp, backendType: 'vxlan', backendData: { VNI: 1, VtepMAC: '02:00:00:00:00:01' } });
  process.stdout.write(`${JSON.stringify(lease)}\n`);
} catch (err) {
  process.stdout.write(`${JSON.stringify({ error: String(err) })}\n`);
} finally {
  await store.close();
}
