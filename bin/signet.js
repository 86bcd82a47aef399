#!/usr/bin/env node
// Entry point. Signet's sources are TypeScript, run by Node 24's built-in type stripping: no build
// step, no loader. An older Node would fail inside a native add-on, so say what to do instead.
const [major] = process.versions.node.split('.').map(Number);
if (major < 24) {
  process.stderr.write(
    `signet: needs Node.js 24 or newer, this is ${process.version}; run it through npm, which uses the Node 24 the project installs: npm start, or npx signet …\n`,
  );
  process.exit(1);
}
await import('../src/cli/main.ts');
