// A harness adapter (HarnessV1) for the tests: what @ai-sdk/harness's
// HarnessAgent drives in place of Claude Code or Codex. Its "runtime" is a
// loop around a language model (a MockLanguageModelV4 from ai/test that the
// test scripts), so a turn goes through the real HarnessAgent code: the
// agent validates tool calls, applies toolApproval/permissionMode/
// inactiveTools, pauses for approvals, and consumes continuations. Built-in
// bash runs for real in the sandbox session below (bash in a temp dir).
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { z } from 'zod';

const usage = {
  inputTokens: { total: 1, noCache: 1 },
  outputTokens: { total: 1, text: 1 },
};

const runtimes = new Map();
let runtimeSeq = 0;

function deferred() {
  let resolve;
  const promise = new Promise(r => (resolve = r));
  return { promise, resolve };
}

/**
 * @param {{ harnessModule: any, model: any }} options harnessModule is the
 *   package's root export (for commonTool); model is the scripted model.
 */
export function createFixtureHarness({ harnessModule, model }) {
  const log = { bashRuns: [], submittedApprovals: [], submittedResults: [], starts: [] };
  const builtinTools = {
    bash: harnessModule.commonTool('bash', {
      nativeName: 'Bash',
      toolUseKind: 'bash',
      inputSchema: z.object({ command: z.string() }),
    }),
  };
  const harness = {
    specificationVersion: 'harness-v1',
    harnessId: 'airlock-fixture',
    builtinTools,
    supportsBuiltinToolApprovals: true,
    async doStart(options) {
      log.starts.push({
        permissionMode: options.permissionMode,
        builtinToolFiltering: options.builtinToolFiltering,
      });
      // A continued turn re-attaches to the runtime still waiting in this
      // process (what a bridge-backed adapter does across processes).
      const key = options.continueFrom?.data?.runtime;
      if (key != null) {
        const live = runtimes.get(key);
        if (live == null) throw new Error(`fixture: no suspended runtime ${key}`);
        live.sessionId = options.sessionId;
        return live;
      }
      return new FixtureSession({ options, model, log, builtinTools });
    },
  };
  return { harness, log };
}

class FixtureSession {
  constructor({ options, model, log, builtinTools }) {
    this.sessionId = options.sessionId;
    this.isResume = false;
    this.sandbox = options.sandboxSession;
    this.workDir = options.sessionWorkDir;
    this.permissionMode = options.permissionMode ?? 'allow-all';
    this.filtering = options.builtinToolFiltering;
    this.model = model;
    this.log = log;
    this.builtinTools = builtinTools;
    this.emit = () => {};
    this.waitingResults = new Map();
    this.waitingApprovals = new Map();
    this.done = undefined;
    this.seq = 0;
  }

  control() {
    return {
      submitToolResult: async ({ toolCallId, output, isError }) => {
        this.log.submittedResults.push({ toolCallId, output, isError });
        const w = this.waitingResults.get(toolCallId);
        if (w == null) throw new Error(`fixture: no tool call ${toolCallId} is waiting`);
        this.waitingResults.delete(toolCallId);
        w.resolve({ output, isError });
      },
      submitToolApproval: async ({ approvalId, approved, reason }) => {
        this.log.submittedApprovals.push({ approvalId, approved, reason });
        const w = this.waitingApprovals.get(approvalId);
        if (w == null) throw new Error(`fixture: no approval ${approvalId} is waiting`);
        this.waitingApprovals.delete(approvalId);
        w.resolve({ approved, reason });
      },
      done: this.done,
    };
  }

  async doPromptTurn(options) {
    this.emit = options.emit;
    const text =
      typeof options.prompt === 'string'
        ? options.prompt
        : JSON.stringify(options.prompt);
    this.done = this.run([{ role: 'user', content: [{ type: 'text', text }] }]);
    this.done.catch(() => {});
    return this.control();
  }

  async doContinueTurn(options) {
    // The runtime is still waiting on the paused call; only the event sink
    // changes to the continued turn's stream.
    this.emit = options.emit;
    return this.control();
  }

  async run(messages) {
    this.emit({ type: 'stream-start', modelId: 'mock' });
    for (let step = 0; step < 8; step++) {
      const res = await this.model.doGenerate({ prompt: structuredClone(messages) });
      const assistant = [];
      const results = [];
      for (const part of res.content) {
        if (part.type === 'text') {
          const id = `t${++this.seq}`;
          this.emit({ type: 'text-start', id });
          this.emit({ type: 'text-delta', id, delta: part.text });
          this.emit({ type: 'text-end', id });
          assistant.push({ type: 'text', text: part.text });
          continue;
        }
        if (part.type !== 'tool-call') continue;
        assistant.push({
          type: 'tool-call',
          toolCallId: part.toolCallId,
          toolName: part.toolName,
          input: JSON.parse(part.input),
        });
        const output = Object.hasOwn(this.builtinTools, part.toolName)
          ? await this.builtin(part)
          : await this.custom(part);
        results.push({
          type: 'tool-result',
          toolCallId: part.toolCallId,
          toolName: part.toolName,
          output:
            output?.type === 'execution-denied'
              ? { type: 'execution-denied', reason: output.reason }
              : { type: 'json', value: output ?? null },
        });
      }
      const calledTools = results.length > 0;
      this.emit({
        type: 'finish-step',
        finishReason: { unified: calledTools ? 'tool-calls' : 'stop' },
        usage,
      });
      if (!calledTools) {
        this.emit({ type: 'finish', finishReason: { unified: 'stop' }, totalUsage: usage });
        return;
      }
      messages.push({ role: 'assistant', content: assistant });
      messages.push({ role: 'tool', content: results });
    }
    throw new Error('fixture: the model did not stop after 8 steps');
  }

