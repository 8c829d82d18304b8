// The single rollback path of ADD: a stack of undo actions run in reverse when a later step fails.
import { log } from '../../lib/cni/log.ts';

type Undo = () => void | Promise<void>;

/** Undo actions recorded as ADD creates things; `unwind` runs them newest first, logging (not throwing) their own failures. */
export class Rollback {
  private readonly stack: Array<{ what: string; undo: Undo }> = [];

  /** Records how to undo `what`, right after it was created. */
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
        log.error(`rollback: undoing ${step.what} failed`, { error: e instanceof Error ? e.message : String(e) });
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
}
