// A real MCP client on the official TypeScript SDK, driven by the Go tests
// of integrations/mcp. Usage:
//
//   node client.mjs stdio AIRLOCK_BIN WORKSPACE [airlock flags...]
//   node client.mjs http URL TOKEN
//
// It connects with the elicitation capability (answering "accept" to every
// question, and recording it), runs the script of calls in SCRIPT (JSON on
// stdin: [{"name": ..., "arguments": {...}}, ...]) and prints one JSON
// object: the tool list and each call's result.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { readFileSync } from "node:fs";

const [mode, target, ...rest] = process.argv.slice(2);
const script = JSON.parse(readFileSync(0, "utf8"));

const client = new Client({ name: "airlock-ts-test", version: "1.0.0" }, { capabilities: { elicitation: {} } });
const elicitations = [];
client.setRequestHandler(ElicitRequestSchema, async (req) => {
  elicitations.push(req.params.message);
  return { action: "accept", content: { approve: true } };
});

let transport;
if (mode === "stdio") {
  transport = new StdioClientTransport({ command: target, args: rest, stderr: "inherit" });
} else {
  transport = new StreamableHTTPClientTransport(new URL(target), {
    requestInit: { headers: { Authorization: `Bearer ${rest[0]}` } },
  });
}
await client.connect(transport);

const tools = (await client.listTools()).tools.map((t) => ({
  name: t.name,
  properties: Object.keys(t.inputSchema.properties ?? {}).sort(),
  required: (t.inputSchema.required ?? []).sort(),
}));
const results = [];
for (const call of script) {
  const before = elicitations.length;
  const res = await client.callTool({ name: call.name, arguments: call.arguments });
  results.push({
    isError: res.isError ?? false,
    text: res.content.filter((c) => c.type === "text").map((c) => c.text).join("\n"),
    structured: res.structuredContent ?? null,
    elicited: elicitations.length - before,
  });
}
console.log(JSON.stringify({ protocol: transport.protocolVersion ?? null, tools, results }));
await client.close();
