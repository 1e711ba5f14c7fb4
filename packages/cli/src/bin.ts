#!/usr/bin/env node
import './threadpool.js';
import 'reflect-metadata';
import { runCli } from './cli.js';

runCli(process.argv).catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : String(err));
  process.exitCode = 1;
});
