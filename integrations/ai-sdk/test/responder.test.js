// The responder against daemons that misbehave on purpose (a loopback
// server speaking the /v1/decide contract badly), the request it sends, and
// the continuation shapes. The real daemon is in harness.test.js.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createAirlockResponder, detectContinuationShape } from '../src/index.js';
import { startContractServer } from '../testdata/contract-server.js';
import { loadHarness } from '../testdata/turn.js';

const streamPart = {
  type: 'tool-approval-request',
  approvalId: 'apr-1',
  toolCall: { type: 'tool-call', toolCallId: 'call-1', toolName: 'Bash', input: { command: 'ls' } },
};
const row = { approvalId: 'apr-2', toolCallId: 'call-2', toolName: 'Bash', input: '{"command":"ls -l"}', kind: 'custom' };

let behave; // how the server answers the next request
let srv;
before(async () => {
  srv = await startContractServer((req, body, res) => behave(req, body, res));
});
after(() => srv.close());

function json(obj, status = 200) {
  return (_req, _body, res) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(typeof obj === 'string' ? obj : JSON.stringify(obj));
  };
}

function responder(extra = {}) {
  return createAirlockResponder({ url: srv.url, token: 'alk_test', workspace: '/w', agent: 'a', session: 's', timeoutMs: 30_000, shape: 'parts', ...extra });
}

describe('what a misbehaving daemon yields', () => {
  const cases = [
    ['a body that is not JSON', json('<html>oops</html>'), /not JSON/],
    ['a JSON array', json('[1,2]'), /not a decision object/],
    ['JSON null', json('null'), /not a decision object/],
    ['an unknown decision', json({ decision: 'maybe' }), /unknown decision "maybe"/],
    ['a missing decision', json({ reason: 'x' }), /unknown decision/],
    ['a decision in the wrong case', json({ decision: 'ALLOW' }), /unknown decision "ALLOW"/],
    ['a reason that is not a string', json({ decision: 'allow', reason: 7 }), /reason is not a string/],
    ['HTTP 500 with the contract error', json({ error: 'db locked', code: 'internal' }, 500), /HTTP 500: db locked \(internal\)/],
    ['HTTP 401', json({ error: 'bad token', code: 'unauthorized' }, 401), /HTTP 401/],
    ['HTTP 204 with no body', json('', 204), /not JSON/],
    ['a redirect', (_q, _b, res) => { res.writeHead(302, { location: 'http://127.0.0.1:9/' }); res.end(); }, /unreachable|redirect/],
    ['headers then a stalled body', (_q, _b, res) => { res.writeHead(200, { 'content-type': 'application/json' }); res.write('{"decision":'); }, /did not answer within 500 ms/, 500],
    ['no answer at all', () => {}, /did not answer within 500 ms/, 500],
  ];
  // Only the stall cases use a short deadline; the others get a long one so
  // a slow machine cannot turn their answer into a timeout.
  for (const [name, handler, reason, timeoutMs = 30_000] of cases) {
    test(`${name} → denial`, async () => {
      behave = handler;
      const d = await responder({ timeoutMs, waitMs: 100 }).decide(streamPart);
      assert.equal(d.approved, false);
      assert.match(d.reason, reason);
    });
  }

  test('positive control: the same server answering allow approves (the cases above could fail)', async () => {
    behave = json({ decision: 'allow', reason: 'rule', rule: 'Bash(ls)' });
    const d = await responder().decide(streamPart);
    assert.equal(d.approved, true);
    assert.equal(d.rule, 'Bash(ls)');
  });

  test('ask still pending after the wait → denial naming the timeout', async () => {
    behave = json({ decision: 'ask', reason: 'needs a person', approval_id: 'apr_9' });
    const d = await responder().decide(streamPart);
    assert.equal(d.approved, false);
    assert.match(d.reason, /timed out waiting for a person to answer approval apr_9/);
  });

  test('deny carries the daemon reason', async () => {
    behave = json({ decision: 'deny', reason: 'rm is denied', rule: 'Bash(rm *)' });
    const d = await responder().decide(streamPart);
    assert.equal(d.approved, false);
    assert.equal(d.reason, 'airlock: rm is denied');
  });

  test('an unreachable daemon → denial', async () => {
    const d = await createAirlockResponder({ url: 'http://127.0.0.1:9', token: 't', workspace: '/w', timeoutMs: 30_000 }).decide(streamPart);
    assert.equal(d.approved, false);
    assert.match(d.reason, /unreachable/);
  });

  test('a fetch that throws → denial', async () => {
    const d = await responder({ fetch: async () => { throw new TypeError('boom'); } }).decide(streamPart);
    assert.equal(d.approved, false);
    assert.match(d.reason, /boom/);
  });
});

