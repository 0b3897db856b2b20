/** Rebuilding the evaluation context from the query string the SDKs send, against plain URLSearchParams parsing. */
import { contextFromQuery } from "../../src/evaluation/index.js";
import { contextQuery, DISTINCT_USERS } from "../support/fixtures.js";
import { consume, runMicro, type MicroFigure, type MicroOptions } from "../support/micro.js";

export async function benchContextFromQuery(options: MicroOptions): Promise<MicroFigure[]> {
  const figures: MicroFigure[] = [];
  for (const size of [6, 24]) {
    const queries = Array.from({ length: DISTINCT_USERS }, (_, index) => `${contextQuery(index, size)}&bucket-sdk-version=node-sdk%2F1.10.0`);
    let next = 0;
    const query = () => queries[next++ % queries.length]!;
    figures.push(
      ...(await runMicro(
        `context from query (${size} params)`,
        [
          { name: `contextFromQuery (${size} params)`, fn: () => consume(contextFromQuery(query())) },
          { name: `URLSearchParams → object (${size} params)`, fn: () => consume(Object.fromEntries(new URLSearchParams(query()))) },
        ],
        options,
      )),
    );
  }
  return figures;
}
