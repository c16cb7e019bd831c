// A live provider in JavaScript (node + npm "ws"): authenticates with a first frame, as a browser page must.
const WebSocket = require("ws");
const [url, token, name] = process.argv.slice(2);
const ws = new WebSocket(url);
const tools = {
  add: { description: "Add two numbers.", run: ({ a, b }) => a + b,
         parameters: { type: "object", properties: { a: { type: "number" }, b: { type: "number" } },
                       required: ["a", "b"] } },
  shout: { description: "Upper-case a text.", run: ({ text }) => text.toUpperCase(),
           parameters: { type: "object", properties: { text: { type: "string" } }, required: ["text"] } },
  boom: { description: "Always fails.", run: () => { throw new Error("kaboom"); },
          parameters: { type: "object", properties: {} } },
};
ws.on("open", () => {
  ws.send(JSON.stringify({ type: "auth", token }));
  ws.send(JSON.stringify({ type: "hello", role: "provider", name, context: "A JavaScript test provider.",
    tools: Object.entries(tools).map(([n, t]) => ({ name: n, description: t.description, parameters: t.parameters })) }));
});
ws.on("message", (data) => {
  const msg = JSON.parse(data.toString());
  if (msg.type === "hello.ack") console.log("ready " + msg.providerId);
  else if (msg.type === "error") console.log("error " + msg.code);
  else if (msg.type === "tool.call") {
    try {
      ws.send(JSON.stringify({ type: "tool.result", id: msg.id, result: tools[msg.tool].run(msg.args) }));
    } catch (e) {
      ws.send(JSON.stringify({ type: "tool.result", id: msg.id, error: e.message, errorCode: "E_THROWN" }));
    }
  }
});
ws.on("close", () => process.exit(0));
process.stdin.on("end", () => ws.close()).resume();  // the test closes stdin to say goodbye
