import { useEffect, useState } from "preact/hooks";
import type { Scope } from "../scope";
import { api, enc, get } from "../api";
import { Card } from "../components/Card";
import { useConfirm } from "../components/ConfirmDialog";
import { CopyButton } from "../components/CopyButton";
import { Field } from "../components/Field";
import { useAction } from "../hooks/useAction";
import { ErrorMessage, Page } from "../ui";

/** Whether a key is only its masked form (`sec_production_…4tBP`), as §6 reads give secret and tracking keys. */
export const isMasked = (key: string) => key.includes("…");

/** Where a snippet takes the secret key from when the page does not know it (it is shown once only). */
const SECRET_FROM_ENV = "process.env.SWITCHYARD_SECRET_KEY";

/**
 * Snippets for the four official SDKs and OpenFeature's OFREP providers (API.md §14), ready to paste: the publishable
 * key and the service's SDK base URL filled in.
 */
export function snippets(apiBaseUrl: string, publishableKey: string, secretKey: string | undefined): { name: string; code: string }[] {
  const secret = secretKey ? JSON.stringify(secretKey) : `${SECRET_FROM_ENV}, // the environment's secret key`;
  const browser = (pkg: string, client: string, variable: string, getter: string) =>
    `import { ${client} } from "${pkg}";\n\nconst ${variable} = new ${client}({\n  publishableKey: "${publishableKey}",\n  apiBaseUrl: "${apiBaseUrl}",\n  user: { id: "user-1" },\n  company: { id: "company-1" },\n});\nawait ${variable}.initialize();\n${variable}.${getter}("my-feature").isEnabled;`;
  const server = (pkg: string, client: string, variable: string, getter: string) =>
    `import { ${client} } from "${pkg}";\n\nconst ${variable} = new ${client}({\n  secretKey: ${secret}${secretKey ? "," : ""}\n  apiBaseUrl: "${apiBaseUrl}",\n});\nawait ${variable}.initialize();\n${variable}.${getter}({ user: { id: "user-1" }, company: { id: "company-1" } }, "my-feature").isEnabled;`;
  return [
    { name: "@reflag/browser-sdk", code: browser("@reflag/browser-sdk", "ReflagClient", "reflag", "getFlag") },
    { name: "@bucketco/browser-sdk", code: browser("@bucketco/browser-sdk", "BucketClient", "bucket", "getFeature") },
    { name: "@reflag/node-sdk", code: server("@reflag/node-sdk", "ReflagClient", "reflag", "getFlag") },
    { name: "@bucketco/node-sdk", code: server("@bucketco/node-sdk", "BucketClient", "bucket", "getFeature") },
    ...openFeatureSnippets(apiBaseUrl, publishableKey, secretKey),
  ];
}

/** The OpenFeature web and server SDKs with their OFREP providers; `<key>` is a feature's access, `<key>:config` its config. */
function openFeatureSnippets(apiBaseUrl: string, publishableKey: string, secretKey: string | undefined): { name: string; code: string }[] {
  const secretBearer = secretKey ? JSON.stringify(`Bearer ${secretKey}`) : `\`Bearer \${${SECRET_FROM_ENV}}\``;
  const web =
    `import { OpenFeature } from "@openfeature/web-sdk";\nimport { OFREPWebProvider } from "@openfeature/ofrep-web-provider";\n\n` +
    `await OpenFeature.setContext({ targetingKey: "user-1", company: { id: "company-1" } });\n` +
    `await OpenFeature.setProviderAndWait(\n  new OFREPWebProvider({ baseUrl: "${apiBaseUrl}", headers: [["Authorization", "Bearer ${publishableKey}"]] }),\n);\n` +
    `OpenFeature.getClient().getBooleanValue("my-feature", false);`;
  const server =
    `import { OpenFeature } from "@openfeature/server-sdk";\nimport { OFREPProvider } from "@openfeature/ofrep-provider";\n\n` +
    `await OpenFeature.setProviderAndWait(\n  new OFREPProvider({ baseUrl: "${apiBaseUrl}", headers: [["Authorization", ${secretBearer}]] }),\n);\n` +
    `await OpenFeature.getClient().getBooleanValue("my-feature", false, { targetingKey: "user-1", company: { id: "company-1" } });`;
  return [
    { name: "@openfeature/ofrep-web-provider", code: web },
    { name: "@openfeature/ofrep-provider", code: server },
  ];
}

/**
 * An environment's keys and SDK set-up (docs/API.md §9): the publishable key in full (it is public) with a copy
 * control; a secret key in full only right after this dashboard made or rotated it, once, with a warning.
 */
