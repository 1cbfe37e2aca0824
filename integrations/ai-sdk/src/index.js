// @ts-check
/**
 * @module @airlockhq/ai-sdk
 *
 * Routes the tool approvals of Vercel's AI SDK harness (`@ai-sdk/harness`)
 * to an airlock daemon (`airlock serve`), so the daemon's rules, grants and
 * the person on its web page decide what a harness agent may run.
 *
 * The package is plain ESM JavaScript with JSDoc types and a hand-written
 * index.d.ts: it needs no build step, so `npm ci` is the whole install and
 * what runs is exactly what is committed.
 *
 * Safety rule: anything short of a well-formed "allow" from the daemon is a
 * denial. An unreachable daemon, one slower than its deadline, a non-2xx
 * status, a body that is not the contract's JSON, an unknown decision, an
 * "ask" nobody answered in time, a request whose input cannot be parsed:
 * each becomes `approved: false` with a reason that says which it was.
 */

export {
  airlockStaticApprovals,
  recommendedSettings,
  METADATA_CIDRS,
} from './settings.js';
export { detectContinuationShape } from './shape.js';
export { airlockSandboxBootstrap, mergeHookSettings } from './bootstrap.js';
export { airlockToolApproval } from './approval.js';

import { toContinuation, detectContinuationShape } from './shape.js';

const DECISIONS = new Set(['allow', 'deny', 'ask']);

/**
 * The harness's cross-harness built-in names (HARNESS_V1_BUILTIN_TOOLS)
 * in the daemon's vocabulary (Claude Code's). Their input fields already
 * match (command, file_path, content, old_string, new_string, pattern).
 * Any other name goes to the daemon as it is: one the gate cannot read is
 * a deny there.
 */
export const BUILTIN_TOOL_NAMES = Object.freeze({
  bash: 'Bash',
  read: 'Read',
  write: 'Write',
  edit: 'Edit',
  grep: 'Grep',
  glob: 'Glob',
  webSearch: 'WebSearch',
});

/**
 * @typedef {import('./index.js').AirlockResponderOptions} AirlockResponderOptions
 * @typedef {import('./index.js').PendingToolApproval} PendingToolApproval
 * @typedef {import('./index.js').AirlockDecision} AirlockDecision
 */

/**
 * Creates a responder that asks the airlock daemon about each pending
 * harness tool approval and answers the harness.
 *
 * @param {AirlockResponderOptions} options
 */
export function createAirlockResponder(options) {
  const opts = validateOptions(options);
  /** @type {Promise<'legacy' | 'parts' | 'both'> | undefined} */
  let shape;

  /**
   * Asks the daemon about one pending approval. Never throws for a daemon
   * problem: those are denials.
   *
   * @param {PendingToolApproval} request
   * @returns {Promise<AirlockDecision>}
   */
  async function decide(request) {
    const call = normalizeRequest(request);
    if (call.problem) {
      return deny(call, call.problem);
    }
    let tool;
    try {
      tool = daemonToolName(opts, call);
    } catch (err) {
      return deny(call, errorText(err));
    }
    let answer;
    try {
      answer = await postDecide(opts, { ...call, tool });
    } catch (err) {
      return deny(call, describeFailure(opts, err));
    }
    if (answer.decision === 'allow') {
      return {
        ...base(call),
        approved: true,
        decision: 'allow',
        reason: prefixed(answer.reason || 'allowed'),
        ...extras(answer),
      };
    }
    if (answer.decision === 'deny') {
      return {
        ...deny(call, answer.reason || 'denied by rule'),
        decision: 'deny',
        ...extras(answer),
      };
    }
    // "ask" after the wait: the approval is still pending on the daemon,
    // nobody answered it in time. Deny now; the agent may ask again.
    const id = answer.approval_id ? ` ${answer.approval_id}` : '';
    return {
      ...deny(
        call,
        `timed out waiting for a person to answer approval${id} ` +
          `(waited ${opts.waitMs} ms)`,
      ),
      decision: 'ask',
      ...extras(answer),
    };
  }

  /**
   * Decides every request and returns continuation elements for the
   * harness. When `session.submitToolApproval` exists, each decision is
   * also submitted there (that is how a harness prompt-control handle takes
   * approvals).
   *
   * @param {PendingToolApproval | readonly PendingToolApproval[]} requests
   * @param {{ session?: { submitToolApproval?: Function } }} [respondOptions]
   */
  async function respond(requests, respondOptions = {}) {
    const list = Array.isArray(requests) ? requests : [requests];
    shape ??= resolveShape(opts);
    const kind = await shape;
    const decisions = await Promise.all(list.map(r => decide(r)));
    const session = respondOptions.session;
    if (session != null && typeof session.submitToolApproval === 'function') {
      for (const d of decisions) {
        await session.submitToolApproval({
          approvalId: d.approvalId,
          approved: d.approved,
          reason: d.reason,
        });
      }
    }
    return decisions.map(d => toContinuation(d, kind));
  }

  return {
    decide,
    respond,
    /** The continuation shape this responder produces. */
    shape: () => (shape ??= resolveShape(opts)),
  };
}

