// Benchmark: the size of each bundle in dist/bin, so growth is seen run by run; loopback (it only
// brings lo up) has a ceiling, checked by test/unit/scripts/bench/sizes.test.ts too. The embedded
// addon's share is listed apart: every plugin carries the lean build, weftd the full one.
import { statSync } from 'node:fs';
import { ADDON_PATHS } from '../build/addon.ts';
import { ENTRIES } from '../../cli/entries.ts';
import { distBin, type BenchResult } from './util.ts';

/** Bytes a bundle may not exceed, by entry name. */
export const SIZE_LIMITS: Readonly<Record<string, number>> = { loopback: 90_000 };

/** Bytes the addon at `path` takes embedded in a bundle (base64), or undefined when it is not built. */
function embeddedBytes(path: string): number | undefined {
  try {
    return Math.ceil(statSync(path).size / 3) * 4;
  } catch {
    return undefined;
  }
}

/** One row per built executable (dist/bin/<name>), then the embedded addon builds. */
export function benchSizes(): BenchResult[] {
  const rows: BenchResult[] = ENTRIES.map((e) => {
    const bytes = statSync(distBin(e.name)).size;
    const limit = SIZE_LIMITS[e.name];
    return limit === undefined
      ? { name: `dist/bin/${e.name}`, value: bytes, unit: 'bytes' }
      : { name: `dist/bin/${e.name}`, value: bytes, unit: 'bytes', target: `<= ${limit}`, ok: bytes <= limit };
  });
  for (const [build, path] of Object.entries(ADDON_PATHS)) {
    const bytes = embeddedBytes(path);
    if (bytes !== undefined) rows.push({ name: `of which the ${build} addon, embedded (base64)`, value: bytes, unit: 'bytes' });
  }
  return rows;
}
