// airlockSandboxBootstrap inside the real @ai-sdk/harness bootstrap
// (prepareSandboxForHarness, 1.0.100 and 1.0.122), and the hook script it writes, run as Claude Code runs
// it (hook JSON on stdin) against a real `airlock serve` and against
// daemons that are unreachable, slow or answer garbage.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { airlockSandboxBootstrap, mergeHookSettings } from '../src/index.js';
import { startContractServer } from '../testdata/contract-server.js';
import { daemonUnavailable, startDaemon } from '../testdata/daemon.js';
import { createFixtureHarness, createLocalSandbox } from '../testdata/fixture-harness.js';
import { loadHarness, VERSIONS } from '../testdata/turn.js';

const base = { url: 'http://127.0.0.1:7420', token: 'alk_one', workspace: '/home/me/project' };

describe('bootstrapHash', () => {
  const h = o => airlockSandboxBootstrap(o).bootstrapHash;
  test('is the same for the same options, and for the default bootstrapDir spelled out', () => {
    assert.equal(h(base), h({ ...base }));
    assert.equal(h(base), h({ ...base, bootstrapDir: '.airlock/hooks' }));
    assert.match(h(base), /^[0-9a-f]{64}$/);
  });
  const changes = [
    ['url', { url: 'http://10.0.0.1:7420' }],
    ['token', { token: 'alk_two' }],
    ['workspace', { workspace: '/home/me/other' }],
    ['bootstrapDir', { bootstrapDir: 'hooks' }],
    ['agent', { agent: 'harness' }],
    ['timeoutMs', { timeoutMs: 1234 }],
  ];
  for (const [name, change] of changes) {
    test(`changes with ${name}`, () => assert.notEqual(h({ ...base, ...change }), h(base)));
  }
  test('does not carry the token', () => assert.ok(!h(base).includes('alk_one')));
});

describe('options', () => {
  const bad = [
    ['no url', { url: undefined }, /url/],
    ['a url that is not http', { url: 'file:///x' }, /url/],
    ['no token', { token: '' }, /token/],
    ['a relative workspace', { workspace: 'project' }, /workspace/],
    ['an absolute bootstrapDir', { bootstrapDir: '/etc' }, /bootstrapDir/],
    ['a bootstrapDir outside workDir', { bootstrapDir: '../up' }, /bootstrapDir/],
    ['a zero timeout', { timeoutMs: 0 }, /timeoutMs/],
  ];
  for (const [name, change, msg] of bad) {
    test(`${name} is refused`, () => assert.throws(() => airlockSandboxBootstrap({ ...base, ...change }), msg));
  }
});

describe('mergeHookSettings', () => {
  const entry = { type: 'command', command: 'node', args: ['/w/.airlock/hooks/airlock-hook.mjs'], timeout: 35, onFailure: 'block' };
  test('keeps every other setting and hook, and bootstrapping twice leaves one airlock entry', () => {
    const before = JSON.stringify({
      model: 'opus',
      permissions: { allow: ['Read'] },
      hooks: {
        PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: 'lint' }] }],
        PostToolUse: [{ matcher: '*', hooks: [{ type: 'command', command: 'log' }] }],
      },
    });
    const once = mergeHookSettings(before, entry);
    const twice = JSON.parse(mergeHookSettings(once, entry));
    assert.equal(twice.model, 'opus');
    assert.deepEqual(twice.permissions, { allow: ['Read'] });
    assert.deepEqual(twice.hooks.PostToolUse, [{ matcher: '*', hooks: [{ type: 'command', command: 'log' }] }]);
    assert.deepEqual(twice.hooks.PreToolUse, [
      { matcher: 'Bash', hooks: [{ type: 'command', command: 'lint' }] },
      { matcher: '*', hooks: [entry] },
    ]);
  });
  test('makes the file when there is none', () => {
    assert.deepEqual(JSON.parse(mergeHookSettings(null, entry)), { hooks: { PreToolUse: [{ matcher: '*', hooks: [entry] }] } });
  });
  for (const [name, text] of [['not JSON', '{oops'], ['an array', '[]'], ['hooks not an object', '{"hooks": 3}'], ['PreToolUse not a list', '{"hooks": {"PreToolUse": {}}}']]) {
    test(`a settings file that is ${name} is not overwritten`, () => assert.throws(() => mergeHookSettings(text, entry, 'x.json'), /x\.json/));
  }
});

const skip = daemonUnavailable();
if (skip && process.env.CI === 'true') {
  throw new Error(`the real-daemon tests must run in CI: ${skip}`);
}

/**
 * Runs the hook script at path with Claude Code's PreToolUse input on
 * stdin, as Claude Code does.
 */
function runHook(path, stdin) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path], { stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', d => (stdout += d));
    child.stderr.on('data', d => (stderr += d));
    child.on('error', reject);
    child.on('close', code => resolve({ code, stdout, stderr }));
    child.stdin.end(typeof stdin === 'string' ? stdin : JSON.stringify(stdin));
  });
}

