import crypto from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { signVapiHmac, usesTimestamp, type HmacPlan } from '../../voice/vapi/vapi-hmac.ts';
import { callScript, type Conversation, type VapiPersona } from '../personas/vapi-personas.ts';
import {
  endOfCallReportMessage,
  statusUpdateMessage,
  toolCallsMessage,
  type ArgumentsFormat,
  type ArtifactMessage,
  type ReportFormat,
  type VapiCall,
} from './vapi-sim-messages.ts';

// Plays one simulated call against the server URL the call was created with
// (`assistantOverrides.server`, and each appended tool's own `server` for its tool calls), as Vapi
// does: status-update ringing → in-progress, the persona's tool calls (answered by our server),
// status-update ended and the end-of-call-report. The call's clock is simulated: timestamps move by
// the time each line takes to say, while real waiting is `realMsPerSecond` per simulated second
// (0 in tests, about 1000 for a demo that looks real).

export interface PlayOptions {
  argumentsAs?: ArgumentsFormat;
  report?: ReportFormat;
  /** Deliver the end-of-call-report before the final status-update (it happens: separate requests). */
  reportFirst?: boolean;
  /** Deliver every status-update and the report twice, as a retrying sender would. */
  repeatDeliveries?: boolean;
  /** Real milliseconds waited per simulated second. Default 0. */
  realMsPerSecond?: number;
}

export interface Delivery {
  callId: string;
  url: string;
  type: string;
  body: string;
  status?: number;
  responseText?: string;
  error?: string;
}

export interface PlayResult {
  callId: string;
  persona: VapiPersona;
  endedReason: string;
  toolResults: Array<{ name: string; result: string }>;
  deliveries: Delivery[];
}

export interface PlayerDeps {
  now: () => Date;
  /** Aborted when the simulator closes. */
  signal: AbortSignal;
  credentials: ReadonlyMap<string, HmacPlan>;
  onDelivery: (d: Delivery) => void;
}

type Json = Record<string, unknown>;
interface Server {
  url: string;
  headers?: Record<string, string>;
  credentialId?: string;
  timeoutSeconds?: number;
}

export class CallPlayer {
  readonly #call: VapiCall;
  readonly #opts: PlayOptions;
  readonly #deps: PlayerDeps;
  readonly #messages: ArtifactMessage[] = [];
  readonly #deliveries: Delivery[] = [];
  readonly #toolResults: Array<{ name: string; result: string }> = [];
  readonly #start: number;
  #t: number;
  #synced: number;
  #rang = false;

  constructor(call: VapiCall, opts: PlayOptions, deps: PlayerDeps) {
    this.#call = call;
    this.#opts = opts;
    this.#deps = deps;
    this.#start = deps.now().getTime();
    this.#t = this.#start;
    this.#synced = this.#start;
  }

