// `nft -j list table|counters` off weftd's thread (weftd's netns, the node's). A table listing of
// thousands of elements keeps nft busy for 0.1-0.3 s and its JSON (mostly rule expressions) costs
// 40-110 ms to parse at load 4-7: both go to a worker thread, which runs nft and hands back the
// listing without the rules' expressions (the controller compares rules by their comment tags), so
// the thread parses only a few hundred KB. The counters listing is small and stays on the thread.
import { NftError } from '../../lib/netfilter/errors.ts';
import { parseNftListing } from '../../lib/netfilter/parse-listing.ts';
import { nftCommand } from '../../lib/netfilter/run.ts';
import { validateFamily, validateName } from '../../lib/netfilter/validate.ts';
import type { NftRunOptions, NftTableRef, NftTableState } from '../../lib/netfilter/types.ts';
import { stallTimeoutMs } from '../../lib/cni/stall.ts';

/** What an async listing reads: the whole table (with elements, rules without expressions) or only its named counters. */
export type ListWhat = 'table' | 'counters';

/** What the worker (or the direct child) reports: nft's failure, or the listing's JSON. */
interface ListOutcome {
  json?: string;
  error?: { code?: number | string; killed?: boolean; message: string; stderr: string };
}

/**
 * The worker's source (plain CommonJS, eval'd: weftd's bundle and the standalone executable have
 * no file to start a worker from). It runs nft, drops every rule's `expr` and re-serialises.
 */
const SLIM_WORKER = `
const { parentPort, workerData: w } = require('node:worker_threads');
require('node:child_process').execFile(w.file, w.argv, { encoding: 'utf8', timeout: w.timeout, killSignal: 'SIGKILL', maxBuffer: 256 * 1024 * 1024 }, (err, stdout, stderr) => {
  if (err !== null) return parentPort.postMessage({ error: { code: err.code, killed: err.killed === true, message: err.message, stderr: String(stderr) } });
  let doc;
  try { doc = JSON.parse(stdout); } catch { return parentPort.postMessage({ json: stdout }); }
  for (const it of Array.isArray(doc && doc.nftables) ? doc.nftables : []) if (it !== null && typeof it === 'object' && it.rule !== null && typeof it.rule === 'object') delete it.rule.expr;
  parentPort.postMessage({ json: JSON.stringify(doc) });
});
`;

/** Lists `table` without blocking the thread; null when the table does not exist. nft is started before the first await. */
export function listTableAsync(table: NftTableRef, opts: NftRunOptions = {}, what: ListWhat = 'table'): Promise<NftTableState | null> {
  const args = ['-j', 'list', ...(what === 'table' ? ['table'] : ['counters', 'table']), validateFamily(table.family), validateName('table', table.name)];
  const [file, argv] = nftCommand(args, opts);
  const timeout = opts.timeoutMs ?? stallTimeoutMs(process.env);
  const outcome = what === 'table' ? inWorker(file, argv, timeout) : direct(file, argv, timeout);
  return outcome.then((o) => {
    if (o.json !== undefined) return parseNftListing(o.json);
    const e = o.error ?? { message: 'no answer', stderr: '' };
    if (typeof e.code === 'number') {
      const failed = new NftError('failed', `nftables: nft ${args.join(' ')} failed (exit ${e.code}): ${e.stderr.split('\n')[0]?.trim() ?? ''}`, { exitStatus: e.code, stderr: e.stderr });
      if (failed.isNotFound) return null;
      throw failed;
    }
    throw new NftError(e.killed === true ? 'timeout' : 'spawn', `nftables: ${file} ${e.killed === true ? `did not finish within ${timeout} ms and was killed` : `could not be started: ${e.message}`}`);
  });
}

/** nft in a worker thread; the thread is created here, so it (and nft) starts in the calling thread's netns. */
function inWorker(file: string, argv: string[], timeout: number): Promise<ListOutcome> {
  // Fetched at call time, as lib/netfilter/run.ts does: weftd's start does not pay for the module.
  const { Worker } = process.getBuiltinModule('node:worker_threads');
  const w = new Worker(SLIM_WORKER, { eval: true, workerData: { file, argv, timeout }, stdout: false, stderr: false });
  w.unref();
  return new Promise((resolve) => {
    let done = false;
    const finish = (o: ListOutcome): void => {
      if (done) return;
      done = true;
      resolve(o);
      void w.terminate();
    };
    w.once('message', (m: ListOutcome) => finish(m));
    w.once('error', (e: Error) => finish({ error: { message: e.message, stderr: '' } }));
    w.once('exit', () => finish({ error: { message: 'the listing worker exited', stderr: '' } }));
  });
}

/** nft as a child of this thread (small outputs). */
function direct(file: string, argv: string[], timeout: number): Promise<ListOutcome> {
  const { execFile } = process.getBuiltinModule('node:child_process');
  return new Promise((resolve) => {
    execFile(file, argv, { encoding: 'utf8', timeout, killSignal: 'SIGKILL', maxBuffer: 256 * 1024 * 1024 }, (err, stdout, stderr) => {
      if (err === null) return resolve({ json: stdout });
      const e = err as NodeJS.ErrnoException & { killed?: boolean; code?: number | string };
      resolve({ error: { ...(e.code !== undefined ? { code: e.code } : {}), killed: e.killed === true, message: e.message, stderr } });
    });
  });
}
