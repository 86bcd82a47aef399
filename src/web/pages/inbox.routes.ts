// /inbox: the person's notifications newest first, with cursor paging, Mark as read and Mark all as
// read. The server renders the list and the forms work without script; static/inbox.js then marks
// read through the API and inserts notifications that arrive on the live stream at the top.
import type { FastifyPluginAsync } from 'fastify';
import type { Clock } from '../../config/clock.ts';
import type { Db, Dialect } from '../../db/database.ts';
import { InboxError, listNotifications, markAllRead, markRead, type NotificationView } from '../../notifications/inbox.ts';
import { field } from './forms.ts';
import { formatDate, localeOf, renderPage } from './view.ts';

const PAGE_SIZE = 20;

/** One notification as the template draws it (the script draws the same from the API's JSON). */
type NotificationRowView = {
  id: string;
  title: string;
  body: string;
  /** a path on this site, or '' (anything else a notification might carry is not made a link) */
  link: string;
  read: boolean;
  createdIso: string;
  createdText: string;
};

/**
 * Only a path on this site becomes a link: "/…", never "//host" or "/\\host" (browsers read both as
 * another site), nor a scheme such as javascript:. A fragment is kept (/tasks#task-…).
 */
export function siteLink(link: string | null): string {
  // eslint-disable-next-line no-control-regex
  return link !== null && link.length <= 2000 && /^\/(?![/\\])[^\s\\\u0000-\u001f]*$/.test(link) ? link : '';
}

export const inboxRoutes: FastifyPluginAsync<{ db: Db; dialect: Dialect; clock: Clock }> = async (app, { db, dialect, clock }) => {
  app.get('/inbox', async (request, reply) => {
    const session = await request.currentSession();
    if (!session) return reply.redirect('/signin?return=%2Finbox', 302);
    const locale = localeOf(request);
    const cursor = field(request.query, 'cursor') || undefined;
    let page;
    try {
      page = await listNotifications(db, session.sub, { cursor, limit: PAGE_SIZE });
    } catch (error) {
      // A cursor from elsewhere: show the newest page rather than an error.
      if (!(error instanceof InboxError)) throw error;
      return reply.redirect('/inbox', 302);
    }
    const rows = page.notifications.map((n: NotificationView): NotificationRowView => ({
      id: n.id,
      title: n.title,
      body: n.body,
      link: siteLink(n.link),
      read: n.read_at !== null,
      createdIso: n.created_at,
      createdText: formatDate(locale, Date.parse(n.created_at)),
    }));
    // The first page follows the live stream from where its list ends; older pages only page.
    const live = cursor === undefined;
    const after = live ? (page.items[0]?.seq ?? 0) : 0;
    return renderPage(db, request, reply, 'inbox', (t) => t.inbox.title, (t) => ({
      rows,
      live,
      olderUrl: page.next_cursor ? `/inbox?cursor=${encodeURIComponent(page.next_cursor)}` : '',
      unreadCount: page.unread_count,
      notice: field(request.query, 'done') === 'all' ? t.inbox.allMarkedRead : '',
      script: JSON.stringify({ locale, live, after, text: t.inbox }),
    }));
  });

  // Without script: the forms post here and come back to the list.
  app.post('/inbox/read', { preHandler: app.csrfProtection }, async (request, reply) => {
    const session = await request.currentSession();
    if (!session) return reply.redirect('/signin?return=%2Finbox', 303);
    const id = field(request.body, 'id');
    try {
      await markRead(db, dialect, clock, session.sub, id);
    } catch (error) {
      // Another person's or a deleted notification: nothing to mark; the list shows the truth.
      if (!(error instanceof InboxError)) throw error;
    }
    return reply.redirect('/inbox', 303);
  });

  app.post('/inbox/read-all', { preHandler: app.csrfProtection }, async (request, reply) => {
    const session = await request.currentSession();
    if (!session) return reply.redirect('/signin?return=%2Finbox', 303);
    await markAllRead(db, dialect, clock, session.sub);
    return reply.redirect('/inbox?done=all', 303);
  });
};
