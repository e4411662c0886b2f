import { agentConfigOf } from '../workspaces/agent-config.ts';
import type { Pool, PoolClient } from '../db/pool.ts';
import { scrubText, type Logger } from '../shared/logger.ts';
import type { WorkspaceSettings } from '../workspaces/workspace-config.ts';
import { ConversationLog, settingsSecrets } from './whatsapp-log.ts';
import type { TurnSubject } from './conversation-queries.ts';
import { handOver, holdingMessageOf, type RetryResult } from './hand-over.ts';
import { inTransaction } from '../leads/lead-lock.ts';
import type { ConversationProviders } from './turn-providers.ts';
import type { Clock } from '../shared/clock.ts';
import type { Sandbox } from '../sandbox/sandbox.ts';
import type { WorkspaceService } from '../workspaces/workspace-service.ts';
import type { IntegrationLogWriter } from '../integration-log/integration-log-writer.ts';
import type { ModelGate } from '../agent/model-gate.ts';
import * as q from './turn-queries.ts';

// What the steps of a turn share (src/whatsapp/turn-engine.ts, turn-send.ts, first-contacts.ts):
// the lead's mode (live or sandbox), the 24-hour window, the hand-over to a person and the logs.

/** What the job does next: complete, retry with back-off, or go to the dead-letter queue. */
export type TurnJobResult = { kind: 'done'; outcome: string } | RetryResult | { kind: 'dead'; reason: string };
export type Step = { kind: 'continue' } | TurnJobResult;

/** The 24-hour customer-service window: free-form text only within it (Meta 131047, Twilio 63016). */
export const WINDOW_MS = 24 * 60 * 60 * 1000;

export const CONTINUE: Step = { kind: 'continue' };
export const done = (outcome: string): Step => ({ kind: 'done', outcome });
export const NO_SANDBOX = 'A sandbox lead reached a worker without a sandbox; it is never run with live providers.';
export const NO_WHATSAPP: Step = {
  kind: 'dead',
  reason: 'WhatsApp is not configured for this workspace (no whatsapp section).',
};

export interface TurnEngineDeps {
  pool: Pool;
  log: Logger;
  clock: Clock;
  workspaces: WorkspaceService;
  providers: ConversationProviders;
  /** Where the conversation's provider traffic is written (one writer per process, src/composition.ts). */
  integrationLog: IntegrationLogWriter;
  /** OPENAI_API_KEY, masked in the integration log like the workspace's own keys. */
  globalLlmKey?: string;
  /** The simulated providers of sandbox leads; without it a sandbox lead's turn is dead-lettered, never run live. */
  sandbox?: Sandbox;
  /** MAX_AGENT_TURNS_PER_LEAD (src/whatsapp/turn-cap.ts); unset: no bound. */
  maxAgentTurns?: number;
  /**
   * Model calls limited per workspace (src/agent/model-gate.ts), and LLM_RETRY_AFTER_MAX_SECONDS in ms (hand-over.ts).
   */
  modelGate?: ModelGate;
  maxModelWaitMs?: number;
}

/** The settings and provider clients one lead's turn uses: the workspace's, or the sandbox's. */
export type Mode = { settings: WorkspaceSettings; providers: ConversationProviders };

export class TurnContext {
  readonly d: TurnEngineDeps;
  readonly journal: ConversationLog;

  constructor(deps: TurnEngineDeps) {
    this.d = deps;
    this.journal = new ConversationLog(deps.integrationLog);
  }

  windowClosed(s: TurnSubject): boolean {
    const last = s.lead.lastInboundAt;
    return last === null || this.d.clock().getTime() - last.getTime() >= WINDOW_MS;
  }

  /** A live lead runs on the workspace's settings; a sandbox lead on the sandbox's (null: no sandbox here). */
  async mode(s: TurnSubject): Promise<Mode | null> {
    if (s.lead.livemode) return { settings: this.d.workspaces.settingsOf(s.workspace), providers: this.d.providers };
    if (!this.d.sandbox) return null;
    const sb = await this.d.sandbox.providers();
    return { settings: sb.settings, providers: sb.conversation };
  }

  /**
   * Hands the lead to a person, saying why, in one transaction (hand-over.ts). A reply turn that
   * has no message yet gets the holding message instead while the window is open: the next step
   * sends it. A nudge gets none: the lead asked nothing (and the send would refuse it: isHandOverTurn).
   */
  async escalate(db: PoolClient, s: TurnSubject, turn: q.AgentTurn, outcome: string, reason: string): Promise<Step> {
    const provider =
      turn.kind === 'reply' && turn.state === 'generating' && !this.windowClosed(s)
        ? (await this.mode(s))?.settings.whatsapp?.provider
        : undefined;
    const holding = provider ? { provider, text: holdingMessageOf(agentConfigOf(s.workspace)) } : null;
    const stored = await inTransaction(db, (tx) => handOver(tx, { s, turn, outcome, reason, holding }));
    this.d.log.warn(
      { leadId: s.lead.id, turnId: turn.id, outcome, holdingMessage: stored },
      'whatsapp turn escalated to a person',
    );
    return stored ? CONTINUE : done(outcome);
  }

  async end(db: PoolClient, turn: q.AgentTurn, to: 'cancelled' | 'failed', outcome: string): Promise<Step> {
    await q.finishTurn(db, { turnId: turn.id, from: ['generating', 'ready'], to, outcome });
    return done(outcome);
  }

  // The integration log has the provider's whole answer; the process log a scrubbed line.
  warn(
    s: TurnSubject,
    e: { provider: string; kind: string; message: string; httpStatus?: number; code?: string | number },
  ): void {
    this.d.log.warn(
      {
        leadId: s.lead.id,
        workspaceId: s.workspace.id,
        provider: e.provider,
        kind: e.kind,
        httpStatus: e.httpStatus,
        code: e.code,
        detail: scrubText(e.message),
      },
      'whatsapp turn provider failure',
    );
  }

  secrets(settings: WorkspaceSettings): string[] {
    return settingsSecrets(settings, this.d.globalLlmKey);
  }
}
