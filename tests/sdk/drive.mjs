// One @github/copilot-sdk session, driven by tests/sdk (no TTY: stdin is closed, stdout is a pipe).
//
//   node drive.mjs CONFIG.json
//
// CONFIG: { sdk: <the @github/copilot-sdk package folder>, cli: <Copilot CLI to run, or null for the SDK's bundled
// runtime>, cwd: <session working directory>, prompt, model, timeoutMs, adapter: <codeact-hooks.mjs, or null for no
// hooks>, adapterOptions: {...}, runtimeEnv: false to leave out codeactRuntimeEnv, session: {...extra options} }.
// The model is whatever the session's provider points at (the scripted mock). Prints one JSON object: the tool
// executions the session reported, the adapter's decisions, the final message, whether any stdio was a TTY, and
// any error.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const config = JSON.parse(readFileSync(process.argv[2], "utf8"));
const report = { tools: [], hookDecisions: [], message: null, error: null, events: [],
  tty: { stdin: Boolean(process.stdin.isTTY), stdout: Boolean(process.stdout.isTTY),
    stderr: Boolean(process.stderr.isTTY) } };
let client;
try {
  const sdk = await import(pathToFileURL(join(config.sdk, "dist", "index.js")).href);
  const { CopilotClient, RuntimeConnection, approveAll } = sdk;
  let codeact = {};
  let runtimeEnv;
  if (config.adapter) { // as docs/harnesses.md says: codeactRuntimeEnv for the client, codeactSession's options
    const adapter = await import(pathToFileURL(config.adapter).href);
    if (config.runtimeEnv !== false) runtimeEnv = adapter.codeactRuntimeEnv();
    codeact = adapter.codeactSession(config.adapterOptions ?? {});
    const { onPreToolUse } = codeact.hooks;
    codeact.hooks = {
      async onPreToolUse(input, invocation) { // record what the adapter answered, for the test to compare
        const decision = await onPreToolUse(input, invocation);
        report.hookDecisions.push({ toolName: input.toolName, decision: decision ?? null });
        return decision;
      },
    };
  }
  client = new CopilotClient({
    ...(config.cli ? { connection: RuntimeConnection.forStdio({ path: config.cli }) } : {}),
    workingDirectory: config.cwd,
    useLoggedInUser: false,
    ...(runtimeEnv ? { env: runtimeEnv } : {}),
    logLevel: "error",
  });
  await client.start();
  const session = await client.createSession({
    model: config.model,
    workingDirectory: config.cwd,
    enableConfigDiscovery: true,
    ...codeact,
    onPermissionRequest: approveAll,
    ...(config.session ?? {}),
  });
  session.on((event) => {
    report.events.push(event.type);
    if (event.type === "tool.execution_complete") {
      report.tools.push({ toolCallId: event.data.toolCallId, success: event.data.success,
        result: event.data.result?.content ?? null, error: event.data.error?.message ?? event.data.error ?? null });
    }
  });
  const answer = await session.sendAndWait({ prompt: config.prompt }, config.timeoutMs ?? 120000);
  report.message = answer?.data?.content ?? null;
  await session.disconnect();
} catch (error) {
  report.error = String(error?.stack ?? error);
} finally {
  if (client) {
    try {
      await client.stop();
    } catch (error) {
      report.error ??= `stop: ${error}`;
    }
  }
}
process.stdout.write(JSON.stringify(report) + "\n");
process.exit(0);