describe('the request', () => {
  test('POST /v1/decide with the bearer token and the contract body; a string input is parsed', async () => {
    behave = json({ decision: 'allow' });
    const before = srv.requests.length;
    await responder({ timeoutMs: 30_000, waitMs: 2500 }).respond([streamPart, row]);
    const sent = srv.requests.slice(before).sort((a, b) => a.body.input.command.localeCompare(b.body.input.command));
    assert.equal(sent.length, 2);
    assert.equal(sent[0].method, 'POST');
    assert.equal(sent[0].url, '/v1/decide');
    assert.equal(sent[0].headers.authorization, 'Bearer alk_test');
    assert.deepEqual(sent[0].body, { tool: 'Bash', input: { command: 'ls' }, workspace: '/w', agent: 'a', session: 's', wait: '2500ms' });
    assert.deepEqual(sent[1].body.input, { command: 'ls -l' });
  });

  test('unparsable string input → denial, nothing sent', async () => {
    behave = json({ decision: 'allow' });
    const before = srv.requests.length;
    const d = await responder().decide({ ...row, input: '{"command":' });
    assert.equal(d.approved, false);
    assert.match(d.reason, /not valid JSON/);
    assert.equal(srv.requests.length, before);
  });

  test('a request without a tool name → denial; without an approval id → error (no answer could reach the harness)', async () => {
    behave = json({ decision: 'allow' });
    const d = await responder().decide({ approvalId: 'x', toolCallId: 'c', input: '{}' });
    assert.equal(d.approved, false);
    await assert.rejects(() => responder().decide({ toolName: 'Bash', input: '{}' }), /no approvalId/);
  });

  test("the harness built-ins go by the daemon's names; mapTool overrides", async () => {
    behave = json({ decision: 'allow' });
    const before = srv.requests.length;
    const bash = { ...streamPart, toolCall: { ...streamPart.toolCall, toolName: 'bash' } };
    await responder().decide(bash);
    await responder({ mapTool: name => `mcp__app__${name}` }).decide({ ...row, toolName: 'deploy' });
    assert.equal(srv.requests[before].body.tool, 'Bash');
    assert.equal(srv.requests[before + 1].body.tool, 'mcp__app__deploy');
    const d = await responder({ mapTool: () => '' }).decide(row);
    assert.equal(d.approved, false);
    assert.match(d.reason, /mapTool returned no tool name/);
  });

  test('the default wait stays below the deadline', async () => {
    behave = json({ decision: 'allow' });
    const before = srv.requests.length;
    await responder({ timeoutMs: 10_000, waitMs: undefined }).decide(streamPart);
    assert.equal(srv.requests[before].body.wait, '9000ms');
  });

  test('bad options are refused with what to do', () => {
    assert.throws(() => createAirlockResponder({ url: 'localhost:7420', token: 't', workspace: '/w', timeoutMs: 1 }), /http\(s\) address/);
    assert.throws(() => createAirlockResponder({ url: 'http://x', token: '', workspace: '/w', timeoutMs: 1 }), /token create/);
    assert.throws(() => createAirlockResponder({ url: 'http://x', token: 't', workspace: 'rel', timeoutMs: 1 }), /absolute/);
    assert.throws(() => createAirlockResponder({ url: 'http://x', token: 't', workspace: '/w', timeoutMs: 100, waitMs: 100 }), /below timeoutMs/);
  });

  test('submitToolApproval on the session receives each decision', async () => {
    behave = json({ decision: 'deny', reason: 'no' });
    const got = [];
    const els = await responder().respond(streamPart, { session: { submitToolApproval: async x => got.push(x) } });
    assert.deepEqual(got, [{ approvalId: 'apr-1', approved: false, reason: 'airlock: no' }]);
    assert.equal(els.length, 1);
  });
});

describe('continuation shapes', () => {
  test('detected from each installed harness by running its own collector', async () => {
    assert.equal(detectContinuationShape((await loadHarness('100')).agent), 'legacy');
    assert.equal(detectContinuationShape((await loadHarness('122')).agent), 'parts');
    assert.equal(detectContinuationShape({}), 'both');
  });

  test('legacy, parts and both', async () => {
    behave = json({ decision: 'allow', reason: 'ok' });
    const part = { type: 'tool-approval-response', approvalId: 'apr-1', approved: true, reason: 'airlock: ok' };
    const toolCall = { type: 'tool-call', toolCallId: 'call-1', toolName: 'Bash', input: { command: 'ls' } };
    assert.deepEqual(await responder({ shape: 'parts' }).respond(streamPart), [part]);
    assert.deepEqual(await responder({ shape: 'legacy' }).respond(streamPart), [{ approvalResponse: part, toolCall }]);
    assert.deepEqual(await responder({ shape: 'both' }).respond(streamPart), [{ ...part, approvalResponse: part, toolCall }]);
    // With no harness given and none resolvable as @ai-sdk/harness, 'auto' falls back to 'both'.
    assert.deepEqual(await responder({ shape: 'auto' }).respond(streamPart), [{ ...part, approvalResponse: part, toolCall }]);
  });
});
