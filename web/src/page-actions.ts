import { useState } from 'react';

// A page's action runner: optional confirmation, the error (role=alert) or notice (role=status)
// it shows, and a reload of the page's data after success. Shared by the Team and Webhooks pages.

export interface PageActions {
  error: string;
  notice: string;
  setError: (message: string) => void;
  /** Asks `question` first (null: no question), runs `call`, then says `done` and reloads. */
  run: (question: string | null, call: () => Promise<unknown>, done: string) => Promise<void>;
}

export function usePageActions(reload: () => void): PageActions {
  const [error, setError] = useState('');
  const [notice, setNotice] = useState('');
  const run = async (question: string | null, call: () => Promise<unknown>, done: string) => {
    if (question && !confirm(question)) return;
    setError('');
    try {
      await call();
      setNotice(done);
      reload();
    } catch (e) {
      setError((e as Error).message);
    }
  };
  return { error, notice, setError, run };
}
