import { useEffect, useState } from "preact/hooks";
import type { Scope } from "../App";
import { api, enc, get } from "../api";
import { Card } from "../components/Card";
import { Field } from "../components/Field";
import { ErrorMessage, Page } from "../ui";

/** Snippets for the four official SDKs with `apiBaseUrl` filled in. */
function snippets(apiBaseUrl: string, publishableKey: string, secretKey: string): [string, string][] {
  return [
    [
      "@bucketco/browser-sdk",
      `import { BucketClient } from "@bucketco/browser-sdk";\n\nconst bucket = new BucketClient({\n  publishableKey: "${publishableKey}",\n  apiBaseUrl: "${apiBaseUrl}",\n  user: { id: "user-1" },\n  company: { id: "company-1" },\n});\nawait bucket.initialize();\nbucket.getFeature("my-feature").isEnabled;`,
    ],
    [
      "@reflag/browser-sdk",
      `import { ReflagClient } from "@reflag/browser-sdk";\n\nconst reflag = new ReflagClient({\n  publishableKey: "${publishableKey}",\n  apiBaseUrl: "${apiBaseUrl}",\n  user: { id: "user-1" },\n  company: { id: "company-1" },\n});\nawait reflag.initialize();\nreflag.getFlag("my-feature").isEnabled;`,
    ],
    [
      "@bucketco/node-sdk",
      `import { BucketClient } from "@bucketco/node-sdk";\n\nconst bucket = new BucketClient({\n  secretKey: "${secretKey}",\n  apiBaseUrl: "${apiBaseUrl}",\n});\nawait bucket.initialize();\nbucket.getFeature({ user: { id: "user-1" }, company: { id: "company-1" } }, "my-feature").isEnabled;`,
    ],
    [
      "@reflag/node-sdk",
      `import { ReflagClient } from "@reflag/node-sdk";\n\nconst reflag = new ReflagClient({\n  secretKey: "${secretKey}",\n  apiBaseUrl: "${apiBaseUrl}",\n});\nawait reflag.initialize();\nreflag.getFlag({ user: { id: "user-1" }, company: { id: "company-1" } }, "my-feature").isEnabled;`,
    ],
  ];
}

/** Keys of each environment (masked; in clear only right after a rotation) and SDK set-up. */
export function Keys({ scope }: { scope: Scope }) {
  const { app, environmentId, canWrite } = scope;
  const [fresh, setFresh] = useState<Record<string, string>>({});
  const [error, setError] = useState<unknown>();
  const [apiBaseUrl, setApiBaseUrl] = useState(location.origin);
  // With a separate admin port, SDKs talk to the service's other port: the service says which.
  useEffect(() => {
    get<{ sdkPort: number | null }>("/dashboard/service.json").then(
      (answer) => answer.sdkPort !== null && setApiBaseUrl(`${location.protocol}//${location.hostname}:${answer.sdkPort}`),
      (caught: unknown) => setError(caught),
    );
  }, []);
  const environment = app.environments.find((each) => each.id === environmentId)!;

  const rotate = async (kind: "publishable" | "secret") => {
    if (!confirm(`Rotate the ${kind} key of ${environment.name}? The current key stops working at once.`)) return;
    try {
      const answer = await api<{ key: string }>("POST", `/admin/environments/${enc(environment.id)}/keys/rotate`, { kind });
      setFresh({ ...fresh, [`${environment.id}:${kind}`]: answer.key });
      scope.reloadApps();
    } catch (caught) {
      setError(caught);
    }
  };
  const keyRow = (kind: "publishable" | "secret", masked: string) => {
    const shown = fresh[`${environment.id}:${kind}`];
    return (
      <tr>
        <th scope="row">{kind === "publishable" ? "Publishable key" : "Secret key"}</th>
        <td>
          <code data-testid={`${kind}-key`}>{shown ?? masked}</code>
          {shown && <div class="notice small">New key, shown only now: copy it.</div>}
        </td>
        <td>
          {canWrite && (
            <button type="button" class="secondary" onClick={() => rotate(kind)}>
              Rotate {kind} key
            </button>
          )}
        </td>
      </tr>
    );
  };
  return (
    <Page title="Keys and SDK set-up">
      <ErrorMessage error={error} />
      <Card id="keys-title" title={`Keys of ${environment.name}`}>
        <table class="list">
          <tbody>
            {keyRow("publishable", environment.publishableKey)}
            {keyRow("secret", environment.secretKey)}
            <tr>
              <th scope="row">Tracking key (app)</th>
              <td>
                <code>{app.trackingKey}</code>
              </td>
              <td />
            </tr>
          </tbody>
        </table>
      </Card>
      <Card id="sdk-title" title="SDK set-up">
        <Field label="API base URL (the service's SDK address)" value={apiBaseUrl} onInput={(event) => setApiBaseUrl((event.currentTarget as HTMLInputElement).value)} />
        {snippets(apiBaseUrl, fresh[`${environment.id}:publishable`] ?? environment.publishableKey, fresh[`${environment.id}:secret`] ?? "<secret key>").map(([name, code]) => (
          <figure>
            <figcaption>
              <code>{name}</code>{" "}
              <button type="button" class="link" onClick={() => void navigator.clipboard?.writeText(code)}>
                Copy {name} snippet
              </button>
            </figcaption>
            <pre class="code">{code}</pre>
          </figure>
        ))}
      </Card>
    </Page>
  );
}
