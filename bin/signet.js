#!/usr/bin/env node
// Entry point: runs the TypeScript sources through tsx's loader, so a fresh clone needs no build step.
import { register } from 'tsx/esm/api';

register();
await import('../src/cli/main.ts');