/** Claude Code's PreToolUse hook input for one call. */
function hookInput(tool_name, tool_input, cwd) {
  return {
    session_id: `hook-test-${Math.random().toString(36).slice(2)}`,
    transcript_path: '/tmp/transcript.jsonl',
    cwd,
    permission_mode: 'default',
    hook_event_name: 'PreToolUse',
    tool_name,
    tool_input,
    tool_use_id: 'toolu_01',
  };
}

/** Bootstraps a local sandbox through the real harness with options. */
async function bootstrapped(version, options) {
  const h = await loadHarness(version);
  const { harness } = createFixtureHarness({ harnessModule: h.root, model: null });
  const home = mkdtempSync(join(tmpdir(), 'airlock-aisdk-home-'));
  const sandbox = createLocalSandbox({ home });
  const b = airlockSandboxBootstrap(options);
  const result = await h.agent.prepareSandboxForHarness({
    session: sandbox.session,
    harnesses: [harness],
    sandboxConfig: { workDir: 'project', ...b },
  });
  const workDir = join(sandbox.dir, 'project');
  return {
    ...b,
    result,
    home,
    workDir,
    script: join(workDir, '.airlock', 'hooks', 'airlock-hook.mjs'),
    cleanup: () => {
      rmSync(home, { recursive: true, force: true });
      rmSync(sandbox.dir, { recursive: true, force: true });
    },
  };
}

function deniedReason(r) {
  assert.equal(r.code, 0, `exit ${r.code}: ${r.stderr}`);
  const out = JSON.parse(r.stdout);
  assert.equal(out.hookSpecificOutput.hookEventName, 'PreToolUse');
  assert.equal(out.hookSpecificOutput.permissionDecision, 'deny');
  return out.hookSpecificOutput.permissionDecisionReason;
}

for (const version of VERSIONS) {
  describe(`onBootstrap through @ai-sdk/harness 1.0.${version}, and the hook it writes, with a real airlock daemon`, { skip: skip || false }, () => {
    let daemon;
    let b;
    before(async () => {
      daemon = await startDaemon();
      writeFileSync(join(daemon.workspace, 'notes.txt'), 'notes\n');
      b = await bootstrapped(version, { url: daemon.url, token: daemon.token, workspace: daemon.workspace, agent: daemon.agent, timeoutMs: 4000 });
    });
    after(async () => {
      b?.cleanup();
      await daemon?.stop();
    });

    test('writes the hook under workDir/bootstrapDir and registers it in both settings files', () => {
      assert.equal(readFileSync(b.script, 'utf8'), readFileSync(new URL('../src/hook.mjs', import.meta.url), 'utf8'));
      const entry = { type: 'command', command: 'node', args: [b.script], timeout: 9, onFailure: 'block' };
      for (const file of [join(b.workDir, '.claude', 'settings.json'), join(b.home, '.claude', 'settings.json')]) {
        const s = JSON.parse(readFileSync(file, 'utf8'));
        assert.deepEqual(s.hooks.PreToolUse, [{ matcher: '*', hooks: [entry] }], file);
      }
      assert.match(b.result.identity, /^[0-9a-f]+$/, 'the harness derived the sandbox identity from bootstrapHash');
    });

    test('a read under workDir is decided as the same path of the workspace: no objection', async () => {
      const r = await runHook(b.script, hookInput('Read', { file_path: join(b.workDir, 'notes.txt') }, b.workDir));
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout, '', 'an allow leaves the decision to Claude Code and the harness');
    });

    test('a subagent (Agent) and the other tools that steer Claude Code get no objection: the daemon allows them', async () => {
      const calls = [
        ['Agent', { description: 'look around', prompt: 'list the files', subagent_type: 'general-purpose' }],
        ['AskUserQuestion', { questions: [{ question: 'Which?', header: 'Pick', options: [{ label: 'a', description: 'A' }], multiSelect: false }] }],
        ['TodoWrite', { todos: [{ content: 'x', status: 'pending', activeForm: 'doing x' }] }],
      ];
      for (const [tool, input] of calls) {
        const r = await runHook(b.script, hookInput(tool, input, b.workDir));
        assert.equal(r.code, 0, `${tool}: exit ${r.code}: ${r.stderr}`);
        assert.equal(r.stdout, '', `${tool}: ${r.stdout}`);
      }
      // The daemon decided them (not a hook that let them through unasked).
      const { events } = await daemon.api('/v1/audit?tool=Agent');
      assert.ok(
        events.some(e => e.decision === 'allow' && e.detail?.class === 'orchestration' && e.detail?.identity?.agent === daemon.agent),
        JSON.stringify(events),
      );
    });

    test("a command the daemon's rules deny is denied with the reason", async () => {
      const reason = deniedReason(await runHook(b.script, hookInput('Bash', { command: 'rm -rf /' }, b.workDir)));
      assert.match(reason, /^airlock: /);
    });

    test('an ask nobody answers within the deadline is denied, naming the approval', async () => {
      const reason = deniedReason(await runHook(b.script, hookInput('Bash', { command: 'git push origin main' }, b.workDir)));
      assert.match(reason, /nobody answered approval apr_/);
    });

    test('the daemon recorded the calls as the workspace paths, with the agent', async () => {
      const { events } = await daemon.api('/v1/audit?limit=100');
      const reads = events.filter(e => e.tool === 'Read' && e.detail?.identity?.agent === daemon.agent);
      assert.ok(reads.length > 0, `no Read from the hook in ${JSON.stringify(events.slice(0, 3))}`);
      assert.ok(JSON.stringify(reads).includes(join(daemon.workspace, 'notes.txt')), JSON.stringify(reads));
      assert.ok(!JSON.stringify(reads).includes(b.workDir), 'the sandbox path reached the daemon unmapped');
    });
  });
}

