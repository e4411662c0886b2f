import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildTranscript, transcriptTurns } from '../../src/voice/call-transcript.ts';

// The lead page shows a call's transcript turn by turn with the speaker named: the stored text
// ("Assistant: …" and "Lead: …" turns separated by blank lines) split back into its turns.

describe('transcriptTurns', () => {
  it('splits the stored transcript into turns with their speakers', () => {
    const stored = buildTranscript(
      [
        { role: 'bot', message: 'Hi Ada, this is Mia from Acme.' },
        { role: 'user', message: 'Hello!\nYes, it is me.' },
        { role: 'user', message: 'Go on.' },
        { role: 'assistant', message: 'Do you own the house?' },
      ],
      null,
    );
    assert.deepEqual(transcriptTurns(stored), [
      { speaker: 'Assistant', text: 'Hi Ada, this is Mia from Acme.' },
      { speaker: 'Lead', text: 'Hello! Yes, it is me. Go on.' },
      { speaker: 'Assistant', text: 'Do you own the house?' },
    ]);
  });

  it('a speaker label only counts at the start of a line; a line without one continues the turn', () => {
    assert.deepEqual(transcriptTurns('Lead: I said Assistant: twice\nand more\n\nAssistant: Noted.'), [
      { speaker: 'Lead', text: 'I said Assistant: twice and more' },
      { speaker: 'Assistant', text: 'Noted.' },
    ]);
  });

  it('no transcript, or text before any speaker, gives no turns', () => {
    assert.deepEqual(transcriptTurns(null), []);
    assert.deepEqual(transcriptTurns(''), []);
    assert.deepEqual(transcriptTurns('static on the line'), []);
  });
});
