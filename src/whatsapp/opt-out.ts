// Opt-out keywords (issue 5): a message that is nothing but one of these words, in any case and
// with trailing punctuation, means "send me nothing more". The list is the one carriers and Twilio
// recognise for messaging, plus the common spellings of "opt out".
const OPT_OUT_WORDS = new Set(['STOP', 'STOPALL', 'STOP ALL', 'UNSUBSCRIBE', 'UNSUB', 'CANCEL', 'END', 'QUIT', 'OPTOUT', 'OPT OUT', 'OPT-OUT', 'REVOKE']);

export function isOptOut(text: string): boolean {
  const word = text
    .normalize('NFKC')
    .trim()
    .replace(/[\s.!?]+$/u, '')
    .replace(/\s+/g, ' ')
    .toUpperCase();
  return OPT_OUT_WORDS.has(word);
}
