import { isPending, STATE_TEXT, type ChangeRequest } from "../governance";

/** Names the pending change requests (open, approved, scheduled) that touch this feature in this environment, with links. */
export function PendingBanner({ requests, featureKey, environmentName, link }: { requests: ChangeRequest[] | undefined; featureKey: string; environmentName: string; link(id: string): string }) {
  const touching = (requests ?? []).filter((request) => isPending(request) && request.changes.some((change) => change.feature === featureKey));
  if (touching.length === 0) return null;
  return (
    <section class="banner pending-banner" aria-labelledby="pending-banner-title">
      <h2 id="pending-banner-title" class="banner-title">
        {touching.length === 1 ? "A change is pending" : `${touching.length} changes are pending`} for {featureKey} in {environmentName}
      </h2>
      <ul>
        {touching.map((request) => (
          <li>
            <a href={link(request.id)}>{request.title}</a> <span class="muted small">— {STATE_TEXT[request.state]}{request.scheduledAt && request.state !== "applied" ? `, at ${new Date(request.scheduledAt).toLocaleString()}` : ""}</span>
          </li>
        ))}
      </ul>
    </section>
  );
}
