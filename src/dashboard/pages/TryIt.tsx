import { useState } from "preact/hooks";
import { enc, get } from "../api";
import { Card } from "../components/Card";
import { Field } from "../components/Field";
import { formValue } from "../form";
import { ErrorMessage, useLoad } from "../ui";

interface Evaluated {
  remoteContextUsed: boolean;
  features: Record<string, { isEnabled: boolean; targetingVersion: number; ruleEvaluationResults: boolean[]; missingContextFields: string[]; config: { key: string | null; payload: unknown } }>;
}

/** The path of a context field as rules name it (`company.plan`): dot-separated names, no spaces. */
const CONTEXT_PATH = /^[^\s=.]+(\.[^\s=.]+)*$/;

/**
 * The attribute lines of the form, `path=value` each (blank lines skipped). A line that is not one is refused with
 * its number rather than left out: evaluating without it would answer for another context than the one typed.
 */
export function parseAttributeLines(text: string): { pairs: [string, string][]; error?: string } {
  const pairs: [string, string][] = [];
  for (const [index, raw] of text.split("\n").entries()) {
    const line = raw.trim();
    if (line === "") continue;
    const at = line.indexOf("=");
    const path = at > 0 ? line.slice(0, at).trim() : "";
    if (!CONTEXT_PATH.test(path)) {
      return { pairs, error: `Line ${index + 1} ("${line}") is not path=value (e.g. company.plan=pro): fix or remove it.` };
    }
    pairs.push([path, line.slice(at + 1).trim()]);
  }
  return { pairs };
}

/**
 * "Try it": the context goes to the service's own evaluator (`GET /admin/environments/:envId/evaluate`, the same job
 * as `/features/evaluated`), with stored attributes of a tracked user or company filled in as for an SDK.
 */
export function TryIt({ environmentId, featureKey }: { environmentId: string; featureKey: string }) {
  const [result, setResult] = useState<Evaluated | undefined>();
  const [triedFor, setTriedFor] = useState<string | undefined>();
  // Tracked companies to pick from (the first page; typing any id works too): their stored attributes fill the context.
  const tracked = useLoad(
    () =>
      Promise.all([
        get<{ companies: { id: string }[] }>(`/admin/environments/${enc(environmentId)}/companies?limit=100`),
        get<{ users: { id: string }[] }>(`/admin/environments/${enc(environmentId)}/users?limit=100`),
      ]).then(([companies, users]) => ({ companies: companies.companies, users: users.users })),
    [environmentId],
  );
  const [error, setError] = useState<unknown>();
  const [lineError, setLineError] = useState<string | undefined>();
  const submit = async (event: Event) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const field = (name: string) => formValue(form, name).trim();
    const query = new URLSearchParams({ key: featureKey });
    if (field("userId")) query.set("context.user.id", field("userId"));
    if (field("companyId")) query.set("context.company.id", field("companyId"));
    const attributes = parseAttributeLines(field("attributes"));
    setLineError(attributes.error);
    if (attributes.error) return;
    for (const [path, value] of attributes.pairs) query.set(`context.${path}`, value);
    try {
      setResult(await get<Evaluated>(`/admin/environments/${enc(environmentId)}/evaluate?${query}`));
      setTriedFor(field("userId"));
      setError(undefined);
    } catch (caught) {
      setError(caught);
      setResult(undefined);
    }
  };
  const item = result?.features[featureKey];
  const matched = item ? item.ruleEvaluationResults.findIndex(Boolean) : -1;
  return (
    <Card id="try-title" title="Try it">
      <form onSubmit={submit} class="inline">
        <Field label="User id" name="userId" suggestions={{ id: "tracked-users", values: tracked.data?.users.map((user) => user.id) }} />
        <Field label="Company id" name="companyId" suggestions={{ id: "tracked-companies", values: tracked.data?.companies.map((company) => company.id) }} />
        <Field label="Other attributes (path=value per line, e.g. company.plan=pro)" error={lineError}>
          <textarea name="attributes" rows={2} aria-invalid={lineError ? true : undefined} onInput={() => setLineError(undefined)} />
        </Field>
        <button type="submit">Evaluate</button>
      </form>
      <ErrorMessage error={error} />
      <div aria-live="polite" class="try-result" data-for={triedFor}>
        {result && !item && <p>The feature is not in this environment's answer.</p>}
        {item && (
          <dl>
            <dt>Result</dt>
            <dd>
              <span class={`state state-${item.isEnabled ? "everyone" : "off"}`} data-testid="try-enabled">
                {item.isEnabled ? "enabled" : "disabled"}
              </span>
            </dd>
            <dt>Matched rule</dt>
            <dd>{matched >= 0 ? `Rule ${matched + 1}` : "none"}</dd>
            <dt>Missing context fields</dt>
            <dd>{item.missingContextFields.length > 0 ? item.missingContextFields.join(", ") : "none"}</dd>
            <dt>Stored attributes used</dt>
            <dd>{result!.remoteContextUsed ? "yes" : "no"}</dd>
            <dt>Config variant</dt>
            <dd>
              {item.config.key ?? "none"}
              {item.config.key !== null && <code> {JSON.stringify(item.config.payload)}</code>}
            </dd>
            <dt>Targeting version</dt>
            <dd>{item.targetingVersion}</dd>
          </dl>
        )}
      </div>
    </Card>
  );
}
