// The model check of weftd --network-policy in slices (pure; runs on weftd's thread, the node's netns):
// each scope's indexed pods against a fresh match of every pod, then each set of the last table
// against a fresh fill from those pods, one scope or set per step. The steps run a few ms at a time
// with the event loop free between slices, so an API event that arrives during the check waits for
// one slice at most, and the check gives up (to run again when quiet) once an event changed the model.
import type { TableSet } from '../../lib/netfilter/table-diff.ts';
import { scopeKey, type SetRequest } from './compile.ts';
import { requestSet, SET_ISO_EG, SET_ISO_EG6, SET_ISO_IN, SET_ISO_IN6, SET_NODE, SET_NODE6, type DesiredPolicy, type PolicyCompileCache } from './desired.ts';
import { MAP_EG, MAP_EG6, MAP_IN, MAP_IN6 } from './groups.ts';
import type { IncrementalPolicy } from './incremental.ts';
import type { PodInfo } from './types.ts';

/** Sets and maps every table has, filled from this node's pods and addresses on every pass (not from a request). */
const FIXED = new Set([SET_ISO_IN, SET_ISO_EG, SET_ISO_IN6, SET_ISO_EG6, SET_NODE, SET_NODE6, MAP_IN, MAP_EG, MAP_IN6, MAP_EG6]);

/**
 * The check's steps over `model` and `last` (its table of the current model; `cache` the compiled
 * policies of that pass). Returns the first difference found, undefined when there is none.
 */
export function* modelCheckSteps(model: IncrementalPolicy, last: DesiredPolicy, cache: PolicyCompileCache): Generator<void, string | undefined> {
  const fresh = new Map<string, PodInfo[]>();
  for (const { key, scope, members } of model.scopes()) {
    const m = model.match(scope);
    if (m.size !== members.size || [...m].some(([k, p]) => members.get(k) !== p)) return `scope ${key}: ${members.size} pods indexed, ${m.size} match`;
    fresh.set(key, [...m.values()]);
    yield;
  }
  const requests = new Map<string, SetRequest>();
  for (const cp of cache.values()) for (const [name, r] of cp.requests) requests.set(name, r);
  for (const name of last.content.sets.keys()) if (!requests.has(name) && !FIXED.has(name)) return `set ${name}: no policy asks for it`;
  for (const [name, r] of requests) {
    const have = last.content.sets.get(name);
    if (have === undefined) return `set ${name}: missing`;
    const pods = r.kind === 'block' ? [] : fresh.get(scopeKey(r.scope)) ?? [...model.match(r.scope).values()];
    const want = requestSet(r, pods);
    if (!sameElements(have, want)) return `set ${name}: ${have.elements.size} elements, ${want.elements.size} wanted`;
    yield;
  }
  return undefined;
}

function sameElements(a: TableSet, b: TableSet): boolean {
  if (a.elements.size !== b.elements.size) return false;
  for (const e of b.elements) if (!a.elements.has(e)) return false;
  return true;
}

/** What runSliced did: the steps' result, their time on the thread and in how many slices. */
export interface SlicedRun<R> {
  value: R;
  ms: number;
  slices: number;
  longestMs: number;
}

/**
 * Runs `steps` in slices of about `sliceMs`, yielding to the event loop (setImmediate) between them;
 * resolves undefined when `valid()` turns false between two slices (the work is then stale).
 */
export async function runSliced<R>(steps: Generator<void, R>, sliceMs: number, valid: () => boolean): Promise<SlicedRun<R> | undefined> {
  let ms = 0;
  let slices = 0;
  let longestMs = 0;
  for (;;) {
    const t0 = performance.now();
    let r = steps.next();
    while (r.done !== true && performance.now() - t0 < sliceMs) r = steps.next();
    const took = performance.now() - t0;
    ms += took;
    slices++;
    longestMs = Math.max(longestMs, took);
    if (r.done === true) return { value: r.value, ms, slices, longestMs };
    await new Promise((res) => setImmediate(res));
    if (!valid()) {
      steps.return(undefined as R);
      return undefined;
    }
  }
}
