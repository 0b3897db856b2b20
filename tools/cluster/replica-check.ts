/**
 * Does the NATS server keep a replicated stream's copies identical when one server is killed -9 under publish load?
 * No Switchyard in it: three publishers (each its own connection, as three nodes) publish with message ids and one
 * retry with the same id, as TrackingPublisher does; three durable pull consumers read as nodes read; after --acks
 * acknowledgements the stream's leader is killed -9, and started again after --acks more; then every server's copy
 * is read message by message (direct get through a connection to that server alone) and compared, every acknowledged
 * publish is looked up at the sequence its acknowledgement named, and what each consumer was handed is compared.
 * --tls: clients over TLS with a password, as the cluster tests run; --burn N: N busy processes beside, as other test
 * files on a CI machine. Exits 1 when some round ended with copies that differ. docs/CLUSTER.md has what it found.
 *
 *   node dist/tools/cluster/replica-check.js [--rounds N] [--acks N] [--tls] [--burn N]
 */
import { spawn, type ChildProcess } from "node:child_process";
import { parseArgs } from "node:util";
import { AckPolicy, DeliverPolicy, jetstream, jetstreamManager, type JetStreamManager } from "@nats-io/jetstream";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { clientCredentials, startNatsCluster, type NatsCluster } from "../../bench/support/nats-cluster.js";
import { differingSequences, readStreamCopies } from "../../bench/support/stream-copies.js";

const { values } = parseArgs({ options: { rounds: { type: "string", default: "5" }, acks: { type: "string", default: "150" }, burn: { type: "string", default: "0" }, tls: { type: "boolean", default: false } } });
const rounds = Number(values.rounds);
const acksPerPhase = Number(values.acks);
const STREAM = "CHECK";
const SUBJECT = "check.tracking";
const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Acknowledged {
  id: string;
  seq: number;
  duplicate: boolean;
}

async function publishLoad(nc: NatsConnection, lane: string, stop: () => boolean, acknowledged: Acknowledged[], errors: string[]): Promise<void> {
  const js = jetstream(nc, { timeout: 3_000 });
  for (let index = 0; !stop(); index++) {
    const id = `${lane}-${index}`;
    for (let attempt = 1; attempt <= 2; attempt++) {
      try {
        const ack = await js.publish(SUBJECT, new TextEncoder().encode(id), { msgID: id });
        acknowledged.push({ id, seq: ack.seq, duplicate: ack.duplicate });
        break;
      } catch (error) {
        if (attempt === 2) {
          errors.push(`${id}: ${String(error)}`);
          await delay(50);
        }
      }
    }
  }
}

/**
 * A durable pull consumer read as a node reads its tracking consumer (fetch, acknowledge the last of each batch,
 * recreate it after the last sequence seen when it fails): what it was handed at each sequence.
 */
async function consume(url: string, name: string, stop: () => boolean, seen: Map<number, string>): Promise<void> {
  const nc = await connect({ ...clientCredentials(nats), servers: url, maxReconnectAttempts: -1, reconnectTimeWait: 100 });
  const js = jetstream(nc);
  while (!stop()) {
    try {
      const jsm = await jetstreamManager(nc, { timeout: 5_000 });
      const last = Math.max(0, ...seen.keys());
      await jsm.consumers.delete(STREAM, name).catch(() => undefined);
      await jsm.consumers.add(STREAM, { durable_name: name, ack_policy: AckPolicy.All, ...(last === 0 ? { deliver_policy: DeliverPolicy.All } : { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: last + 1 }), ack_wait: 30_000_000_000, max_ack_pending: 100_000 });
      const consumer = await js.consumers.get(STREAM, name);
      let gap = false;
      while (!stop() && !gap) {
        const messages = await consumer.fetch({ max_messages: 256, expires: 1_000 });
        let lastMessage;
        for await (const message of messages) {
          // As the applier: only the next sequence; a gap restarts the consumer after what was taken.
          const expected = Math.max(0, ...seen.keys()) + 1;
          if (message.seq < expected) continue;
          if (message.seq > expected) {
            gap = true;
            break;
          }
          seen.set(message.seq, new TextDecoder().decode(message.data));
          lastMessage = message;
        }
        lastMessage?.ack();
        if (gap) messages.stop();
      }
    } catch {
      await delay(500);
    }
  }
  await nc.close();
}

async function lastSequence(jsm: JetStreamManager): Promise<number> {
  for (;;) {
    try {
      return (await jsm.streams.info(STREAM)).state.last_seq;
    } catch {
      await delay(200);
    }
  }
}

