import type { IncomingMessage, ServerResponse } from 'node:http';

// The short line in front of the public API (overload-guard.ts): requests past the bound in
// flight wait here, first come first served, for a slot. The line is bounded twice: in length
// (a request the line cannot take is refused at once) and in time (a request that waited
// `maxWaitMs` is refused then, so no client waits long for a 503). One timer sweeps the line
// while it is not empty; a request whose client went away leaves it.

export interface Waiter<L> {
  req: IncomingMessage;
  res: ServerResponse;
  next: L;
}

interface Entry<L> extends Waiter<L> {
  since: number;
  gone: boolean;
}

export class WaitingLine<L> {
  readonly #maxLength: number;
  readonly #maxWaitMs: number;
  readonly #refuse: (res: ServerResponse) => void;
  #entries: Entry<L>[] = [];
  #head = 0;
  #timer: NodeJS.Timeout | null = null;

  constructor(maxLength: number, maxWaitMs: number, refuse: (res: ServerResponse) => void) {
    this.#maxLength = maxLength;
    this.#maxWaitMs = maxWaitMs;
    this.#refuse = refuse;
  }

  /** Waiting requests, those whose client left included until they reach the front. */
  get length(): number {
    return this.#entries.length - this.#head;
  }

  /** Puts a request in the line; false when the line is full (the caller refuses it). */
  add(waiter: Waiter<L>): boolean {
    if (this.length >= this.#maxLength) return false;
    const entry: Entry<L> = { ...waiter, since: performance.now(), gone: false };
    waiter.res.once('close', () => {
      entry.gone = true;
    });
    this.#entries.push(entry);
    this.#arm();
    return true;
  }

  /** The next request to let in: the oldest that still has its client and has not waited too long. */
  next(): Waiter<L> | undefined {
    const now = performance.now();
    while (this.length > 0) {
      const entry = this.#entries[this.#head++]!;
      if (entry.gone) continue;
      if (now - entry.since >= this.#maxWaitMs) {
        this.#refuse(entry.res);
        continue;
      }
      this.#compact();
      return entry;
    }
    this.#compact();
    return undefined;
  }

  /** Refuses every waiting request (the server is closing). */
  refuseAll(): void {
    while (this.length > 0) {
      const entry = this.#entries[this.#head++]!;
      if (!entry.gone) this.#refuse(entry.res);
    }
    this.#compact();
  }

  /** Refuses the requests at the front that have waited their limit. */
  #sweep(): void {
    this.#timer = null;
    const now = performance.now();
    while (this.length > 0) {
      const entry = this.#entries[this.#head]!;
      if (!entry.gone && now - entry.since < this.#maxWaitMs) break;
      this.#head++;
      if (!entry.gone) this.#refuse(entry.res);
    }
    this.#compact();
    this.#arm();
  }

  #arm(): void {
    if (this.#timer || this.length === 0) return;
    const oldest = this.#entries[this.#head]!;
    const due = Math.max(0, this.#maxWaitMs - (performance.now() - oldest.since));
    this.#timer = setTimeout(() => this.#sweep(), due + 1);
    this.#timer.unref();
  }

  /** Drops the served part of the array once it is most of it (a queue without shift()'s cost). */
  #compact(): void {
    if (this.#head === this.#entries.length) {
      this.#entries = [];
      this.#head = 0;
    } else if (this.#head > 1024 && this.#head * 2 > this.#entries.length) {
      this.#entries = this.#entries.slice(this.#head);
      this.#head = 0;
    }
  }
}
