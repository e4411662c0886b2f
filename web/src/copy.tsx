import { useState } from 'react';

// A Copy button for a URL, a key or an invitation link, with its outcome announced to screen readers.

export function CopyButton({ text, label }: { text: string; label: string }) {
  const [state, setState] = useState('');
  const copy = () => {
    void navigator.clipboard?.writeText(text).then(
      () => setState('Copied.'),
      () => setState('Copy failed: select the text and copy it.'),
    );
  };
  return (
    <>
      <button type="button" onClick={copy} aria-label={label}>
        Copy
      </button>
      <span role="status" className="notice">
        {state}
      </span>
    </>
  );
}
