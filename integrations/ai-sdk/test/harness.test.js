// The adapter inside real @ai-sdk/harness turns (1.0.100 and 1.0.122, the
// two continuation shapes) against a real `airlock serve`: the harness's
// own continuation code consumes what the responder returns.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { airlockStaticApprovals, createAirlockResponder, recommendedSettings } from '../src/index.js';
import { daemonUnavailable, startDaemon } from '../testdata/daemon.js';
import { drain, modelSaw, recordingTools, runToApproval, scriptedModel, VERSIONS } from '../testdata/turn.js';

// A continuation the harness does not accept leaves the turn waiting for
// ever: the deadline turns that into a failure.
const T = { timeout: 90_000 };

const skip = daemonUnavailable();
if (skip && process.env.CI === 'true') {
  throw new Error(`the real-daemon tests must run in CI: ${skip}`);
}

let daemon;
before(async () => {
  if (!skip) daemon = await startDaemon();
});
after(async () => {
  await daemon?.stop();
});

// Each responder asks as its own session: the daemon binds an answer to
// the call's hash (tool, input, workspace, agent, session), so tests that
// make the same call must not meet each other's answers.
function responder(extra = {}) {
  const session = `harness-test-${randomUUID()}`;
  const r = createAirlockResponder({
    url: daemon.url,
    token: daemon.token,
    workspace: daemon.workspace,
    agent: 'ai-sdk-test',
    session,
    timeoutMs: 60_000,
    ...extra,
  });
  return Object.assign(r, { sessionId: session });
}

/** Runs `respond` while a person answers the approval it opens. */
async function respondWithPerson(r, pending, tool, answer, respondOptions) {
  const person = daemon.answerNext(tool, answer, r.sessionId);
  const [elements] = await Promise.all([r.respond(pending, respondOptions), person]);
  return elements;
}

const PUSH = 'git push origin main';

