// @ts-check
/**
 * Harness settings that keep airlock in the loop: every custom tool needs an
 * approval, built-in tools run under a permission mode that asks before
 * anything but edits, bash is off unless asked for, and the sandbox's
 * network is closed except for the hosts named.
 */

/** Cloud metadata endpoints (AWS/GCP/Azure IPv4, AWS IPv6): never reachable. */
export const METADATA_CIDRS = Object.freeze(['169.254.169.254/32', 'fd00:ec2::254/128']);

/**
 * Marks every custom tool `user-approval`, so the harness pauses the turn
 * for each call and the responder can ask airlock; tools on the deny list
 * are `denied` outright (the harness submits an execution-denied result
 * without asking). Deny-listed names need not be in `tools`: a tool added
 * later under that name is still denied.
 *
 * @param {Record<string, unknown> | readonly string[]} tools
 * @param {{ deny?: readonly string[], reason?: string }} [options]
 */
export function airlockStaticApprovals(tools, options = {}) {
  const names = Array.isArray(tools) ? tools : Object.keys(tools ?? {});
  const denyList = options.deny ?? [];
  if (!Array.isArray(denyList) || denyList.some(n => typeof n !== 'string' || n === '')) {
    throw new TypeError('airlockStaticApprovals: deny must be a list of tool names');
  }
  const deny = new Set(denyList);
  const reason = options.reason ?? 'denied by the airlock deny list';
  /** @type {Record<string, 'user-approval' | { type: 'denied', reason: string }>} */
  const out = {};
  for (const name of names) {
    if (typeof name !== 'string' || name === '') {
      throw new TypeError('airlockStaticApprovals: tool names must be non-empty strings');
    }
    out[name] = deny.has(name) ? { type: 'denied', reason } : 'user-approval';
  }
  for (const name of deny) out[name] = { type: 'denied', reason };
  return out;
}

const PERMISSION_MODES = new Set(['allow-reads', 'allow-edits']);

/**
 * Settings to spread into `new HarnessAgent({...})` (permissionMode,
 * inactiveTools) plus the network policy for the sandbox session
 * (`sandboxSession.setNetworkPolicy?.(networkPolicy)` or the sandbox
 * provider's own option). Never `allow-all`, for tools or for the network.
 *
 * @param {{ hosts?: readonly string[], allowBash?: boolean, permissionMode?: 'allow-reads' | 'allow-edits' }} [options]
 */
export function recommendedSettings(options = {}) {
  const permissionMode = options.permissionMode ?? 'allow-edits';
  if (!PERMISSION_MODES.has(permissionMode)) {
    throw new TypeError(
      `recommendedSettings: permissionMode must be 'allow-reads' or 'allow-edits' (got ${JSON.stringify(permissionMode)}); 'allow-all' would run every built-in tool without asking`,
    );
  }
  const hosts = options.hosts ?? [];
  if (!Array.isArray(hosts)) {
    throw new TypeError('recommendedSettings: hosts must be a list of host names');
  }
  for (const h of hosts) {
    if (typeof h !== 'string' || h.trim() === '' || h.trim() === '*' || /\s/.test(h)) {
      throw new TypeError(
        `recommendedSettings: ${JSON.stringify(h)} is not a host name; list the hosts the agent may reach (a bare '*' would allow everything)`,
      );
    }
    if (METADATA_CIDRS.some(c => c.split('/')[0] === h.replace(/^\[|\]$/g, ''))) {
      throw new TypeError(`recommendedSettings: ${h} is a cloud metadata address and stays denied`);
    }
  }
  /** @type {{mode: 'deny-all'} | {mode: 'custom', allowedHosts: string[], deniedCIDRs: string[]}} */
  const networkPolicy =
    hosts.length === 0
      ? { mode: 'deny-all' }
      : { mode: 'custom', allowedHosts: [...new Set(hosts)], deniedCIDRs: [...METADATA_CIDRS] };
  return {
    permissionMode,
    ...(options.allowBash ? {} : { inactiveTools: ['bash'] }),
    networkPolicy,
  };
}
