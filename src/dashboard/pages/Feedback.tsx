import { useState } from "preact/hooks";
import type { Scope } from "../App";
import { enc, get } from "../api";
import { Field } from "../components/Field";
import { ErrorMessage, Page, useLoad } from "../ui";
import { FeedbackList } from "./Companies";

export interface FeedbackEntry {
  cursor: string;
  feedbackId: string;
  userId: string;
  companyId: string | null;
  key: string;
  score: number | null;
  comment: string | null;
  timestamp: string;
}

/** Feedback is read a bounded number of pages deep: enough for a dashboard, never the whole log into the page. */
const MAX_PAGES = 10;
const PAGE = 1000;

/** The environment's newest feedback, newest first, up to MAX_PAGES × PAGE entries. */
export async function loadFeedback(environmentId: string): Promise<FeedbackEntry[]> {
  const all: FeedbackEntry[] = [];
  // The newest MAX_PAGES × PAGE entries: start that far from the end of the log.
  const tails = await get<{ tails: { feedback: string } }>(`/admin/environments/${enc(environmentId)}/log-tails?entries=${MAX_PAGES * PAGE}`);
  let after: string | undefined = tails.tails.feedback;
  for (let page = 0; page < MAX_PAGES; page++) {
    const query = new URLSearchParams({ limit: String(PAGE) });
    if (after) query.set("after", after);
    const answer = await get<{ feedback: FeedbackEntry[]; next: string }>(`/admin/environments/${enc(environmentId)}/feedback?${query}`);
    all.push(...answer.feedback);
    after = answer.next;
    if (answer.feedback.length < PAGE) break;
  }
  return all.reverse();
}

/** Feedback with score, comment, feature and company; filtered by feature and score. */
export function Feedback({ scope }: { scope: Scope }) {
  const entries = useLoad(() => loadFeedback(scope.environmentId), [scope.environmentId]);
  const [feature, setFeature] = useState("");
  const [score, setScore] = useState("");
  const keys = [...new Set((entries.data ?? []).map((entry) => entry.key))].sort();
  const shown = (entries.data ?? []).filter((entry) => (!feature || entry.key === feature) && (!score || String(entry.score) === score));
  return (
    <Page title="Feedback">
      <div class="toolbar">
        <Field label="Feature">
          <select value={feature} onChange={(event) => setFeature((event.currentTarget as HTMLSelectElement).value)}>
            <option value="">all features</option>
            {keys.map((key) => (
              <option value={key}>{key}</option>
            ))}
          </select>
        </Field>
        <Field label="Score">
          <select value={score} onChange={(event) => setScore((event.currentTarget as HTMLSelectElement).value)}>
            <option value="">any score</option>
            {[5, 4, 3, 2, 1].map((value) => (
              <option value={String(value)}>{value}</option>
            ))}
          </select>
        </Field>
        <span class="muted" aria-live="polite">
          {entries.data ? `${shown.length} of ${entries.data.length}` : ""}
        </span>
      </div>
      <ErrorMessage error={entries.error} />
      {entries.data && <FeedbackList entries={shown} />}
    </Page>
  );
}
