// Live notifications in the browser, on every signed-in page: the header's unread badge follows the
// server-sent event stream (/api/v1/notifications/stream); on /inbox new notifications are inserted at
// the top and Mark as read / Mark all as read go through the API without a reload. Where EventSource
// is missing or the stream cannot be kept, the badge and the list are polled every 10 s instead.
// Plain script, no build step. Texts come from the page in its language; notification text is set as
// text, never as HTML.
(() => {
  'use strict';

  const badge = document.getElementById('inbox-badge');
  if (!badge) return; // nobody is signed in
  const labels = JSON.parse(badge.dataset.labels);
  const badgeCount = badge.querySelector('.badge');

  const POLL_MS = 10_000;
  /** Consecutive stream errors after which polling takes over. */
  const MAX_STREAM_ERRORS = 3;

  const fill = (template, values) => template.replace(/\{(\w+)\}/g, (whole, name) => (name in values ? String(values[name]) : whole));

  function setUnread(count) {
    if (typeof count !== 'number' || count < 0) return;
    const label = fill(count === 0 ? labels.none : count === 1 ? labels.one : labels.other, { count });
    if (badge.getAttribute('aria-label') !== label) badge.setAttribute('aria-label', label);
    if (badgeCount.textContent !== String(count)) badgeCount.textContent = String(count);
    badgeCount.hidden = count === 0;
    if (inbox) inbox.readAll.disabled = count === 0;
  }

  // ——— /inbox: the list ———

  const inbox = (() => {
    const root = document.getElementById('inbox-page');
    if (!root) return undefined;
    const { locale, live, after, text } = JSON.parse(root.dataset.script);
    const readAllForm = document.getElementById('inbox-read-all');
    return {
      root,
      live,
      after,
      text,
      list: document.getElementById('inbox-list'),
      empty: root.querySelector('.inbox-empty'),
      announcer: document.getElementById('inbox-announce'),
      readAllForm,
      readAll: readAllForm.querySelector('button'),
      csrf: readAllForm.querySelector('input[name=_csrf]').value,
      dateFormat: new Intl.DateTimeFormat(locale, { dateStyle: 'medium', timeStyle: 'short', timeZone: 'UTC' }),
    };
  })();

  function announce(message) {
    if (!inbox) return;
    // Cleared first, so the same sentence twice is still read out.
    inbox.announcer.textContent = '';
    setTimeout(() => {
      inbox.announcer.textContent = message;
    }, 100);
  }

  function el(tag, attributes, ...children) {
    const element = document.createElement(tag);
    for (const [name, value] of Object.entries(attributes)) element.setAttribute(name, value);
    element.append(...children);
    return element;
  }

  /** Only paths on this site become links (as on the server). */
  const localPath = (link) => (typeof link === 'string' && /^\/(?![/\\])[^\s\\]*$/.test(link) ? link : '');

  /** The same markup as templates/inbox.eta draws for one notification. */
  function notificationItem(n) {
    const { text } = inbox;
    const read = n.read_at !== null;
    const link = localPath(n.link);
    const title = el('h2', { class: 'notification-title', id: `title-${n.id}` }, link ? el('a', { href: link }, n.title) : n.title);
    const item = el(
      'li',
      { class: 'card notification', id: `notification-${n.id}`, 'data-id': n.id, 'data-read': String(read), tabindex: '-1' },
      el('div', { class: 'notification-head' }, title, el('span', { class: 'notification-state' }, read ? text.read : text.unread)),
      el('p', { class: 'notification-body' }, n.body),
      el('p', { class: 'notification-time' }, `${text.received}: `, el('time', { datetime: n.created_at }, `${inbox.dateFormat.format(new Date(n.created_at))} UTC`)),
    );
    if (!read) {
      item.append(
        el(
          'form',
          { method: 'post', action: '/inbox/read', class: 'mark-read' },
          el('input', { type: 'hidden', name: '_csrf', value: inbox.csrf }),
          el('input', { type: 'hidden', name: 'id', value: n.id }),
          el('button', { type: 'submit', 'aria-describedby': `title-${n.id}` }, text.markRead),
        ),
      );
    }
    return item;
  }

  const itemOf = (id) => document.getElementById(`notification-${id}`);

  /** Inserts notifications not on the page yet at the top, keeping newest first (`items` newest first). */
  function insertNew(items) {
    if (!inbox || !inbox.live) return;
    const fresh = [];
    for (const n of items) {
      if (itemOf(n.id)) break; // everything below this one is on the page already
      fresh.push(n);
    }
    for (const n of fresh.reverse()) inbox.list.prepend(notificationItem(n));
    if (fresh.length > 0) {
      inbox.empty.hidden = true;
      announce(fill(inbox.text.arrived, { title: fresh.at(-1).title }));
    }
  }

  function showRead(item) {
    if (!item || item.dataset.read === 'true') return;
    item.dataset.read = 'true';
    item.querySelector('.notification-state').textContent = inbox.text.read;
    const form = item.querySelector('form.mark-read');
    if (form) {
      const hadFocus = form.contains(document.activeElement);
      form.remove();
      if (hadFocus) item.focus();
    }
  }

  /** The unread count as the server has it now. */
  async function refreshCount() {
    try {
      const response = await fetch('/api/v1/notifications?unread=true&limit=1', { credentials: 'same-origin', headers: { accept: 'application/json' } });
      if (response.ok) setUnread((await response.json()).unread_count);
    } catch {
      // the live stream or the next poll brings it
    }
  }

  async function post(url) {
    const response = await fetch(url, { method: 'POST', credentials: 'same-origin', headers: { accept: 'application/json' } });
    if (!response.ok) throw Object.assign(new Error(`status ${response.status}`), { status: response.status });
  }

  if (inbox) {
    // Mark as read (any row, also rows inserted later): through the API; the plain form if that fails.
    inbox.list.addEventListener('submit', async (event) => {
      const form = event.target.closest('form.mark-read');
      if (!form) return;
      event.preventDefault();
      const id = form.querySelector('input[name=id]').value;
      const button = form.querySelector('button');
      button.setAttribute('aria-disabled', 'true');
      try {
        await post(`/api/v1/notifications/${encodeURIComponent(id)}/read`);
        showRead(itemOf(id));
        // The count comes from the server, never from subtracting one from the badge: the live stream
        // may already have carried the new count, and subtracting again would show one too few.
        await refreshCount();
        announce(inbox.text.markedRead);
      } catch {
        form.submit();
      }
    });

    inbox.readAllForm.addEventListener('submit', async (event) => {
      event.preventDefault();
      try {
        await post('/api/v1/notifications/read-all');
        const hadFocus = inbox.readAll === document.activeElement;
        for (const item of inbox.list.querySelectorAll('.notification[data-read=false]')) showRead(item);
        setUnread(0);
        if (hadFocus) inbox.list.querySelector('.notification')?.focus();
        announce(inbox.text.allMarkedRead);
      } catch {
        inbox.readAllForm.submit();
      }
    });
  }

  // ——— Polling (the fallback) ———

  let pollTimer;
  async function poll() {
    try {
      const unread = await fetch('/api/v1/notifications?unread=true&limit=1', { credentials: 'same-origin', headers: { accept: 'application/json' } });
      if (unread.status === 401) {
        // Signed out (in another tab): nothing more to follow until the page is loaded again.
        clearInterval(pollTimer);
        return;
      }
      if (unread.ok) setUnread((await unread.json()).unread_count);
      if (inbox && inbox.live) {
        const latest = await fetch('/api/v1/notifications?limit=20', { credentials: 'same-origin', headers: { accept: 'application/json' } });
        if (latest.ok) {
          const page = await latest.json();
          insertNew(page.notifications);
          for (const n of page.notifications) if (n.read_at !== null) showRead(itemOf(n.id));
        }
      }
    } catch {
      // offline for a moment: the next round tries again
    }
  }
  function startPolling() {
    if (pollTimer !== undefined) return;
    pollTimer = setInterval(poll, POLL_MS);
    poll();
  }

  // ——— The live stream ———

  if (typeof window.EventSource !== 'function') {
    startPolling();
    return;
  }
  // The first page of /inbox asks for everything after the newest notification it shows, so nothing
  // recorded between rendering and connecting is missed. Reconnects send Last-Event-ID themselves.
  const url = inbox && inbox.live ? `/api/v1/notifications/stream?after=${encodeURIComponent(inbox.after)}` : '/api/v1/notifications/stream';
  const source = new EventSource(url);
  let errors = 0;
  source.addEventListener('open', () => {
    errors = 0;
  });
  source.addEventListener('notification', (event) => {
    const data = JSON.parse(event.data);
    setUnread(data.unread_count);
    insertNew([data.notification]);
  });
  source.addEventListener('unread', (event) => {
    const count = JSON.parse(event.data).unread_count;
    setUnread(count);
    // Everything read elsewhere (another tab, another device): the list shows it too.
    if (count === 0 && inbox) for (const item of inbox.list.querySelectorAll('.notification[data-read=false]')) showRead(item);
  });
  source.addEventListener('error', () => {
    errors += 1;
    // CLOSED: the server refused (signed out, too many tabs); repeated failures: a proxy in the way.
    if (source.readyState === EventSource.CLOSED || errors >= MAX_STREAM_ERRORS) {
      source.close();
      startPolling();
    }
  });
})();
