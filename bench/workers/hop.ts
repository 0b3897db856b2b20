/**
 * The hop between the main thread and a worker, alone (issue 33, lead 2): jobs and completions through Piscina, as
 * the service sends them today (a task per batch, `atomics: "async"`, answers in shared memory), against shared
 * rings (jobs and completions as slots of SharedArrayBuffers, Atomics to wake a thread only when it waits; the
 * worker spins briefly on an empty ring before it waits). Both run the same closed loop: `--in-flight` jobs, each
 * costing `--main-us` of main-thread CPU (the HTTP side) and `--work-us` on the worker (the evaluation), with an
 * answer of `--answer-bytes` written to shared memory. The difference in CPU per job and in jobs per second is the
 * hop's. Alternated round by round so the VM's slow and fast stretches fall on both. Not part of `npm run bench`.
 */
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { Worker } from "node:worker_threads";
import { Piscina } from "piscina";
import { cpuBetween, idleShareBetween, machineTicks, threadTicks } from "../support/thread-cpu.js";
import { busyFor, HOP, waitAsync, type HopSetup } from "./hop-layout.js";

const USAGE = `node dist/bench/workers/hop.js [--in-flight N] [--main-us N] [--work-us N] [--answer-bytes N] [--spin-us N] [--rounds N] [--seconds N]

Jobs through Piscina (the service's way) against shared rings, in the same closed loop; prints jobs/s, CPU per job
(all threads, and the main thread's alone) and the machine's idle share, per round. Defaults model /features/evaluated at 50 features:
  --in-flight N     jobs in flight (default 50, the bench's connections)
  --main-us N       main-thread CPU per job, half before sending it and half after its answer (default 20)
  --work-us N       worker CPU per job (default 30)
  --answer-bytes N  answer written by the worker (default 14612)
  --spin-us N       the ring worker's spin on an empty ring before it waits (default 50)
  --rounds N        rounds, each measuring both (default 3)
  --seconds N       length of each measured run, after 1 s of warm-up (default 4)
`;

const { values } = parseArgs({
  options: {
    help: { type: "boolean" },
    "in-flight": { type: "string", default: "50" },
    "main-us": { type: "string", default: "20" },
    "work-us": { type: "string", default: "30" },
    "answer-bytes": { type: "string", default: "14612" },
    "spin-us": { type: "string", default: "50" },
    rounds: { type: "string", default: "3" },
    seconds: { type: "string", default: "4" },
  },
});

const inFlight = Number(values["in-flight"]);
const mainUs = Number(values["main-us"]);
/** Distinct-context queries of about the service's length. */
const query = (sequence: number) => `context.user.id=user-${sequence % 10_000}&context.company.id=company-${sequence % 200}&context.other.plan=enterprise&context.other.region=eu-west`;

function setupFor(slots: number, perJob: boolean): HopSetup {
  const answerBytes = Number(values["answer-bytes"]);
  return {
    slots,
    answerBytes,
    workUs: Number(values["work-us"]),
    spinUs: Number(values["spin-us"]),
    perJob,
    answers: new SharedArrayBuffer(slots * answerBytes),
    control: new SharedArrayBuffer(HOP.CONTROL_WORDS * 4),
    jobs: new SharedArrayBuffer(slots * HOP.JOB_BYTES),
    jobLengths: new SharedArrayBuffer(slots * 4),
    completions: new SharedArrayBuffer(slots * 8),
  };
}

/** A way of sending jobs: `send` queues one; answers come back through `onAnswer`. */
interface Hop {
  send(slot: number, query: string): void;
  /** What was queued goes out (each hop also sends it after handing over a turn's answers). */
  flush(): void;
  close(): Promise<void>;
}

const WORKER_FILE = fileURLToPath(new URL("./hop-worker.js", import.meta.url));

function piscinaHop(setup: HopSetup, onAnswer: (slot: number, answers: Uint8Array) => void): Hop {
  const answers = new Uint8Array(setup.answers);
  // One task at a time per worker, as the service's evaluation batches go (BatchGate); one by one, all may queue there.
  const concurrentTasksPerWorker = setup.perJob ? inFlight : 1;
  const pool = new Piscina<{ slots: number[]; queries: string[] }, number[]>({ filename: WORKER_FILE, minThreads: 1, maxThreads: 1, idleTimeout: Infinity, atomics: "async", concurrentTasksPerWorker, workerData: setup });
  let batch = { slots: [] as number[], queries: [] as string[] };
  const hop: Hop = {
    send(slot, text) {
      batch.slots.push(slot);
      batch.queries.push(text);
      if (setup.perJob) hop.flush();
    },
    flush() {
      if (batch.slots.length === 0) return;
      const sent = batch;
      batch = { slots: [], queries: [] };
      pool.run(sent).then(
        (lengths) => {
          sent.slots.forEach((slot, index) => onAnswer(slot, answers.subarray(slot * setup.answerBytes, slot * setup.answerBytes + lengths[index]!)));
          hop.flush();
        },
        // Tasks still queued when the round ends are cancelled by destroy().
        () => {},
      );
    },
    close: () => pool.destroy(),
  };
  return hop;
}

