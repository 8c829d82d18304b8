// `npm ci` / `npm install` run this (the "prepare" script): the generated code the sources import
// (gen/validators) and the native addon the unit tests load from the source tree (lib/sys/build),
// so that `npx tsc --noEmit` and `npm run test:unit` work on a fresh clone before any `npm run build`.
import { buildAddon } from './build/addon.ts';
import { generateValidators } from './gen-validators.ts';

await generateValidators();
await buildAddon();
