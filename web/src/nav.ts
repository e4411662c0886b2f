/** Client-side navigation under /admin (the History API; App listens to popstate). */
export function navigate(path: string): void {
  history.pushState(null, '', path);
  dispatchEvent(new PopStateEvent('popstate'));
}
