// The hosted form's stylesheet and script, served as files from /forms/assets/ (the page's CSP
// allows no inline script and only the accent colour's inline style). Kept as strings in the
// module so they ship with the code and are served from memory. No web fonts, no CDN: the
// system's fonts, and nothing from another origin. A backslash at the end of a line continues it:
// the served text has no line break there (long rules stay one line, as before wrapping).

export const FORM_CSS = `*,*::before,*::after{box-sizing:border-box}
html{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;font-size:100%;line-height:1.5;\
color:#1a1a1a;background:#f4f5f7}
body{margin:0}
body.embed,html[data-embed] {background:transparent}
.card{max-width:36rem;margin:0 auto;padding:1.25rem 1rem 2rem;background:#fff}
body.page .card{min-height:100vh}
@media (min-width:40rem){body.page{padding:2.5rem 1rem}\
body.page .card{min-height:0;border-radius:.75rem;box-shadow:0 1px 4px rgba(0,0,0,.12);padding:2rem 2.25rem}}
body.embed .card{max-width:none;padding:.5rem .25rem 1rem;background:transparent}
.brand{margin-bottom:.75rem}
.logo{max-height:3rem;max-width:12rem;display:block}
h1{font-size:1.5rem;line-height:1.25;margin:0 0 1rem}
.note{background:#fff6d6;border:1px solid #c9a400;border-radius:.375rem;padding:.5rem .75rem}
.summary{border:2px solid #b3261e;border-radius:.375rem;padding:.5rem .75rem;margin-bottom:1rem;color:#8c1d18}
.summary p{margin:0}
.field{margin-bottom:1rem}
label{display:block;font-weight:600;margin-bottom:.25rem}
.opt{font-weight:400;color:#555}
.hint{margin:0 0 .25rem;color:#555;font-size:.9rem}
input[type=text],input[type=tel],input[type=email],select,textarea{display:block;width:100%;font:inherit;\
padding:.625rem .75rem;border:1px solid #767676;border-radius:.375rem;background:#fff;color:inherit;min-height:2.75rem}
input:focus-visible,select:focus-visible,textarea:focus-visible,button:focus-visible,a:focus-visible{\
outline:3px solid var(--accent);outline-offset:2px}
.invalid input,.invalid select,.invalid textarea{border-color:#b3261e;border-width:2px}
.error{margin:.25rem 0 0;color:#8c1d18;font-weight:600}
.error:empty{display:none}
.consent{display:grid;grid-template-columns:auto 1fr;gap:.5rem .75rem;align-items:start}
.consent input{width:1.5rem;height:1.5rem;margin:.1rem 0 0}
.consent label{font-weight:400}
.consent .error{grid-column:1 / -1}
.hp{position:absolute;left:-10000px;top:auto;width:1px;height:1px;overflow:hidden}
button,.button{display:inline-block;font:inherit;font-weight:600;padding:.75rem 1.5rem;min-height:2.75rem;border:0;\
border-radius:.375rem;background:var(--accent);color:var(--on-accent);cursor:pointer;text-decoration:none}
button{width:100%}
@media (min-width:40rem){button{width:auto}}
button[disabled]{opacity:.7;cursor:progress}
.cf-turnstile{margin-bottom:1rem}
`;

export const FORM_JS = `(function () {
  'use strict';
  var root = document.documentElement;
  var embedded = root.getAttribute('data-embed') === '1' && window.parent !== window;
  // The embed (F2's embed.js) sizes its iframe to the page: tell it the height whenever it changes.
  function postHeight() {
    // The body's own height, not the document's scrollHeight (never less than the iframe's): the
    // frame shrinks again for a shorter page, such as the thank-you page.
    var body = document.body;
    var style = window.getComputedStyle(body);
    var height = Math.ceil(body.getBoundingClientRect().height + parseFloat(style.marginTop) + \
parseFloat(style.marginBottom));
    if (embedded) window.parent.postMessage({ type: 'leadintake:height', height: height }, '*');
  }
  if (embedded) {
    postHeight();
    window.addEventListener('load', postHeight);
    if (window.ResizeObserver) new ResizeObserver(postHeight).observe(document.body);
  }
  var form = document.querySelector('form.li-form');
  if (!form) return;
  var button = form.querySelector('button[type=submit]');
  // The browser's own bubbles are replaced by the same messages, next to their fields.
  form.setAttribute('novalidate', '');
  function show(field, message) {
    var error = document.getElementById(field.id + '-error');
    if (!error) return;
    error.textContent = message;
    var ids = (field.getAttribute('aria-describedby') || '').split(' ').filter(Boolean);
    if (message) {
      field.setAttribute('aria-invalid', 'true');
      if (ids.indexOf(error.id) < 0) ids.push(error.id);
    } else {
      field.removeAttribute('aria-invalid');
      ids = ids.filter(function (id) { return id !== error.id; });
    }
    if (ids.length) field.setAttribute('aria-describedby', ids.join(' '));
    else field.removeAttribute('aria-describedby');
    field.closest('.field').classList.toggle('invalid', Boolean(message));
  }
  form.addEventListener('submit', function (event) {
    var first = null;
    var fields = form.querySelectorAll('[data-required-msg]');
    for (var i = 0; i < fields.length; i++) {
      var f = fields[i];
      var empty = f.type === 'checkbox' ? !f.checked : f.value.trim() === '';
      if (empty) {
        show(f, f.getAttribute('data-required-msg'));
        if (!first) first = f;
      } else if (f.getAttribute('aria-invalid') === 'true') {
        show(f, '');
      }
    }
    if (first) {
      event.preventDefault();
      first.focus();
      postHeight();
      return;
    }
    // One submission: a second click while the first is on its way would be a 409.
    if (button) button.disabled = true;
  });
  // Back from the thank-you page (the page restored from the cache): the button works again.
  window.addEventListener('pageshow', function () { if (button) button.disabled = false; });
})();
`;
