/** Reading the newest entries of one of an environment's append logs (docs/API.md §6), for the pages that list them. */
import { enc, get } from "./api";

/** Logs are read a bounded number of pages deep: enough for a dashboard, never a whole log into the page. */
const MAX_PAGES = 10;
const PAGE = 1000;

/** The log's names: its tail in `/log-tails`, its path under the environment and the answer's list field. */
export type LogName = { tail: "feedback"; path: "feedback"; field: "feedback" } | { tail: "promptEvents"; path: "prompt-events"; field: "promptEvents" };

export const FEEDBACK_LOG: LogName = { tail: "feedback", path: "feedback", field: "feedback" };
export const PROMPT_EVENTS_LOG: LogName = { tail: "promptEvents", path: "prompt-events", field: "promptEvents" };

/** The environment's newest entries of a log, newest first, up to MAX_PAGES × PAGE. */
export async function loadNewest<T>(environmentId: string, log: LogName): Promise<T[]> {
  const all: T[] = [];
  const base = `/admin/environments/${enc(environmentId)}`;
  // The newest MAX_PAGES × PAGE entries: start that far from the end of the log.
  const tails = await get<{ tails: Record<string, string> }>(`${base}/log-tails?entries=${MAX_PAGES * PAGE}`);
  let after: string | undefined = tails.tails[log.tail];
  for (let page = 0; page < MAX_PAGES; page++) {
    const query = new URLSearchParams({ limit: String(PAGE) });
    if (after) query.set("after", after);
    const answer = await get<Record<string, unknown>>(`${base}/${log.path}?${query}`);
    const items = answer[log.field] as T[];
    all.push(...items);
    after = answer.next as string;
    if (items.length < PAGE) break;
  }
  return all.reverse();
}
