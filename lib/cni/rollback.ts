// The single rollback path of a plugin's ADD: a stack of undo actions, recorded right after each
// change to the node or the pod, run newest first when a later step fails, so a refused ADD leaves
// nothing behind and still reports the error that refused it. Runs in the caller's netns: an undo
// that must act elsewhere carries its own socket (or is pushed inside withNetns and unwound there).
import { log } from './log.ts';

type Undo = () => void | Promise<void>;

/** Undo actions recorded as ADD changes things; unwinding runs them newest first, logging (not throwing) their own failures. */
export class Rollback {
  private readonly stack: Array<{ what: string; undo: Undo }> = [];

  /** Records how to undo `what`, right after it was changed. */
  push(what: string, undo: Undo): void {
    this.stack.push({ what, undo });
  }

  /** Number of recorded actions (for tests). */
  get size(): number {
    return this.stack.length;
  }

  /** Runs every undo action in reverse order; an action that fails is logged and the rest still run. */
  async unwind(): Promise<void> {
    for (let step = this.stack.pop(); step !== undefined; step = this.stack.pop()) {
      try {
        await step.undo();
      } catch (e) {
        failed(step.what, e);
      }
    }
  }

  /**
   * unwind for synchronous plugins and for work inside withNetns (where nothing may await): an undo
   * that returns a Promise is a bug there, logged as a failed undo (its outcome is not waited for).
   */
  unwindSync(): void {
    for (let step = this.stack.pop(); step !== undefined; step = this.stack.pop()) {
      try {
        const r = step.undo();
        if (r instanceof Promise) {
          r.catch(() => undefined);
          throw new TypeError('asynchronous undo in a synchronous rollback');
        }
      } catch (e) {
        failed(step.what, e);
      }
    }
  }

  /** Runs `body`; on failure unwinds and rethrows the original error. */
  async run<T>(body: (rb: Rollback) => Promise<T>): Promise<T> {
    try {
      return await body(this);
    } catch (e) {
      await this.unwind();
      throw e;
    }
  }

  /** run for a synchronous `body` (see unwindSync). */
  runSync<T>(body: (rb: Rollback) => T): T {
    try {
      return body(this);
    } catch (e) {
      this.unwindSync();
      throw e;
    }
  }
}

function failed(what: string, e: unknown): void {
  log.error(`rollback: undoing ${what} failed`, { error: e instanceof Error ? e.message : String(e) });
}
