// deploy/weft.yaml as objects, for the scripts that apply it changed (the conformance runner's
// --service-proxy variant) or need its image: read from the repository, no cluster involved.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';

/** The DaemonSet manifest users apply. */
export const WEFT_MANIFEST = join(import.meta.dirname, '..', '..', 'deploy', 'weft.yaml');

/** Every document of deploy/weft.yaml, in order; throws on a YAML error. */
export function weftManifestObjects(): Array<Record<string, unknown>> {
  const out: Array<Record<string, unknown>> = [];
  for (const d of parseAllDocuments(readFileSync(WEFT_MANIFEST, 'utf8'))) {
    if (d.errors.length > 0) throw new Error(`deploy/weft.yaml: ${d.errors.map((e) => e.message).join('; ')}`);
    const o = d.toJS() as Record<string, unknown> | null;
    if (o !== null) out.push(o);
  }
  return out;
}

/** The one image the DaemonSet's containers name. */
export function weftManifestImage(): string {
  const ds = weftManifestObjects().find((o) => o['kind'] === 'DaemonSet') as { spec: { template: { spec: { initContainers?: Array<{ image: string }>; containers: Array<{ image: string }> } } } } | undefined;
  if (!ds) throw new Error('deploy/weft.yaml has no DaemonSet');
  const images = new Set([...(ds.spec.template.spec.initContainers ?? []), ...ds.spec.template.spec.containers].map((c) => c.image));
  if (images.size !== 1) throw new Error(`deploy/weft.yaml names ${images.size} images`);
  return [...images][0] as string;
}
