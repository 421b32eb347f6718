import { request } from "node:http";
import { EGRESS_IDENTITY_PATH } from "@vigil/runtime";

/**
 * What listens on 127.0.0.1:port: nothing, Vigil's egress proxy for `database`, or something else
 * (another program, or the proxy of another database), which must not be taken for it.
 */
export function egressListener(port: number, database: string): Promise<"nothing" | "ours" | "other"> {
  return new Promise((resolvePromise) => {
    const outgoing = request({ host: "127.0.0.1", port, path: EGRESS_IDENTITY_PATH, timeout: 5_000 }, (response) => {
      let body = "";
      response.setEncoding("utf8").on("data", (chunk: string) => {
        if (body.length < 4096) body += chunk;
      });
      response.on("end", () => {
        try {
          const said = JSON.parse(body) as { vigil?: unknown; database?: unknown };
          resolvePromise(said.vigil === "egress" && said.database === database ? "ours" : "other");
        } catch {
          resolvePromise("other");
        }
      });
    });
    outgoing.on("timeout", () => outgoing.destroy(new Error("no answer")));
    outgoing.on("error", (error: NodeJS.ErrnoException) => resolvePromise(error.code === "ECONNREFUSED" ? "nothing" : "other"));
    outgoing.end();
  });
}

/**
 * The hook's check before a shell call (`beforeShellCall`): the sandbox sends every connection to
 * the proxy's port, so a program there that is not Vigil's proxy for this database would see them
 * undecided; the call is then refused. Nothing there is not a reason: the sandbox then has no
 * network at all.
 */
export function proxyIsOurs(port: number, database: string): () => Promise<string | undefined> {
  return async () =>
    (await egressListener(port, database)) === "other"
      ? `the sandbox's network proxy port 127.0.0.1:${port} is held by something that is not Vigil's egress proxy for ${database}, which would see this command's connections undecided (free the port and start a new session, or install again with other ports)`
      : undefined;
}
