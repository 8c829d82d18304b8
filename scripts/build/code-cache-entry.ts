// The loader at the top of every code-cached bundle (see lib/sys/code-cache.ts): runs the commented
// body below it through V8's code cache. WEFT_BUNDLE_NAME and WEFT_BODY_SHA256 are defined per bundle at build time.
import { runCachedBody } from '../../lib/sys/code-cache.ts';

declare const WEFT_BUNDLE_NAME: string;
declare const WEFT_BODY_SHA256: string;

runCachedBody(__filename, WEFT_BUNDLE_NAME, WEFT_BODY_SHA256, module, require);