/**
 * @param {AirlockResponderOptions} options
 */
function validateOptions(options) {
  if (options == null || typeof options !== 'object') {
    throw new TypeError('createAirlockResponder: pass {url, token, workspace, timeoutMs}');
  }
  const { url, token, workspace } = options;
  if (typeof url !== 'string' || !/^https?:\/\//.test(url)) {
    throw new TypeError(
      `createAirlockResponder: url must be the daemon's http(s) address, e.g. http://127.0.0.1:7420 (got ${JSON.stringify(url)})`,
    );
  }
  if (typeof token !== 'string' || token === '') {
    throw new TypeError(
      "createAirlockResponder: token is required (make one with 'airlock serve token create --role agent --agent NAME')",
    );
  }
  if (typeof workspace !== 'string' || !workspace.startsWith('/')) {
    throw new TypeError(
      'createAirlockResponder: workspace must be the absolute path the agent works in',
    );
  }
  const timeoutMs = options.timeoutMs ?? 60_000;
  if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) {
    throw new TypeError('createAirlockResponder: timeoutMs must be a positive number of milliseconds');
  }
  // The daemon must give up holding an "ask" before our own deadline
  // aborts the request, or every unanswered ask would read as a slow daemon.
  const waitMs =
    options.waitMs ?? Math.max(0, timeoutMs - Math.min(5_000, Math.ceil(timeoutMs / 10)));
  if (!Number.isFinite(waitMs) || waitMs < 0 || waitMs >= timeoutMs) {
    throw new TypeError('createAirlockResponder: waitMs must be at least 0 and below timeoutMs');
  }
  const fetchFn = options.fetch ?? globalThis.fetch;
  if (typeof fetchFn !== 'function') {
    throw new TypeError('createAirlockResponder: no fetch available; pass options.fetch');
  }
  return {
    url: url.replace(/\/+$/, ''),
    token,
    workspace,
    agent: options.agent ?? '',
    session: options.session ?? '',
    timeoutMs,
    waitMs: Math.floor(waitMs),
    fetch: fetchFn,
    shape: options.shape ?? 'auto',
    mapTool: options.mapTool,
    harness: options.harness,
  };
}

/**
 * @param {ReturnType<typeof validateOptions>} opts
 * @param {{toolName: string, input: unknown}} call
 */
function daemonToolName(opts, call) {
  if (typeof opts.mapTool === 'function') {
    const name = opts.mapTool(call.toolName, call.input);
    if (typeof name !== 'string' || name === '') {
      throw new TypeError(`mapTool returned no tool name for ${call.toolName}`);
    }
    return name;
  }
  return Object.hasOwn(BUILTIN_TOOL_NAMES, call.toolName)
    ? BUILTIN_TOOL_NAMES[/** @type {keyof typeof BUILTIN_TOOL_NAMES} */ (call.toolName)]
    : call.toolName;
}

/** @param {ReturnType<typeof validateOptions>} opts */
async function resolveShape(opts) {
  if (opts.shape !== 'auto') return opts.shape;
  let harness = opts.harness;
  if (harness == null) {
    try {
      harness = await import('@ai-sdk/harness/agent');
    } catch {
      return 'both';
    }
  }
  return detectContinuationShape(harness);
}

/**
 * Reduces the two request shapes the harness produces to one call:
 * - the AI SDK stream part `{type:'tool-approval-request', approvalId,
 *   toolCall:{toolCallId, toolName, input}}` (input already parsed), and
 * - the suspended-session row `{approvalId, toolCallId, toolName, input,
 *   kind}` from `continueFrom.pendingToolApprovals` (input a JSON string).
 *
 * @param {any} request
 */
function normalizeRequest(request) {
  if (request == null || typeof request !== 'object') {
    throw new TypeError('airlock responder: a pending approval must be an object');
  }
  const approvalId = request.approvalId;
  if (typeof approvalId !== 'string' || approvalId === '') {
    // Without an approval id no answer can reach the harness at all.
    throw new TypeError('airlock responder: the pending approval has no approvalId');
  }
  const tc = request.toolCall != null && typeof request.toolCall === 'object' ? request.toolCall : request;
  /** @type {{approvalId: string, toolCallId: string, toolName: string, input: unknown, providerExecuted?: boolean, problem?: string}} */
  const call = {
    approvalId,
    toolCallId: typeof tc.toolCallId === 'string' ? tc.toolCallId : '',
    toolName: typeof tc.toolName === 'string' ? tc.toolName : '',
    input: tc.input,
  };
  const pe = tc.providerExecuted ?? request.providerExecuted;
  if (typeof pe === 'boolean') call.providerExecuted = pe;
  if (call.toolName === '') {
    call.problem = 'the approval request names no tool';
    return call;
  }
  if (typeof call.input === 'string') {
    try {
      call.input = JSON.parse(call.input);
    } catch (err) {
      call.problem = `the tool input is not valid JSON (${errorText(err)})`;
      return call;
    }
  }
  if (call.input === undefined) {
    call.problem = 'the approval request carries no tool input';
  }
  return call;
}

