// `nft -j list table|counters` in a child process the thread does not wait for (weftd's netns, the
// node's: the child is forked at the call, in the calling thread's netns). The periodic re-list of a
// table of thousands of elements keeps nft busy for 0.1-0.2 s; run synchronously it held every
// policy event that arrived meanwhile, here only the parse of its output runs in the thread.
import { NftError } from '../../lib/netfilter/errors.ts';
import { parseNftListing } from '../../lib/netfilter/parse-listing.ts';
import { nftCommand } from '../../lib/netfilter/run.ts';
import { validateFamily, validateName } from '../../lib/netfilter/validate.ts';
import type { NftRunOptions, NftTableRef, NftTableState } from '../../lib/netfilter/types.ts';
import { stallTimeoutMs } from '../../lib/cni/stall.ts';

/** What an async listing reads: the whole table (with elements) or only its named counters. */
export type ListWhat = 'table' | 'counters';

/** Lists `table` without blocking the thread; null when the table does not exist. Spawns before the first await. */
export function listTableAsync(table: NftTableRef, opts: NftRunOptions = {}, what: ListWhat = 'table'): Promise<NftTableState | null> {
  const args = ['-j', 'list', ...(what === 'table' ? ['table'] : ['counters', 'table']), validateFamily(table.family), validateName('table', table.name)];
  const [file, argv] = nftCommand(args, opts);
  const timeout = opts.timeoutMs ?? stallTimeoutMs(process.env);
  // Fetched at call time, as lib/netfilter/run.ts does: weftd's start does not pay for the module.
  const { execFile } = process.getBuiltinModule('node:child_process');
  return new Promise((resolve, reject) => {
    execFile(file, argv, { encoding: 'utf8', timeout, killSignal: 'SIGKILL', maxBuffer: 256 * 1024 * 1024 }, (err, stdout, stderr) => {
      if (err === null) {
        try {
          resolve(parseNftListing(stdout));
        } catch (e) {
          reject(e as Error);
        }
        return;
      }
      const e = err as NodeJS.ErrnoException & { killed?: boolean; code?: number | string };
      if (typeof e.code === 'number') {
        const failed = new NftError('failed', `nftables: nft ${args.join(' ')} failed (exit ${e.code}): ${stderr.split('\n')[0]?.trim() ?? ''}`, { exitStatus: e.code, stderr });
        if (failed.isNotFound) resolve(null);
        else reject(failed);
        return;
      }
      const timedOut = e.killed === true;
      reject(new NftError(timedOut ? 'timeout' : 'spawn', `nftables: ${file} ${timedOut ? `did not finish within ${timeout} ms and was killed` : `could not be started: ${e.message}`}`, { cause: err }));
    });
  });
}