  async custom(part) {
    const wait = deferred();
    this.waitingResults.set(part.toolCallId, wait);
    this.emit({
      type: 'tool-call',
      toolCallId: part.toolCallId,
      toolName: part.toolName,
      input: part.input,
    });
    const { output } = await wait.promise;
    return output;
  }

  async builtin(part) {
    this.emit({
      type: 'tool-call',
      toolCallId: part.toolCallId,
      toolName: part.toolName,
      input: part.input,
      providerExecuted: true,
      nativeName: 'Bash',
    });
    // bash is neither a read nor an edit: every mode but allow-all asks.
    if (this.permissionMode !== 'allow-all') {
      const approvalId = `fixture-apr-${++this.seq}`;
      const wait = deferred();
      this.waitingApprovals.set(approvalId, wait);
      this.emit({ type: 'tool-approval-request', approvalId, toolCallId: part.toolCallId });
      const { approved, reason } = await wait.promise;
      if (!approved) {
        const output = { type: 'execution-denied', reason };
        this.emit({
          type: 'tool-result',
          toolCallId: part.toolCallId,
          toolName: part.toolName,
          result: output,
          isError: true,
        });
        return output;
      }
    }
    const { command } = JSON.parse(part.input);
    this.log.bashRuns.push(command);
    const r = await this.sandbox.run({ command, cwd: this.workDir });
    const output = { exitCode: r.exitCode, stdout: r.stdout };
    this.emit({
      type: 'tool-result',
      toolCallId: part.toolCallId,
      toolName: part.toolName,
      result: output,
    });
    return output;
  }

  async doCompact() {}
  async doSuspendTurn() {
    const key = `runtime-${++runtimeSeq}`;
    runtimes.set(key, this);
    return {
      type: 'continue-turn',
      harnessId: 'airlock-fixture',
      specificationVersion: 'harness-v1',
      data: { runtime: key },
    };
  }
  async doDetach() {
    return this.state();
  }
  async doStop() {
    return this.state();
  }
  async doDestroy() {}
  state() {
    return {
      type: 'resume-session',
      harnessId: 'airlock-fixture',
      specificationVersion: 'harness-v1',
      data: {},
    };
  }
}

/**
 * A sandbox session over a real temp directory and real bash. Enough of
 * HarnessV1NetworkSandboxSession for HarnessAgent.createSession.
 */
export function createLocalSandbox({ home } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'airlock-aisdk-'));
  const policies = [];
  const run = ({ command, env, cwd, abortSignal }) =>
    new Promise((resolve, reject) => {
      const child = spawn('bash', ['-c', command], {
        cwd: cwd ?? dir,
        env: { ...process.env, ...(home ? { HOME: home } : {}), ...(env ?? {}) },
        signal: abortSignal,
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', d => (stdout += d));
      child.stderr.on('data', d => (stderr += d));
      child.on('error', reject);
      child.on('close', code => resolve({ exitCode: code ?? 1, stdout, stderr }));
    });
  const notHere = name => () => {
    throw new Error(`fixture sandbox: ${name} is not used by these tests`);
  };
  const session = {
    id: `local-${dir}`,
    description: 'bash in a temporary directory',
    defaultWorkingDirectory: dir,
    ports: [],
    run,
    readFile: notHere('readFile'),
    readBinaryFile: notHere('readBinaryFile'),
    // The text file methods work on the host's file system, as a local
    // sandbox provider's do (absolute paths as they are, relative ones
    // under the sandbox directory).
    readTextFile: async ({ path }) => {
      try {
        return readFileSync(resolve(dir, path), 'utf8');
      } catch (err) {
        if (err.code === 'ENOENT') return null;
        throw err;
      }
    },
    writeFile: notHere('writeFile'),
    writeBinaryFile: notHere('writeBinaryFile'),
    writeTextFile: async ({ path, content }) => {
      const p = resolve(dir, path);
      mkdirSync(dirname(p), { recursive: true });
      writeFileSync(p, content);
    },
    spawn: notHere('spawn'),
    getPortEndpoint: notHere('getPortEndpoint'),
    getPortUrl: notHere('getPortUrl'),
    setNetworkPolicy: async policy => {
      policies.push(policy);
    },
    stop: async () => {},
    destroy: async () => rmSync(dir, { recursive: true, force: true }),
    restricted: () => session,
  };
  return { session, dir, policies };
}
