// Runs the real `signet` command in a child process.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const SIGNET_BIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../bin/signet.js');

export type CliResult = { code: number | null; stdout: string; stderr: string };

export function runSignet(args: string[], options: { env?: Record<string, string>; cwd?: string; stdin?: string } = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [SIGNET_BIN, ...args], {
      cwd: options.cwd,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', SIGNET_LOG_LEVEL: 'silent', SIGNET_METRICS_ADDR: 'off', SIGNET_ADMIN_ADDR: 'off', ...options.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(options.stdin ?? '');
  });
}
