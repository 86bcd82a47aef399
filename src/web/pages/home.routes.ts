// `/`: a person who opens the address the service printed lands where they can do something — their
// account when signed in, the sign-in page otherwise. `/favicon.ico`: browsers ask for it on every site.
import { readFile } from 'node:fs/promises';
import type { FastifyPluginAsync } from 'fastify';

export const homeRoutes: FastifyPluginAsync = async (app) => {
  const favicon = await readFile(new URL('../static/favicon.ico', import.meta.url));

  app.get('/', async (request, reply) => {
    const session = await request.currentSession();
    return reply.header('cache-control', 'no-store').redirect(session ? '/account' : '/signin?return=%2Faccount', 302);
  });

  app.get('/favicon.ico', async (_request, reply) => reply.type('image/x-icon').header('cache-control', 'public, max-age=86400').send(favicon));
};
