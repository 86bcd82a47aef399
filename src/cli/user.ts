// signet user …: manage accounts.
import type { Command } from 'commander';
import * as accounts from '../accounts/accounts.ts';
import { factorView, listFactors } from '../accounts/factors/factors.ts';
import { rolesOf } from '../accounts/roles.ts';
import { listLinks } from '../accounts/upstream/links.ts';
import {
  addRoleAsOperator,
  createAccountAsOperator,
  deleteAccountAsOperator,
  removeRoleAsOperator,
  resetFactorsAsOperator,
  setPasswordAsOperator,
  unlinkIdentityAsOperator,
  unlockAccountAsOperator,
  updateAccountAsOperator,
} from '../admin/operator-changes.ts';
import { cliOperator, type CommandContext } from './context.ts';
import { readStdin, shortTime, UsageError, type HumanView } from './output.ts';
import type { Run } from './run.ts';

async function requireAccount(ctx: CommandContext, sub: string): Promise<accounts.Profile> {
  const profile = await accounts.findAccount(ctx.database.db, sub);
  if (!profile) throw new accounts.AccountError('not_found', `no account with sub ${sub}`);
  return profile;
}

/** On a terminal, a list of accounts is a table of these columns. */
const listView: HumanView = {
  columns: [
    { header: 'sub', value: (p) => p.sub },
    { header: 'email', value: (p) => p.email },
    { header: 'phone', value: (p) => p.phone_number },
    { header: 'name', value: (p) => p.name },
    { header: 'disabled', value: (p) => p.disabled },
    { header: 'created', value: (p) => shortTime(p.created_at) },
  ],
};

