// Passkeys in the admin console (issue 36), with @simplewebauthn/browser served from this listener: the
// button inside [data-passkey] asks the server for options, runs the browser's ceremony and sends the
// answer; on success the page goes where the server says. Texts come from the page (its language); the
// server's refusals arrive as JSON {error, message} and are shown as text, never as HTML. Without
// WebAuthn the section stays hidden and the password (or code) form is the way in.
import { browserSupportsWebAuthn, startAuthentication } from '/admin/static/vendor/simplewebauthn/index.js';

for (const root of document.querySelectorAll('[data-passkey]')) {
  const config = JSON.parse(root.getAttribute('data-passkey'));
  const csrf = root.getAttribute('data-csrf');
  const button = root.querySelector('button');
  const errorBox = root.querySelector('[role=alert]');
  if (!browserSupportsWebAuthn() || !button || !errorBox) continue;
  root.hidden = false;

  const say = (message) => {
    errorBox.textContent = message;
    errorBox.hidden = message === '';
  };

  const post = async (url, body) => {
    let response;
    try {
      response = await fetch(url, { method: 'POST', credentials: 'same-origin', headers: { 'content-type': 'application/json', 'x-csrf-token': csrf }, body: JSON.stringify(body) });
    } catch {
      throw new Error(config.text.network);
    }
    const data = await response.json().catch(() => undefined);
    if (!response.ok) throw new Error(data && typeof data.message === 'string' ? data.message : config.text.failed);
    return data;
  };

  button.addEventListener('click', async () => {
    say('');
    button.disabled = true;
    button.setAttribute('aria-busy', 'true');
    try {
      const optionsJSON = await post(config.optionsUrl, config.body);
      let response;
      try {
        response = await startAuthentication({ optionsJSON });
      } catch (error) {
        throw new Error(error && (error.name === 'NotAllowedError' || error.name === 'AbortError') ? config.text.cancelled : config.text.failed);
      }
      const done = await post(config.finishUrl, { ...config.body, response });
      window.location.assign(done.redirect);
    } catch (error) {
      say(error instanceof Error ? error.message : config.text.failed);
    } finally {
      button.disabled = false;
      button.removeAttribute('aria-busy');
    }
  });
}
