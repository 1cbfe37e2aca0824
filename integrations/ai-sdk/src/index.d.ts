// Types for @airlockhq/ai-sdk (the code is plain ESM JavaScript in src/).
// Structural on purpose: they match both @ai-sdk/harness 1.0.100 and
// 1.0.122 without importing either, so no particular version is required
// to type-check a caller.

/** Options of {@link createAirlockResponder}. */
export interface AirlockResponderOptions {
  /** The daemon's address, e.g. `http://127.0.0.1:7420`. */
  url: string;
  /** A token from `airlock serve token create`. */
  token: string;
  /** Absolute path of the workspace the agent works in. */
  workspace: string;
  /** Agent name the daemon records and matches rules on. */
  agent?: string;
  /** Session id the daemon records. */
  session?: string;
  /**
   * Deadline for one decision, in milliseconds (default 60000). A daemon
   * that has not answered by then is a denial.
   */
  timeoutMs?: number;
  /**
   * How long the daemon holds an `ask` for a person (sent as `wait`);
   * defaults to a little under `timeoutMs`, and must be below it.
   */
  waitMs?: number;
  /** The fetch to use (default: the global fetch). */
  fetch?: typeof globalThis.fetch;
  /**
   * Continuation shape: `'auto'` (default) detects it from `harness` or an
   * importable `@ai-sdk/harness/agent`, else uses `'both'`.
   */
  shape?: 'auto' | ContinuationShape;
  /** The `@ai-sdk/harness/agent` module, for shape detection. */
  harness?: unknown;
  /**
   * The tool name the daemon decides the call as (its vocabulary is Claude
   * Code's: Bash, Read, Write, Edit, Glob, Grep, WebFetch, mcp__server__tool).
   * Default: the harness built-ins in BUILTIN_TOOL_NAMES mapped, others as is
   * (a name the daemon cannot read is denied there).
   */
  mapTool?: (toolName: string, input: unknown) => string;
}

/** Harness built-in common names → the daemon's tool names. */
export const BUILTIN_TOOL_NAMES: Readonly<Record<'bash' | 'read' | 'write' | 'edit' | 'grep' | 'glob' | 'webSearch', string>>;

/** `'legacy'`: up to 1.0.100; `'parts'`: 1.0.101 on; `'both'`: accepted by either. */
export type ContinuationShape = 'legacy' | 'parts' | 'both';

/** A tool-approval request as the AI SDK stream carries it. */
export interface ToolApprovalRequestPart {
  type: 'tool-approval-request';
  approvalId: string;
  toolCall: {
    toolCallId: string;
    toolName: string;
    input: unknown;
    providerExecuted?: boolean;
  };
  isAutomatic?: boolean;
}

/** A suspended session's pending approval (`continueFrom.pendingToolApprovals[i]`). */
export interface SuspendedToolApprovalRow {
  approvalId: string;
  toolCallId: string;
  toolName: string;
  /** JSON text; unparsable text is denied. */
  input: string | unknown;
  kind?: 'builtin' | 'custom';
  providerExecuted?: boolean;
  nativeName?: string;
}

export type PendingToolApproval = ToolApprovalRequestPart | SuspendedToolApprovalRow;

/** The daemon's answer for one call, already reduced to approve or not. */
export interface AirlockDecision {
  approvalId: string;
  toolCallId: string;
  toolName: string;
  input: unknown;
  providerExecuted?: boolean;
  approved: boolean;
  /** What the daemon said (`'ask'`: nobody answered in time, so denied). */
  decision: 'allow' | 'deny' | 'ask';
  /** Always set; starts with `airlock: `. */
  reason: string;
  rule?: string;
  /** The daemon's approval id, when a person was asked. */
  airlockApprovalId?: string;
  grant?: string;
}

/** `ToolApprovalResponse` of @ai-sdk/provider-utils (the 1.0.101+ element). */
export interface ToolApprovalResponsePart {
  type: 'tool-approval-response';
  approvalId: string;
  approved: boolean;
  reason?: string;
}

/** The up-to-1.0.100 element. */
export interface LegacyToolApprovalContinuation {
  approvalResponse: ToolApprovalResponsePart;
  toolCall: {
    type: 'tool-call';
    toolCallId: string;
    toolName: string;
    input: unknown;
    providerExecuted?: boolean;
  };
}

export type ToolApprovalContinuation =
  | ToolApprovalResponsePart
  | LegacyToolApprovalContinuation
  | (ToolApprovalResponsePart & LegacyToolApprovalContinuation);

