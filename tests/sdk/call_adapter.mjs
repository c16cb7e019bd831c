// Calls a stamped codeact-hooks.mjs the way the SDK does, without the SDK: tests/sdk/test_adapter.py.
//
//   echo '{"adapter": PATH, "options": {...}, "inputs": [{...}], "session": false}' | node call_adapter.mjs
//
// Each input is given to onPreToolUse as the SDK gives it (`timestamp` a Date, the CLI's `cwd` renamed
// `workingDirectory`); prints {"decisions": [decision or null, ...], "seconds": [...]} or {"error": {name, message}}
// when codeactHooks refused its options. With "session": true it prints codeactSession's options instead; with
// "runtimeEnv": {...}, codeactRuntimeEnv of that environment.
import { pathToFileURL } from "node:url";

let text = "";
for await (const chunk of process.stdin) text += chunk;
const request = JSON.parse(text);
const adapter = await import(pathToFileURL(request.adapter).href);
let hooks;
try {
  if (request.runtimeEnv) {
    process.stdout.write(JSON.stringify({ runtimeEnv: adapter.codeactRuntimeEnv(request.runtimeEnv) }) + "\n");
    process.exit(0);
  }
  if (request.session) {
    const options = adapter.codeactSession(request.options);
    process.stdout.write(JSON.stringify({ session: { ...options, hooks: Object.keys(options.hooks) } }) + "\n");
    process.exit(0);
  }
  hooks = adapter.codeactHooks(request.options);
} catch (error) {
  process.stdout.write(JSON.stringify({ error: { name: error.name, message: error.message } }) + "\n");
  process.exit(0);
}
const decisions = [];
const seconds = [];
for (const input of request.inputs) {
  const given = input === null ? null : { ...input, timestamp: new Date(input.timestamp ?? Date.now()) };
  const start = performance.now();
  decisions.push((await hooks.onPreToolUse(given, { sessionId: "invocation-session" })) ?? null);
  seconds.push((performance.now() - start) / 1000);
}
process.stdout.write(JSON.stringify({ decisions, seconds }) + "\n");