async function closedPort() {
  const srv = createServer();
  await new Promise(r => srv.listen(0, '127.0.0.1', r));
  const { port } = srv.address();
  await new Promise(r => srv.close(r));
  return port;
}

describe('the hook blocks when the daemon fails it', () => {
  let srv;
  let behave;
  let dir;
  before(async () => {
    srv = await startContractServer((req, body, res) => behave(req, body, res));
    dir = mkdtempSync(join(tmpdir(), 'airlock-aisdk-hook-'));
  });
  after(async () => {
    await srv.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Installs the hook with a config naming url, as onBootstrap does. */
  function install(url, timeoutMs = 30_000) {
    const hooks = join(dir, String(Math.random()).slice(2));
    mkdirSync(hooks);
    writeFileSync(join(hooks, 'airlock-hook.mjs'), readFileSync(new URL('../src/hook.mjs', import.meta.url)));
    writeFileSync(join(hooks, 'airlock-hook.json'), JSON.stringify({ url, token: 'alk_test', workspace: '/w', workDir: '/sandbox/w', agent: 'a', timeoutMs }));
    return join(hooks, 'airlock-hook.mjs');
  }
  const reply = (status, body) => (_q, _b, res) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(body);
  };
  const call = hookInput('Read', { file_path: '/sandbox/w/a.txt' }, '/sandbox/w');

  const cases = [
    ['a body that is not JSON', reply(200, '<html>'), /not JSON/],
    ['JSON that is not a decision', reply(200, '{"decision":"maybe"}'), /not a decision/],
    ['JSON null', reply(200, 'null'), /not a decision/],
    ['a reason that is not a string', reply(200, '{"decision":"allow","reason":7}'), /not a decision/],
    ['HTTP 500', reply(500, '{"error":"db locked"}'), /HTTP 500/],
    ['HTTP 401', reply(401, '{"error":"bad token"}'), /HTTP 401/],
    ['a redirect', (_q, _b, res) => { res.writeHead(302, { location: 'http://127.0.0.1:9/' }); res.end(); }, /unreachable|redirect/],
    ['no answer within timeoutMs', () => {}, /did not answer within 300 ms/, 300],
    ['headers, then a stalled body', (_q, _b, res) => { res.writeHead(200); res.write('{"decision":'); }, /did not answer within 300 ms/, 300],
  ];
  for (const [name, handler, msg, timeoutMs] of cases) {
    test(`${name} → exit 2 with the reason`, async () => {
      behave = handler;
      const r = await runHook(install(srv.url, timeoutMs), call);
      assert.equal(r.code, 2, `exit ${r.code}, stdout ${r.stdout}`);
      assert.equal(r.stdout, '');
      assert.match(r.stderr, msg);
    });
  }

  test('a daemon that is not there → exit 2, unreachable', async () => {
    const r = await runHook(install(`http://127.0.0.1:${await closedPort()}`), call);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /unreachable/);
  });

  test('the request maps workDir paths to the workspace, in paths and in commands (positive control: a deny)', async () => {
    behave = reply(200, '{"decision":"deny","reason":"no","rule":"Read(/w/**)"}');
    const path = install(srv.url);
    const denied = deniedReason(await runHook(path, call));
    assert.equal(denied, 'airlock: no (rule Read(/w/**))');
    assert.deepEqual(srv.requests.at(-1).body.input, { file_path: '/w/a.txt' });
    assert.equal(srv.requests.at(-1).body.workspace, '/w');
    assert.equal(srv.requests.at(-1).headers.authorization, 'Bearer alk_test');
    await runHook(path, hookInput('Bash', { command: 'cat /sandbox/w/a.txt /sandbox/wx/b /sandbox/w' }, '/sandbox/w'));
    assert.equal(srv.requests.at(-1).body.input.command, 'cat /w/a.txt /sandbox/wx/b /w');
  });

  for (const [name, stdin] of [['not JSON', 'hello'], ['without a tool name', '{"tool_input":{}}']]) {
    test(`hook input that is ${name} → exit 2`, async () => {
      const r = await runHook(install(srv.url), stdin);
      assert.equal(r.code, 2);
      assert.match(r.stderr, /^airlock: /);
    });
  }

  test('a missing configuration → exit 2', async () => {
    const p = install(srv.url);
    rmSync(p.replace(/\.mjs$/, '.json'));
    const r = await runHook(p, call);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /configuration/);
  });
});
