// The dashboard's only script, served at /assets/app.js: a copy button and a confirmation
// before destructive forms. Everything works without it.
export const appJs = String.raw`
document.addEventListener('click', function (event) {
  var button = event.target.closest ? event.target.closest('[data-copy]') : null;
  if (!button) return;
  var source = document.getElementById(button.getAttribute('data-copy'));
  if (!source) return;
  var text = source.textContent.trim();
  // "Copied" goes into the status region beside the button (views/components.ts, copyButton),
  // which screen readers announce; emptied again after a while, so a second copy is announced.
  var status = document.getElementById(button.getAttribute('data-copy') + '-copied');
  var done = function () {
    if (!status) return;
    status.textContent = button.getAttribute('data-copied') || 'Copied';
    clearTimeout(status.clearTimer);
    status.clearTimer = setTimeout(function () { status.textContent = ''; }, 4000);
  };
  if (navigator.clipboard && window.isSecureContext) {
    navigator.clipboard.writeText(text).then(done, function () { selectText(source); });
  } else {
    selectText(source);
    try { document.execCommand('copy'); done(); } catch (e) { /* selected: the person can copy it */ }
  }
});
function selectText(node) {
  var range = document.createRange();
  range.selectNodeContents(node);
  var selection = window.getSelection();
  selection.removeAllRanges();
  selection.addRange(range);
}
document.addEventListener('submit', function (event) {
  var form = event.target;
  var message = form.getAttribute && form.getAttribute('data-confirm');
  if (message && !window.confirm(message)) {
    event.preventDefault();
    return;
  }
  // A form sent once only (the password change gives the session a new cookie, which only the
  // first answer carries: a second click, sent with the old one, would find itself signed out).
  if (form.hasAttribute && form.hasAttribute('data-submit-once')) {
    if (form.getAttribute('data-sent') === '1') event.preventDefault();
    else form.setAttribute('data-sent', '1');
  }
});
// A page shown again from the back-forward cache may be sent again.
window.addEventListener('pageshow', function (event) {
  if (!event.persisted) return;
  var sent = document.querySelectorAll('form[data-sent]');
  for (var i = 0; i < sent.length; i++) sent[i].removeAttribute('data-sent');
});
`;

export const iconSvg = '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><defs><linearGradient id="g" x1="0" y1="0" x2="1" y2="1"><stop offset="0" stop-color="#635bff"/><stop offset="1" stop-color="#00d4ff"/></linearGradient></defs><rect width="32" height="32" rx="8" fill="url(#g)"/></svg>';
