import { useEffect, useRef, useState } from 'react';

// The keyboard shortcuts of the field's inboxes: j/k next/previous lead in the inbox, t Take over
// and r Reply on a lead's page, ? lists them. Single keys, so they never fire while a person types
// (an input, a text area, a select, anything editable) or with a modifier held, and they can be
// turned off in their dialog (WCAG 2.1.4): the page's footer button opens it either way.

const STORAGE_KEY = 'leadintake.shortcuts';
const LEAD_LINKS = 'main table a[href*="/leads/"]';

const LIST: Array<[string, string]> = [
  ['j', 'Next lead (inbox)'],
  ['k', 'Previous lead (inbox)'],
  ['Enter', 'Open the lead'],
  ['t', "Take over (a lead's page)"],
  ['r', "Reply (a lead's page)"],
  ['?', 'Show these shortcuts'],
];

function typing(target: EventTarget | null): boolean {
  if (!(target instanceof HTMLElement)) return false;
  if (target.isContentEditable) return true;
  return target.closest('input, textarea, select, [contenteditable=""], [contenteditable="true"]') !== null;
}

function enabled(): boolean {
  try {
    return localStorage.getItem(STORAGE_KEY) !== 'off';
  } catch {
    return true;
  }
}

/** The lead link after (or before) the focused one, focused. */
function moveInInbox(step: 1 | -1): void {
  const links = [...document.querySelectorAll<HTMLAnchorElement>(LEAD_LINKS)];
  if (links.length === 0) return;
  const at = links.indexOf(document.activeElement as HTMLAnchorElement);
  const next = at < 0 ? (step === 1 ? 0 : links.length - 1) : Math.min(Math.max(at + step, 0), links.length - 1);
  links[next]!.focus();
  links[next]!.scrollIntoView({ block: 'nearest' });
}

function buttonNamed(name: string): HTMLButtonElement | null {
  const buttons = [...document.querySelectorAll<HTMLButtonElement>('main button')];
  return buttons.find((b) => b.textContent?.trim() === name && !b.disabled) ?? null;
}

/** `page`: which page is shown ('inbox', 'lead' or another), for the keys that act on one. */
export function Shortcuts({ page }: { page: 'inbox' | 'lead' | 'other' }) {
  const dialog = useRef<HTMLDialogElement>(null);
  const opener = useRef<HTMLElement | null>(null);
  const close = useRef<HTMLButtonElement>(null);
  const [on, setOn] = useState(enabled);
  const open = () => {
    opener.current = document.activeElement instanceof HTMLElement ? document.activeElement : null;
    dialog.current?.showModal();
    // Not the first control (the switch): a key pressed by habit must not turn the shortcuts off.
    close.current?.focus();
  };

  // biome-ignore lint/correctness/useExhaustiveDependencies: `open` reads refs only
  useEffect(() => {
    if (!on) return;
    const onKey = (e: KeyboardEvent) => {
      if (e.defaultPrevented || e.ctrlKey || e.metaKey || e.altKey || typing(e.target)) return;
      if (dialog.current?.open || document.querySelector('dialog[open]')) return;
      if (e.key === '?') {
        e.preventDefault();
        open();
      } else if (page === 'inbox' && (e.key === 'j' || e.key === 'k')) {
        e.preventDefault();
        moveInInbox(e.key === 'j' ? 1 : -1);
      } else if (page === 'lead' && e.key === 't') {
        const button = buttonNamed('Take over');
        if (!button) return;
        e.preventDefault();
        button.click();
      } else if (page === 'lead' && e.key === 'r') {
        const box = document.querySelector<HTMLTextAreaElement>('main form.reply textarea:not([disabled])');
        if (!box) return;
        // Not typed into the box: the key only moves there.
        e.preventDefault();
        box.focus();
        box.scrollIntoView({ block: 'center' });
      }
    };
    addEventListener('keydown', onKey);
    return () => removeEventListener('keydown', onKey);
  }, [on, page]);

  const toggle = (value: boolean) => {
    setOn(value);
    try {
      localStorage.setItem(STORAGE_KEY, value ? 'on' : 'off');
    } catch {
      // Not stored (private mode): the choice lasts for this page.
    }
  };

  return (
    <>
      <footer className="shell-footer">
        <button type="button" className="quiet" onClick={open}>
          Keyboard shortcuts
        </button>
      </footer>
      <dialog
        ref={dialog}
        className="shortcuts"
        aria-labelledby="shortcuts-h"
        onClose={() => {
          opener.current?.focus();
          opener.current = null;
        }}
      >
        <h2 id="shortcuts-h">Keyboard shortcuts</h2>
        <table>
          <thead>
            <tr>
              <th scope="col">Key</th>
              <th scope="col">Action</th>
            </tr>
          </thead>
          <tbody>
            {LIST.map(([key, what]) => (
              <tr key={key}>
                <td>
                  <kbd>{key}</kbd>
                </td>
                <td>{what}</td>
              </tr>
            ))}
          </tbody>
        </table>
        <p>They do nothing while you type in a field.</p>
        <label className="check">
          <input type="checkbox" checked={on} onChange={(e) => toggle(e.target.checked)} /> Single-key shortcuts on
        </label>
        <form method="dialog">
          <button type="submit" ref={close}>
            Close
          </button>
        </form>
      </dialog>
    </>
  );
}