export interface AirlockResponder {
  /** Asks the daemon about one call. Resolves to a denial on any daemon problem. */
  decide(request: PendingToolApproval): Promise<AirlockDecision>;
  /**
   * Decides each request; returns elements for
   * `agent.continueStream/continueGenerate({toolApprovalContinuations})`.
   * When `session.submitToolApproval` exists, each decision is submitted
   * there too.
   */
  respond(
    requests: PendingToolApproval | readonly PendingToolApproval[],
    options?: {
      session?: {
        submitToolApproval?(input: { approvalId: string; approved: boolean; reason?: string }): PromiseLike<void>;
      };
    },
  ): Promise<any[]>;
  /** The shape `respond` produces. */
  shape(): Promise<ContinuationShape>;
}

export function createAirlockResponder(options: AirlockResponderOptions): AirlockResponder;

export function detectContinuationShape(harnessAgentModule: unknown): ContinuationShape;

export type AirlockToolApproval = 'user-approval' | { type: 'denied'; reason: string };

export function airlockStaticApprovals(
  tools: Record<string, unknown> | readonly string[],
  options?: { deny?: readonly string[]; reason?: string },
): Record<string, AirlockToolApproval>;

export type AirlockNetworkPolicy =
  | { mode: 'deny-all' }
  | { mode: 'custom'; allowedHosts: string[]; deniedCIDRs: string[] };

export function recommendedSettings(options?: {
  hosts?: readonly string[];
  allowBash?: boolean;
  permissionMode?: 'allow-reads' | 'allow-edits';
}): {
  permissionMode: 'allow-reads' | 'allow-edits';
  inactiveTools?: ['bash'];
  networkPolicy: AirlockNetworkPolicy;
};

export const METADATA_CIDRS: readonly string[];

/** Options of {@link airlockSandboxBootstrap}. */
export interface AirlockSandboxBootstrapOptions {
  /** The daemon's address as the sandbox VM reaches it. */
  url: string;
  /**
   * A token from `airlock serve token create`. It is written into the
   * sandbox, where the agent can read it: see the README's caveat.
   */
  token: string;
  /** The daemon-side workspace whose policy decides the calls. */
  workspace: string;
  /** Where the hook goes, relative to `workDir` (default `.airlock/hooks`). */
  bootstrapDir?: string;
  /** Agent name the daemon records and matches rules on. */
  agent?: string;
  /**
   * Deadline for one decision, in milliseconds (default 30000). A daemon
   * slower than this blocks the call.
   */
  timeoutMs?: number;
}

/** The sandbox session methods onBootstrap uses (`Experimental_SandboxSession` of @ai-sdk/provider-utils). */
export interface AirlockBootstrapSession {
  readTextFile(options: { path: string; abortSignal?: AbortSignal }): PromiseLike<string | null>;
  writeTextFile(options: { path: string; content: string; abortSignal?: AbortSignal }): PromiseLike<void>;
  run(options: { command: string; env?: Record<string, string>; abortSignal?: AbortSignal }): PromiseLike<{
    exitCode: number;
    stdout: string;
    stderr: string;
  }>;
}

/** The two fields of `HarnessAgentSettings.sandboxConfig` airlock fills. */
export interface AirlockSandboxBootstrap {
  /** The same for the same options (and hook code); changes when any changes. */
  readonly bootstrapHash: string;
  /**
   * Writes the hook script and its configuration under
   * `workDir/bootstrapDir` and registers it as a PreToolUse hook (matcher
   * `*`, `onFailure: "block"`) in `workDir/.claude/settings.json` and
   * `$HOME/.claude/settings.json`, keeping what else is there.
   */
  readonly onBootstrap: (opts: {
    readonly session: AirlockBootstrapSession;
    readonly workDir: string;
    readonly abortSignal?: AbortSignal;
  }) => Promise<void>;
}

export function airlockSandboxBootstrap(options: AirlockSandboxBootstrapOptions): AirlockSandboxBootstrap;

/** The hook entry airlock registers. */
export interface AirlockHookEntry {
  type: 'command';
  command: string;
  args: string[];
  timeout: number;
  onFailure: 'block';
}

/** Merges airlock's hook into Claude Code settings text (null: no file yet). */
export function mergeHookSettings(text: string | null, entry: AirlockHookEntry, file?: string): string;

/** Options of {@link airlockToolApproval}: the responder's, without the harness-only ones. */
export type AirlockToolApprovalOptions = Omit<AirlockResponderOptions, 'shape' | 'harness'>;

/** The `ToolApprovalStatus` values airlockToolApproval returns. */
export type AirlockToolApprovalStatus = { type: 'approved'; reason: string } | { type: 'denied'; reason: string };

/**
 * The function form of the `ai` package's `toolApproval` (its
 * `GenericToolApprovalFunction`): asks the daemon about each call; only an
 * allow approves it.
 */
export function airlockToolApproval(
  options: AirlockToolApprovalOptions,
): (options: { toolCall: { toolCallId: string; toolName: string; input: unknown } }) => Promise<AirlockToolApprovalStatus>;
