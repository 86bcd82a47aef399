// signet user …: manage accounts.
import type { Command } from 'commander';
import * as accounts from '../accounts/accounts.ts';
import type { CommandContext } from './context.ts';
import { readStdin, UsageError } from './output.ts';

type Run = (action: (ctx: CommandContext) => Promise<unknown>, options: { json?: boolean }) => Promise<void>;

async function requireAccount(ctx: CommandContext, sub: string): Promise<accounts.Profile> {
  const profile = await accounts.findAccount(ctx.database.db, sub);
  if (!profile) throw new accounts.AccountError('not_found', `no account with sub ${sub}`);
  return profile;
}

export function registerUserCommands(program: Command, run: Run): void {
  const user = program.command('user').description('manage accounts');

  user
    .command('create')
    .description('create an account; the password is read from standard input')
    .option('--email <email>')
    .option('--phone <phone>', 'with country code, e.g. +4915112345678 (stored as E.164)')
    .option('--name <name>')
    .option('--picture <url>')
    .option('--email-verified', 'mark the e-mail as verified', false)
    .option('--phone-verified', 'mark the phone number as verified', false)
    .option('--legacy-numeric-id', 'give the account a numeric sub (an account imported from before the schema migration)', false)
    .option('--password-stdin', 'read the password from standard input', false)
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
          return accounts.createAccount(ctx.database.db, ctx.clock, {
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
    .option('--json', 'print JSON')
    .action((o: { json?: boolean }) => run((ctx) => accounts.listAccounts(ctx.database.db), o));

  user
    .command('show <sub>')
    .option('--json', 'print JSON')
    .action((sub: string, o: { json?: boolean }) => run((ctx) => requireAccount(ctx, sub), o));

  user
    .command('disable <sub>')
    .description('stop the account from signing in')
    .option('--json', 'print JSON')
    .action((sub: string, o: { json?: boolean }) => run((ctx) => accounts.disableAccount(ctx.database.db, ctx.clock, sub), o));

  user
    .command('set-password <sub>')
    .option('--password-stdin', 'read the password from standard input', false)
    .option('--json', 'print JSON')
    .action((sub: string, o: { passwordStdin: boolean; json?: boolean }) =>
      run(async (ctx) => {
        if (!o.passwordStdin) throw new UsageError('--password-stdin is required: the password is read from standard input');
        await accounts.setPassword(ctx.database.db, ctx.clock, sub, await readStdin());
        return { sub, password_changed: true };
      }, o),
    );
}