function ringHop(setup: HopSetup, onAnswer: (slot: number, answers: Uint8Array) => void): Hop {
  const control = new Int32Array(setup.control);
  const jobs = new Uint8Array(setup.jobs);
  const lengths = new Int32Array(setup.jobLengths);
  const completions = new Int32Array(setup.completions);
  const answers = new Uint8Array(setup.answers);
  const encoder = new TextEncoder();
  const worker = new Worker(WORKER_FILE, { workerData: { ...setup, mode: "ring" } });
  let head = 0;
  let doneTail = 0;
  let stopped = false;
  /** Takes the completions written so far; waits (without blocking the loop) only when there are none. */
  const collect = (): void => {
    if (stopped) return;
    let done = Atomics.load(control, HOP.DONE_HEAD);
    if (done === doneTail) {
      Atomics.store(control, HOP.MAIN_WAITING, 1);
      done = Atomics.load(control, HOP.DONE_HEAD);
      if (done === doneTail) {
        const waited = waitAsync(control, HOP.DONE_HEAD, doneTail);
        Atomics.store(control, HOP.MAIN_WAITING, waited.async ? 1 : 0);
        if (waited.async) {
          void waited.value.then(() => {
            Atomics.store(control, HOP.MAIN_WAITING, 0);
            collect();
          });
          return;
        }
      }
      Atomics.store(control, HOP.MAIN_WAITING, 0);
      done = Atomics.load(control, HOP.DONE_HEAD);
    }
    for (; doneTail !== done; doneTail = (doneTail + 1) | 0) {
      const slot = completions[(doneTail % setup.slots) * 2]!;
      onAnswer(slot, answers.subarray(slot * setup.answerBytes, slot * setup.answerBytes + completions[(doneTail % setup.slots) * 2 + 1]!));
    }
    hop.flush();
    setImmediate(collect);
  };
  setImmediate(collect);
  const hop: Hop = {
    send(slot, text) {
      const written = encoder.encodeInto(text, jobs.subarray(slot * HOP.JOB_BYTES, (slot + 1) * HOP.JOB_BYTES)).written;
      lengths[slot] = written;
      head = (head + 1) | 0;
      if (head % setup.slots !== (slot + 1) % setup.slots) throw new Error("jobs must be sent in slot order");
      if (setup.perJob) hop.flush();
    },
    flush() {
      Atomics.store(control, HOP.JOB_HEAD, head);
      if (Atomics.load(control, HOP.WORKER_WAITING) === 1) Atomics.notify(control, HOP.JOB_HEAD);
    },
    async close() {
      stopped = true;
      Atomics.store(control, HOP.STOP, 1);
      Atomics.notify(control, HOP.JOB_HEAD);
      await worker.terminate();
    },
  };
  return hop;
}

interface RoundFigure {
  jobsPerSecond: number;
  cpuUsPerJob: number;
  /** The main thread's share: what the hop costs the thread that serves HTTP (with --main-us 0, the hop's alone). */
  mainUsPerJob: number;
  idleShare: number;
}

/** The closed loop through `make`'s hop (jobs one by one with `perJob`): warm-up, then `seconds` measured. */
async function measure(make: (setup: HopSetup, onAnswer: (slot: number, answers: Uint8Array) => void) => Hop, perJob: boolean, seconds: number): Promise<RoundFigure> {
  const slots = inFlight;
  let completed = 0;
  let sequence = 0;
  let checksum = 0;
  // Slots are reused in order: a closed loop answers in the order it sent, one worker being FIFO.
  let nextSlot = 0;
  let measuring = true;
  const hop = make(setupFor(slots, perJob), (_slot, answer) => {
    if (!measuring) return;
    busyFor(mainUs / 2);
    checksum += answer[answer.length - 1]!;
    completed++;
    busyFor(mainUs / 2);
    hop.send(nextSlot, query(sequence++));
    nextSlot = (nextSlot + 1) % slots;
  });
  for (let index = 0; index < inFlight; index++) {
    hop.send(nextSlot, query(sequence++));
    nextSlot = (nextSlot + 1) % slots;
  }
  hop.flush();
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  const startCompleted = completed;
  const startCpu = process.cpuUsage();
  const startThreads = threadTicks(process.pid);
  const startMachine = machineTicks();
  const started = performance.now();
  await new Promise((resolve) => setTimeout(resolve, seconds * 1_000));
  const jobs = completed - startCompleted;
  const elapsed = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(startCpu);
  const mainMs = cpuBetween(startThreads, threadTicks(process.pid)).find((thread) => thread.main)?.ms ?? 0;
  const idleShare = idleShareBetween(startMachine, machineTicks());
  measuring = false;
  await hop.close();
  if (checksum === 0) throw new Error("no answer was read");
  return { jobsPerSecond: Math.round(jobs / elapsed), cpuUsPerJob: Math.round(((cpu.user + cpu.system) / jobs) * 10) / 10, mainUsPerJob: Math.round(((mainMs * 1000) / jobs) * 10) / 10, idleShare: Math.round(idleShare * 1000) / 10 };
}

async function main(): Promise<void> {
  const rounds = Number(values.rounds);
  const seconds = Number(values.seconds);
  process.stdout.write(`in flight ${inFlight}, main ${mainUs} µs, worker ${values["work-us"]} µs, answer ${values["answer-bytes"]} B, spin ${values["spin-us"]} µs (node dist/bench/workers/hop.js)\n`);
  for (let round = 1; round <= rounds; round++) {
    for (const [name, make, oneByOne] of [
      ["piscina", piscinaHop, false],
      ["piscina, one by one", piscinaHop, true],
      ["rings", ringHop, false],
      ["rings, one by one", ringHop, true],
    ] as const) {
      const figure = await measure(make, oneByOne, seconds);
      process.stdout.write(`round ${round} ${name.padEnd(19)} ${String(figure.jobsPerSecond).padStart(7)} jobs/s  ${String(figure.cpuUsPerJob).padStart(6)} µs CPU/job (main thread ${figure.mainUsPerJob})  idle ${figure.idleShare} %\n`);
    }
  }
}

if (values.help) process.stdout.write(USAGE);
else await main();
