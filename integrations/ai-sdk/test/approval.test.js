// airlockToolApproval as the function form of the real `ai` package's
// toolApproval (generateText of the pinned release), against a real
// `airlock serve`: the daemon's decision is what lets a tool run.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { generateText, stepCountIs } from 'ai';
import { airlockToolApproval } from '../src/index.js';
import { daemonUnavailable, startDaemon } from '../testdata/daemon.js';
import { modelSaw, recordingTools, scriptedModel } from '../testdata/turn.js';

const skip = daemonUnavailable();
if (skip && process.env.CI === 'true') {
  throw new Error(`the real-daemon tests must run in CI: ${skip}`);
}

/** One generateText turn: the model calls toolName with input once. */
async function turn(approval, toolName, input) {
  const ran = [];
  const model = scriptedModel(toolName, input);
  const result = await generateText({
    model,
    prompt: 'do the task',
    tools: recordingTools(ran),
    toolApproval: approval,
    stopWhen: stepCountIs(3),
  });
  return { ran, saw: modelSaw(model), result };
}

describe('airlockToolApproval with the ai package and a real airlock daemon', { skip: skip || false }, () => {
  let daemon;
  before(async () => {
    daemon = await startDaemon();
    writeFileSync(join(daemon.workspace, 'notes.txt'), 'notes\n');
  });
  after(async () => {
    await daemon?.stop();
  });
  const approval = (extra = {}) =>
    airlockToolApproval({
      url: daemon.url,
      token: daemon.token,
      workspace: daemon.workspace,
      agent: daemon.agent,
      session: `approval-${randomUUID()}`,
      timeoutMs: 30_000,
      ...extra,
    });

  test('a call the daemon allows runs, and the model sees its result', async () => {
    const file = join(daemon.workspace, 'notes.txt');
    const t = await turn(approval(), 'Read', { file_path: file });
    assert.deepEqual(t.ran, [`read ${file}`]);
    assert.deepEqual(t.saw, { type: 'json', value: { read: file } });
  });

  test('a call the daemon denies does not run; the model sees the reason', async () => {
    const t = await turn(approval(), 'Bash', { command: 'rm -rf /' });
    assert.deepEqual(t.ran, []);
    assert.equal(t.saw?.type, 'execution-denied', JSON.stringify(t.saw));
    assert.match(t.saw.reason, /^airlock: /);
  });

  test('a person who allows it on the daemon lets it run', async () => {
    const session = `approval-${randomUUID()}`;
    const person = daemon.answerNext('Bash', 'once', session);
    const [t] = await Promise.all([turn(approval({ session }), 'Bash', { command: 'git push origin main' }), person]);
    assert.deepEqual(t.ran, ['git push origin main']);
  });

  test('nobody answering within the wait denies', async () => {
    const t = await turn(approval({ timeoutMs: 20_000, waitMs: 500 }), 'Bash', { command: 'git push origin main' });
    assert.deepEqual(t.ran, []);
    assert.match(t.saw?.reason ?? '', /timed out waiting for a person/);
  });

  test('an unreachable daemon denies (fails closed)', async () => {
    const t = await turn(approval({ url: 'http://127.0.0.1:9' }), 'Read', { file_path: join(daemon.workspace, 'notes.txt') });
    assert.deepEqual(t.ran, []);
    assert.match(t.saw?.reason ?? '', /unreachable/);
  });
});
