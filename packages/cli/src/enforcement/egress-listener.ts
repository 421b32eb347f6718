import { request } from "node:http";
import { connect } from "node:net";
import { EGRESS_IDENTITY_HOST, EGRESS_IDENTITY_PATH } from "@vigil/runtime";

export type Listener = "nothing" | "ours" | "other";

/** What the proxy's two ports hold: both Vigil's proxy for `database`, nothing on either, or something else. */
export async function egressListeners(ports: { readonly httpPort: number; readonly socksPort: number }, database: string): Promise<Listener> {
  const [http, socks] = await Promise.all([egressListener(ports.httpPort, database), socksListener(ports.socksPort, database)]);
  if (http === "other" || socks === "other") return "other";
  return http === "ours" && socks === "ours" ? "ours" : "nothing";
}

/** Whether the identity a proxy gave is Vigil's proxy for `database`. */
function ours(said: string, database: string): Listener {
  try {
    const parsed = JSON.parse(said) as { vigil?: unknown; database?: unknown };
    return parsed.vigil === "egress" && parsed.database === database ? "ours" : "other";
  } catch {
    return "other";
  }
}

/** What listens on the SOCKS port: asked with a SOCKS5 CONNECT to the identity host (no authentication). */
export function socksListener(port: number, database: string): Promise<Listener> {
  return new Promise((resolvePromise) => {
    const socket = connect({ host: "127.0.0.1", port });
    let received = Buffer.alloc(0);
    let stage: "greeting" | "reply" = "greeting";
    const done = (listener: Listener) => {
      socket.destroy();
      resolvePromise(listener);
    };
    socket.setTimeout(5_000, () => done("other"));
    socket.once("connect", () => socket.write(Buffer.from([5, 1, 0])));
    socket.on("data", (chunk: Buffer) => {
      if (received.length < 4096) received = Buffer.concat([received, chunk]);
      if (stage === "greeting" && received.length >= 2) {
        if (received[0] !== 5 || received[1] !== 0) return done("other");
        received = received.subarray(2);
        stage = "reply";
        const name = Buffer.from(EGRESS_IDENTITY_HOST);
        socket.write(Buffer.concat([Buffer.from([5, 1, 0, 3, name.length]), name, Buffer.from([0, 1])]));
      }
    });
    // The identity follows the reply's ten bytes (an IPv4 bound address), and the proxy then closes.
    socket.once("end", () => done(stage === "reply" && received[0] === 5 && received[1] === 0 ? ours(received.subarray(10).toString("utf8"), database) : "other"));
    socket.once("error", (error: NodeJS.ErrnoException) => done(error.code === "ECONNREFUSED" ? "nothing" : "other"));
  });
}

/**
 * What listens on 127.0.0.1:port: nothing, Vigil's egress proxy for `database`, or something else
 * (another program, or the proxy of another database), which must not be taken for it.
 */
export function egressListener(port: number, database: string): Promise<Listener> {
  return new Promise((resolvePromise) => {
    const outgoing = request({ host: "127.0.0.1", port, path: EGRESS_IDENTITY_PATH, timeout: 5_000 }, (response) => {
      let body = "";
      response.setEncoding("utf8").on("data", (chunk: string) => {
        if (body.length < 4096) body += chunk;
      });
      response.on("end", () => resolvePromise(ours(body, database)));
    });
    outgoing.on("timeout", () => outgoing.destroy(new Error("no answer")));
    outgoing.on("error", (error: NodeJS.ErrnoException) => resolvePromise(error.code === "ECONNREFUSED" ? "nothing" : "other"));
    outgoing.end();
  });
}

/**
 * The hook's check before a shell call (`beforeShellCall`): the sandbox sends every connection to
 * the proxy's ports, so a program there that is not Vigil's proxy for this database would see them
 * undecided; the call is then refused. Nothing there is not a reason: the sandbox then has no
 * network at all.
 */
export function proxyIsOurs(ports: { readonly httpPort: number; readonly socksPort: number }, database: string): () => Promise<string | undefined> {
  return async () =>
    (await egressListeners(ports, database)) === "other"
      ? `the sandbox's network proxy ports 127.0.0.1:${ports.httpPort} and :${ports.socksPort} are held by something that is not Vigil's egress proxy for ${database}, which would see this command's connections undecided (free the ports and start a new session, or install again with other ports)`
      : undefined;
}
