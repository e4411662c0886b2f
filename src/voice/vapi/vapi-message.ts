import { z } from 'zod';
import { AppError } from '../../shared/errors.ts';
import { parse } from '../../shared/schema-parse.ts';
import { parseStorableJson } from '../../shared/storable-text.ts';
import { buildTranscript, transcriptTurns } from '../call-transcript.ts';

// Vapi server messages (Vapi's API docs): `{"message": {"type": …, "call": {…}, …}}`. Parsed
// after authentication and leniently: only the envelope is required; a field of the wrong type is
// treated as absent, so a Vapi addition or change never costs a delivery. The end-of-call-report
// is read from `artifact` and `analysis` first, then from the legacy top-level mirrors.

/** Which call, and the correlation ids we sent at dispatch (`assistantOverrides.metadata`). */
export interface CallRef {
  callId: string | null;
  leadId: string | null;
  workspaceId: string | null;
}

export interface CallReport {
  endedReason: string | null;
  startedAt: Date | null;
  endedAt: Date | null;
  /** Whole seconds, as given (legacy `durationSeconds`/`durationMs`), else null (derived later). */
  durationSeconds: number | null;
  summary: string | null;
  transcript: string | null;
  recordingUrl: string | null;
}

export interface ToolCallItem {
  /** null: Vapi sent the call without an id (answered with an error, never run). */
  id: string | null;
  name: string;
  /** An object or its JSON text; runTool accepts both. */
  arguments: unknown;
}

export type VapiMessage =
  | {
      type: 'status-update';
      call: CallRef;
      status: string;
      endedReason: string | null;
      at: Date | null;
      callStartedAt: Date | null;
      callEndedAt: Date | null;
    }
  | { type: 'end-of-call-report'; call: CallRef; report: CallReport }
  /** `leadSaid`: the lead's turns of the call so far (the live `artifact.messages`), oldest first. */
  | { type: 'tool-calls'; call: CallRef; toolCalls: ToolCallItem[]; leadSaid: string[] }
  | { type: 'other'; name: string; call: CallRef };

const str = (max: number) => z.string().max(max).optional().catch(undefined);
const text = z.string().optional().catch(undefined);
const obj = z.record(z.string(), z.unknown()).optional().catch(undefined);
const instant = z.string().max(100).optional().catch(undefined);

const callSchema = z
  .looseObject({
    id: str(200),
    startedAt: instant,
    endedAt: instant,
    endedReason: str(500),
    assistantOverrides: z.looseObject({ metadata: obj }).optional().catch(undefined),
  })
  .optional()
  .catch(undefined);

const envelopeSchema = z.looseObject({
  message: z.looseObject({
    type: z.string().min(1).max(100),
    timestamp: z.number().optional().catch(undefined),
    call: callSchema,
  }),
});

const statusSchema = z.looseObject({ status: str(100), endedReason: str(500) });

const reportSchema = z.looseObject({
  endedReason: str(500),
  startedAt: instant,
  endedAt: instant,
  artifact: z
    .looseObject({
      messages: z.array(z.unknown()).optional().catch(undefined),
      transcript: text,
      recordingUrl: str(4000),
      recording: z
        .looseObject({
          mono: z
            .looseObject({ combinedUrl: str(4000) })
            .optional()
            .catch(undefined),
        })
        .optional()
        .catch(undefined),
    })
    .optional()
    .catch(undefined),
  analysis: z.looseObject({ summary: text }).optional().catch(undefined),
  // Legacy mirrors (not in Vapi's OpenAPI document; sent by older Vapi versions and read by community handlers).
  summary: text,
  transcript: text,
  messages: z.array(z.unknown()).optional().catch(undefined),
  recordingUrl: str(4000),
  durationSeconds: z.number().nonnegative().optional().catch(undefined),
  durationMs: z.number().nonnegative().optional().catch(undefined),
});

const toolCallSchema = z.looseObject({
  id: z.string().min(1).max(200).nullish().catch(null),
  // Vapi's OpenAPI document shape `{id, type, function: {name, arguments}}`, or the docs' `{id, name, arguments}`.
  function: z
    .looseObject({ name: z.string().max(200).optional().catch(undefined), arguments: z.unknown().optional() })
    .optional()
    .catch(undefined),
  name: str(200),
  arguments: z.unknown().optional(),
});
const toolCallsSchema = z.looseObject({
  toolCallList: z.array(z.unknown()).optional().catch(undefined),
  toolWithToolCallList: z
    .array(z.looseObject({ toolCall: z.unknown().optional() }))
    .optional()
    .catch(undefined),
  artifact: z
    .looseObject({ messages: z.array(z.unknown()).optional().catch(undefined) })
    .optional()
    .catch(undefined),
});

