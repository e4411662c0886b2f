// Server messages as the Vapi simulator sends them (Vapi's API docs, Vapi's OpenAPI document `ServerMessage*`).
// The call player uses these builders; tests use them too, to deliver crafted messages (repeats,
// reordering, bad arguments) in exactly the simulator's shape.

/** The Call object as Vapi returns it. Mutable on purpose: playing a call updates it in place. */
export interface VapiCall {
  id: string;
  orgId: string;
  createdAt: string;
  updatedAt: string;
  type: 'outboundPhoneCall';
  status: string;
  cost: number;
  [field: string]: unknown;
}

/**
 * An item of `artifact.messages` (Vapi's OpenAPI document BotMessage, UserMessage, SystemMessage,
 * ToolCall(Result)Message).
 */
export interface ArtifactMessage {
  role: 'system' | 'bot' | 'user' | 'tool_calls' | 'tool_call_result';
  message?: string;
  time: number;
  endTime?: number;
  secondsFromStart: number;
  duration?: number;
  toolCalls?: unknown[];
  toolCallId?: string;
  name?: string;
  result?: string;
}

export interface ToolCallSpec {
  id: string;
  name: string;
  args: Record<string, unknown>;
}

/**
 * `string`: arguments as JSON text (Vapi's OpenAPI document); `object`: as an object (Vapi's docs and observed
 * traffic).
 */
export type ArgumentsFormat = 'string' | 'object';

/**
 * Which end-of-call-report fields are sent: those of Vapi's OpenAPI document, the legacy top-level mirrors, or both.
 */
export type ReportFormat = 'both' | 'spec' | 'legacy';

export interface ReportContent {
  endedReason: string;
  startedAt: string | null;
  endedAt: string;
  messages: ArtifactMessage[];
  summary: string | null;
  recordingUrl: string | null;
  cost: number;
}

type Json = Record<string, unknown>;

const snapshot = (call: VapiCall): VapiCall => structuredClone(call);

export function statusUpdateMessage(call: VapiCall, status: string, at: number, endedReason?: string): Json {
  return {
    message: {
      type: 'status-update',
      status,
      ...(endedReason ? { endedReason } : {}),
      timestamp: at,
      call: snapshot(call),
    },
  };
}

/** `messages`: the call so far, sent as the live `artifact` (Vapi's ServerMessageToolCalls). */
export function toolCallsMessage(
  call: VapiCall,
  at: number,
  calls: ToolCallSpec[],
  format: ArgumentsFormat,
  tools: Json[] = [],
  messages: ArtifactMessage[] = [],
): Json {
  const toolCallList = calls.map((c) => ({
    id: c.id,
    type: 'function',
    function: { name: c.name, arguments: format === 'string' ? JSON.stringify(c.args) : c.args },
  }));
  const toolWithToolCallList = toolCallList.map((tc) => {
    const tool = tools.find((t) => (t.function as Json | undefined)?.name === tc.function.name);
    return { ...(tool ?? { type: 'function', function: { name: tc.function.name } }), toolCall: tc };
  });
  const artifact = { messages: structuredClone(messages) };
  return {
    message: { type: 'tool-calls', timestamp: at, call: snapshot(call), artifact, toolCallList, toolWithToolCallList },
  };
}

export function endOfCallReportMessage(
  call: VapiCall,
  at: number,
  r: ReportContent,
  format: ReportFormat = 'both',
): Json {
  const transcript = transcriptText(r.messages);
  const openAi = r.messages
    .filter((m) => m.role === 'system' || m.role === 'bot' || m.role === 'user')
    .map((m) => ({ role: m.role === 'bot' ? 'assistant' : m.role, content: m.message ?? '' }));
  const spec =
    format === 'legacy'
      ? { artifact: {}, analysis: {} }
      : {
          startedAt: r.startedAt ?? undefined,
          endedAt: r.endedAt,
          artifact: {
            messages: r.messages,
            messagesOpenAIFormatted: openAi,
            transcript,
            ...(r.recordingUrl
              ? {
                  recordingUrl: r.recordingUrl,
                  stereoRecordingUrl: stereo(r.recordingUrl),
                  recording: { stereoUrl: stereo(r.recordingUrl), mono: { combinedUrl: r.recordingUrl } },
                }
              : {}),
          },
          analysis: { ...(r.summary !== null ? { summary: r.summary } : {}), successEvaluation: 'true' },
        };
  const durationSeconds = r.startedAt ? (Date.parse(r.endedAt) - Date.parse(r.startedAt)) / 1000 : undefined;
  const legacy =
    format === 'spec'
      ? {}
      : {
          summary: r.summary ?? undefined,
          transcript,
          messages: r.messages,
          recordingUrl: r.recordingUrl ?? undefined,
          stereoRecordingUrl: r.recordingUrl ? stereo(r.recordingUrl) : undefined,
          durationSeconds,
        };
  return {
    message: JSON.parse(
      JSON.stringify({
        type: 'end-of-call-report',
        timestamp: at,
        endedReason: r.endedReason,
        cost: r.cost,
        ...spec,
        ...legacy,
        call: snapshot(call),
      }),
    ),
  };
}

/** Vapi's `artifact.transcript`: one `AI: …` / `User: …` line per spoken message. */
export function transcriptText(messages: ArtifactMessage[]): string {
  return messages
    .filter((m) => m.role === 'bot' || m.role === 'user')
    .map((m) => `${m.role === 'bot' ? 'AI' : 'User'}: ${m.message ?? ''}\n`)
    .join('');
}

const stereo = (url: string) => url.replace(/-mono\.wav$/, '-stereo.wav');
