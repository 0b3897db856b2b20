/**
 * A small React page on `@reflag/react-sdk` 1.6.2: the provider, the flag hook, `track`, feedback, live flag updates
 * and an automated feedback prompt. Bundled by esbuild in test/browser/react-sdks.test.ts; its state is mirrored on
 * `window.page` (and in the DOM) for the test to read.
 */
import { ReflagProvider, useFlag, useSendFeedback, useTrack } from "@reflag/react-sdk";
import { useState } from "react";
import { createRoot } from "react-dom/client";
import { config, recordPrompt, report } from "./page-state.js";

function Huddle() {
  const huddle = useFlag("huddle");
  const track = useTrack();
  const sendFeedback = useSendFeedback();
  const [renders, setRenders] = useState(0);
  report({ isLoading: huddle.isLoading, isEnabled: huddle.isEnabled, configKey: huddle.config.key ?? null, configPayload: huddle.config.payload ?? null });
  return (
    <main>
      <p id="huddle">{huddle.isLoading ? "loading" : huddle.isEnabled ? "huddle on" : "huddle off"}</p>
      <p id="variant">{huddle.config.key ?? "no variant"}</p>
      <button id="use" onClick={() => void huddle.track()?.then((response) => report({ used: response?.status ?? null }))}>Use huddle</button>
      <button id="event" onClick={() => void track("react-clicked", { from: "reflag" }).then((response) => report({ tracked: response?.status ?? null }))}>Track</button>
      <button
        id="feedback"
        onClick={() => void sendFeedback({ flagKey: "huddle", score: 5, comment: "Reflag React works" }).then((response) => report({ feedback: response?.status ?? null }))}
      >
        Feedback
      </button>
      <button id="render" onClick={() => setRenders(renders + 1)}>{renders}</button>
    </main>
  );
}

createRoot(document.getElementById("root")!).render(
  <ReflagProvider
    publishableKey={config.publishableKey}
    apiBaseUrl={config.apiBaseUrl}
    context={{ user: config.user, company: config.company }}
    enableLiveFlagUpdates={true}
    toolbar={false}
    feedback={{ autoFeedbackHandler: recordPrompt }}
  >
    <Huddle />
  </ReflagProvider>,
);
