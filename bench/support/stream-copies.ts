/**
 * Each NATS server's own copy of a replicated stream, message by message: for telling a Switchyard fault from the
 * servers' copies of a stream having come apart (nats-server 2.9.10 after a stream leader's kill -9; docs/CLUSTER.md).
 */
import { jetstreamManager } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import { clientCredentials, type NatsCluster } from "./nats-cluster.js";

export interface StreamCopy {
  server: string;
  /** Per sequence (index 0 is sequence 1): the message's Nats-Msg-Id, else its data as text; "-" where this server answered none. */
  ids: string[];
}

/**
 * Reads every server's copy through a connection to that server alone, with direct gets (which a server answers from
 * its own copy). The stream must have been created with `allow_direct` (Switchyard's are): nats-server 2.9.10 does
 * not start answering direct gets when a stream is updated to allow them.
 */
export async function readStreamCopies(cluster: NatsCluster, stream: string): Promise<StreamCopy[]> {
  const credentials = clientCredentials(cluster);
  const admin = await connect({ ...credentials, servers: cluster.urls });
  let last: number;
  try {
    const jsm = await jetstreamManager(admin, { timeout: 10_000 });
    const info = await jsm.streams.info(stream);
    if (!info.config.allow_direct) throw new Error(`stream ${stream} was created without allow_direct: its servers' copies cannot be read one by one`);
    last = info.state.last_seq;
  } finally {
    await admin.close();
  }
  return Promise.all(
    cluster.servers.map(async (server): Promise<StreamCopy> => {
      const nc = await connect({ ...credentials, servers: server.url, ignoreClusterUpdates: true });
      try {
        const jsm = await jetstreamManager(nc, { timeout: 2_000 });
        const ids: string[] = [];
        for (let seq = 1; seq <= last; seq++) {
          const message = await jsm.direct.getMessage(stream, { seq }).catch(() => null);
          ids.push(message === null ? "-" : (message.header.get("Nats-Msg-Id") || new TextDecoder().decode(message.data)));
        }
        return { server: server.name, ids };
      } finally {
        await nc.close();
      }
    }),
  );
}

/**
 * The sequences where two copies hold different messages, with what each server holds there. A copy that holds
 * none there ("-": a server still catching up after its restart) differs from none.
 */
export function differingSequences(copies: StreamCopy[]): { sequence: number; held: string }[] {
  const length = Math.max(0, ...copies.map((copy) => copy.ids.length));
  const differing: { sequence: number; held: string }[] = [];
  for (let index = 0; index < length; index++) {
    const held = copies.map((copy) => copy.ids[index] ?? "-");
    if (new Set(held.filter((id) => id !== "-")).size > 1) differing.push({ sequence: index + 1, held: copies.map((copy, at) => `${copy.server}=${held[at]}`).join(" ") });
  }
  return differing;
}