/**
 * @param {ReturnType<typeof validateOptions>} opts
 * @param {{tool: string, input: unknown}} call
 */
async function postDecide(opts, call) {
  const controller = new AbortController();
  const timer = setTimeout(
    () => controller.abort(new DeadlineError(opts.timeoutMs)),
    opts.timeoutMs,
  );
  try {
    const res = await opts.fetch(`${opts.url}/v1/decide`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${opts.token}`,
        'content-type': 'application/json',
        accept: 'application/json',
      },
      body: JSON.stringify({
        tool: call.tool,
        input: call.input,
        workspace: opts.workspace,
        agent: opts.agent,
        session: opts.session,
        wait: `${opts.waitMs}ms`,
      }),
      signal: controller.signal,
      redirect: 'error',
    });
    // The body is read under the same deadline: a daemon that sends headers
    // and then stalls is as slow as one that sends nothing.
    const text = await res.text();
    if (res.status < 200 || res.status > 299) {
      throw new DaemonError(`answered HTTP ${res.status}${errorDetail(text)}`);
    }
    return parseDecision(text);
  } catch (err) {
    if (controller.signal.aborted && controller.signal.reason instanceof DeadlineError) {
      throw controller.signal.reason;
    }
    throw err;
  } finally {
    clearTimeout(timer);
  }
}

/** @param {string} text */
function parseDecision(text) {
  let body;
  try {
    body = JSON.parse(text);
  } catch {
    throw new DaemonError(`answered something that is not JSON: ${clip(text)}`);
  }
  if (body == null || typeof body !== 'object' || Array.isArray(body)) {
    throw new DaemonError(`answered JSON that is not a decision object: ${clip(text)}`);
  }
  if (typeof body.decision !== 'string' || !DECISIONS.has(body.decision)) {
    throw new DaemonError(
      `answered an unknown decision ${clip(JSON.stringify(body.decision) ?? 'undefined')}`,
    );
  }
  for (const k of ['reason', 'rule', 'approval_id', 'grant']) {
    if (body[k] != null && typeof body[k] !== 'string') {
      throw new DaemonError(`answered a decision whose ${k} is not a string`);
    }
  }
  return /** @type {{decision: 'allow'|'deny'|'ask', reason?: string, rule?: string, approval_id?: string, grant?: string}} */ (body);
}

class DeadlineError extends Error {
  /** @param {number} ms */
  constructor(ms) {
    super(`did not answer within ${ms} ms`);
    this.name = 'DeadlineError';
  }
}

class DaemonError extends Error {
  /** @param {string} message */
  constructor(message) {
    super(message);
    this.name = 'DaemonError';
  }
}

/**
 * @param {ReturnType<typeof validateOptions>} opts
 * @param {unknown} err
 */
function describeFailure(opts, err) {
  if (err instanceof DeadlineError || err instanceof DaemonError) {
    return `the airlock daemon at ${opts.url} ${err.message}`;
  }
  return `the airlock daemon at ${opts.url} is unreachable (${errorText(err)}); start it with 'airlock serve'`;
}

/** @param {unknown} err */
function errorText(err) {
  if (err instanceof Error) {
    const cause = /** @type {any} */ (err).cause;
    return cause instanceof Error ? `${err.message}: ${cause.message}` : err.message;
  }
  return String(err);
}

/** @param {string} text */
function errorDetail(text) {
  try {
    const body = JSON.parse(text);
    if (body && typeof body.error === 'string') {
      return `: ${clip(body.error)}${typeof body.code === 'string' ? ` (${body.code})` : ''}`;
    }
  } catch {
    // not the contract's error JSON; show the start of it
  }
  return text ? `: ${clip(text)}` : '';
}

/** @param {string} s */
function clip(s) {
  return s.length > 200 ? `${s.slice(0, 200)}…` : s;
}

/** @param {string} reason */
function prefixed(reason) {
  return `airlock: ${reason}`;
}

/** @param {{approvalId: string, toolCallId: string, toolName: string, input: unknown, providerExecuted?: boolean}} call */
function base(call) {
  return {
    approvalId: call.approvalId,
    toolCallId: call.toolCallId,
    toolName: call.toolName,
    input: call.input,
    ...(call.providerExecuted !== undefined ? { providerExecuted: call.providerExecuted } : {}),
  };
}

/**
 * @param {{approvalId: string, toolCallId: string, toolName: string, input: unknown}} call
 * @param {string} reason
 * @returns {AirlockDecision}
 */
function deny(call, reason) {
  return { ...base(call), approved: false, decision: 'deny', reason: prefixed(reason) };
}

/** @param {{rule?: string, approval_id?: string, grant?: string}} answer */
function extras(answer) {
  return {
    ...(answer.rule ? { rule: answer.rule } : {}),
    ...(answer.approval_id ? { airlockApprovalId: answer.approval_id } : {}),
    ...(answer.grant ? { grant: answer.grant } : {}),
  };
}
