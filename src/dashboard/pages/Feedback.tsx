import { useState } from "preact/hooks";
import type { Scope } from "../scope";
import { Field } from "../components/Field";
import { ErrorMessage, Page, useLoad } from "../ui";
import { FeedbackList, loadFeedback } from "../components/FeedbackList";

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
      {entries.data && entries.data.length === 0 ? (
        <div class="empty">
          <p>
            <strong>No feedback yet.</strong> Users send it through an SDK's feedback call or the browser SDKs' feedback form; each entry shows here with its
            feature, score and comment.
          </p>
        </div>
      ) : (
        entries.data && <FeedbackList entries={shown} />
      )}
    </Page>
  );
}
