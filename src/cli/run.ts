// Running one command: open the context, act, print the result, close; any failure is one line on
// stderr and a non-zero exit.
import { AccountError } from '../accounts/accounts.ts';
import { ClientError } from '../clients/clients.ts';
import { SigningKeyError } from '../oauth/oidc/keys.ts';
import { LinkError } from '../accounts/upstream/links.ts';
import { ProviderError } from '../accounts/upstream/providers.ts';
import { SettingsError } from '../config/settings.ts';
import { BackupError } from '../portability/backup.ts';
import { ImportFileError } from '../portability/records.ts';
import { isUniqueViolation } from '../db/errors.ts';
import { StorageUnavailableError } from '../storage/object-store.ts';
import { describeData, loadSettingsFromProcess, MissingDataError, openContext, type CommandContext } from './context.ts';
import { fail } from './exit.ts';
import { print, UsageError, type HumanView } from './output.ts';
import { ApiKeyError } from '../accounts/api-keys/api-keys.ts';

export type CommandOptions = { json?: boolean };

/** Runs a command's action against an opened context; `view` says how the result reads on a terminal. */
export type Run = (action: (ctx: CommandContext) => Promise<unknown>, options: CommandOptions, view?: HumanView) => Promise<void>;

export { fail };

export function describe(error: unknown): { message: string; exitCode: number } {
  if (error instanceof SettingsError) return { message: error.message, exitCode: 78 };
  if (error instanceof UsageError) return { message: error.message, exitCode: 2 };
  if (error instanceof AccountError || error instanceof ApiKeyError || error instanceof ClientError || error instanceof SigningKeyError || error instanceof MissingDataError || error instanceof ProviderError || error instanceof LinkError || error instanceof ImportFileError || error instanceof BackupError) return { message: error.message, exitCode: 1 };
  if (isUniqueViolation(error)) return { message: 'that value is taken already', exitCode: 1 };
  const code = typeof error === 'object' && error && 'code' in error ? String((error as { code: unknown }).code) : '';
  if (error instanceof StorageUnavailableError) return { message: `${error.message}; nothing was changed`, exitCode: 69 };
  if (code === 'ECONNREFUSED') return { message: 'cannot reach the database named by SIGNET_DATABASE_URL (connection refused)', exitCode: 69 };
  return { message: error instanceof Error ? error.message : String(error), exitCode: 1 };
}

/**
 * A runner. `mayCreateData()` says whether this run may start a new data dir (only `migrate`, or
 * any command given the global --init); otherwise a missing one is refused.
 */
export function makeRun(mayCreateData: () => boolean): Run {
  return async (action, options, view) => {
    let ctx: CommandContext | undefined;
    try {
      ctx = await openContext(loadSettingsFromProcess(), { mayCreateData: mayCreateData() });
      const result = await action(ctx);
      print(result, options, view, describeData(ctx.settings));
    } catch (error) {
      const { message, exitCode } = describe(error);
      await ctx?.objects.close().catch(() => {});
      await ctx?.database.close().catch(() => {});
      fail(message, exitCode);
    }
    await ctx.objects.close();
    await ctx.database.close();
  };
}
