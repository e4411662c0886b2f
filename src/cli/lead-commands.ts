import os from 'node:os';
import type { Pool } from '../db/pool.ts';
import { getLeadDetails, type LeadDetails } from '../leads/lead-details.ts';
import { eraseLead } from '../leads/lead-erasure.ts';
import { CliError, parseCommandArgs, required } from './args.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** `leadintake lead show|delete ID`: one lead, whatever its workspace. */
export async function leadCommand(args: string[], pool: Pool): Promise<number> {
  const [sub, ...rest] = args;
  if (sub !== 'show' && sub !== 'delete')
    throw new CliError('Usage: leadintake lead show LEAD_ID [--json] | lead delete LEAD_ID');
  const { values, positionals } = parseCommandArgs(
    rest,
    { json: 'boolean' },
    `lead ${sub}`,
    sub === 'show' ? ['json'] : [],
  );
  const id = required(positionals[0], 'lead id');
  if (!UUID.test(id)) throw new CliError(`Not a lead id: "${id}".`);
  if (sub === 'delete') {
    const { erased } = await eraseLead(pool, { leadId: id, actor: cliActor() });
    if (!erased) throw new CliError(`No lead "${id}".`);
    console.log(
      `Deleted lead ${id}: its conversation, calls and personal data are erased; ` +
        'the audit trail keeps who deleted it and when.',
    );
    return 0;
  }
  const details = await getLeadDetails(pool, { leadId: id });
  if (!details) throw new CliError(`No lead "${id}".`);
  if (values.json) console.log(JSON.stringify(details));
  else printDetails(details);
  return 0;
}

/** The audit trail's "who" for the command line: the operating-system user that ran it. */
function cliActor(): string {
  let user: string | undefined;
  try {
    user = os.userInfo().username;
  } catch {
    // A container user without a passwd entry.
    user = process.env.USER;
  }
  return `cli:${user || 'unknown'}`;
}

function printDetails(d: LeadDetails): void {
  const l = d.lead;
  const line = (label: string, value: unknown) => {
    if (value !== null && value !== undefined && value !== '') console.log(`${label.padEnd(14)}${value}`);
  };
  line('Lead', l.id);
  line('Workspace', `${l.workspaceSlug} (${l.channel})`);
  line('Status', l.status);
  line('Name', l.name);
  line('Phone', l.phone);
  line('E-mail', l.email);
  line('Goal', l.goal);
  line('Booking', l.bookingStart ? `${l.bookingStart} (${l.bookingUid})` : null);
  line('Opted out', l.optedOutAt);
  line('Notes', l.qualificationNotes);
  line('Created', l.createdAt);
  for (const [question, answer] of Object.entries(l.answers)) line(`  ${question}`, answer);
  console.log('\nTimeline');
  for (const e of d.timeline)
    console.log(`  ${e.at}  ${e.type}${Object.keys(e.data).length ? `  ${JSON.stringify(e.data)}` : ''}`);
  if (d.messages.length > 0) {
    console.log('\nMessages');
    for (const m of d.messages)
      console.log(
        `  ${m.createdAt}  ${m.direction === 'inbound' ? '←' : '→'} ${m.body.replace(/\s+/g, ' ')}  [${m.status}]`,
      );
  }
  if (d.truncated) console.log('  (older entries left out; --json has the same cut)');
  const c = d.latestCall;
  if (c) {
    console.log('\nLatest call');
    line('  Call', `${c.providerCallId} (${c.status})`);
    line('  Started', c.startedAt);
    line('  Duration', c.durationSeconds === null ? null : `${c.durationSeconds} s`);
    line('  Ended', c.endedReason);
    line('  Summary', c.summary);
  }
  if (d.integrationLog.length > 0) {
    console.log('\nIntegration log (newest first)');
    for (const e of d.integrationLog)
      console.log(
        `  ${e.createdAt}  ${e.provider} ${e.direction === 'out' ? '→' : '←'} ${e.kind}  ` +
          `${e.httpStatus ?? '-'}  ${e.outcome ?? ''}`,
      );
  }
}
