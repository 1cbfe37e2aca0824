// airlockStaticApprovals and recommendedSettings, on their own and inside
// real HarnessAgent turns of both pinned versions.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { airlockStaticApprovals, METADATA_CIDRS, recommendedSettings } from '../src/index.js';
import { modelSaw, recordingTools, runToApproval, scriptedModel, VERSIONS } from '../testdata/turn.js';

describe('recommendedSettings', () => {
  test('defaults: allow-edits, bash inactive, network deny-all', () => {
    assert.deepEqual(recommendedSettings(), {
      permissionMode: 'allow-edits',
      inactiveTools: ['bash'],
      networkPolicy: { mode: 'deny-all' },
    });
  });

  test('hosts: only those allowed, the metadata CIDRs always denied; allowBash keeps bash', () => {
    const s = recommendedSettings({ hosts: ['registry.npmjs.org', 'registry.npmjs.org'], allowBash: true });
    assert.deepEqual(s, {
      permissionMode: 'allow-edits',
      networkPolicy: { mode: 'custom', allowedHosts: ['registry.npmjs.org'], deniedCIDRs: ['169.254.169.254/32', 'fd00:ec2::254/128'] },
    });
    assert.deepEqual([...METADATA_CIDRS], s.networkPolicy.deniedCIDRs);
  });

  test('never allow-all, no wildcard host, no metadata host', () => {
    assert.throws(() => recommendedSettings({ permissionMode: 'allow-all' }), /allow-all/);
    assert.throws(() => recommendedSettings({ hosts: ['*'] }), /allow everything/);
    assert.throws(() => recommendedSettings({ hosts: ['169.254.169.254'] }), /metadata/);
    assert.throws(() => recommendedSettings({ hosts: ['a b'] }), /not a host name/);
    assert.equal(recommendedSettings({ permissionMode: 'allow-reads' }).permissionMode, 'allow-reads');
  });
});

describe('airlockStaticApprovals', () => {
  test('every custom tool user-approval; the deny list denied outright, listed or not', () => {
    assert.deepEqual(airlockStaticApprovals({ a: {}, b: {} }, { deny: ['b', 'later'] }), {
      a: 'user-approval',
      b: { type: 'denied', reason: 'denied by the airlock deny list' },
      later: { type: 'denied', reason: 'denied by the airlock deny list' },
    });
    assert.deepEqual(airlockStaticApprovals(['x']), { x: 'user-approval' });
    assert.throws(() => airlockStaticApprovals({ a: {} }, { deny: [''] }), /deny must be/);
  });
});

// A continuation the harness does not accept leaves the turn waiting for
// ever: the deadline turns that into a failure.
const T = { timeout: 90_000 };

for (const version of VERSIONS) {
  describe(`inside @ai-sdk/harness 1.0.${version}`, () => {
    test('recommendedSettings(): the harness denies built-in bash itself; it never runs', T, async () => {
      const model = scriptedModel('bash', { command: 'touch marker' });
      const t = await runToApproval({ version, model, tools: {}, settings: agentPart(recommendedSettings()) });
      // The runtime asked; the harness's own filtering answered no.
      assert.deepEqual(t.log.starts[0].builtinToolFiltering, { mode: 'deny', toolNames: ['bash'] });
      assert.equal(t.log.starts[0].permissionMode, 'allow-edits');
      assert.deepEqual(t.log.submittedApprovals.map(a => a.approved), [false]);
      assert.equal(t.pending.length, 0);
      assert.equal(existsSync(join(t.sandbox.session.defaultWorkingDirectory, `airlock-fixture-${t.session.sessionId}`, 'marker')), false);
      assert.equal(modelSaw(model)?.type, 'execution-denied');
      await t.session.destroy();
    });

    test('a deny-listed custom tool is denied without asking; the others pause for approval', T, async () => {
      const ran = [];
      const tools = recordingTools(ran);
      const model = scriptedModel('Bash', { command: 'ls' });
      const t = await runToApproval({ version, model, tools, settings: { toolApproval: airlockStaticApprovals(tools, { deny: ['Bash'] }) } });
      assert.equal(t.pending.length, 0, 'no approval is asked for');
      assert.deepEqual(ran, []);
      const saw = modelSaw(model);
      assert.deepEqual(saw, { type: 'execution-denied', reason: 'denied by the airlock deny list' });
      await t.session.destroy();

      // Positive control: without the deny list the same call pauses.
      const t2 = await runToApproval({ version, model: scriptedModel('Bash', { command: 'ls' }), tools, settings: { toolApproval: airlockStaticApprovals(tools) } });
      assert.equal(t2.pending.length, 1);
      await t2.session.destroy();
    });
  });
}

function agentPart(s) {
  const { networkPolicy: _n, ...agent } = s;
  return agent;
}
