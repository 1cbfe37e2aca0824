// @ts-check
/**
 * airlockToolApproval: the function form of the `ai` package's per-call
 * `toolApproval` setting (generateText, streamText, ToolLoopAgent), which
 * asks the airlock daemon about every tool call before it runs.
 */
import { createAirlockResponder } from './index.js';

/**
 * Returns a `GenericToolApprovalFunction` for `toolApproval`: each call is
 * sent to the daemon's /v1/decide; an allow is `{type: 'approved'}`, and
 * anything else (a deny, a question nobody answered within the wait, an
 * unreachable or misbehaving daemon) is `{type: 'denied'}` with the
 * reason, which the model sees.
 *
 * @param {import('./index.js').AirlockToolApprovalOptions} options
 * @returns {(options: { toolCall: { toolCallId: string, toolName: string, input: unknown } }) => Promise<import('./index.js').AirlockToolApprovalStatus>}
 */
export function airlockToolApproval(options) {
  const responder = createAirlockResponder({ ...options, shape: 'parts' });
  return async ({ toolCall }) => {
    if (toolCall == null || typeof toolCall !== 'object') {
      return { type: 'denied', reason: 'airlock: the approval request carries no tool call' };
    }
    const d = await responder.decide({
      approvalId: toolCall.toolCallId || 'ai-tool-call',
      toolCall: { toolCallId: toolCall.toolCallId, toolName: toolCall.toolName, input: toolCall.input },
    });
    return d.approved ? { type: 'approved', reason: d.reason } : { type: 'denied', reason: d.reason };
  };
}
