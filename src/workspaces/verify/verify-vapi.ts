import type { Pool } from '../../db/pool.ts';
import type { Logger } from '../../shared/logger.ts';
import { recordVoiceExchange } from '../../voice/voice-exchange-log.ts';
import type { LookupResult, VoiceSettingsChecker } from '../../voice/voice-provider.ts';
import type { VapiSettings } from '../workspace-config.ts';
import type { VerifyLine } from './verify-line.ts';

// `workspace verify` for Vapi: asks whether the workspace's assistant and phone number exist
// (GET /assistant/{id}, GET /phone-number/{id}, with its API key); both lookups go to the
// integration log, the key masked.

export async function verifyVapi(
  voice: VapiSettings,
  checker: VoiceSettingsChecker,
  ctx: { pool: Pool; log: Logger; workspaceId: string },
): Promise<VerifyLine[]> {
  const [assistant, phone] = await Promise.all([
    checker.getAssistant(voice.apiKey, voice.assistantId),
    checker.getPhoneNumber(voice.apiKey, voice.phoneNumberId),
  ]);
  for (const r of [assistant, phone]) {
    if (r.exchange)
      await recordVoiceExchange(ctx.pool, ctx.log, {
        workspaceId: ctx.workspaceId,
        exchange: r.exchange,
        outcome: r.ok ? 'found' : 'failed',
        secrets: [voice.apiKey],
      });
  }
  const line = (check: string, ok: boolean, note: string): VerifyLine => ({ provider: 'Vapi', check, ok, note });
  const keyRejected = [assistant, phone].every((r) => !r.ok && r.httpStatus === 401);
  if (keyRejected) {
    return [
      line(
        'API key',
        false,
        'Vapi rejected the API key (401): check voice.apiKey (the private key, not the public one)',
      ),
      line('assistant', false, 'not checked (API key rejected)'),
      line('phone number', false, 'not checked (API key rejected)'),
    ];
  }
  const keyOk = assistant.ok || phone.ok || [assistant, phone].some((r) => !r.ok && r.httpStatus === 404);
  return [
    keyOk ? line('API key', true, 'accepted by Vapi') : line('API key', false, failure(assistant, 'voice.apiKey')),
    line('assistant', ...lookupCheck(assistant, voice.assistantId, 'voice.assistantId')),
    line('phone number', ...lookupCheck(phone, voice.phoneNumberId, 'voice.phoneNumberId')),
  ];
}

function lookupCheck(r: LookupResult, id: string, setting: string): [boolean, string] {
  if (r.ok) return [true, `${id} exists`];
  // Vapi answers 400 for an id that is not a UUID, 404 for an unknown one.
  if (r.httpStatus === 404 || r.httpStatus === 400)
    return [false, `${id} not found (${r.httpStatus}): check ${setting}`];
  return [false, failure(r, setting)];
}

function failure(r: LookupResult, setting: string): string {
  if (r.ok) return 'ok';
  if (r.httpStatus === undefined) return `${r.message} Nothing could be checked.`;
  return `Vapi answered ${r.httpStatus}: ${r.message.slice(0, 200)} (${setting})`;
}
