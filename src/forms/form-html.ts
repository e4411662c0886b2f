import crypto from 'node:crypto';
import type { FormLanguage } from '../workspaces/form-settings.ts';

// The frame of every hosted-form page: the document, its one stylesheet and script (files under
// /forms/assets/, never inline: the CSP allows no inline script), the workspace's accent colour
// (the one inline style, allowed by its hash), and the page's Content-Security-Policy.

export const ASSETS_PATH = '/forms/assets';
const TURNSTILE_ORIGIN = 'https://challenges.cloudflare.com';

export function escapeHtml(s: string): string {
  return s
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;')
    .replaceAll('"', '&quot;')
    .replaceAll("'", '&#39;');
}

export interface ShellInput {
  lang: FormLanguage;
  title: string;
  accentColor: string;
  embed: boolean;
  /** The workspace's name (the title) and logo (shown above the content). */
  workspaceName: string;
  logoUrl: string | null;
  body: string;
  turnstile: boolean;
}

export interface RenderedPage {
  html: string;
  csp: string;
}

/** Dark text on a light accent, white on a dark one: the button stays readable (WCAG contrast). */
function onAccent(hex: string): string {
  const [r, g, b] = [1, 3, 5].map((i) => {
    const c = Number.parseInt(hex.slice(i, i + 2), 16) / 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  });
  const luminance = 0.2126 * r! + 0.7152 * g! + 0.0722 * b!;
  return (luminance + 0.05) / 0.05 > 1.05 / (luminance + 0.05) ? '#111111' : '#ffffff';
}

export function renderShell(p: ShellInput): RenderedPage {
  const style = `:root{--accent:${p.accentColor};--on-accent:${onAccent(p.accentColor)}}`;
  const styleHash = crypto.createHash('sha256').update(style).digest('base64');
  // The page's heading names the workspace; the logo says it again to those who see it.
  const header = p.logoUrl
    ? `<header class="brand"><img class="logo" src="${escapeHtml(p.logoUrl)}" ` +
      `alt="${escapeHtml(p.workspaceName)}"></header>`
    : '';
  const html = `<!doctype html>
<html lang="${p.lang}"${p.embed ? ' data-embed="1"' : ''}>
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${escapeHtml(p.title)} – ${escapeHtml(p.workspaceName)}</title>
<link rel="stylesheet" href="${ASSETS_PATH}/form.css">
<style>${style}</style>
<script src="${ASSETS_PATH}/form.js" defer></script>
${p.turnstile ? `<script src="${TURNSTILE_ORIGIN}/turnstile/v0/api.js" async defer></script>\n` : ''}</head>
<body class="${p.embed ? 'embed' : 'page'}">
<main class="card">
${header}
${p.body}
</main>
</body>
</html>
`;
  const csp = [
    "default-src 'none'",
    `script-src 'self'${p.turnstile ? ` ${TURNSTILE_ORIGIN}` : ''}`,
    `style-src 'self' 'sha256-${styleHash}'`,
    "img-src 'self'",
    ...(p.turnstile ? [`frame-src ${TURNSTILE_ORIGIN}`, `connect-src ${TURNSTILE_ORIGIN}`] : []),
    "form-action 'self'",
    "base-uri 'none'",
    // The embed is framed by the workspace's own website (src/forms/embed*.ts); the page itself never.
    `frame-ancestors ${p.embed ? '*' : "'none'"}`,
  ].join('; ');
  return { html, csp };
}
