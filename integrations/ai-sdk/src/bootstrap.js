// @ts-check
/**
 * airlockSandboxBootstrap: a per-call veto for the harness's built-in
 * tools. The harness runs Claude Code (or another agent honouring Claude
 * Code's hooks) in a sandbox VM; onBootstrap writes a PreToolUse hook
 * there that asks the airlock daemon about every call.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { posix } from 'node:path';

/** Bumped when what onBootstrap writes changes shape. */
const BOOTSTRAP_VERSION = 1;
const HOOK_FILE = 'airlock-hook.mjs';
const CONFIG_FILE = 'airlock-hook.json';

/** @type {string | undefined} */
let hookSource;
function hookScript() {
  hookSource ??= readFileSync(new URL('./hook.mjs', import.meta.url), 'utf8');
  return hookSource;
}

/**
 * @param {import('./index.js').AirlockSandboxBootstrapOptions} options
 */
function validateBootstrapOptions(options) {
  const what = 'airlockSandboxBootstrap';
  if (options == null || typeof options !== 'object') {
    throw new TypeError(`${what}: pass {url, token, workspace}`);
  }
  const { url, token, workspace } = options;
  if (typeof url !== 'string' || !/^https?:\/\//.test(url)) {
    throw new TypeError(`${what}: url must be the daemon's http(s) address as the sandbox reaches it (got ${JSON.stringify(url)})`);
  }
  if (typeof token !== 'string' || token === '') {
    throw new TypeError(`${what}: token is required (make one with 'airlock serve token create')`);
  }
  if (typeof workspace !== 'string' || !workspace.startsWith('/')) {
    throw new TypeError(`${what}: workspace must be the absolute path, on the daemon's machine, whose policy applies`);
  }
  const bootstrapDir = options.bootstrapDir ?? '.airlock/hooks';
  const norm = typeof bootstrapDir === 'string' ? posix.normalize(bootstrapDir) : '';
  if (norm === '' || norm === '.' || posix.isAbsolute(norm) || norm === '..' || norm.startsWith('../') || norm.includes('\0')) {
    throw new TypeError(`${what}: bootstrapDir must be a relative directory inside workDir (got ${JSON.stringify(bootstrapDir)})`);
  }
  const timeoutMs = options.timeoutMs ?? 30_000;
  if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) {
    throw new TypeError(`${what}: timeoutMs must be a positive number of milliseconds`);
  }
  if (options.agent != null && typeof options.agent !== 'string') {
    throw new TypeError(`${what}: agent must be a string`);
  }
  return { url: url.replace(/\/+$/, ''), token, workspace, bootstrapDir: norm, agent: options.agent ?? '', timeoutMs };
}

/**
 * Returns the `bootstrapHash` and `onBootstrap` of
 * `HarnessAgentSettings.sandboxConfig`.
 *
 * @param {import('./index.js').AirlockSandboxBootstrapOptions} options
 * @returns {import('./index.js').AirlockSandboxBootstrap}
 */
