// Light stand-ins for agents, to put thousands of nodes on the map of one small machine: each one
// speaks the real agent protocol over its own WebSocket to the daemon's gateway (the join token,
// hello, heartbeats at the pace the welcome asks), passes the registration's accelerator suite with
// one core's passing check, and runs nothing. What the daemon and the browser do with them is real;
// only the node's side is thin.
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { request } from "node:http";

// The protocol the daemon built from this tree speaks, read from its one definition.
const protocol = Number(/kProtocolVersion = (\d+);/.exec(
  readFileSync(new URL("../../proto/messages.h", import.meta.url), "utf8"))[1]);

// A client's frame (text, or the pong that answers a ping): masked, as RFC 6455 requires of clients.
function clientFrame(payload, opcode = 0x1) {
  const mask = randomBytes(4);
  let header;
  if (payload.length < 126) {
    header = Buffer.from([0x80 | opcode, 0x80 | payload.length]);
  } else if (payload.length < 65536) {
    header = Buffer.alloc(4);
    header[0] = 0x80 | opcode;
    header[1] = 0x80 | 126;
    header.writeUInt16BE(payload.length, 2);
  } else {
    header = Buffer.alloc(10);
    header[0] = 0x80 | opcode;
    header[1] = 0x80 | 127;
    header.writeBigUInt64BE(BigInt(payload.length), 2);
  }
  const masked = Buffer.alloc(payload.length);
  for (let i = 0; i < payload.length; i++) masked[i] = payload[i] ^ mask[i & 3];
  return Buffer.concat([header, mask, masked]);
}

// The server's frames (unmasked, whole messages: the daemon does not fragment); text ones to
// `onText`, pings' payloads to `onPing`.
function frameReader(onText, onPing) {
  let buffered = Buffer.alloc(0);
  return (chunk) => {
    buffered = Buffer.concat([buffered, chunk]);
    for (;;) {
      if (buffered.length < 2) return;
      let length = buffered[1] & 0x7f;
      let offset = 2;
      if (length === 126) {
        if (buffered.length < 4) return;
        length = buffered.readUInt16BE(2);
        offset = 4;
      } else if (length === 127) {
        if (buffered.length < 10) return;
        length = Number(buffered.readBigUInt64BE(2));
        offset = 10;
      }
      if (buffered.length < offset + length) return;
      const opcode = buffered[0] & 0x0f;
      if (opcode === 0x1) onText(buffered.subarray(offset, offset + length).toString());
      if (opcode === 0x9) onPing(Buffer.from(buffered.subarray(offset, offset + length)));
      buffered = buffered.subarray(offset + length);
    }
  };
}

const passingAccelerator = {
  cores: [{ core: 0, checks: [{ test: "gemm", status: "passed", measured: 0, limit: 1, duration_ms: 1, reason: "" }] }],
  duration_ms: 1,
};

// Connects one fake node; resolves once the daemon has welcomed it. `close()` ends it.
function connectNode(url, joinToken, { name, cores, labels, localAddress }) {
  return new Promise((welcomed, failed) => {
    const req = request(`${url}/v1/agent/connect`, {
      localAddress,
      headers: {
        Connection: "Upgrade", Upgrade: "websocket", "Sec-WebSocket-Version": "13",
        "Sec-WebSocket-Key": randomBytes(16).toString("base64"), Authorization: `Bearer ${joinToken}`,
      },
    });
    req.on("response", (res) => failed(new Error(`${name}: the gateway answered ${res.statusCode}, not an upgrade`)));
    req.on("error", failed);
    req.on("upgrade", (_res, socket) => {
      const send = (message) => socket.write(clientFrame(Buffer.from(JSON.stringify(message))));
      let heartbeat;
      socket.on("data", frameReader((text) => {
        const message = JSON.parse(text);
        if (message.type === "welcome") {
          heartbeat = setInterval(() => send({ type: "heartbeat", attempts: [] }), message.heartbeat_interval_ms);
          welcomed({ close: () => { clearInterval(heartbeat); socket.destroy(); } });
        } else if (message.type === "refused") {
          failed(new Error(`${name}: refused: ${message.reason}`));
        } else if (message.type === "health_check") {
          const accelerator = message.suite === "accelerator";
          send({ type: "health_result", task_id: message.task_id, result: accelerator ? passingAccelerator : null,
            error: accelerator ? "" : "a fake node has no data plane" });
        }
      }, (payload) => socket.write(clientFrame(payload, 0xa))));
      socket.on("error", () => clearInterval(heartbeat));
      socket.on("close", () => clearInterval(heartbeat));
      send({ type: "hello", protocol, agent_version: "fake-node", name, cores, memory_mb: 0, labels,
        data_addr: "", attempts: [], faults: [] });
    });
    req.end();
  });
}

// `count` nodes named fake-0000..., `perRack` to a rack; a few connections at a time. Each 500 come
// from their own loopback address (127.0.0.10, .11, ...), as nodes come from their own hosts: the
// daemon caps connections per address.
export async function connectFakeNodes(url, joinToken, count, { cores = 8, perRack = 40, parallel = 50 } = {}) {
  const nodes = [];
  for (let first = 0; first < count; first += parallel) {
    const batch = [];
    for (let i = first; i < Math.min(count, first + parallel); i++) {
      const name = `fake-${String(i).padStart(4, "0")}`;
      batch.push(connectNode(url, joinToken, { name, cores, labels: { rack: `r${String(Math.floor(i / perRack)).padStart(2, "0")}` },
        localAddress: `127.0.0.${10 + Math.floor(i / 500)}` }));
    }
    nodes.push(...(await Promise.all(batch)));
  }
  return { close: () => nodes.forEach((n) => n.close()) };
}
