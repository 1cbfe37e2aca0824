// The official TypeScript SDK client in front of "airlock mcp proxy",
// driving the proxy's live relay. Usage:
//
//   node live.mjs MARKER AIRLOCK_BIN [airlock flags...]
//
// It prints one JSON object with what it saw (see TestProxyRelaysLive).
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
  PromptListChangedNotificationSchema,
  ResourceListChangedNotificationSchema,
  ResourceUpdatedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { existsSync } from "node:fs";

const [marker, bin, ...args] = process.argv.slice(2);
const out = { progress: [], updates: [], listChanged: { resources: 0, prompts: 0 }, samplingSeen: [], approvals: [], personAsked: [] };
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const text = (res) => res.content.filter((c) => c.type === "text").map((c) => c.text).join("\n");

// waitFor polls until cond holds, for notifications that arrive on their own.
async function waitFor(cond, what) {
  for (let i = 0; i < 200; i++) {
    if (cond()) return;
    await sleep(50);
  }
  throw new Error("timed out waiting for " + what);
}

const client = new Client(
  { name: "airlock-ts-live", version: "1.0.0" },
  { capabilities: { elicitation: {}, sampling: {}, roots: { listChanged: true } } },
);
client.setRequestHandler(CreateMessageRequestSchema, async (req) => {
  out.samplingSeen.push(req.params.systemPrompt ?? "");
  return { model: "test-model", role: "assistant", content: { type: "text", text: "from the client's model" } };
});
// airlock's own questions carry an "approve" field; the downstream
// server's carry "name".
client.setRequestHandler(ElicitRequestSchema, async (req) => {
  if (req.params.requestedSchema?.properties?.approve) {
    out.approvals.push(req.params.message);
    return { action: "accept", content: { approve: true } };
  }
  out.personAsked.push(req.params.message);
  return { action: "accept", content: { name: "Pat" } };
});
client.setRequestHandler(ListRootsRequestSchema, async () => ({ roots: [{ uri: "file:///projects/demo", name: "demo" }] }));
client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => out.updates.push(n.params.uri));
client.setNotificationHandler(ResourceListChangedNotificationSchema, () => out.listChanged.resources++);
client.setNotificationHandler(PromptListChangedNotificationSchema, () => out.listChanged.prompts++);

await client.connect(new StdioClientTransport({ command: bin, args, stderr: "inherit" }));

// Progress of a relayed call reaches the client under its own token.
await client.callTool({ name: "slow", arguments: {} }, undefined, {
  onprogress: (p) => out.progress.push(p.progress),
});

// Cancelling a call reaches the downstream server.
const abort = new AbortController();
const pending = client.callTool({ name: "slow", arguments: { wait: true, marker } }, undefined, {
  signal: abort.signal,
  onprogress: () => abort.abort("abort after the first progress"),
});
try {
  await pending;
  out.cancelled = "the call ended without being cancelled";
} catch (e) {
  out.cancelled = String(e);
}
await waitFor(() => existsSync(marker), "the downstream server to see the cancellation");

// Subscriptions: one update while subscribed, none after.
await client.subscribeResource({ uri: "test://greeting" });
await client.callTool({ name: "touch", arguments: {} });
await waitFor(() => out.updates.length === 1, "resources/updated");
await client.unsubscribeResource({ uri: "test://greeting" });
await client.callTool({ name: "touch", arguments: {} });
await sleep(500);

// Lists that change downstream change at the proxy.
await client.callTool({ name: "grow", arguments: {} });
await waitFor(() => out.listChanged.resources > 0 && out.listChanged.prompts > 0, "list_changed");
await sleep(200);
out.resourcesAfter = (await client.listResources()).resources.map((r) => r.uri);
out.promptsAfter = (await client.listPrompts()).prompts.map((p) => p.name);

out.completions = (await client.complete({ ref: { type: "ref/prompt", name: "greet" }, argument: { name: "name", value: "al" } }))
  .completion.values;

// The downstream server's own requests, through the gate.
out.sampled = text(await client.callTool({ name: "sample", arguments: { system: "be brief" } }));
out.sampleDenied = text(await client.callTool({ name: "sample", arguments: { system: "tell me a secret" } }));
out.sampleAsked = text(await client.callTool({ name: "sample", arguments: { system: "a costly answer" } }));
out.askDenied = text(await client.callTool({ name: "ask_person", arguments: { message: "Your password, please" } }));
out.asked = text(await client.callTool({ name: "ask_person", arguments: {} }));
out.roots = text(await client.callTool({ name: "roots", arguments: {} }));

console.log(JSON.stringify(out));
await client.close();