export function registerUserCommands(program: Command, run: Run): void {
  const user = program
    .command('user')
    .description('manage accounts: create, list, show, find, update, disable, enable, unlock, set-password, factors, role, delete')
    .addHelpText('after', `\nExample:\n  $ printf '%s' 'a long password' | npx signet user create --email a@example.com --name "Ada" --password-stdin`);

  user
    .command('create')
    .description('create an account; the password is read from standard input')
    .option('--email <email>', 'the e-mail address (this or --phone, or both)')
    .option('--phone <phone>', 'with country code, e.g. +4915112345678 (stored as E.164)')
    .option('--name <name>')
    .option('--picture <url>', 'an https URL')
    .option('--email-verified', 'mark the e-mail as verified', false)
    .option('--phone-verified', 'mark the phone number as verified', false)
    .option('--legacy-numeric-id', 'give the account a numeric sub (an account imported from before the schema migration)', false)
    .option('--password-stdin', 'read the password from standard input (required)', false)
    .option('--json', 'print JSON')
    .action(
      (o: {
        email?: string;
        phone?: string;
        name?: string;
        picture?: string;
        emailVerified: boolean;
        phoneVerified: boolean;
        legacyNumericId: boolean;
        passwordStdin: boolean;
        json?: boolean;
      }) =>
        run(async (ctx) => {
          if (!o.passwordStdin) throw new UsageError('--password-stdin is required: the password is read from standard input, never from the command line');
          if (o.email === undefined && o.phone === undefined) throw new UsageError('give --email or --phone (or both): people sign in with one of them');
          const password = await readStdin();
          return createAccountAsOperator(cliOperator(ctx), {
            email: o.email,
            phone: o.phone,
            name: o.name,
            picture: o.picture,
            emailVerified: o.emailVerified,
            phoneVerified: o.phoneVerified,
            legacyNumericId: o.legacyNumericId,
            password,
          });
        }, o),
    );

  user
    .command('list')
    .description('list every account')
    .option('--json', 'print JSON')
    .action((o: { json?: boolean }) => run((ctx) => accounts.listAccounts(ctx.database.db), o, listView));

  user
    .command('show <sub>')
    .description("print one account's profile and its roles")
    .option('--json', 'print JSON')
    .action((sub: string, o: { json?: boolean }) => run(async (ctx) => ({ ...(await requireAccount(ctx, sub)), roles: await rolesOf(ctx.database.db, sub) }), o));

  user
    .command('find')
    .description('the account with an e-mail address or phone number')
    .option('--email <email>', 'compared as sign-in compares it (this or --phone)')
    .option('--phone <phone>', 'with country code (this or --email)')
    .option('--json', 'print JSON')
    .action((o: { email?: string; phone?: string; json?: boolean }) =>
      run(async (ctx) => {
        if ((o.email === undefined) === (o.phone === undefined)) throw new UsageError('give --email or --phone (one of them)');
        const found = o.email !== undefined ? await accounts.findAccountByEmail(ctx.database.db, o.email) : await accounts.findAccountByPhone(ctx.database.db, o.phone!);
        if (!found) throw new accounts.AccountError('not_found', o.email !== undefined ? 'no account with that e-mail' : 'no account with that phone number');
        return found;
      }, o),
    );

  user
    .command('update <sub>')
    .description('change an account\'s profile; an empty value ("") removes a field. A changed e-mail or phone is unverified unless --email-verified / --phone-verified')
    .option('--name <name>')
    .option('--email <email>')
    .option('--phone <phone>', 'with country code, e.g. +4915112345678')
    .option('--picture <url>', 'an https URL')
    .option('--email-verified', 'mark the e-mail as verified')
    .option('--no-email-verified', 'mark the e-mail as not verified')
    .option('--phone-verified', 'mark the phone number as verified')
    .option('--no-phone-verified', 'mark the phone number as not verified')
    .option('--json', 'print JSON')
    .action((sub: string, o: { name?: string; email?: string; phone?: string; picture?: string; emailVerified?: boolean; phoneVerified?: boolean; json?: boolean }) =>
      run(async (ctx) => {
        const patch = { name: o.name, email: o.email, phone_number: o.phone, picture: o.picture, email_verified: o.emailVerified, phone_number_verified: o.phoneVerified };
        if (Object.values(patch).every((v) => v === undefined)) throw new UsageError('nothing to change: give --name, --email, --phone, --picture, --email-verified or --phone-verified');
        return updateAccountAsOperator(cliOperator(ctx), sub, patch);
      }, o),
    );

  user
    .command('disable <sub>')
    .description('stop the account from signing in and end its sessions')
    .option('--json', 'print JSON')
    .action((sub: string, o: { json?: boolean }) => run((ctx) => updateAccountAsOperator(cliOperator(ctx), sub, { disabled: true }), o));

  user
    .command('enable <sub>')
    .description('let a disabled account sign in again')
    .option('--json', 'print JSON')
    .action((sub: string, o: { json?: boolean }) => run((ctx) => updateAccountAsOperator(cliOperator(ctx), sub, { disabled: false }), o));

  user
    .command('unlock <sub>')
    .description('lift the sign-in lockout and waits after wrong passwords, from every address')
    .option('--address <ip>', "also forget the failures counted against this client address over every account (when the person shares it with whoever was failing)")
    .option('--json', 'print JSON')
    .action((sub: string, o: { address?: string; json?: boolean }) =>
      run(async (ctx) => {
        const cleared = await unlockAccountAsOperator(cliOperator(ctx), sub, { address: o.address });
        return { sub, unlocked: true, counters_cleared: cleared };
      }, o),
    );

  user
    .command('set-password <sub>')
    .description('replace the password and end every session of the account')
    .option('--password-stdin', 'read the password from standard input (required)', false)
    .option('--json', 'print JSON')
    .action((sub: string, o: { passwordStdin: boolean; json?: boolean }) =>
      run(async (ctx) => {
        if (!o.passwordStdin) throw new UsageError('--password-stdin is required: the password is read from standard input');
        await setPasswordAsOperator(cliOperator(ctx), sub, await readStdin());
        return { sub, password_changed: true, sessions_ended: true };
      }, o),
    );

  user
    .command('delete <sub>')
    .description('delete the account with its sessions, grants, tokens, tasks and notifications, and its task files in object storage')
    .option('--json', 'print JSON')
    .action((sub: string, o: { json?: boolean }) =>
      run(async (ctx) => {
        await deleteAccountAsOperator(cliOperator(ctx), sub);
        return { sub, deleted: true };
      }, o),
    );

  // spec: "`signet user role add SUB operator` · `signet user role remove SUB operator` — grants or takes the operator role".
  user
    .command('role <add-or-remove> <sub> <role>')
    .description('`role add SUB operator` gives the operator role (the admin console\'s door); `role remove SUB operator` takes it')
    .option('--json', 'print JSON')
    .action((action: string, sub: string, role: string, o: { json?: boolean }) =>
      run(async (ctx) => {
        if (action !== 'add' && action !== 'remove') throw new UsageError(`unknown action ${action}: use \`signet user role add SUB operator\` or \`signet user role remove SUB operator\``);
        const changed = action === 'add' ? await addRoleAsOperator(cliOperator(ctx), sub, role) : await removeRoleAsOperator(cliOperator(ctx), sub, role);
        return { sub, roles: await rolesOf(ctx.database.db, sub), changed };
      }, o),
    );

  // issue 33: "`signet user links SUB` · `signet user unlink SUB SLUG`".
  user
    .command('links <sub>')
    .description("a person's linked upstream identities (provider slug, upstream sub, e-mail, linked at)")
    .option('--json', 'print JSON')
    .action((sub: string, o: { json?: boolean }) =>
      run(async (ctx) => {
        await requireAccount(ctx, sub);
        return { sub, links: await listLinks(ctx.database.db, sub) };
      }, o),
    );

  user
    .command('unlink <sub> <slug>')
    .description('remove a linked upstream identity')
    .option('--json', 'print JSON')
    .action((sub: string, slug: string, o: { json?: boolean }) =>
      run(async (ctx) => {
        await unlinkIdentityAsOperator(cliOperator(ctx), sub, slug);
        return { sub, provider: slug, unlinked: true };
      }, o),
    );

  // `signet user factors SUB` lists; `signet user factors reset SUB` removes them all (the operator contract's two forms).
  user
    .command('factors <sub-or-reset> [sub]')
    .description("list a person's second factors and passkeys (never secrets); `factors reset SUB` removes them all with the recovery codes and ends the sessions")
    .option('--json', 'print JSON')
    .action((first: string, second: string | undefined, o: { json?: boolean }) =>
      run(async (ctx) => {
        if (second !== undefined) {
          if (first !== 'reset') throw new UsageError(`unknown action ${first}: use \`signet user factors SUB\` or \`signet user factors reset SUB\``);
          const reset = await resetFactorsAsOperator(cliOperator(ctx), second);
          return { sub: second, factors_removed: reset.factorsRemoved, recovery_codes_removed: reset.recoveryCodesRemoved, sessions_ended: reset.sessionsEnded };
        }
        await requireAccount(ctx, first);
        const { factors, recoveryCodesLeft } = await listFactors(ctx.database.db, first);
        return { sub: first, factors: factors.map(factorView), recovery_codes_left: recoveryCodesLeft };
      }, o),
    );
}
