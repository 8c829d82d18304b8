// Build step: turn a bundle body into a code-cached bundle file: header lines, the small loader
// (scripts/build/code-cache-entry.ts, built here with the body's sha256 defined), the commented body.
import { build } from 'esbuild';
import { createHash } from 'node:crypto';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { formatCommentedBody, parseCommentedBody } from '../../lib/sys/code-cache.ts';
import { BUNDLE_OPTIONS } from './esbuild-options.ts';

const entry = join(dirname(fileURLToPath(import.meta.url)), 'code-cache-entry.ts');

/** The whole file text: `header` (shebang and marker lines), the loader for this body, the commented body. */
export async function formatCodeCachedBundle(name: string, header: string, body: string): Promise<string> {
  const sha = createHash('sha256').update(body).digest('hex');
  const loader = await build({
    entryPoints: [entry],
    ...BUNDLE_OPTIONS,
    define: { WEFT_BUNDLE_NAME: JSON.stringify(name), WEFT_BODY_SHA256: JSON.stringify(sha) },
  });
  const text = loader.outputFiles[0]?.text;
  if (text === undefined) throw new Error('code cache: the loader build produced no output');
  const file = `${header}${text.endsWith('\n') ? text : `${text}\n`}${formatCommentedBody(body)}`;
  // The loader reads the file as UTF-8 (Node's fast path): only ASCII decodes to the same text as the body's.
  if ([...file].some((c) => c.charCodeAt(0) > 0x7f)) throw new Error(`code cache: ${name}: the bundle is not ASCII`);
  // The loader finds the body by its marker line: make sure nothing in the loader is mistaken for it.
  if (parseCommentedBody(file) !== body) throw new Error(`code cache: ${name}: the body does not round-trip through the bundle layout`);
  return file;
}