/**
 * Parses an authenticated body; throws AppError invalid_json / validation_failed. The body is made
 * storable first (src/shared/storable-text.ts): `repaired` says whether any text had to be.
 */
export function parseVapiMessage(raw: Buffer): { message: VapiMessage; json: unknown; repaired: boolean } {
  const { json, repaired } = parseBody(raw);
  return { ...parseJson(json), repaired };
}

function parseBody(raw: Buffer): { json: unknown; repaired: boolean } {
  try {
    const { value, changed } = parseStorableJson(raw.toString('utf8'));
    return { json: value, repaired: changed };
  } catch {
    throw new AppError('invalid_json');
  }
}

function parseJson(json: unknown): { message: VapiMessage; json: unknown } {
  const m = parse(envelopeSchema, json).message;
  const call = callRef(m.call);
  const body = m as Record<string, unknown>;
  switch (m.type) {
    case 'status-update': {
      const s = statusSchema.parse(body);
      if (!s.status) return { message: { type: 'other', name: m.type, call }, json };
      return {
        message: {
          type: 'status-update',
          call,
          status: s.status,
          endedReason: s.endedReason ?? m.call?.endedReason ?? null,
          at: epoch(m.timestamp),
          callStartedAt: date(m.call?.startedAt),
          callEndedAt: date(m.call?.endedAt),
        },
        json,
      };
    }
    case 'end-of-call-report':
      return { message: { type: m.type, call, report: report(reportSchema.parse(body), m.call) }, json };
    case 'tool-calls': {
      const t = toolCallsSchema.parse(body);
      const leadSaid = leadTurns(t.artifact?.messages);
      return { message: { type: m.type, call, toolCalls: toolCalls(t), leadSaid }, json };
    }
    default:
      return { message: { type: 'other', name: m.type, call }, json };
  }
}

function callRef(call: z.output<typeof callSchema>): CallRef {
  const metadata = call?.assistantOverrides?.metadata ?? {};
  const uuid = (v: unknown) => (z.uuid().safeParse(v).success ? (v as string).toLowerCase() : null);
  return { callId: call?.id || null, leadId: uuid(metadata.leadId), workspaceId: uuid(metadata.workspaceId) };
}

function report(r: z.output<typeof reportSchema>, call: z.output<typeof callSchema>): CallReport {
  const given = r.durationSeconds ?? (r.durationMs !== undefined ? r.durationMs / 1000 : undefined);
  const recording = r.artifact?.recordingUrl ?? r.artifact?.recording?.mono?.combinedUrl ?? r.recordingUrl;
  return {
    endedReason: r.endedReason ?? call?.endedReason ?? null,
    startedAt: date(r.startedAt ?? call?.startedAt),
    endedAt: date(r.endedAt ?? call?.endedAt),
    durationSeconds: given !== undefined ? Math.round(given) : null,
    summary: nonEmpty(r.analysis?.summary ?? r.summary),
    transcript: buildTranscript(r.artifact?.messages ?? r.messages, r.artifact?.transcript ?? r.transcript),
    recordingUrl: recording && z.url({ protocol: /^https?$/ }).safeParse(recording).success ? recording : null,
  };
}

function toolCalls(t: z.output<typeof toolCallsSchema>): ToolCallItem[] {
  const items = t.toolCallList ?? t.toolWithToolCallList?.map((w) => w.toolCall) ?? [];
  const out: ToolCallItem[] = [];
  for (const item of items) {
    const c = toolCallSchema.safeParse(item);
    if (!c.success) continue;
    // Without an id the call is kept (id null): it is answered with an error rather than left unanswered.
    const args = c.data.function ? c.data.function.arguments : c.data.arguments;
    out.push({ id: c.data.id ?? null, name: c.data.function?.name ?? c.data.name ?? '', arguments: args });
  }
  return out;
}

function date(v: string | undefined): Date | null {
  if (!v) return null;
  const ms = Date.parse(v);
  return Number.isNaN(ms) ? null : new Date(ms);
}

/** Vapi's `timestamp` is epoch milliseconds; a value that can only be seconds is taken as such. */
function epoch(v: number | undefined): Date | null {
  if (v === undefined || !Number.isFinite(v) || v <= 0) return null;
  return new Date(v > 1e11 ? v : v * 1000);
}

function nonEmpty(v: string | undefined): string | null {
  return v !== undefined && v.trim() !== '' ? v : null;
}

/** What the lead said in the call so far, one entry per turn. */
function leadTurns(messages: unknown[] | undefined): string[] {
  return transcriptTurns(buildTranscript(messages, undefined)).flatMap((t) => (t.speaker === 'Lead' ? [t.text] : []));
}
