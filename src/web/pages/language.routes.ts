// The language switch: a choice that sticks (a signed cookie), then back to the page it was made on.
import type { FastifyPluginAsync } from 'fastify';
import { isLocale } from '../i18n/i18n.ts';
import { field } from './forms.ts';
import { localPath, YEAR_MS } from './view.ts';
import { cookieOptions } from '../cookies.ts';

export const languageRoutes: FastifyPluginAsync = async (app) => {
  app.post('/language', { preHandler: app.csrfProtection }, async (request, reply) => {
    const lang = field(request.body, 'lang');
    if (isLocale(lang)) {
      reply.setCookie(request.server.cookieNames.language, lang, { ...cookieOptions(request, { maxAgeMs: YEAR_MS }), signed: true });
    }
    return reply.redirect(localPath(field(request.body, 'return')) ?? '/account', 303);
  });
};
