import { setTimeout as sleep } from 'node:timers/promises';
import { runTool, type ToolContext } from '../../agent/tool-registry.ts';
import { claimToolCall, finishToolCall } from '../call-session-queries.ts';
import { handOverAfterLateTool } from './vapi-late-tool.ts';
import type { ToolCallItem } from './vapi-message.ts';

// Vapi's model calling our agent tools (Vapi's API docs). Each call in the list runs
// the agent-core tool of that name for the call's lead; the answer is
// `{"results":[{"toolCallId","name","result"}]}`. Vapi gives up after 20 s, so the whole message
// is answered by a deadline: a tool still running then is answered "still working" and finishes
// in the background (its effect and result are kept; a lead it did not close goes to a person).
// A repeated tool call (same call, id and tool) is not run again: it gets the stored result. An
// id this call already used for another tool is answered with an error and not run: it is not
// that tool call, and a repeat of it could not be told apart from the first.

/** One entry of Vapi's answer: `result` for a tool that ran, `error` for a call we could not run. */
export type ToolResult =
  | { toolCallId: string; name: string; result: string }
  | { toolCallId: string; name: string; error: string };

// Vapi matches answers to calls by id; one without an id is still answered (Vapi would otherwise
// wait for it until its timeout), with an error Vapi adds to the conversation, and never run:
// a repeat could not be recognised, so a booking could be made twice.
export const MISSING_TOOL_CALL_ID =
  'This tool call came without an id, so it was not run and nothing was done. Call the tool again.';

export const TOOL_CALL_ID_REUSED =
  'This tool call has the id of an earlier call of another tool in this call, so it was not run and nothing ' +
  'was done. Call the tool again with a new tool call id.';

export const NOT_LINKED =
  'This call is not linked to a lead in this workspace, so nothing was done and nothing will be saved. ' +
  'Do not call tools again; end the call politely.';
export const STILL_RUNNING =
  'This is taking longer than expected and is still being processed. ' +
  'Do not call this tool again; tell the lead a colleague will confirm by e-mail or phone.';
export const IN_PROGRESS = 'This tool call is already being processed. Do not call it again; wait for its result.';

export interface ToolCallsDeps {
  /** Called with each background run, so shutdown and tests can wait for it. */
  track(run: Promise<unknown>): void;
  deadlineMs: number;
}

/** Runs the tool calls in order (the model may rely on it, e.g. listing before booking). */
export async function answerToolCalls(
  ctx: ToolContext,
  providerCallId: string,
  calls: ToolCallItem[],
  deps: ToolCallsDeps,
): Promise<ToolResult[]> {
  const deadline = Date.now() + deps.deadlineMs;
  const results: ToolResult[] = [];
  for (const call of calls) {
    if (call.id === null) {
      ctx.log.warn(
        { leadId: ctx.leadId, tool: call.name.slice(0, 64) },
        'voice tool call without an id: answered with an error',
      );
      results.push({ toolCallId: '', name: call.name, error: MISSING_TOOL_CALL_ID });
      continue;
    }
    const answer = await answerOne(ctx, providerCallId, { ...call, id: call.id }, deadline, deps);
    results.push({ toolCallId: call.id, name: call.name, ...answer });
  }
  return results;
}

async function answerOne(
  ctx: ToolContext,
  providerCallId: string,
  call: ToolCallItem & { id: string },
  deadline: number,
  deps: ToolCallsDeps,
): Promise<{ result: string } | { error: string }> {
  const claim = await claimToolCall(ctx.pool, {
    workspaceId: ctx.workspace.id,
    toolCallId: call.id,
    providerCallId,
    leadId: ctx.leadId,
    name: call.name,
  });
  if (claim.kind === 'repeat') return { result: claim.result ?? IN_PROGRESS };
  if (claim.kind === 'reused') {
    ctx.log.warn(
      { leadId: ctx.leadId, tool: call.name.slice(0, 64), first: claim.storedName.slice(0, 64) },
      'voice tool call id reused for another tool in the call: answered with an error',
    );
    return { error: TOOL_CALL_ID_REUSED };
  }
  const key = { workspaceId: ctx.workspace.id, providerCallId, toolCallId: call.id };
  // What the model is told is decided once, by whichever comes first: the run's end (its result)
  // or the deadline ("still working"). A run that ends after a "still working" answer hands a lead
  // it did not close to a person: the model told the lead a colleague will confirm.
  let told: 'result' | 'still running' | undefined;
  const run = runTool(ctx, call.name, call.arguments).then(async (result) => {
    try {
      await finishToolCall(ctx.pool, key, result);
    } catch (err) {
      // The answer still goes to Vapi; only a repeat of this tool call would miss it.
      ctx.log.warn({ err, leadId: ctx.leadId, tool: call.name.slice(0, 64) }, 'tool result not stored');
    }
    told ??= 'result';
    if (told === 'still running')
      await handOverAfterLateTool(ctx, { name: call.name, providerCallId, toolCallId: call.id }, result);
    return result;
  });
  deps.track(run);
  const remaining = deadline - Date.now();
  const timer = new AbortController();
  try {
    if (remaining > 0) await Promise.race([run, sleep(remaining, undefined, { signal: timer.signal })]);
    told ??= 'still running';
    return { result: told === 'result' ? await run : STILL_RUNNING };
  } finally {
    timer.abort();
  }
}
