// The embed snippet's script, served at GET /forms/<slug>/embed.js (embed-routes.ts,
// docs/INTAKE.md). Kept as a string, like the form's own script (form-assets.ts), so the compiled
// service carries it in dist/ without a copy step. A backslash at the end of a line continues it:
// the served script has no line break there.

export const EMBED_SCRIPT = `// The embed snippet's script (docs/INTAKE.md, "Embed and publishable keys"), \
one static file for
// every workspace, served at /forms/<slug>/embed.js (src/forms/embed-routes.ts):
//   <div data-leadintake-form="<slug>"></div>
//   <script src="https://<service>/forms/<slug>/embed.js" async></script>
// It reads the workspace and the service's origin from its own address, puts an iframe of the
// hosted form (\`?embed=1\`) into the target, and sizes the iframe to the height the form posts
// ({type: 'leadintake:height', height}). Only messages from that iframe, from the service's
// origin, are believed: any other frame of the page could post the same shape.
// Plain ES2017 in one function, no globals, nothing inline: it runs on sites with a strict CSP
// that allows this script, and it sets styles through the CSSOM, which such a CSP permits.
(() => {
  const script = document.currentScript;
  if (!script?.src) return;
  const src = new URL(script.src);
  const match = /^\\/forms\\/([^/]+)\\/embed\\.js$/.exec(src.pathname);
  if (!match) return;
  const slug = decodeURIComponent(match[1]);
  const serviceOrigin = src.origin;
  const MAX_HEIGHT = 20000;

  /** The element named by the script's data-target (an id or a selector), else the slug's div without a form yet. */
  function findTarget() {
    const named = script.getAttribute('data-target');
    if (named) {
      const byId = document.getElementById(named.replace(/^#/, ''));
      if (byId) return byId;
      try {
        return document.querySelector(named);
      } catch {
        return null;
      }
    }
    const candidates = document.querySelectorAll('[data-leadintake-form]');
    for (const element of candidates) {
      if (element.getAttribute('data-leadintake-form') === slug && !element.querySelector('iframe[data-leadintake]'))
        return element;
    }
    return null;
  }

  function mount() {
    const target = findTarget();
    if (!target || target.querySelector('iframe[data-leadintake]')) return;
    const frame = document.createElement('iframe');
    const url = new URL(\`/forms/\${encodeURIComponent(slug)}\`, serviceOrigin);
    url.searchParams.set('embed', '1');
    // The page the form is on, for the lead's record: without its query and fragment, which may
    // carry a visitor's details; a cross-origin frame's Referer would only name the site.
    url.searchParams.set('page', window.location.origin + window.location.pathname);
    frame.src = url.toString();
    frame.title = script.getAttribute('data-title') || 'Contact form';
    frame.setAttribute('data-leadintake', slug);
    frame.style.width = '100%';
    frame.style.border = '0';
    frame.style.display = 'block';
    frame.style.height = '640px';
    window.addEventListener('message', (event) => {
      if (event.origin !== serviceOrigin || event.source !== frame.contentWindow) return;
      const data = event.data;
      if (data?.type !== 'leadintake:height') return;
      const height = Number(data.height);
      if (!Number.isFinite(height) || height <= 0) return;
      frame.style.height = \`\${Math.min(Math.ceil(height), MAX_HEIGHT)}px\`;
    });
    target.appendChild(frame);
  }

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', mount);
  else mount();
})();
`;