export function Keys({ scope }: { scope: Scope }) {
  const { app, environment, canWrite } = scope;
  const fresh = scope.fresh[environment.id];
  const [shown] = useState(fresh);
  const [rotated, setRotated] = useState<{ publishableKey?: string; secretKey?: string }>({});
  const [apiBaseUrl, setApiBaseUrl] = useState(location.origin);
  const [serviceError, setServiceError] = useState<unknown>();
  const rotating = useAction();
  const confirm = useConfirm();
  // With a separate admin port, SDKs talk to the service's other port: the service says which.
  useEffect(() => {
    get<{ sdkPort: number | null }>("/dashboard/service.json").then(
      (answer) => answer.sdkPort !== null && setApiBaseUrl(`${location.protocol}//${location.hostname}:${answer.sdkPort}`),
      (caught: unknown) => setServiceError(caught),
    );
  }, []);
  // A secret key is shown once: leaving this page (or reloading it) forgets it.
  useEffect(() => () => scope.setFresh(environment.id, undefined), []);

  const publishableKey = rotated.publishableKey ?? shown?.publishableKey ?? environment.publishableKey;
  const secretKey = rotated.secretKey ?? shown?.secretKey;

  const rotate = async (kind: "publishable" | "secret") => {
    const confirmed = await confirm.ask({
      title: `Rotate the ${kind} key of ${environment.name}?`,
      message:
        kind === "secret"
          ? "The current secret key stops working at once: servers using it fail until they get the new one, which is shown here only once."
          : "The current publishable key stops working at once: browsers and apps using it fail until they ship the new one.",
      confirm: `Rotate ${kind} key`,
      danger: true,
    });
    if (!confirmed) return;
    await rotating.run(async () => {
      const answer = await api<{ key: string }>("POST", `/admin/environments/${enc(environment.id)}/keys/rotate`, { kind });
      setRotated((previous) => ({ ...previous, [kind === "publishable" ? "publishableKey" : "secretKey"]: answer.key }));
      scope.reloadApps();
    });
  };

  const rotateButton = (kind: "publishable" | "secret") =>
    canWrite && (
      <button type="button" class="secondary" disabled={rotating.busy} onClick={() => rotate(kind)}>
        Rotate {kind} key
      </button>
    );

  return (
    <Page title="Keys and SDK set-up" subtitle={`${app.name} · ${environment.name}`}>
      {shown && shown.made !== "rotation" && (
        <div class="banner success-banner" role="status">
          <strong>{shown.made === "app" ? `${app.name} is ready.` : `Environment ${environment.name} is ready.`}</strong> Copy its secret key now: it is shown only on this page, once.
          Then paste a snippet below into your app.
        </div>
      )}
      {confirm.dialog}
      <ErrorMessage error={rotating.error ?? serviceError} />
      <Card id="keys-title" title={`Keys of ${environment.name}`}>
        <dl class="keys">
          <div class="key-row">
            <dt>Publishable key</dt>
            <dd>
              <div class="key-value">
                <code data-testid="publishable-key">{publishableKey}</code>
                {!isMasked(publishableKey) && <CopyButton text={publishableKey} label="Copy publishable key" />}
                {rotateButton("publishable")}
              </div>
              <p class="muted small">
                {isMasked(publishableKey)
                  ? "This key was made before Switchyard kept publishable keys readable: rotate it to see it in full."
                  : "Public: it goes into browser and mobile code. It can only read flags and send tracking."}
              </p>
            </dd>
          </div>
          <div class="key-row">
            <dt>Secret key</dt>
            <dd>
              <div class="key-value">
                <code data-testid="secret-key">{secretKey ?? environment.secretKey}</code>
                {secretKey && <CopyButton text={secretKey} label="Copy secret key" />}
                {rotateButton("secret")}
              </div>
              {secretKey ? (
                <p class="warning" role="note">
                  Shown only now: copy it into your server's secret store. Switchyard keeps only its hash and will not show it again.
                </p>
              ) : (
                <p class="muted small">For servers only; never ship it to a browser. It was shown once when made: rotate it to get a new one.</p>
              )}
            </dd>
          </div>
          <div class="key-row">
            <dt>Tracking key (whole app)</dt>
            <dd>
              <div class="key-value">
                <code data-testid="tracking-key">{shown?.trackingKey ?? app.trackingKey}</code>
                {shown?.trackingKey && <CopyButton text={shown.trackingKey} label="Copy tracking key" />}
              </div>
              <p class="muted small">For the Bucket tracking SDK{shown?.trackingKey ? ": shown only now." : "; shown once when the app was made."}</p>
            </dd>
          </div>
        </dl>
      </Card>
      <Card id="sdk-title" title="SDK set-up">
        <p class="muted">
          Install an SDK, paste its snippet and replace <code>my-feature</code> with a feature key. Browser SDKs take the publishable key; server SDKs the secret key
          {secretKey ? " (filled in below while it is shown)" : <> (read here from <code>SWITCHYARD_SECRET_KEY</code>)</>}. With OpenFeature, a
          feature is the boolean flag <code>my-feature</code> and its remote config the flag <code>my-feature:config</code>.
        </p>
        <Field label="API base URL (the service's SDK address)" value={apiBaseUrl} onInput={(event) => setApiBaseUrl((event.currentTarget as HTMLInputElement).value)} />
        {isMasked(publishableKey) && <p class="warning">The browser snippets need the publishable key in full: rotate it above first.</p>}
        <div class="snippets">
          {snippets(apiBaseUrl, publishableKey, secretKey).map(({ name, code }) => (
            <figure class="snippet">
              <figcaption>
                <code>{name}</code>
                <CopyButton text={code} label={`Copy ${name} snippet`} />
              </figcaption>
              <pre class="code" tabIndex={0} aria-label={`${name} snippet`}>
                {code}
              </pre>
            </figure>
          ))}
        </div>
      </Card>
    </Page>
  );
}
