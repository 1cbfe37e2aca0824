// What the package returns, checked against the real published types of
// the pinned `ai` and `@ai-sdk/harness` 1.0.122 with the pinned TypeScript
// compiler (testdata/types/check.ts is compiled, never run).
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { promisify } from 'node:util';

const run = promisify(execFile);

test('airlockSandboxBootstrap fits HarnessAgentSandboxConfig and airlockToolApproval fits toolApproval', { timeout: 300_000 }, async () => {
  const tsc = fileURLToPath(new URL('../node_modules/typescript/bin/tsc', import.meta.url));
  const project = fileURLToPath(new URL('../testdata/types/tsconfig.json', import.meta.url));
  try {
    await run(process.execPath, [tsc, '-p', project]);
  } catch (err) {
    assert.fail(`tsc found type errors:\n${err.stdout}${err.stderr}`);
  }
});
