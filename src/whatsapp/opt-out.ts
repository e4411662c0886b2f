// What a lead's message means before any model reads it: "send me nothing more" (the opt-out),
// "cancel my booking" from a lead that has one, or just a message. Only a message that is nothing
// but one of the phrases below counts, after normalisation; a sentence that merely contains the
// word ("please stop the music") is a message, and the model decides (its optOut tool).
//
// The table: the keywords carriers and Twilio recognise for messaging (STOP, UNSUBSCRIBE, CANCEL,
// END, QUIT, …), the common short ways of saying it in the languages our workspaces use
// (English, German, Spanish, French, Portuguese), and courtesy words that may surround them
// ("stop please", "bitte keine Nachrichten mehr"). Short on purpose: a false opt-out silences a
// lead for good, while a missed one still reaches the model, which has the optOut tool.
// Entries are written naturally and normalised like the messages, so accents and apostrophes in
// them do not matter.

const OPT_OUT_PHRASES = [
  // English (and the carriers' keywords)
  'stop',
  'stop all',
  'stopall',
  'unsubscribe',
  'unsubscribe me',
  'unsub',
  'end',
  'quit',
  'opt out',
  'optout',
  'opt me out',
  'revoke',
  'stop messaging me',
  'stop messages',
  'stop texting me',
  'stop writing to me',
  'stop contacting me',
  'no more messages',
  "don't message me",
  "don't text me",
  "don't contact me",
  'do not message me',
  'do not text me',
  'do not contact me',
  'remove me',
  'remove me from your list',
  'take me off your list',
  'leave me alone',
  // German
  'stopp',
  'abmelden',
  'abbestellen',
  'austragen',
  'keine nachrichten mehr',
  'keine weiteren nachrichten',
  'nicht mehr schreiben',
  'schreiben sie mir nicht mehr',
  'schreib mir nicht mehr',
  'hör auf',
  'hören sie auf',
  'aufhören',
  'lass mich in ruhe',
  'lassen sie mich in ruhe',
  'nicht mehr kontaktieren',
  // Spanish
  'parar',
  'baja',
  'dar de baja',
  'darme de baja',
  'no más mensajes',
  'no quiero más mensajes',
  'no me escribas más',
  'no me escriban más',
  'deja de escribirme',
  'dejen de escribirme',
  'no me contactes',
  // French
  'arrêt',
  'arrêter',
  'arrêtez',
  'désabonner',
  'me désabonner',
  'désinscrire',
  'me désinscrire',
  'désabonnement',
  'plus de messages',
  'ne plus recevoir de messages',
  "ne m'écrivez plus",
  'laissez-moi tranquille',
  // Portuguese
  'pare',
  'sair',
  'descadastrar',
  'me descadastre',
  'cancelar inscrição',
  'não quero mais mensagens',
  'não me mande mais mensagens',
  'parem de me mandar mensagens',
  'me deixe em paz',
];

// "Cancel": the carriers' opt-out keyword, but from a lead with a booking it means the booking.
// Only the English word opted out before; the other languages' words never did, so for a lead
// without a booking they stay messages for the model.
const LEGACY_OPT_OUT_CANCEL = 'cancel';
const CANCEL_PHRASES = [
  'cancel',
  'cancel it',
  'cancel booking',
  'cancel my booking',
  'cancel the booking',
  'cancel appointment',
  'cancel my appointment',
  'stornieren',
  'absagen',
  'termin absagen',
  'cancelar',
  'cancelar cita',
  'annuler',
  'annuler le rendez-vous',
  'cancelar agendamento',
];

// Said around the phrase without changing it, at either end: "stop please", "bitte keine …".
const COURTESY = [
  'please',
  'pls',
  'plz',
  'thanks',
  'thank you',
  'thx',
  'bitte',
  'danke',
  'por favor',
  'gracias',
  "s'il vous plaît",
  'svp',
  'merci',
  'obrigado',
  'obrigada',
];

/**
 * The message reduced to what it says: NFKC (full-width letters), invisible characters removed
 * (zero-width spaces, joiners, BOM), accents, emoji, punctuation and symbols dropped, case
 * folded, apostrophes joined ("don't" → "dont"), letters repeated three times or more shortened
 * ("stooop"), a word repeated at once said once ("stop stop"), spaces collapsed.
 */
export function normaliseMessage(text: string): string {
  const words = text
    .normalize('NFKC')
    .replace(/\p{Cf}/gu, '')
    .replace(/\p{Cc}/gu, ' ')
    .normalize('NFD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/['’ʼ`´]/gu, '')
    .replace(/[\p{P}\p{S}\p{Extended_Pictographic}\p{Emoji_Modifier}\p{Regional_Indicator}]/gu, ' ')
    .replace(/(\p{L})\1{2,}/gu, '$1')
    .split(/\s+/u)
    .filter((w) => w !== '');
  return words.filter((w, i) => w !== words[i - 1]).join(' ');
}

const normalisedSet = (phrases: readonly string[]) => new Set(phrases.map(normaliseMessage));
const OPT_OUT = normalisedSet([...OPT_OUT_PHRASES, LEGACY_OPT_OUT_CANCEL]);
const CANCEL = normalisedSet(CANCEL_PHRASES);
const COURTESY_WORDS = [...normalisedSet(COURTESY)].sort((a, b) => b.length - a.length);

/** The phrase without the courtesy words at its ends. */
function core(normalised: string): string {
  let s = normalised;
  for (let changed = true; changed; ) {
    changed = false;
    for (const c of COURTESY_WORDS) {
      if (s.startsWith(`${c} `)) [s, changed] = [s.slice(c.length + 1), true];
      if (s.endsWith(` ${c}`)) [s, changed] = [s.slice(0, -c.length - 1), true];
    }
  }
  return s;
}

export type InboundIntent = 'opt_out' | 'cancel_booking' | 'message';

/** What the lead's message asks for; `hasBooking`: the lead has a booking (a bare "Cancel" means it). */
export function inboundIntent(text: string, lead: { hasBooking: boolean }): InboundIntent {
  const said = core(normaliseMessage(text));
  if (lead.hasBooking && CANCEL.has(said)) return 'cancel_booking';
  return OPT_OUT.has(said) ? 'opt_out' : 'message';
}

/** A message that is nothing but an opt-out phrase (for a lead without a booking). */
export function isOptOut(text: string): boolean {
  return inboundIntent(text, { hasBooking: false }) === 'opt_out';
}
