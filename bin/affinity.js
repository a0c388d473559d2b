#!/usr/bin/env node
// Runs the TypeScript CLI through tsx's loader, so `npx affinity` needs no build step.
import { register } from 'tsx/esm/api';

register();
await import('../src/cli/main.ts');
