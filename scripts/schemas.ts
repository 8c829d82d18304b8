// Registry of config schemas compiled by scripts/gen-validators.ts into gen/validators/<name>.js.
// Each owner writes a plain schema object in its own module and adds one line here.
import { loopbackSchema } from '../plugins/loopback/schema.ts';
import { hostLocalSchema } from '../ipam/host-local/schema.ts';
import { bridgeSchema } from '../plugins/bridge/schema.ts';
import { portmapSchema } from '../plugins/portmap/schema.ts';
import { bandwidthSchema } from '../plugins/bandwidth/schema.ts';
import { firewallSchema } from '../plugins/firewall/schema.ts';
import { tuningSchema } from '../plugins/tuning/schema.ts';

/** One schema to compile: `name` becomes the file name (kebab-case) under gen/validators/. */
export interface SchemaEntry {
  name: string;
  schema: Readonly<Record<string, unknown>>;
}

/** Every generated validator. */
export const schemas: readonly SchemaEntry[] = [
  { name: 'loopback', schema: loopbackSchema },
  { name: 'host-local', schema: hostLocalSchema },
  { name: 'bridge', schema: bridgeSchema },
  { name: 'portmap', schema: portmapSchema },
  { name: 'bandwidth', schema: bandwidthSchema },
  { name: 'firewall', schema: firewallSchema },
  { name: 'tuning', schema: tuningSchema },
];