  /** The first status-update on its own, so the simulator can send it before answering `POST /call`. */
  async ring(): Promise<void> {
    if (this.#rang) return;
    this.#rang = true;
    await this.#status('ringing');
  }

  async play(persona: VapiPersona): Promise<PlayResult> {
    const script = callScript(persona);
    let endedReason: string;
    let startedAt: string | null = null;
    if (typeof script.start === 'object') {
      endedReason = script.start.startError;
    } else {
      await this.ring();
      if (script.start === 'no-answer') {
        this.#advance(25);
        endedReason = 'customer-did-not-answer';
      } else if (script.start === 'busy') {
        // The carrier's busy signal (or a declined call) comes within seconds; never in progress.
        this.#advance(4);
        endedReason = 'customer-busy';
      } else {
        this.#advance(6);
        startedAt = this.#iso();
        this.#call.startedAt = startedAt;
        await this.#status('in-progress');
        this.#messages.push({
          role: 'system',
          message: `You are Mia. The lead is ${this.#vars.leadName ?? 'unknown'}.`,
          time: this.#t,
          secondsFromStart: 0,
        });
        endedReason = await script.run!(this.#conversation());
      }
    }
    this.#advance(1);
    const endedAt = this.#iso();
    Object.assign(this.#call, { endedAt, endedReason });
    const spoke = this.#messages.some((m) => m.role === 'bot');
    const report = endOfCallReportMessage(
      this.#call,
      this.#t,
      {
        endedReason,
        startedAt,
        endedAt,
        messages: this.#messages,
        summary: spoke && script.summary ? script.summary(this.#conversation()) : null,
        recordingUrl: startedAt ? `https://storage.vapi.ai/${this.#call.id}-mono.wav` : null,
        cost: startedAt ? Math.round((Date.parse(endedAt) - Date.parse(startedAt)) / 600) / 100 : 0,
      },
      this.#opts.report ?? 'both',
    );
    const ended = () => this.#status('ended', endedReason);
    const sendReport = () => this.#event('end-of-call-report', report);
    if (this.#opts.reportFirst) {
      await sendReport();
      await ended();
    } else {
      await ended();
      await sendReport();
    }
    const reportBody = report.message as Json;
    Object.assign(this.#call, {
      artifact: reportBody.artifact,
      analysis: reportBody.analysis,
      cost: reportBody.cost,
      messages: this.#messages,
    });
    return {
      callId: this.#call.id,
      persona,
      endedReason,
      toolResults: this.#toolResults,
      deliveries: this.#deliveries,
    };
  }

  get #vars(): Record<string, string> {
    const overrides = this.#call.assistantOverrides as Json | undefined;
    return (overrides?.variableValues as Record<string, string> | undefined) ?? {};
  }

  /** What the call asked for on an answering machine (Vapi's `voicemailDetection`, `voicemailMessage`). */
  get #voicemail(): Conversation['voicemail'] {
    const overrides = (this.#call.assistantOverrides as Json | undefined) ?? {};
    const detection = overrides.voicemailDetection;
    if (detection === undefined || detection === 'off') return null;
    const message = overrides.voicemailMessage;
    // Vapi fills `{{variables}}` in the voicemail message as in the first message.
    const vars = this.#vars;
    return {
      message:
        typeof message === 'string' ? message.replace(/\{\{\s*(\w+)\s*\}\}/g, (_, k: string) => vars[k] ?? '') : null,
    };
  }

