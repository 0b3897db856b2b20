import { FEEDBACK_LOG, loadNewest } from "../log-tail";
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
  featureId: string;
  key: string;
  score: number | null;
  comment: string | null;
  timestamp: string;
  /** The survey prompt it answers, when it came from one. */
  promptId?: string | null;
}

/** The environment's newest feedback, newest first (a bounded number of entries: see log-tail.ts). */
export const loadFeedback = (environmentId: string): Promise<FeedbackEntry[]> => loadNewest<FeedbackEntry>(environmentId, FEEDBACK_LOG);

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
