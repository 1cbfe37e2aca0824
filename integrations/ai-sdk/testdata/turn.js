// Helpers that run a real HarnessAgent turn (either pinned version) up to
// its approval pause, with a scripted MockLanguageModelV4 as the runtime's
// model.
import { tool } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import { z } from 'zod';
import { createFixtureHarness, createLocalSandbox } from './fixture-harness.js';

export const VERSIONS = ['100', '122'];

export async function loadHarness(version) {
  return {
    root: await import(`harness-${version}`),
    agent: await import(`harness-${version}/agent`),
  };
}

const usage = { inputTokens: { total: 1 }, outputTokens: { total: 1 } };

/**
 * A model that calls `toolName` with `input` once, then answers with what
 * it saw as the tool's result (so a test can check the model saw a denial).
 */
export function scriptedModel(toolName, input) {
  return new MockLanguageModelV4({
    doGenerate: async ({ prompt }) => {
      const last = prompt.at(-1);
      if (last.role === 'tool') {
        return {
          content: [{ type: 'text', text: `model saw ${JSON.stringify(last.content[0].output)}` }],
          finishReason: { unified: 'stop' },
          usage,
          warnings: [],
        };
      }
      return {
        content: [{ type: 'tool-call', toolCallId: 'call-1', toolName, input: JSON.stringify(input) }],
        finishReason: { unified: 'tool-calls' },
        usage,
        warnings: [],
      };
    },
  });
}

/** The last tool result the model was shown. */
export function modelSaw(model) {
  const calls = model.doGenerateCalls;
  const last = calls.at(-1)?.prompt.at(-1);
  return last?.role === 'tool' ? last.content[0].output : undefined;
}

/** Custom Bash and Read tools that record their calls (they run nothing). */
export function recordingTools(ran) {
  return {
    Read: tool({
      description: 'Read a file',
      inputSchema: z.object({ file_path: z.string() }),
      execute: async ({ file_path }) => {
        ran.push(`read ${file_path}`);
        return { read: file_path };
      },
    }),
    Bash: tool({
      description: 'Run a shell command',
      inputSchema: z.object({ command: z.string() }),
      execute: async ({ command }) => {
        ran.push(command);
        return { ran: command };
      },
    }),
  };
}

/**
 * Starts a turn and reads it to its approval pause.
 * @returns the agent, session, pending stream parts and the run's records.
 */
export async function runToApproval({ version, model, tools, settings = {} }) {
  const h = await loadHarness(version);
  const { harness, log } = createFixtureHarness({ harnessModule: h.root, model });
  const agent = new h.agent.HarnessAgent({ harness, tools, ...settings });
  const sandbox = createLocalSandbox();
  const session = await agent.createSession({ sandboxSession: sandbox.session });
  const first = await agent.stream({ session, prompt: 'do the task' });
  const parts = [];
  for await (const p of first.fullStream) parts.push(p);
  const pending = parts.filter(p => p.type === 'tool-approval-request' && !p.isAutomatic);
  return { h, agent, session, sandbox, log, parts, pending };
}

/** Reads a continued turn to its end. */
export async function drain(result) {
  const parts = [];
  for await (const p of result.fullStream) parts.push(p);
  return parts;
}
