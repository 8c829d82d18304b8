// lib/version.ts says what package.json says (the build stamps bundles with package.json's version).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { it } from 'node:test';
import { WEFT_VERSION } from '../../../lib/version.ts';

void it('WEFT_VERSION is package.json\'s version', () => {
  const pkg = JSON.parse(readFileSync(join(import.meta.dirname, '..', '..', '..', 'package.json'), 'utf8')) as { version: string };
  assert.equal(WEFT_VERSION, pkg.version);
});
