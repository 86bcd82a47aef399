// Passkeys in the browser (issue 19 item 3), with @simplewebauthn/browser served from this origin.
// On /account (#passkey-add): "Add a passkey" asks the server for options, runs the browser's
// registration ceremony and sends the answer with the name the person typed. On /signin
// (#passkey-signin): "Sign in with a passkey" (discoverable credentials, nothing typed), and passkey
// autofill on the identifier field (conditional mediation) when the browser offers it. Every text
// comes from the page (data-script) in its language; the server's refusals arrive as JSON
// {error, message} already in that language and are shown as text, never as HTML.
import { browserSupportsWebAuthn, browserSupportsWebAuthnAutofill, sendSignal, startAuthentication, startRegistration } from '/static/vendor/simplewebauthn/index.js';

/** A failure with words for the person (and the server's error code, when it sent one). */
class Shown extends Error {
  constructor(message, code) {
    super(message);
    this.code = code;
  }
}

/** POSTs JSON with the page's CSRF token; the answer's JSON, or Shown with the server's words. */
async function post(url, body, csrf, text) {
  let response;
  try {
    response = await fetch(url, { method: 'POST', credentials: 'same-origin', headers: { 'content-type': 'application/json', 'x-csrf-token': csrf }, body: JSON.stringify(body) });
  } catch {
    throw new Shown(text.network);
  }
  let data;
  try {
    data = await response.json();
  } catch {
    data = undefined;
  }
  if (!response.ok) throw new Shown(data && typeof data.message === 'string' ? data.message : text.failed, data && data.error);
  return data;
}

/** Words for a failed browser ceremony: cancelled or timed out, already added, or something else. */
function ceremonyError(error, text) {
  if (error instanceof Shown) return error.message;
  if (error && error.code === 'ERROR_AUTHENTICATOR_PREVIOUSLY_REGISTERED') return text.alreadyRegistered;
  if (error && (error.name === 'NotAllowedError' || error.name === 'AbortError' || error.code === 'ERROR_CEREMONY_ABORTED')) return text.cancelled;
  return text.failed;
}

function say(element, message) {
  element.textContent = message;
  element.hidden = message === '';
}

/** Runs one ceremony behind a button: busy while it runs, its failure said in words in errorBox. */
async function ceremony(button, errorBox, text, work, onFailure) {
  say(errorBox, '');
  button.disabled = true;
  button.setAttribute('aria-busy', 'true');
  try {
    await work();
  } catch (error) {
    say(errorBox, ceremonyError(error, text));
    onFailure?.();
  } finally {
    button.disabled = false;
    button.removeAttribute('aria-busy');
  }
}

/** /account: add a passkey under the name typed. */
function setUpRegistration(form) {
  const config = JSON.parse(form.dataset.script);
  const { text } = config;
  const csrf = form.querySelector('input[name=_csrf]').value;
  const errorBox = document.getElementById('passkey-add-error');
  const button = form.querySelector('button[type=submit]');
  const nameInput = form.querySelector('input[name=name]');
  if (!browserSupportsWebAuthn()) {
    say(errorBox, text.unsupported);
    button.disabled = true;
    return;
  }
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    ceremony(
      button,
      errorBox,
      text,
      async () => {
        const optionsJSON = await post(config.optionsUrl, {}, csrf, text);
        const response = await startRegistration({ optionsJSON });
        const done = await post(config.finishUrl, { name: nameInput.value, response }, csrf, text);
        window.location.assign(done.redirect);
      },
      () => nameInput.focus(),
    );
  });
}

/** /signin: the passkey button and autofill. */
function setUpSignIn(root) {
  const config = JSON.parse(root.dataset.script);
  const { text } = config;
  const csrf = root.dataset.csrf;
  const errorBox = document.getElementById('passkey-error');
  const button = document.getElementById('passkey-button');
  if (!browserSupportsWebAuthn()) return; // the section stays hidden: password sign-in only
  root.hidden = false;

  /** Sends the browser's answer; on success goes on (to consent, the page asked for, or the account). */
  async function finish(response) {
    let done;
    try {
      done = await post(config.finishUrl, { response, request: config.request, return: config.return }, csrf, text);
    } catch (error) {
      // A removed passkey: ask the browser to stop offering it (WebAuthn signal API, where supported).
      if (error instanceof Shown && error.code === 'unknown_credential') sendSignal({ signalName: 'unknownCredential', rpID: window.location.hostname, credentialID: response.id }).catch(() => {});
      throw error;
    }
    window.location.assign(done.redirect);
  }

  /** Autofill is offered again after a failure, a few times per page at most. */
  let rearms = 5;

  /** Offers this site's passkeys in the identifier field's autofill, until one is chosen. */
  async function armAutofill() {
    if (!(await browserSupportsWebAuthnAutofill())) return;
    let optionsJSON;
    try {
      optionsJSON = await post(config.optionsUrl, {}, csrf, text);
    } catch {
      return; // no autofill this time; the button still works and says what is wrong
    }
    try {
      await finish(await startAuthentication({ optionsJSON, useBrowserAutofill: true }));
    } catch (error) {
      // Aborted because the button started its own ceremony: nothing to say.
      if (error && error.name === 'AbortError') return;
      say(errorBox, ceremonyError(error, text));
      if (rearms-- > 0) armAutofill();
    }
  }

  button.addEventListener('click', () =>
    ceremony(
      button,
      errorBox,
      text,
      async () => finish(await startAuthentication({ optionsJSON: await post(config.optionsUrl, {}, csrf, text) })),
      () => {
        if (rearms-- > 0) armAutofill();
      },
    ),
  );
  armAutofill();
}

/**
 * /signin/two-step: "Use a passkey" as the second step after a password. The server asks only for the
 * passkeys of the person the password named; "Remember this browser" (the code form's box) applies too.
 */
function setUpSecondStep(root) {
  const config = JSON.parse(root.dataset.script);
  const { text } = config;
  const csrf = root.dataset.csrf;
  const errorBox = document.getElementById('passkey-error');
  const button = document.getElementById('passkey-button');
  if (!browserSupportsWebAuthn()) {
    say(errorBox, text.unsupported);
    button.disabled = true;
    return;
  }
  button.addEventListener('click', () =>
    ceremony(button, errorBox, text, async () => {
      const response = await startAuthentication({ optionsJSON: await post(config.optionsUrl, {}, csrf, text) });
      const remember = document.getElementById('remember');
      const done = await post(config.finishUrl, { response, remember: Boolean(remember && remember.checked) }, csrf, text);
      window.location.assign(done.redirect);
    }),
  );
}

const registration = document.getElementById('passkey-add');
if (registration) setUpRegistration(registration);
const signInRoot = document.getElementById('passkey-signin');
if (signInRoot) setUpSignIn(signInRoot);
const secondStepRoot = document.getElementById('passkey-second-step');
if (secondStepRoot) setUpSecondStep(secondStepRoot);
