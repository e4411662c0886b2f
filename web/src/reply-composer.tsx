import { useRef, useState } from 'react';
import { api, type LeadPage } from './api.ts';
import { dateTime } from './format.ts';
import { useFocusAfterRender } from './page-focus.ts';

// The operator's WhatsApp reply. Inside the 24-hour window: free text. Outside it the providers
// accept only the approved template: the composer says so, shows the template's text with a
// button that sends it, and keeps whatever was typed (the API refuses free text then, and a
// refused send never clears the draft). The draft lives as long as the lead's page.

export function ReplyComposer({
  base,
  window: w,
  onSent,
}: {
  base: string;
  window: NonNullable<LeadPage['whatsappWindow']>;
  /** After a send: the notice to show; it takes the focus unless `keepFocus` (the box has it). */
  onSent: (notice: string, keepFocus?: boolean) => void;
}) {
  const [draft, setDraft] = useState('');
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  // The send button is disabled while busy, so focus would be lost: after a reply it goes back to
  // the emptied box, ready for the next one; after the template to the page's notice; on a refusal
  // to the error.
  const box = useRef<HTMLTextAreaElement>(null);
  const errorRef = useRef<HTMLParagraphElement>(null);
  const focusAfter = useFocusAfterRender();
  const send = async (body: { text: string } | { template: true }, notice: string) => {
    setBusy(true);
    try {
      await api('POST', `${base}/reply`, body);
      setError('');
      if ('text' in body) {
        setDraft('');
        focusAfter(() => box.current);
      }
      onSent(notice, 'text' in body);
    } catch (e) {
      setError((e as Error).message);
      focusAfter(() => errorRef.current);
    } finally {
      setBusy(false);
    }
  };
  return (
    <form
      className="reply"
      aria-labelledby="reply-h"
      onSubmit={(e) => {
        e.preventDefault();
        if (w.open && draft.trim()) void send({ text: draft }, 'Reply queued.');
      }}
    >
      <h3 id="reply-h">Reply</h3>
      {w.open ? (
        <p className="window">24-hour window open until {dateTime(w.until!)}.</p>
      ) : (
        <div className="window-closed" role="note">
          <p>
            <strong>The 24-hour window is closed.</strong> WhatsApp accepts only the approved template until the lead
            writes again. Your text is kept here and can be sent once they do.
          </p>
          {w.template ? (
            <>
              <p>The template the lead will get:</p>
              <blockquote className="template-text">{w.template}</blockquote>
              <button type="button" disabled={busy} onClick={() => void send({ template: true }, 'Template queued.')}>
                Send template
              </button>
            </>
          ) : (
            <p>No template is set up for this workspace (Providers page).</p>
          )}
        </div>
      )}
      {error && (
        <p role="alert" className="error" ref={errorRef} tabIndex={-1}>
          {error}
        </p>
      )}
      <label>
        Message{' '}
        <textarea
          ref={box}
          name="text"
          maxLength={1600}
          rows={3}
          value={draft}
          onChange={(e) => setDraft(e.target.value)}
          aria-describedby={w.open ? undefined : 'reply-closed'}
        />
      </label>
      {!w.open && (
        <p id="reply-closed" className="hint">
          Free text cannot be sent while the window is closed.
        </p>
      )}
      <button type="submit" disabled={busy || !w.open || draft.trim() === ''}>
        Reply
      </button>
    </form>
  );
}
