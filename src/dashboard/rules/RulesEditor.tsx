import { useContext, useState } from "preact/hooks";
import type { ValidationIssue } from "../api";
import { FilterEditor, SegmentsContext } from "./FilterEditor";
import { describe, filterOfType, type Filter } from "./model";

export interface RulesEditorProps {
  rules: { filter: Filter }[];
  onChange(rules: { filter: Filter }[]): void;
  /** The JSON view's parse error, or undefined when its text is a valid rule list: Save refuses while there is one. */
  onJsonError?(message: string | undefined): void;
  issues: ValidationIssue[];
  featureKey: string;
  readOnly: boolean;
}

/**
 * The targeting rules of one environment: a visual editor and a JSON view of the same tree, both editable. A rule
 * turns the feature on when its filter matches; the rules are tried in order.
 */
export function RulesEditor({ rules, onChange, onJsonError, issues, featureKey, readOnly }: RulesEditorProps) {
  const [mode, setMode] = useState<"visual" | "json">("visual");
  const segments = useContext(SegmentsContext);
  const segmentNames = new Map(segments.map((segment) => [segment.id, segment.name]));
  const [jsonText, setJsonText] = useState("");
  const [jsonError, setJsonError] = useState<string | undefined>();

  const reportJson = (message: string | undefined) => {
    setJsonError(message);
    onJsonError?.(message);
  };
  const switchTo = (next: "visual" | "json") => {
    // Invalid JSON stays on screen with its error: the visual view would show an older tree than the text.
    if (next === "visual" && jsonError) return;
    if (next === "json") {
      setJsonText(JSON.stringify(rules, null, 2));
      reportJson(undefined);
    }
    setMode(next);
  };

  const onJson = (text: string) => {
    setJsonText(text);
    try {
      const parsed = JSON.parse(text) as unknown;
      if (!Array.isArray(parsed)) throw new Error("The rules must be a JSON array of {\"filter\": …} objects.");
      const bad = parsed.findIndex((rule) => typeof rule !== "object" || rule === null || typeof (rule as { filter?: unknown }).filter !== "object" || (rule as { filter?: unknown }).filter === null);
      if (bad >= 0) throw new Error(`Rule ${bad + 1} must be an object with a "filter" object.`);
      reportJson(undefined);
      onChange(parsed as { filter: Filter }[]);
    } catch (error) {
      reportJson((error as Error).message);
    }
  };

  const general = issues.filter((issue) => issue.path === "" || issue.path === "rules" || /^rules\.\d+$/.test(issue.path));

  return (
    <div class="rules-editor">
      <div class="tabs" role="group" aria-label="Rule view">
        <button type="button" aria-pressed={mode === "visual"} aria-disabled={jsonError ? true : undefined} title={jsonError ? "Fix the JSON first" : undefined} onClick={() => switchTo("visual")}>
          Visual
        </button>
        <button type="button" aria-pressed={mode === "json"} onClick={() => switchTo("json")}>
          JSON
        </button>
      </div>
      {mode === "visual" ? (
        <>
          {rules.length === 0 && <p class="muted">No rules: the feature is off for everyone in this environment.</p>}
          <ol class="rules">
            {rules.map((rule, index) => (
              <li class="rule">
                <p class="rule-summary">
                  <strong>Rule {index + 1}</strong> <span class="muted">on for {describe(rule.filter, segmentNames)}</span>
                </p>
                <FilterEditor
                  filter={rule.filter}
                  path={`rules.${index}.filter`}
                  issues={issues}
                  featureKey={featureKey}
                  readOnly={readOnly}
                  label={`Rule ${index + 1}`}
                  onChange={(filter) => onChange(rules.map((each, at) => (at === index ? { ...each, filter } : each)))}
                  onRemove={() => onChange(rules.filter((_, at) => at !== index))}
                />
              </li>
            ))}
          </ol>
          {!readOnly && (
            <button type="button" class="secondary" onClick={() => onChange([...rules, { filter: filterOfType("context", featureKey) }])}>
              Add rule
            </button>
          )}
        </>
      ) : (
        <label class="block">
          Rules as JSON
          <textarea class="code" rows={16} value={jsonText} disabled={readOnly} aria-invalid={jsonError ? true : undefined} aria-describedby={jsonError ? "rules-json-error" : undefined} onInput={(event) => onJson((event.currentTarget as HTMLTextAreaElement).value)} />
          {jsonError && (
            <span class="field-error" id="rules-json-error">
              Not valid JSON, so it cannot be saved or shown visually: {jsonError}
            </span>
          )}
        </label>
      )}
      {general.length > 0 && (
        <ul class="field-errors">
          {general.map((issue) => (
            <li>
              {issue.message} <span class="muted">({issue.path || "rules"})</span>
            </li>
          ))}
        </ul>
      )}
      {mode === "json" && issues.length > general.length && (
        <ul class="field-errors">
          {issues
            .filter((issue) => !general.includes(issue))
            .map((issue) => (
              <li>
                {issue.path}: {issue.message}
              </li>
            ))}
        </ul>
      )}
    </div>
  );
}