  #conversation(): Conversation {
    const say = (role: 'bot' | 'user', text: string) => {
      const seconds = Math.max(1, Math.round(text.split(/\s+/).length / 2.5));
      const time = this.#t;
      this.#advance(seconds);
      this.#messages.push({
        role,
        message: text,
        time,
        endTime: this.#t,
        secondsFromStart: (time - this.#start) / 1000,
        duration: seconds * 1000,
      });
    };
    return {
      vars: this.#vars,
      voicemail: this.#voicemail,
      assistant: (text) => say('bot', text),
      lead: (text) => say('user', text),
      pause: (seconds) => this.#advance(seconds),
      tool: (name, args) => this.#tool(name, args),
    };
  }

  async #tool(name: string, args: Record<string, unknown>): Promise<string> {
    const id = `call_${crypto.randomBytes(12).toString('base64url')}`;
    const overrides = (this.#call.assistantOverrides as Json | undefined) ?? {};
    const tools = ((overrides['tools:append'] as Json[] | undefined) ?? []).filter((t) => t.type === 'function');
    const tool = tools.find((t) => (t.function as Json).name === name);
    const server = (tool?.server as Server | undefined) ?? (overrides.server as Server | undefined);
    const toolCall = { id, type: 'function', function: { name, arguments: JSON.stringify(args) } };
    this.#messages.push({
      role: 'tool_calls',
      message: '',
      toolCalls: [toolCall],
      time: this.#t,
      secondsFromStart: this.#secondsFromStart(),
    });
    let result: string;
    if (!server?.url) {
      result = 'No server URL is set for this tool.';
    } else {
      const delivery = await this.#deliver(
        server,
        'tool-calls',
        toolCallsMessage(
          this.#call,
          this.#t,
          [{ id, name, args }],
          this.#opts.argumentsAs ?? 'string',
          tools,
          this.#messages,
        ),
      );
      result = resultFor(delivery, id);
    }
    this.#advance(1);
    this.#messages.push({
      role: 'tool_call_result',
      toolCallId: id,
      name,
      result,
      time: this.#t,
      secondsFromStart: this.#secondsFromStart(),
    });
    this.#toolResults.push({ name, result });
    return result;
  }

  async #status(status: string, endedReason?: string): Promise<void> {
    this.#call.status = status;
    this.#call.updatedAt = this.#iso();
    await this.#event('status-update', statusUpdateMessage(this.#call, status, this.#t, endedReason));
  }

  /** Status updates and reports go to the call's server URL (repeated when asked to). */
  async #event(type: string, body: Json): Promise<void> {
    const server = (this.#call.assistantOverrides as Json | undefined)?.server as Server | undefined;
    if (!server?.url) return;
    await this.#deliver(server, type, body);
    if (this.#opts.repeatDeliveries) await this.#deliver(server, type, body);
  }

  async #deliver(server: Server, type: string, body: Json): Promise<Delivery> {
    await this.#catchUp();
    const text = JSON.stringify(body);
    const headers: Record<string, string> = { 'content-type': 'application/json; charset=utf-8', ...server.headers };
    const plan = server.credentialId ? this.#deps.credentials.get(server.credentialId) : undefined;
    if (plan) {
      const timestamp = String(this.#t);
      if (usesTimestamp(plan)) headers[plan.timestampHeader] = timestamp;
      headers[plan.signatureHeader] = signVapiHmac(plan, text, timestamp);
    }
    const delivery: Delivery = { callId: this.#call.id, url: server.url, type, body: text };
    try {
      const timeout = AbortSignal.timeout((server.timeoutSeconds ?? 20) * 1000);
      const res = await fetch(server.url, {
        method: 'POST',
        headers,
        body: text,
        signal: AbortSignal.any([timeout, this.#deps.signal]),
      });
      delivery.status = res.status;
      delivery.responseText = await res.text();
    } catch (err) {
      delivery.error = (err as Error).message;
    }
    this.#deliveries.push(delivery);
    this.#deps.onDelivery(delivery);
    return delivery;
  }

  #advance(seconds: number): void {
    this.#t += seconds * 1000;
  }

  /** Waits the real time that matches the simulated time since the last delivery. */
  async #catchUp(): Promise<void> {
    const factor = this.#opts.realMsPerSecond ?? 0;
    const wait = ((this.#t - this.#synced) / 1000) * factor;
    this.#synced = this.#t;
    if (wait > 0) await sleep(wait, undefined, { signal: this.#deps.signal });
  }

  #iso(): string {
    return new Date(this.#t).toISOString();
  }

  #secondsFromStart(): number {
    return (this.#t - this.#start) / 1000;
  }
}

/** Our server's answer for one tool call: `result`, else `error`, else what went wrong. */
function resultFor(d: Delivery, id: string): string {
  if (d.error) return `The tool server could not be reached (${d.error}).`;
  if (d.status !== 200) return `The tool server answered ${d.status}.`;
  try {
    const body = JSON.parse(d.responseText ?? '') as {
      results?: Array<{ toolCallId?: string; result?: unknown; error?: unknown }>;
    };
    const item = body.results?.find((r) => r.toolCallId === id);
    if (typeof item?.result === 'string') return item.result;
    if (typeof item?.error === 'string') return item.error;
    return 'The tool server sent no result for this tool call.';
  } catch {
    return 'The tool server answered with a body that is not JSON.';
  }
}