export function airlockSandboxBootstrap(options) {
  const opts = validateBootstrapOptions(options);
  // The hash names everything onBootstrap writes: the options (the token
  // among them, as its hash only) and the hook's own code.
  const bootstrapHash = createHash('sha256')
    .update(
      JSON.stringify([
        BOOTSTRAP_VERSION,
        opts.url,
        createHash('sha256').update(opts.token).digest('hex'),
        opts.workspace,
        opts.bootstrapDir,
        opts.agent,
        opts.timeoutMs,
        createHash('sha256').update(hookScript()).digest('hex'),
      ]),
    )
    .digest('hex');

  /**
   * @param {{ session: import('./index.js').AirlockBootstrapSession, workDir: string, abortSignal?: AbortSignal }} args
   */
  async function onBootstrap({ session, workDir, abortSignal }) {
    if (session == null || typeof session.writeTextFile !== 'function' || typeof session.readTextFile !== 'function' || typeof session.run !== 'function') {
      throw new TypeError('airlockSandboxBootstrap: onBootstrap needs the sandbox session (writeTextFile, readTextFile, run)');
    }
    if (typeof workDir !== 'string' || !workDir.startsWith('/')) {
      throw new TypeError(`airlockSandboxBootstrap: onBootstrap needs the absolute workDir (got ${JSON.stringify(workDir)})`);
    }
    const dir = posix.join(workDir, opts.bootstrapDir);
    const script = posix.join(dir, HOOK_FILE);
    await session.writeTextFile({ path: script, content: hookScript(), abortSignal });
    const config = {
      url: opts.url,
      token: opts.token,
      workspace: opts.workspace,
      workDir: posix.normalize(workDir),
      agent: opts.agent,
      timeoutMs: opts.timeoutMs,
    };
    await session.writeTextFile({ path: posix.join(dir, CONFIG_FILE), content: JSON.stringify(config, null, 2) + '\n', abortSignal });
    // Claude Code's own deadline (seconds) is a little past the hook's,
    // so the hook's clearer message wins; onFailure blocks either way.
    const entry = {
      type: 'command',
      command: 'node',
      args: [script],
      timeout: Math.ceil(opts.timeoutMs / 1000) + 5,
      onFailure: 'block',
    };
    const home = await sandboxHome(session, abortSignal);
    const files = [posix.join(workDir, '.claude', 'settings.json')];
    if (home) files.push(posix.join(home, '.claude', 'settings.json'));
    for (const file of [...new Set(files)]) {
      const before = await session.readTextFile({ path: file, abortSignal });
      await session.writeTextFile({ path: file, content: mergeHookSettings(before, entry, file), abortSignal });
    }
  }

  return { bootstrapHash, onBootstrap };
}

/**
 * The sandbox user's home directory, as its shell sees it.
 * @param {import('./index.js').AirlockBootstrapSession} session
 * @param {AbortSignal | undefined} abortSignal
 */
async function sandboxHome(session, abortSignal) {
  const r = await session.run({ command: 'printf %s "$HOME"', abortSignal });
  if (r.exitCode !== 0) {
    throw new Error(`airlockSandboxBootstrap: cannot find the sandbox user's home directory (exit ${r.exitCode}: ${r.stderr})`);
  }
  const home = r.stdout.trim();
  return home.startsWith('/') ? home : '';
}

/**
 * Merges airlock's PreToolUse hook into Claude Code settings text (null
 * when the file does not exist): every other setting and hook stays; an
 * earlier airlock entry for the same script is replaced, so bootstrapping
 * twice leaves one.
 *
 * @param {string | null} text
 * @param {{type: 'command', command: string, args: string[], timeout: number, onFailure: 'block'}} entry
 * @param {string} [file] named in errors
 * @returns {string}
 */
export function mergeHookSettings(text, entry, file = 'settings.json') {
  /** @type {any} */
  let settings = {};
  if (text != null && text.trim() !== '') {
    try {
      settings = JSON.parse(text);
    } catch (err) {
      throw new Error(`airlockSandboxBootstrap: ${file} is not JSON (${/** @type {Error} */ (err).message}); fix or remove it`);
    }
    if (settings == null || typeof settings !== 'object' || Array.isArray(settings)) {
      throw new Error(`airlockSandboxBootstrap: ${file} is not a JSON object; fix or remove it`);
    }
  }
  const hooks = settings.hooks ?? {};
  if (typeof hooks !== 'object' || Array.isArray(hooks)) {
    throw new Error(`airlockSandboxBootstrap: "hooks" in ${file} is not an object; fix or remove it`);
  }
  const pre = hooks.PreToolUse ?? [];
  if (!Array.isArray(pre)) {
    throw new Error(`airlockSandboxBootstrap: "hooks.PreToolUse" in ${file} is not a list; fix or remove it`);
  }
  const script = entry.args[0];
  const isOurs = (/** @type {any} */ h) => h != null && h.type === 'command' && Array.isArray(h.args) && h.args[0] === script;
  // A group left empty by taking airlock's entry out goes; any other stays
  // as it was.
  const kept = pre.flatMap(group => {
    if (group == null || !Array.isArray(group.hooks) || !group.hooks.some(isOurs)) return [group];
    const rest = group.hooks.filter((/** @type {any} */ h) => !isOurs(h));
    return rest.length > 0 ? [{ ...group, hooks: rest }] : [];
  });
  settings.hooks = { ...hooks, PreToolUse: [...kept, { matcher: '*', hooks: [entry] }] };
  return JSON.stringify(settings, null, 2) + '\n';
}
