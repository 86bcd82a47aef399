// The /tasks page in the browser: uploads through the task API, Cancel, Delete record (after an
// inline confirmation), Preview of document.md, and live status — while a task is queued or running
// its list is polled every 2 s and rows are updated in place, so focus and open previews survive.
// Plain script, no build step. Every text comes from the page (data-script) in its language; what a
// person uploaded or the server wrote (file names, errors, previews) is set as text, never as HTML.
(() => {
  'use strict';

  const root = document.getElementById('tasks-page');
  if (!root) return;
  const { locale, text, previewFile } = JSON.parse(root.dataset.script);

  const POLL_MS = 2000;
  /** Preview shows at most this much of document.md (a Range request; the download has the rest). */
  const PREVIEW_BYTES = 256 * 1024;
  const KINDS = ['docparse', 'translate'];
  const IN_FLIGHT = new Set(['queued', 'running']);

  // ——— Text in the page's language (the same rules as pages/tasks.routes.ts) ———

  const fill = (template, values) => template.replace(/\{(\w+)\}/g, (whole, name) => (name in values ? String(values[name]) : whole));
  const dateFormat = new Intl.DateTimeFormat(locale, { dateStyle: 'medium', timeStyle: 'short', timeZone: 'UTC' });
  const formatDate = (iso) => `${dateFormat.format(new Date(iso))} UTC`;
  const languageNames = new Intl.DisplayNames([locale], { type: 'language' });
  const languageName = (code) => {
    try {
      return languageNames.of(code) || code;
    } catch {
      return code;
    }
  };
  function formatSize(bytes) {
    const [unit, value] = bytes < 1024 ? ['byte', bytes] : bytes < 1024 * 1024 ? ['kilobyte', bytes / 1024] : ['megabyte', bytes / 1024 / 1024];
    return new Intl.NumberFormat(locale, { style: 'unit', unit, unitDisplay: 'short', maximumFractionDigits: value < 10 ? 1 : 0 }).format(value);
  }
  const progressText = (task) => fill(task.progress.total === 1 ? text.progressOne : text.progressOther, task.progress);

  /** An element with attributes and children (strings become text nodes). */
  function el(tag, attributes, ...children) {
    const element = document.createElement(tag);
    for (const [name, value] of Object.entries(attributes)) element.setAttribute(name, value);
    element.append(...children);
    return element;
  }

  /** Changes text only when it differs, so unchanged rows cause no DOM (or screen-reader) churn. */
  function setText(element, value) {
    if (element.textContent !== value) element.textContent = value;
  }

  const announcer = document.getElementById('tasks-announce');
  function announce(message) {
    // Cleared first, so the same sentence twice is still read out.
    announcer.textContent = '';
    setTimeout(() => {
      announcer.textContent = message;
    }, 100);
  }

  // ——— The task API ———

  class ApiError extends Error {
    constructor(message, status) {
      super(message);
      this.status = status;
    }
  }

  /** The API's `message` for a refusal, or a sentence naming the status when there is none. */
  async function refusal(response) {
    try {
      const body = await response.json();
      if (body && typeof body.message === 'string') return new ApiError(body.message, response.status);
    } catch {
      // not JSON: fall through
    }
    return new ApiError(fill(text.serverError, { status: response.status }), response.status);
  }

  async function request(method, url, options = {}) {
    let response;
    try {
      // Same-origin fetch sends the session cookie, and on POST and DELETE the Origin header the API
      // checks. Under the page's Referrer-Policy (no-referrer) the Fetch standard sends that Origin as
      // "null"; Chromium sends it anyway, and same-origin here makes every browser send it (the
      // Referer it also allows never leaves this site).
      response = await fetch(url, { method, credentials: 'same-origin', referrerPolicy: 'same-origin', ...options });
    } catch {
      throw new ApiError(text.networkError, 0);
    }
    if (!response.ok) throw await refusal(response);
    return response;
  }

  const api = async (method, url, body) => {
    const response = await request(method, url, { body, headers: { accept: 'application/json' } });
    return response.status === 204 ? null : response.json();
  };
  const tasksUrl = (kind) => `/api/v1/${encodeURIComponent(kind)}/tasks`;
  const taskUrl = (kind, id) => `${tasksUrl(kind)}/${encodeURIComponent(id)}`;

  // ——— Rows ———

  const lists = Object.fromEntries(KINDS.map((kind) => [kind, root.querySelector(`ul.tasks[data-kind="${kind}"]`)]));
  const patterns = Object.fromEntries(KINDS.map((kind) => [kind, root.querySelector(`template.task-row[data-kind="${kind}"]`)]));
  const rowOf = (id) => document.getElementById(`task-${id}`);
  const nameOf = (row) => row.querySelector('.task-name').textContent;

  /** A copy of the list's empty row, its ids and references renamed for this task. */
  function newRow(task) {
    const row = patterns[task.kind].content.firstElementChild.cloneNode(true);
    row.id = `task-${task.id}`;
    row.dataset.id = task.id;
    for (const element of row.querySelectorAll('[id], [aria-labelledby], [aria-describedby], [aria-controls]')) {
      for (const name of ['id', 'aria-labelledby', 'aria-describedby', 'aria-controls']) {
        const value = element.getAttribute(name);
        if (value && value.includes('task--')) element.setAttribute(name, value.replaceAll('task--', `task-${task.id}-`));
      }
    }
    return row;
  }

  /** Puts a row where it belongs: newest first. */
  function place(row, kind) {
    const list = lists[kind];
    const later = [...list.children].find((other) => other !== row && other.dataset.created < row.dataset.created);
    if (later) list.insertBefore(row, later);
    else list.append(row);
  }

  function fillRow(row, task) {
    const focused = row.contains(document.activeElement) ? document.activeElement : null;
    row.dataset.status = task.status;
    row.dataset.created = task.created_at;
    setText(row.querySelector('.task-name'), task.source.name);
    const status = row.querySelector('.task-status');
    status.dataset.status = task.status;
    setText(status, text.status[task.status] ?? task.status);

    const languages = row.querySelector('.task-languages');
    const { source_lang: source, target_lang: target } = task.options ?? {};
    languages.hidden = !(source && target);
    if (source && target) setText(languages, fill(text.languages, { source: languageName(source), target: languageName(target) }));

    const bar = row.querySelector('progress');
    bar.max = Math.max(task.progress.total, 1);
    bar.value = task.progress.done;
    setText(bar.nextElementSibling, progressText(task));

    const times = [
      [text.created, task.created_at],
      [text.started, task.started_at],
      [text.ended, task.finished_at],
    ].filter(([, iso]) => iso);
    const timesList = row.querySelector('.task-times');
    const timesKey = times.map(([, iso]) => iso).join(' ');
    if (timesList.dataset.key !== timesKey) {
      timesList.replaceChildren(...times.flatMap(([label, iso]) => [el('dt', {}, label), el('dd', {}, el('time', { datetime: iso }, formatDate(iso)))]));
      timesList.dataset.key = timesKey;
    }

    const error = row.querySelector('.task-error');
    error.hidden = !task.error;
    setText(error, task.error ?? '');

    const files = row.querySelector('.task-files');
    const filesKey = task.files.map((file) => file.url).join(' ');
    if (files.dataset.key !== filesKey) {
      files.replaceChildren(...task.files.map((file) => el('li', {}, el('a', { href: file.url, download: '' }, file.name), ' ', el('span', { class: 'size' }, formatSize(file.size)))));
      files.dataset.key = filesKey;
    }
    files.hidden = task.files.length === 0;

    const inFlight = IN_FLIGHT.has(task.status);
    const preview = task.kind === 'docparse' && task.status === 'finished' ? task.files.find((file) => file.name === previewFile) : undefined;
    button(row, 'cancel').hidden = !inFlight;
    const confirming = !row.querySelector('.task-confirm').hidden;
    button(row, 'delete').hidden = inFlight || confirming;
    if (inFlight) row.querySelector('.task-confirm').hidden = true;
    button(row, 'preview').hidden = !preview;
    // The result view of a finished task (page images beside the result).
    const view = row.querySelector('[data-role="view"]');
    if (view) {
      view.hidden = task.status !== 'finished';
      view.setAttribute('href', task.status === 'finished' ? `/tasks/${task.kind}/${task.id}` : '');
    }
    button(row, 'preview').dataset.url = preview ? preview.url : '';

    // A button that just disappeared (Cancel once the task ended) hands focus to the row's next step.
    if (focused && !isShown(focused)) focusFirst(row);
  }

  const button = (row, action) => row.querySelector(`button[data-action="${action}"]`);

  /**
   * Marks a button as working on its request; true when it already was (a second click, to ignore).
   * Not `disabled`, which would take focus away from the button a keyboard user just pressed.
   */
  function busy(element) {
    if (element.getAttribute('aria-disabled') === 'true') return true;
    element.setAttribute('aria-disabled', 'true');
    return false;
  }
  const done = (element) => element.removeAttribute('aria-disabled');
  const isShown = (element) => !element.closest('[hidden]');
  function focusFirst(row) {
    const next = [...row.querySelectorAll('.task-actions button')].find(isShown);
    (next ?? row.querySelector('.task-name')).focus();
  }

  function showEmpty(kind) {
    const list = lists[kind];
    list.parentElement.querySelector('.tasks-empty').hidden = list.children.length > 0;
  }

  function rowMessage(row, message) {
    const element = row.querySelector('.task-message');
    element.hidden = !message;
    element.textContent = message;
  }

  /**
   * Brings a list up to date with the API's first page: rows updated in place, new ones added, and
   * rows the server no longer lists removed (only among those the page covers: older rows loaded
   * with "Show older tasks" are left alone unless the page is the whole list).
   */
  function applyList(kind, tasks, complete) {
    const seen = new Set();
    for (const task of tasks) {
      seen.add(task.id);
      let row = rowOf(task.id);
      const before = row ? row.dataset.status : undefined;
      if (!row) {
        row = newRow(task);
        row.dataset.created = task.created_at;
        place(row, kind);
      }
      fillRow(row, task);
      if (before && IN_FLIGHT.has(before) && !IN_FLIGHT.has(task.status)) {
        announce(fill(text.endedNotice, { name: task.source.name, status: text.status[task.status] }));
      }
    }
    const oldest = tasks.length > 0 ? tasks[tasks.length - 1].created_at : undefined;
    for (const row of [...lists[kind].children]) {
      if (seen.has(row.dataset.id)) continue;
      if (complete || (oldest !== undefined && row.dataset.created >= oldest)) {
        if (row.contains(document.activeElement)) document.getElementById(`${kind}-list-heading`).focus();
        row.remove();
      }
    }
    showEmpty(kind);
  }

  // ——— Live status: poll while anything is queued or running ———

  let timer;
  let stopped = false;
  const inFlightKinds = () => KINDS.filter((kind) => lists[kind].querySelector('li.task[data-status="queued"], li.task[data-status="running"]'));

  function schedule() {
    if (timer === undefined && !stopped && inFlightKinds().length > 0) timer = setTimeout(poll, POLL_MS);
  }

  async function poll() {
    for (const kind of inFlightKinds()) {
      try {
        const body = await api('GET', tasksUrl(kind));
        applyList(kind, body.tasks, body.next_cursor === null);
      } catch (error) {
        // Signed out (or the session ended elsewhere): say so once and stop asking.
        if (error.status === 401) {
          stopped = true;
          announce(error.message);
        }
        // Anything else (a restart, a network blip): keep the rows and try again on the next tick.
      }
    }
    timer = undefined;
    schedule();
  }

  // ——— Upload ———

  async function upload(form) {
    const kind = form.dataset.kind;
    const input = form.querySelector('input[type="file"]');
    const submit = form.querySelector('button[type="submit"]');
    const status = form.querySelector('.upload-status');
    const error = form.querySelector('.upload-error');
    const file = input.files[0];
    if (!file) return;
    const data = new FormData();
    // The languages go before the file, so the API checks them before it stores anything.
    if (kind === 'translate') {
      data.append('source_lang', form.elements.source_lang.value);
      data.append('target_lang', form.elements.target_lang.value);
      // "term = translation" lines become the API's {"term": "translation"} glossary (issue 18).
      const glossary = glossaryJson(form.elements.glossary.value);
      if (glossary) data.append('glossary', glossary);
    }
    data.append('file', file, file.name);
    error.hidden = true;
    error.textContent = '';
    if (busy(submit)) return;
    status.textContent = fill(text.uploading, { name: file.name });
    try {
      const task = await api('POST', tasksUrl(kind), data);
      const row = newRow(task);
      row.dataset.created = task.created_at;
      lists[kind].prepend(row);
      fillRow(row, task);
      showEmpty(kind);
      form.reset();
      narrowTargets();
      status.textContent = fill(text.uploaded, { name: task.source.name });
      stopped = false;
      schedule();
    } catch (refused) {
      status.textContent = '';
      error.textContent = refused.message;
      error.hidden = false;
    } finally {
      done(submit);
    }
  }

  for (const form of root.querySelectorAll('form.upload')) {
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      void upload(form);
    });
  }

  function glossaryJson(value) {
    const pairs = value.split('\n').map((line) => line.split('=')).filter((parts) => parts.length >= 2 && parts[0].trim() && parts.slice(1).join('=').trim());
    return pairs.length ? JSON.stringify(Object.fromEntries(pairs.map((parts) => [parts[0].trim(), parts.slice(1).join('=').trim()]))) : '';
  }

  // The translation form offers only the targets the engine pairs with the chosen source.
  const translateForm = root.querySelector('form.upload[data-kind="translate"]');
  const pairs = translateForm && translateForm.dataset.pairs ? translateForm.dataset.pairs.split(',').map((pair) => pair.split(':')) : [];
  function narrowTargets() {
    if (pairs.length === 0) return;
    const { source_lang: source, target_lang: target } = translateForm.elements;
    const allowed = new Set(pairs.filter(([from]) => from === source.value).map(([, to]) => to));
    for (const option of target.options) {
      option.disabled = !allowed.has(option.value);
      option.hidden = option.disabled;
    }
    if (target.selectedOptions[0]?.disabled) {
      const first = [...target.options].find((option) => !option.disabled);
      if (first) target.value = first.value;
    }
  }
  if (pairs.length > 0) {
    translateForm.elements.source_lang.addEventListener('change', narrowTargets);
    narrowTargets();
  }

  // ——— Row actions ———

  async function cancel(row) {
    const kind = row.dataset.kind;
    const cancelButton = button(row, 'cancel');
    if (busy(cancelButton)) return;
    rowMessage(row, '');
    try {
      const task = await api('DELETE', taskUrl(kind, row.dataset.id));
      fillRow(row, task);
      announce(fill(text.cancelledNotice, { name: task.source.name }));
    } catch (refused) {
      rowMessage(row, refused.message);
      // 409: it ended meanwhile; show how.
      await api('GET', taskUrl(kind, row.dataset.id))
        .then((task) => fillRow(row, task))
        .catch(() => {});
    } finally {
      done(cancelButton);
    }
  }

  function askToDelete(row) {
    const confirmation = row.querySelector('.task-confirm');
    confirmation.querySelector('p').textContent = fill(text.confirmDelete, { name: nameOf(row) });
    confirmation.hidden = false;
    button(row, 'delete').hidden = true;
    rowMessage(row, '');
    // The safe choice has focus; Delete is one Tab away.
    button(row, 'keep').focus();
  }

  function keep(row) {
    row.querySelector('.task-confirm').hidden = true;
    const deleteButton = button(row, 'delete');
    deleteButton.hidden = false;
    deleteButton.focus();
  }

  async function deleteRecord(row) {
    const kind = row.dataset.kind;
    const name = nameOf(row);
    const yes = button(row, 'confirm-delete');
    if (busy(yes)) return;
    try {
      await api('DELETE', `${taskUrl(kind, row.dataset.id)}/record`);
      document.getElementById(`${kind}-list-heading`).focus();
      row.remove();
      showEmpty(kind);
      announce(fill(text.deletedNotice, { name }));
    } catch (refused) {
      // e.g. 503 while storage is unreachable: the record stays, and saying why lets the person retry.
      keep(row);
      rowMessage(row, refused.message);
    } finally {
      done(yes);
    }
  }

  async function togglePreview(row, toggle) {
    const figure = row.querySelector('.task-preview');
    if (toggle.getAttribute('aria-expanded') === 'true') {
      figure.hidden = true;
      toggle.setAttribute('aria-expanded', 'false');
      return;
    }
    figure.hidden = false;
    toggle.setAttribute('aria-expanded', 'true');
    const pre = figure.querySelector('pre');
    if (pre.dataset.loaded === toggle.dataset.url) return;
    const note = figure.querySelector('.hint');
    pre.textContent = text.previewLoading;
    rowMessage(row, '');
    try {
      const response = await request('GET', toggle.dataset.url, { headers: { range: `bytes=0-${PREVIEW_BYTES - 1}` } });
      // Shown as text: Markdown from a stranger's PDF is never HTML on this page.
      pre.textContent = new TextDecoder().decode(await response.arrayBuffer());
      pre.dataset.loaded = toggle.dataset.url;
      const total = Number((response.headers.get('content-range') ?? '').split('/')[1]);
      note.hidden = !(response.status === 206 && total > PREVIEW_BYTES);
      note.textContent = fill(text.previewTruncated, { size: formatSize(PREVIEW_BYTES) });
    } catch (refused) {
      pre.textContent = '';
      figure.hidden = true;
      toggle.setAttribute('aria-expanded', 'false');
      rowMessage(row, refused.message);
    }
  }

  async function showOlder(more) {
    const kind = more.dataset.kind;
    if (busy(more)) return;
    try {
      const body = await api('GET', `${tasksUrl(kind)}?cursor=${encodeURIComponent(more.dataset.cursor)}`);
      for (const task of body.tasks) {
        if (rowOf(task.id)) continue;
        const row = newRow(task);
        row.dataset.created = task.created_at;
        lists[kind].append(row);
        fillRow(row, task);
      }
      more.dataset.cursor = body.next_cursor ?? '';
      more.hidden = !body.next_cursor;
      schedule();
    } catch (refused) {
      announce(refused.message);
    } finally {
      done(more);
    }
  }

  root.addEventListener('click', (event) => {
    const target = event.target instanceof Element ? event.target.closest('button') : null;
    if (!target) return;
    if (target.classList.contains('tasks-more')) return void showOlder(target);
    const row = target.closest('li.task');
    if (!row) return;
    switch (target.dataset.action) {
      case 'cancel':
        return void cancel(row);
      case 'delete':
        return askToDelete(row);
      case 'keep':
        return keep(row);
      case 'confirm-delete':
        return void deleteRecord(row);
      case 'preview':
        return void togglePreview(row, target);
    }
  });

  for (const more of root.querySelectorAll('.tasks-more')) more.hidden = !more.dataset.cursor;
  schedule();
})();
