/**
 * A small React page on `@bucketco/react-sdk` 3.3.2: the provider, the feature hook, `track`, feedback and an
 * automated feedback prompt (its live channel: the Bucket browser SDK has no live flag updates). Bundled by esbuild
 * in test/browser/react-sdks.test.ts; its state is mirrored on `window.page` for the test to read.
 */
import { BucketProvider, useFeature, useSendFeedback, useTrack } from "@bucketco/react-sdk";
import { createRoot } from "react-dom/client";
import { config, recordPrompt, report } from "./page-state.js";

function Huddle() {
  const huddle = useFeature("huddle");
  const track = useTrack();
  const sendFeedback = useSendFeedback();
  report({ isLoading: huddle.isLoading, isEnabled: huddle.isEnabled, configKey: huddle.config.key ?? null, configPayload: huddle.config.payload ?? null });
  return (
    <main>
      <p id="huddle">{huddle.isLoading ? "loading" : huddle.isEnabled ? "huddle on" : "huddle off"}</p>
      <p id="variant">{huddle.config.key ?? "no variant"}</p>
      <button id="use" onClick={() => void huddle.track()?.then((response) => report({ used: response?.status ?? null }))}>Use huddle</button>
      <button id="event" onClick={() => void track("react-clicked", { from: "bucket" })?.then((response) => report({ tracked: response?.status ?? null }))}>Track</button>
      <button
        id="feedback"
        onClick={() => void sendFeedback({ featureKey: "huddle", score: 5, comment: "Bucket React works" })?.then((response) => report({ feedback: response?.status ?? null }))}
      >
        Feedback
      </button>
    </main>
  );
}

createRoot(document.getElementById("root")!).render(
  <BucketProvider
    publishableKey={config.publishableKey}
    apiBaseUrl={config.apiBaseUrl}
    sseBaseUrl={config.apiBaseUrl}
    user={config.user}
    company={config.company}
    toolbar={false}
    feedback={{ autoFeedbackHandler: recordPrompt }}
  >
    <Huddle />
  </BucketProvider>,
);
