// @ts-check
/**
 * The two shapes `@ai-sdk/harness` has used for the approval decisions that
 * continue a paused turn (`agent.continueStream({toolApprovalContinuations})`
 * and friends):
 *
 * - up to 1.0.100: `{approvalResponse: ToolApprovalResponse, toolCall}`;
 * - from 1.0.101: the bare `ToolApprovalResponse` part
 *   `{type: 'tool-approval-response', approvalId, approved, reason?}`.
 *
 * Both versions read their fields by name and ignore the rest, so one object
 * carrying both sets of fields is accepted by either ("both", the default
 * when the installed harness cannot be inspected).
 */

/**
 * Builds the continuation element for one decision.
 *
 * @param {{approvalId: string, approved: boolean, reason?: string, toolCallId: string, toolName: string, input: unknown, providerExecuted?: boolean}} d
 * @param {'legacy' | 'parts' | 'both'} shape
 */
export function toContinuation(d, shape) {
  const part = {
    type: /** @type {const} */ ('tool-approval-response'),
    approvalId: d.approvalId,
    approved: d.approved,
    ...(d.reason !== undefined ? { reason: d.reason } : {}),
  };
  if (shape === 'parts') return part;
  const legacy = {
    approvalResponse: part,
    toolCall: {
      type: /** @type {const} */ ('tool-call'),
      toolCallId: d.toolCallId,
      toolName: d.toolName,
      input: d.input,
      ...(d.providerExecuted !== undefined ? { providerExecuted: d.providerExecuted } : {}),
    },
  };
  if (shape === 'legacy') return legacy;
  return { ...part, ...legacy };
}

/**
 * Tells which continuation shape an installed harness expects by running
 * its own `collectHarnessAgentToolApprovalContinuations` on a one-call
 * conversation and looking at what comes out. Pass the module
 * `@ai-sdk/harness/agent` (or `@ai-sdk/harness`) exports.
 *
 * @param {any} harnessModule
 * @returns {'legacy' | 'parts' | 'both'}
 */
export function detectContinuationShape(harnessModule) {
  const collect = harnessModule?.collectHarnessAgentToolApprovalContinuations;
  if (typeof collect !== 'function') return 'both';
  let out;
  try {
    out = collect({
      messages: [
        {
          role: 'assistant',
          content: [
            { type: 'tool-call', toolCallId: 'c1', toolName: 't', input: {} },
            { type: 'tool-approval-request', approvalId: 'a1', toolCallId: 'c1' },
          ],
        },
        {
          role: 'tool',
          content: [{ type: 'tool-approval-response', approvalId: 'a1', approved: false }],
        },
      ],
    });
  } catch {
    return 'both';
  }
  const first = Array.isArray(out) ? out[0] : undefined;
  if (first?.approvalResponse?.approvalId === 'a1' && first?.toolCall?.toolCallId === 'c1') {
    return 'legacy';
  }
  if (first?.type === 'tool-approval-response' && first?.approvalId === 'a1') {
    return 'parts';
  }
  return 'both';
}