async function round(nats: NatsCluster, number: number): Promise<boolean> {
  const admin = await connect({ ...clientCredentials(nats), servers: nats.urls });
  const jsm = await jetstreamManager(admin, { timeout: 10_000 });
  await jsm.streams.delete(STREAM).catch(() => undefined);
  await jsm.streams.add({ name: STREAM, subjects: [SUBJECT], num_replicas: 3, duplicate_window: 120_000_000_000, storage: "file" as never, allow_direct: true });
  const publishers = await Promise.all(["a", "b", "c"].map(() => connect({ ...clientCredentials(nats), servers: nats.urls, maxReconnectAttempts: -1, reconnectTimeWait: 100 })));
  const acknowledged: Acknowledged[] = [];
  const errors: string[] = [];
  let stopped = false;
  const lanes = publishers.map((nc, index) => publishLoad(nc, ["a", "b", "c"][index]!, () => stopped, acknowledged, errors));
  const consumed = ["a", "b", "c"].map(() => new Map<number, string>());
  let consuming = true;
  const consumers = consumed.map((seen, index) => consume(nats.urls, `node_${index}`, () => !consuming, seen));
  const until = async (count: number) => {
    while (acknowledged.length < count) await delay(20);
  };
  await until(acksPerPhase);
  // The stream's leader: the server holding publishes in flight that the others have not yet stored.
  const leader = (await jsm.streams.info(STREAM)).cluster?.leader;
  const victim = nats.servers.find((server) => server.name === leader) ?? nats.servers[number % nats.servers.length]!;
  await victim.kill();
  const afterKill = acknowledged.length;
  await until(afterKill + acksPerPhase);
  stopped = true;
  await Promise.all(lanes);
  await victim.start();
  await delay(3_000);
  const last = await lastSequence(jsm);
  const consumedBy = Date.now() + 20_000;
  while (consumed.some((seen) => seen.size < last) && Date.now() < consumedBy) await delay(100);
  consuming = false;
  await Promise.all(consumers);
  const read = await readStreamCopies(nats, STREAM);
  const copies = read.map((copy) => copy.ids);
  let consistent = true;
  for (const { sequence, held } of differingSequences(read)) {
    consistent = false;
    console.log(`round ${number}: seq ${sequence} differs: ${held}`);
  }
  for (const [index, seen] of consumed.entries()) {
    const notHanded = [];
    const otherwise = [];
    for (let seq = 1; seq <= last; seq++) {
      if (!seen.has(seq)) notHanded.push(seq);
      else if (seen.get(seq) !== copies[0]![seq - 1]) otherwise.push(`${seq}: ${seen.get(seq)} (${nats.servers[0]!.name} holds ${copies[0]![seq - 1]})`);
    }
    // Not handed within the wait: a stalled consumer (the node's watchdog restarts those), not a copy that differs.
    if (notHanded.length > 0) console.log(`round ${number}: consumer node_${index} stalled: ${notHanded.length} sequences from ${notHanded[0]} not handed`);
    if (otherwise.length > 0) {
      consistent = false;
      console.log(`round ${number}: consumer node_${index} was handed other messages: ${otherwise.slice(0, 5).join("; ")}`);
    }
  }
  for (const [index, copy] of copies.entries()) {
    const counts = new Map<string, number>();
    for (const id of copy) counts.set(id, (counts.get(id) ?? 0) + 1);
    const twice = [...counts].filter(([id, count]) => id !== "-" && count > 1).map(([id]) => id);
    const missing = acknowledged.filter((entry) => copy[entry.seq - 1] !== entry.id);
    if (twice.length > 0 || missing.length > 0) {
      consistent = false;
      console.log(`round ${number}: ${nats.servers[index]!.name} holds twice: ${twice.slice(0, 10).join(",")}; acknowledged but elsewhere: ${missing.slice(0, 10).map((entry) => `${entry.id}@${entry.seq}=${copy[entry.seq - 1]}`).join(",")}`);
    }
  }
  console.log(`round ${number}: killed ${victim.name}${victim.name === leader ? " (the stream leader)" : ""}; ${acknowledged.length} acknowledged (${acknowledged.filter((entry) => entry.duplicate).length} as duplicates), ${errors.length} not; stream ${last} messages; copies ${consistent ? "identical" : "DIFFER"}`);
  await Promise.all(publishers.map((nc) => nc.close()));
  await admin.close();
  return consistent;
}

// Busy processes beside the cluster, as other test files on a CI machine with two cores.
const burners: ChildProcess[] = Array.from({ length: Number(values.burn) }, () => spawn(process.execPath, ["-e", "for (;;) {}"], { stdio: "ignore" }));
const nats = await startNatsCluster(values.tls ? { tls: true, auth: { user: "check", password: "check-password" } } : {});
let failures = 0;
try {
  for (let number = 0; number < rounds; number++) if (!(await round(nats, number))) failures++;
} finally {
  await nats.stop();
  for (const burner of burners) burner.kill();
}
console.log(`${failures} of ${rounds} rounds ended with copies that differ`);
process.exitCode = failures > 0 ? 1 : 0;
