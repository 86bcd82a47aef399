// signet keys …: the id_token signing keys (issue 28). `list` never shows a private key; `rotate`
// makes new keys sign at once; `retire KID` removes a rotated-out key once its id_tokens have expired.
import type { Command } from 'commander';
import { retireSigningKeyAsOperator, rotateSigningKeysAsOperator } from '../admin/operator-changes.ts';
import { ensureSigningKeys, isSigningAlg, listSigningKeys, SIGNING_ALGS } from '../oauth/oidc/keys.ts';
import { cliOperator } from './context.ts';
import { shortTime, UsageError, type HumanView } from './output.ts';
import type { Run } from './run.ts';

const listView: HumanView = {
  columns: [
    { header: 'kid', value: (k) => k.kid },
    { header: 'alg', value: (k) => k.alg },
    { header: 'signing', value: (k) => k.signing },
    { header: 'created', value: (k) => shortTime(k.created_at) },
    { header: 'rotated', value: (k) => shortTime(k.rotated_at) },
    { header: 'removable after', value: (k) => shortTime(k.removable_after) },
  ],
};

export function registerKeysCommands(program: Command, run: Run): void {
  const keys = program
    .command('keys')
    .description('id_token signing keys: list, rotate, retire')
    .addHelpText('after', `\nExample:\n  $ npx signet keys rotate    # new keys sign at once; the old ones stay in the JWKS until what they signed expires`);

  keys
    .command('list')
    .description('every signing key in the JWKS: which sign now, and when the others may be retired')
    .option('--json', 'print JSON')
    .action((o: { json?: boolean }) =>
      run(async (ctx) => {
        await ensureSigningKeys(ctx.database.db, ctx.keys.signingKey, ctx.clock);
        return listSigningKeys(ctx.database.db);
      }, o, listView),
    );

  keys
    .command('rotate')
    .description('new keys sign at once; the old ones stay in the JWKS until their id_tokens have expired')
    .option('--alg <alg>', `only this algorithm (${SIGNING_ALGS.join(' or ')}); default: both`)
    .option('--json', 'print JSON')
    .action((o: { alg?: string; json?: boolean }) =>
      run(async (ctx) => {
        if (o.alg !== undefined && !isSigningAlg(o.alg)) throw new UsageError('--alg takes ES256 or RS256');
        return rotateSigningKeysAsOperator(cliOperator(ctx), ctx.keys.signingKey, o.alg === undefined ? undefined : [o.alg]);
      }, o, listView),
    );

  keys
    .command('retire <kid>')
    .description('remove a rotated-out key from the JWKS (refused until the id_tokens it signed have expired)')
    .option('--json', 'print JSON')
    .action((kid: string, o: { json?: boolean }) =>
      run(async (ctx) => {
        await retireSigningKeyAsOperator(cliOperator(ctx), kid);
        return { kid, retired: true };
      }, o),
    );
}
