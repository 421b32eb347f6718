import { afterAll, beforeAll, expect, it } from "vitest";
import { TestServer } from "./support/lsp-client.js";

let server: TestServer;
beforeAll(async () => {
  server = await TestServer.start({ folders: ["/tmp"] });
});
afterAll(async () => {
  await server?.close();
});

it("publishes diagnostics", async () => {
  const d = await server.open("file:///tmp/x.vigil", "policy p {\n  rule r: abs(action in {a}\n}\n");
  console.log(JSON.stringify(d, null, 1));
  console.log(server.notifications.map((n) => n.method));
  console.log(server.stderr);
  expect(d.diagnostics.length).toBeGreaterThan(0);
});
