// Starts a real `airlock serve` for the tests: the binary named by
// AIRLOCK_BIN (the Go test builds it from ./cmd/airlock), a temp SQLite
// database, an agent's token for the responder and a person's for the
// answers (both made with `airlock serve token create --role`), a free
// loopback port. The daemon is stopped by its pid when the tests end.
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, mkdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** Why the real-daemon tests cannot run here, or '' when they can. */
export function daemonUnavailable() {
  if (!process.env.AIRLOCK_BIN) {
    return "AIRLOCK_BIN is not set: run these tests through 'go test ./integrations/ai-sdk' (it builds airlock and sets it)";
  }
  return '';
}

async function freePort() {
  const srv = createServer();
  await new Promise(r => srv.listen(0, '127.0.0.1', r));
  const { port } = /** @type {import('node:net').AddressInfo} */ (srv.address());
  await new Promise(r => srv.close(r));
  return port;
}

export async function startDaemon() {
  const bin = /** @type {string} */ (process.env.AIRLOCK_BIN);
  const dir = mkdtempSync(join(tmpdir(), 'airlock-aisdk-daemon-'));
  const workspace = join(dir, 'workspace');
  mkdirSync(workspace);
  const env = {
    ...process.env,
    HOME: dir,
    XDG_STATE_HOME: join(dir, 'state'),
    XDG_CONFIG_HOME: join(dir, 'config'),
  };
  const db = `sqlite:${join(dir, 'airlock.db')}`;
  /** @param {string[]} args */
  async function createToken(...args) {
    const created = await run(bin, ['serve', 'token', 'create', '--name', 'ai-sdk-tests', '--db', db, ...args], { env });
    const text = created.stdout.match(/alk_[A-Za-z0-9_-]+/)?.[0];
    if (!text) {
      throw new Error(`airlock serve token create printed no token: ${created.stdout} ${created.stderr}`);
    }
    return text;
  }
  // The agent's token decides (as the agent the tests name); the person's
  // answers, as on the web page.
  const agent = 'ai-sdk-test';
  const token = await createToken('--role', 'agent', '--agent', agent, '--workspace', workspace);
  const personToken = await createToken('--role', 'person');
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child = spawn(bin, ['serve', '--addr', `127.0.0.1:${port}`, '--db', db], {
    env,
    cwd: workspace,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', d => (output += d));
  child.stderr.on('data', d => (output += d));
  const exited = new Promise(r => child.on('exit', code => r(code)));
  // Up to a minute: CI machines run other suites beside this one.
  for (let i = 0; ; i++) {
    try {
      const res = await fetch(`${url}/healthz`);
      if (res.ok) break;
    } catch {
      // not listening yet
    }
    if (child.exitCode != null || i > 1200) {
      child.kill('SIGKILL');
      throw new Error(`airlock serve did not come up on ${url}:\n${output}`);
    }
    await new Promise(r => setTimeout(r, 50));
  }

  /** @param {string} path @param {RequestInit} [init] */
  async function api(path, init = {}) {
    const res = await fetch(`${url}${path}`, {
      ...init,
      headers: { authorization: `Bearer ${personToken}`, 'content-type': 'application/json', ...(init.headers ?? {}) },
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`${init.method ?? 'GET'} ${path}: HTTP ${res.status}: ${text}`);
    return JSON.parse(text);
  }

  /**
   * Answers the next pending approval for `tool` the way a person on the
   * web page would, through the daemon's own API.
   * @param {string} tool @param {'once'|'always'|'deny'|'always_deny'} answer
   * @param {string} session
   */
  async function answerNext(tool, answer, session) {
    for (let i = 0; i < 2400; i++) {
      const { approvals } = await api('/v1/approvals');
      const a = approvals.find(x => x.tool === tool && x.session === session);
      if (a) return api(`/v1/approvals/${a.id}`, { method: 'POST', body: JSON.stringify({ answer }) });
      await new Promise(r => setTimeout(r, 25));
    }
    throw new Error(`no pending approval for ${tool} appeared`);
  }

  return {
    url,
    token,
    // The agent the token belongs to: a call naming another is refused.
    agent,
    personToken,
    workspace,
    api,
    answerNext,
    output: () => output,
    async stop() {
      if (child.exitCode == null) {
        process.kill(/** @type {number} */ (child.pid), 'SIGTERM');
        const timer = setTimeout(() => child.exitCode == null && process.kill(/** @type {number} */ (child.pid), 'SIGKILL'), 5000);
        await exited;
        clearTimeout(timer);
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
