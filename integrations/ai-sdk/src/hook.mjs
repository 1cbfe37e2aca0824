#!/usr/bin/env node
// airlock's PreToolUse hook for Claude Code inside an AI SDK harness
// sandbox, written there by airlockSandboxBootstrap (src/bootstrap.js).
// Self-contained on purpose: it runs in a VM that has node and nothing of
// this package, so it imports only node: modules.
//
// It reads the hook input Claude Code writes on stdin, asks the airlock
// daemon named in airlock-hook.json (next to this file) at /v1/decide,
// and answers in Claude Code's hook format:
//   - the daemon denies (or nobody answered its question in time):
//     permissionDecision "deny" with the reason, exit 0;
//   - the daemon allows: no objection (exit 0, no output), so Claude Code
//     and the harness decide as they would without airlock; airlock is a
//     veto, never a way round their own approval;
//   - anything else (input that is not a hook call, a daemon that is
//     unreachable, slower than timeoutMs, or answers something that is
//     not a decision): exit 2 with the reason on stderr, which blocks the
//     call. The settings also say "onFailure": "block", for a hook that
//     cannot start or crashes.
import { readFileSync } from 'node:fs';

const DECISIONS = new Set(['allow', 'deny', 'ask']);
// Tool input fields that hold one path (Read, Write, Edit, MultiEdit,
// NotebookEdit, Glob, Grep, LS).
const PATH_FIELDS = ['file_path', 'path', 'notebook_path'];

/** Blocks the call: Claude Code shows stderr to the model. */
function block(reason) {
  process.stderr.write(`airlock: ${reason}\n`);
  process.exit(2);
}

function deny(reason) {
  process.stdout.write(
    JSON.stringify({
      hookSpecificOutput: {
        hookEventName: 'PreToolUse',
        permissionDecision: 'deny',
        permissionDecisionReason: `airlock: ${reason}`,
      },
    }) + '\n',
  );
  process.exit(0);
}

function loadConfig() {
  const where = new URL('./airlock-hook.json', import.meta.url);
  let c;
  try {
    c = JSON.parse(readFileSync(where, 'utf8'));
  } catch (err) {
    block(`cannot read the hook's configuration ${where.pathname}: ${err.message}`);
  }
  for (const k of ['url', 'token', 'workspace', 'workDir']) {
    if (typeof c?.[k] !== 'string' || c[k] === '') block(`the hook's configuration has no ${k}`);
  }
  if (!Number.isFinite(c.timeoutMs) || c.timeoutMs <= 0) block("the hook's configuration has no timeoutMs");
  return c;
}

/** The path p of the sandbox as the daemon's workspace knows it. */
function mapPath(p, c) {
  if (p === c.workDir) return c.workspace;
  if (p.startsWith(c.workDir + '/')) return c.workspace + p.slice(c.workDir.length);
  return p;
}

/** Replaces the work directory where a command names it as a path. */
function mapCommand(cmd, c) {
  let out = '';
  let i = 0;
  for (;;) {
    const j = cmd.indexOf(c.workDir, i);
    if (j < 0) return out + cmd.slice(i);
    const next = cmd[j + c.workDir.length];
    const prev = j > 0 ? cmd[j - 1] : ' ';
    // Only a whole path: /work/dir or /work/dir/x, not /work/dirty.
    const whole = (next === undefined || !/[A-Za-z0-9._-]/.test(next)) && !/[A-Za-z0-9._/-]/.test(prev);
    out += cmd.slice(i, j) + (whole ? c.workspace : c.workDir);
    i = j + c.workDir.length;
  }
}

function mapInput(tool, input, c) {
  if (input == null || typeof input !== 'object' || Array.isArray(input)) return input;
  const out = { ...input };
  for (const f of PATH_FIELDS) {
    if (typeof out[f] === 'string') out[f] = mapPath(out[f], c);
  }
  if ((tool === 'Bash' || tool === 'Monitor') && typeof out.command === 'string') {
    out.command = mapCommand(out.command, c);
  }
  return out;
}

async function main() {
  const c = loadConfig();
  let hook;
  try {
    hook = JSON.parse(readFileSync(0, 'utf8'));
  } catch (err) {
    block(`the hook input on stdin is not JSON (${err.message})`);
  }
  if (hook == null || typeof hook !== 'object' || typeof hook.tool_name !== 'string' || hook.tool_name === '') {
    block('the hook input names no tool (tool_name)');
  }
  const input = mapInput(hook.tool_name, hook.tool_input ?? {}, c);
  // The daemon stops holding a question for a person before this hook's
  // own deadline, so an unanswered question reads as such, not as a
  // slow daemon.
  const waitMs = Math.max(0, c.timeoutMs - Math.min(5000, Math.ceil(c.timeoutMs / 10)));
  const signal = AbortSignal.timeout(c.timeoutMs);
  let res;
  let text;
  try {
    res = await fetch(`${c.url.replace(/\/+$/, '')}/v1/decide`, {
      method: 'POST',
      headers: { authorization: `Bearer ${c.token}`, 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({
        tool: hook.tool_name,
        input,
        workspace: c.workspace,
        agent: c.agent ?? '',
        session: typeof hook.session_id === 'string' ? hook.session_id : '',
        wait: `${Math.floor(waitMs)}ms`,
      }),
      redirect: 'error',
      signal,
    });
    // The body is read under the same deadline: headers and then nothing
    // is as slow as no answer.
    text = await res.text();
  } catch (err) {
    if (signal.aborted) block(`the airlock daemon at ${c.url} did not answer within ${c.timeoutMs} ms`);
    block(`the airlock daemon at ${c.url} is unreachable (${err.cause?.message ?? err.message})`);
  }
  if (res.status < 200 || res.status > 299) {
    block(`the airlock daemon at ${c.url} answered HTTP ${res.status}: ${text.slice(0, 200)}`);
  }
  let d;
  try {
    d = JSON.parse(text);
  } catch {
    block(`the airlock daemon at ${c.url} answered something that is not JSON: ${text.slice(0, 200)}`);
  }
  if (d == null || typeof d !== 'object' || !DECISIONS.has(d.decision) || (d.reason != null && typeof d.reason !== 'string')) {
    block(`the airlock daemon at ${c.url} answered something that is not a decision: ${text.slice(0, 200)}`);
  }
  if (d.decision === 'allow') process.exit(0);
  if (d.decision === 'ask') {
    deny(`nobody answered approval ${d.approval_id ?? ''} in time (waited ${Math.floor(waitMs)} ms); ${d.reason ?? ''}`.trim());
  }
  deny(`${d.reason || 'denied'}${d.rule ? ` (rule ${d.rule})` : ''}`);
}

main().catch(err => block(`the hook failed: ${err?.message ?? err}`));
