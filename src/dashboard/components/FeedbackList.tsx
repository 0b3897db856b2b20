import { enc, get } from "../api";
import { when } from "../ui";
import { DataTable } from "./DataTable";
import { EntityLink } from "./EntityLink";

/** Feedback as the feedback page, a company's page and a user's page show it (one module, imported by each). */
export interface FeedbackEntry {
  cursor: string;
  feedbackId: string;
  userId: string;
  companyId: string | null;
  /** The company its satisfaction counts for: `companyId`, else its user's company when it was sent. */
  countsForCompanyId: string | null;
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

export function FeedbackList({ entries }: { entries: FeedbackEntry[] }) {
  return (
    <DataTable
      columns={["When", "Feature", "Score", "Comment", "Company", "User"]}
      rows={entries}
      row={(entry) => (
        <>
          <td>{when(entry.timestamp)}</td>
          <td>
            <EntityLink kind="features" id={entry.key} />
          </td>
          <td>{entry.score ?? "—"}</td>
          <td>{entry.comment ?? ""}</td>
          <td>
            <EntityLink kind="companies" id={entry.companyId ?? entry.countsForCompanyId} />
            {entry.companyId === null && entry.countsForCompanyId !== null && <span class="muted small"> (its user's)</span>}
          </td>
          <td>
            <EntityLink kind="users" id={entry.userId} />
          </td>
        </>
      )}
    />
  );
}
