import type { ChatFailure, ChatModel, ChatResult } from './chat-model.ts';

// Model calls limited per workspace, so that one tenant's slow or broken model server cannot take
// every turn worker of a process: at most `maxConcurrent` calls of a workspace run at once (a call
// beyond that is not made, and its turn is rescheduled without spending an attempt), and a circuit
// breaker fails fast while a workspace's model keeps failing: after `failureThreshold` failed calls
// in a row, or a server's Retry-After, calls are refused until the cool-down (or the asked wait)
// has passed; then one trial call goes through, and its success closes the breaker. State is per
// process: each worker process protects its own slots.

export interface ModelGateOptions {
  /** Calls of one workspace at once (LLM_MAX_CONCURRENCY_PER_WORKSPACE). */
  maxConcurrent: number;
  /** Failed calls in a row that open the breaker (LLM_BREAKER_FAILURES). */
  failureThreshold: number;
  /** How long an open breaker refuses calls (LLM_BREAKER_COOLDOWN_SECONDS, in ms). */
  cooldownMs: number;
  /** Current time in ms. */
  now: () => number;
}

/** How long a turn refused for lack of a free call waits before it is tried again. */
export const BUSY_RETRY_MS = 2_000;

interface Circuit {
  running: number;
  failures: number;
  /** Calls are refused until then (ms); 0: closed. */
  openUntil: number;
  /** A trial call after the cool-down is running: the others still wait. */
  trial: boolean;
}

export class ModelGate {
  readonly #o: ModelGateOptions;
  readonly #circuits = new Map<string, Circuit>();

  constructor(opts: ModelGateOptions) {
    this.#o = opts;
  }

  /** `chosen` with its model's calls counted and limited under `key` (a workspace, or a workspace's sandbox). */
  wrap<T extends { model: ChatModel }>(key: string, chosen: T): T {
    const model = chosen.model;
    const complete: ChatModel['complete'] = (request, signal) =>
      this.#call(key, () => model.complete(request, signal), signal);
    return { ...chosen, model: { complete } };
  }

  async #call(key: string, call: () => Promise<ChatResult>, signal?: AbortSignal): Promise<ChatResult> {
    const c = this.#circuit(key);
    const now = this.#o.now();
    if (c.openUntil > now) {
      return refused(
        "The workspace's chat model kept failing; calls pause until its cool-down ends.",
        c.openUntil - now,
      );
    }
    if (c.running >= this.#o.maxConcurrent || c.trial) {
      return { ...refused("All of this workspace's chat model calls are in use.", BUSY_RETRY_MS), deferred: true };
    }
    // Past an opened breaker's cool-down, this call is the trial.
    const trial = c.openUntil !== 0;
    c.running += 1;
    c.trial ||= trial;
    let result: ChatResult | undefined;
    try {
      result = await call();
      return result;
    } finally {
      c.running -= 1;
      if (trial) c.trial = false;
      this.#record(key, c, result, signal);
    }
  }

  #record(key: string, c: Circuit, result: ChatResult | undefined, signal?: AbortSignal): void {
    // Our own stop (shutdown, a lost lock) says nothing about the model server.
    if (signal?.aborted) return;
    if (result?.ok || (result && result.kind !== 'retryable')) {
      c.failures = 0;
      c.openUntil = 0;
    } else {
      c.failures += 1;
      const now = this.#o.now();
      const asked = result?.retryAfterMs ?? 0;
      if (c.failures >= this.#o.failureThreshold || asked > 0) {
        c.openUntil = now + Math.max(asked, c.failures >= this.#o.failureThreshold ? this.#o.cooldownMs : 0);
      }
    }
    if (c.running === 0 && c.failures === 0) this.#circuits.delete(key);
  }

  #circuit(key: string): Circuit {
    let c = this.#circuits.get(key);
    if (!c) {
      c = { running: 0, failures: 0, openUntil: 0, trial: false };
      this.#circuits.set(key, c);
    }
    return c;
  }
}

/** `chosen` behind the gate under `key`, or as it is without a gate. */
export function gated<T extends { model: ChatModel }>(gate: ModelGate | undefined, key: string, chosen: T): T {
  return gate ? gate.wrap(key, chosen) : chosen;
}

function refused(message: string, retryAfterMs: number): ChatFailure {
  return { ok: false, kind: 'retryable', message, retryAfterMs };
}
