/**
 * Backup and flags as files (API.md §13): owners download a backup; everyone exports an app's flags; editors and
 * owners review an import as a dry run — the diff of what would be created and changed — before they apply it.
 */
import { useState } from "preact/hooks";
import { api, enc, get, type App as AppRecord, type Member } from "../api";
import { Card } from "../components/Card";
import { DataTable } from "../components/DataTable";
import { Field } from "../components/Field";
import { useAction } from "../hooks/useAction";
import { ErrorMessage, Page } from "../ui";

type Change = "created" | "changed" | "unchanged";

interface ImportAnswer {
  dryRun: boolean;
  features: { key: string; change: Change; environments: { name: string; change: Change; targeting: boolean; config: boolean }[] }[];
  segments: { name: string; change: Change }[];
  stages: { name: string; change: Change }[];
  summary: { created: number; changed: number; unchanged: number };
  warnings: { key: string; environment: string; code: string; message: string }[];
}

/** Saves `text` as a file the browser downloads (a same-page blob: no request, nothing kept). */
function saveFile(name: string, text: string): void {
  const url = URL.createObjectURL(new Blob([text], { type: "application/json" }));
  const link = document.createElement("a");
  link.href = url;
  link.download = name;
  link.click();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

type ChangeRow = { key: string; environment: string; change: Change; what: string };

/**
 * One row per (feature, environment) pair the document names, and one for a feature whose change is in its fields
 * alone (or that is created with no environment). The summary sentence and the table are both made from these rows,
 * so they cannot tell two stories.
 */
export function importRows(answer: ImportAnswer): ChangeRow[] {
  const rows: ChangeRow[] = [];
  for (const feature of answer.features) {
    for (const pair of feature.environments) rows.push({ key: feature.key, environment: pair.name, change: pair.change, what: [pair.targeting && "rules", pair.config && "variants"].filter(Boolean).join(", ") || "—" });
    if (feature.change !== "unchanged" && feature.environments.every((pair) => pair.change === "unchanged")) rows.push({ key: feature.key, environment: "—", change: feature.change, what: "feature fields" });
  }
  return rows;
}

/** "1 created, 2 changed, 4 unchanged": counted from the rows the table lists. */
export function summaryOf(rows: ChangeRow[]): string {
  const count = (change: Change) => rows.filter((row) => row.change === change).length;
  return `${count("created")} created, ${count("changed")} changed, ${count("unchanged")} unchanged`;
}

/** Segments and stages the document creates or changes. */
function otherChanges(answer: ImportAnswer): { kind: string; name: string; change: Change }[] {
  return [...answer.segments.map((segment) => ({ kind: "Segment", ...segment })), ...answer.stages.map((stage) => ({ kind: "Stage", ...stage }))].filter((item) => item.change !== "unchanged");
}

/** The changes of an import (planned or applied) as one sentence and the table of rows it counts. */
function ImportChanges({ answer, applied }: { answer: ImportAnswer; applied: boolean }) {
  const rows = importRows(answer);
  const others = otherChanges(answer);
  return (
    <>
      <p role={applied ? "status" : undefined} class={applied ? "notice" : undefined}>
        {applied ? "Imported: " : ""}
        {summaryOf(rows)} (features in environments).{applied ? "" : " Nothing has changed yet."}
      </p>
      <DataTable
        columns={["Feature", "Environment", "Change", applied ? "New versions of" : "Would write new versions of"]}
        rows={rows.filter((row) => row.change !== "unchanged")}
        row={(item) => (
          <>
            <th scope="row">{item.key}</th>
            <td>{item.environment}</td>
            <td>{item.change}</td>
            <td>{item.what}</td>
          </>
        )}
        empty="No feature changes."
      />
      {others.length > 0 && (
        <ul>
          {others.map((item) => (
            <li>
              {item.kind} {item.name}: {item.change}
            </li>
          ))}
        </ul>
      )}
    </>
  );
}

export function Operations({ apps, member }: { apps: AppRecord[]; member: Member }) {
  const [appId, setAppId] = useState(apps[0]?.id ?? "");
  const [documentText, setDocumentText] = useState("");
  const [review, setReview] = useState<{ answer: ImportAnswer; text: string; appId: string } | undefined>();
  const [applied, setApplied] = useState<ImportAnswer | undefined>();
  const action = useAction();
  const canWrite = member.role !== "viewer";
  const app = apps.find((each) => each.id === appId);

  const exportFlags = () =>
    action.run(async () => {
      const { document } = await get<{ document: unknown }>(`/admin/apps/${enc(appId)}/export`);
      saveFile(`${app?.name ?? appId}.flags.json`, `${JSON.stringify(document, null, 2)}\n`);
    });
  const parsed = (): unknown => {
    try {
      return JSON.parse(documentText);
    } catch (error) {
      throw new Error(`The document is not JSON: ${(error as Error).message}`);
    }
  };
  const dryRun = () =>
    action.run(async () => {
      setApplied(undefined);
      setReview(undefined);
      const answer = await api<ImportAnswer>("POST", `/admin/apps/${enc(appId)}/import?dryRun=true`, parsed());
      setReview({ answer, text: documentText, appId });
    });
  const apply = () =>
    action.run(async () => {
      if (!review) return;
      setApplied(await api<ImportAnswer>("POST", `/admin/apps/${enc(review.appId)}/import`, JSON.parse(review.text)));
      setReview(undefined);
    });
  const readFile = async (event: Event) => {
    const file = (event.currentTarget as HTMLInputElement).files?.[0];
    if (file) setDocumentText(await file.text());
    setReview(undefined);
  };

  return (
    <Page title="Backup and flags as files" subtitle="docs/OPERATIONS.md tells the whole procedure.">
      <ErrorMessage error={action.error} />
      {member.role === "owner" && (
        <Card id="backup-title" title="Backup">
          <p>
            A consistent copy of the whole store, taken while the service keeps serving: apps, keys, features and their history, members, tokens, the audit log and all tracked data. Restore it with{" "}
            <code>switchyard restore FILE --data-dir DIR</code>. It holds password hashes: keep it private.
          </p>
          <a class="button" href="/admin/backup" download>
            Download a backup
          </a>
        </Card>
      )}
      <Card id="flags-title" title="Flags as files">
        <Field label="App">
          <select value={appId} onChange={(event) => (setAppId((event.currentTarget as HTMLSelectElement).value), setReview(undefined), setApplied(undefined))}>
            {apps.map((each) => (
              <option value={each.id}>{each.name}</option>
            ))}
          </select>
        </Field>
        <p>
          <button type="button" disabled={action.busy || !appId} onClick={() => void exportFlags()}>
            Export {app?.name ?? ""} as a file
          </button>
        </p>
        {canWrite && (
          <form
            class="stack import-form"
            aria-label="Import a flags document"
            onSubmit={(event) => {
              event.preventDefault();
              void dryRun();
            }}
          >
            <Field label="Flags document (switchyard.flags/v1)">
              <input type="file" accept="application/json,.json" onChange={(event) => void readFile(event)} />
            </Field>
            <Field label="or paste it here">
              <textarea name="document" class="code" rows={14} value={documentText} onInput={(event) => (setDocumentText((event.currentTarget as HTMLTextAreaElement).value), setReview(undefined))} />
            </Field>
            <button type="submit" disabled={action.busy || documentText.trim() === ""}>
              Review the changes (dry run)
            </button>
          </form>
        )}
      </Card>
      {review && (
        <Card id="review-title" title="What the import would change">
          <ImportChanges answer={review.answer} applied={false} />
          <button type="button" disabled={action.busy} onClick={() => void apply()}>
            Apply these changes
          </button>
        </Card>
      )}
      {applied && (
        <Card id="applied-title" title="What the import changed">
          <ImportChanges answer={applied} applied={true} />
        </Card>
      )}
    </Page>
  );
}