for (const version of VERSIONS) {
  describe(`@ai-sdk/harness 1.0.${version} with a real airlock daemon`, { skip: skip || false }, () => {
    async function pausedTurn(toolName = 'Bash', input = { command: PUSH }) {
      const ran = [];
      const tools = recordingTools(ran);
      const model = scriptedModel(toolName, input);
      const turn = await runToApproval({
        version,
        model,
        tools,
        settings: { toolApproval: airlockStaticApprovals(tools), ...agentSettings() },
      });
      assert.equal(turn.pending.length, 1, 'the harness paused for one approval');
      assert.deepEqual(ran, [], 'the tool did not run before the approval');
      return { ...turn, ran, model };
    }

    test('a call a person allows on the daemon runs the tool, and the model sees its result', T, async () => {
      const t = await pausedTurn();
      const r = responder({ harness: t.h.agent });
      const elements = await respondWithPerson(r, t.pending, 'Bash', 'once');
      const parts = await drain(await t.agent.continueStream({ session: t.session, toolApprovalContinuations: elements }));
      assert.deepEqual(t.ran, [PUSH], 'the allowed tool ran');
      assert.deepEqual(modelSaw(t.model), { type: 'json', value: { ran: PUSH } });
      const resp = parts.find(p => p.type === 'tool-approval-response');
      assert.equal(resp?.approved, true);
      await t.session.destroy();
    });

    test("the daemon's own rules decide without a person: a read in the workspace runs, rm -rf / does not", T, async () => {
      const file = join(daemon.workspace, 'notes.txt');
      const read = await pausedTurn('Read', { file_path: file });
      const [allowed] = await responder({ harness: read.h.agent }).respond(read.pending);
      await drain(await read.agent.continueStream({ session: read.session, toolApprovalContinuations: [allowed] }));
      assert.deepEqual(read.ran, [`read ${file}`], 'the gate allowed the read and the tool ran');
      await read.session.destroy();

      const rm = await pausedTurn('Bash', { command: 'rm -rf /' });
      const [denied] = await responder({ harness: rm.h.agent }).respond(rm.pending);
      await drain(await rm.agent.continueStream({ session: rm.session, toolApprovalContinuations: [denied] }));
      assert.deepEqual(rm.ran, [], 'the gate denied rm -rf / and the tool did not run');
      const saw = modelSaw(rm.model);
      assert.equal(saw?.type, 'execution-denied');
      assert.match(saw.reason, /^airlock: /);
      await rm.session.destroy();
    });

    test('a call a person denies resumes the turn with a denial the model sees; the tool does not run', T, async () => {
      const t = await pausedTurn();
      const r = responder({ harness: t.h.agent });
      const elements = await respondWithPerson(r, t.pending, 'Bash', 'deny');
      const parts = await drain(await t.agent.continueStream({ session: t.session, toolApprovalContinuations: elements }));
      assert.deepEqual(t.ran, [], 'the denied tool did not run');
      const saw = modelSaw(t.model);
      assert.equal(saw?.type, 'execution-denied', `the model saw ${JSON.stringify(saw)}`);
      assert.match(saw.reason, /^airlock: /);
      assert.equal(parts.find(p => p.type === 'tool-approval-response')?.approved, false);
      assert.ok(parts.some(p => p.type === 'finish'), 'the turn finished');
      await t.session.destroy();
    });

    test('nobody answering within the wait denies, saying it timed out waiting for a person', T, async () => {
      const t = await pausedTurn();
      const r = responder({ timeoutMs: 30_000, waitMs: 1000 });
      const [el] = await r.respond(t.pending);
      const d = el.approvalResponse ?? el;
      assert.equal(d.approved, false);
      assert.match(d.reason, /timed out waiting for a person/);
      const { approvals } = await daemon.api('/v1/approvals');
      const stale = approvals.find(a => a.tool === 'Bash' && a.session === r.sessionId);
      assert.ok(stale, 'the approval is still pending for a person');
      // Close it, so the next test's person does not answer this one.
      await daemon.api(`/v1/approvals/${stale.id}`, { method: 'POST', body: JSON.stringify({ answer: 'deny' }) });
      await drain(await t.agent.continueStream({ session: t.session, toolApprovalContinuations: [el] }));
      assert.deepEqual(t.ran, []);
      assert.equal(modelSaw(t.model)?.type, 'execution-denied');
      await t.session.destroy();
    });

    test('an unreachable daemon denies and the turn resumes with that denial', T, async () => {
      const t = await pausedTurn();
      const r = createAirlockResponder({
        url: 'http://127.0.0.1:9', // discard port: nothing listens on loopback
        token: 'alk_x',
        workspace: daemon.workspace,
        timeoutMs: 5000,
        harness: t.h.agent,
      });
      const elements = await r.respond(t.pending);
      await drain(await t.agent.continueStream({ session: t.session, toolApprovalContinuations: elements }));
      assert.deepEqual(t.ran, []);
      const saw = modelSaw(t.model);
      assert.equal(saw?.type, 'execution-denied');
      assert.match(saw.reason, /unreachable/);
      await t.session.destroy();
    });

    test("the element valid for both shapes ('both') is accepted by this version", T, async () => {
      for (const [answer, runs] of [['deny', []], ['once', [PUSH]]]) {
        const t = await pausedTurn();
        const r = responder({ shape: 'both' });
        const elements = await respondWithPerson(r, t.pending, 'Bash', answer);
        assert.ok(elements[0].approvalResponse && elements[0].type === 'tool-approval-response');
        await drain(await t.agent.continueStream({ session: t.session, toolApprovalContinuations: elements }));
        assert.deepEqual(t.ran, runs, `answer ${answer}`);
        await t.session.destroy();
      }
    });

    test('suspended-session rows (input as a JSON string) are decided and continue the turn', T, async () => {
      const t = await pausedTurn();
      // Persisted state is JSON: the row's input is a string there.
      const state = JSON.parse(JSON.stringify(await t.session.suspendTurn()));
      const [row] = state.pendingToolApprovals;
      assert.equal(typeof row.input, 'string');
      const r = responder({ harness: t.h.agent });
      const person = daemon.answerNext('Bash', 'once', r.sessionId);
      const elements = await r.respond(state.pendingToolApprovals);
      const answered = await person;
      assert.deepEqual(answered.input, { command: PUSH }, 'the daemon got the parsed input');
      const session = await t.agent.createSession({ continueFrom: state, sandboxSession: t.sandbox.session });
      await drain(await t.agent.continueStream({ session, toolApprovalContinuations: elements }));
      assert.deepEqual(t.ran, [PUSH]);
      await session.destroy();
    });

    test('built-in bash under recommendedSettings({allowBash: true}) asks airlock; a denial keeps bash from running', T, async () => {
      for (const [answer, marker] of [['deny', false], ['once', true]]) {
        const model = scriptedModel('bash', { command: 'touch marker' });
        const t = await runToApproval({ version, model, tools: {}, settings: settingsFor(recommendedSettings({ allowBash: true })) });
        assert.equal(t.pending.length, 1, 'allow-edits asks before bash');
        const r = responder({ harness: t.h.agent });
        const elements = await respondWithPerson(r, t.pending, 'Bash', answer);
        await drain(await t.agent.continueStream({ session: t.session, toolApprovalContinuations: elements }));
        const dir = t.sandbox.session.defaultWorkingDirectory;
        assert.equal(existsSync(join(dir, 'airlock-fixture-' + t.session.sessionId, 'marker')), marker, `answer ${answer}`);
        assert.deepEqual(t.log.submittedApprovals.map(a => a.approved), [answer === 'once']);
        await t.session.destroy();
      }
    });

    test("a session's submitToolApproval gets the decision (prompt-control path)", T, async () => {
      const { root } = await (await import('../testdata/turn.js')).loadHarness(version);
      const { createFixtureHarness, createLocalSandbox } = await import('../testdata/fixture-harness.js');
      const model = scriptedModel('bash', { command: 'touch marker2' });
      const { harness, log } = createFixtureHarness({ harnessModule: root, model });
      const sb = createLocalSandbox();
      const events = [];
      const adapterSession = await harness.doStart({ sessionId: 's', permissionMode: 'allow-edits', sandboxSession: sb.session, sessionWorkDir: sb.dir });
      const control = await adapterSession.doPromptTurn({ prompt: 'go', tools: [], skills: [], emit: e => events.push(e) });
      while (!events.some(e => e.type === 'tool-approval-request')) await new Promise(r => setTimeout(r, 5));
      const req = events.find(e => e.type === 'tool-approval-request');
      const call = events.find(e => e.type === 'tool-call');
      const r = responder();
      await respondWithPerson(r, { approvalId: req.approvalId, toolCallId: call.toolCallId, toolName: call.toolName, input: call.input }, 'Bash', 'deny', { session: control });
      await control.done;
      assert.deepEqual(log.submittedApprovals.map(a => a.approved), [false]);
      assert.equal(existsSync(join(sb.dir, 'marker2')), false);
      await sb.session.destroy();
    });
  });
}

function agentSettings() {
  // Custom tools only: no built-in needs the permission machinery here.
  return { permissionMode: 'allow-edits' };
}

/** recommendedSettings minus the sandbox network policy (not an agent setting). */
function settingsFor(s) {
  const { networkPolicy: _n, ...agent } = s;
  return agent;
}
