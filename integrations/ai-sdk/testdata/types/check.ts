// Compiled (never run) by test/types.test.js with the pinned TypeScript:
// what airlock returns must be assignable where the real packages take it.
import { generateText, type ToolApprovalConfiguration, type ToolSet } from 'ai';
import type { HarnessAgentSandboxConfig, HarnessAgentSettings } from 'harness-122/agent';
import { airlockSandboxBootstrap, airlockToolApproval } from '../../src/index.js';

const daemon = { url: 'http://127.0.0.1:7420', token: 'alk_x', workspace: '/home/me/project' };

// @ai-sdk/harness: sandboxConfig takes bootstrapHash and onBootstrap as they are.
export const sandboxConfig: HarnessAgentSandboxConfig = {
  workDir: 'project',
  ...airlockSandboxBootstrap({ ...daemon, agent: 'harness', timeoutMs: 10_000 }),
};
export const settingsPart: Pick<HarnessAgentSettings, 'sandboxConfig'> = { sandboxConfig };

// ai: toolApproval takes the function form.
export const approval: ToolApprovalConfiguration<ToolSet, unknown> = airlockToolApproval(daemon);
export const call = (model: Parameters<typeof generateText>[0]['model']) =>
  generateText({ model, prompt: 'hi', tools: {}, toolApproval: airlockToolApproval(daemon) });
