import type { Scope } from "../scope";
import { DataTable } from "../components/DataTable";
import { isPending, listRequests, loadPolicy, STATE_TEXT, type ChangeRequest, type Policy } from "../governance";
import { actorName, ErrorMessage, Page, useLoad, when } from "../ui";

/** What the environment's policy asks, in one sentence (the list's subtitle, the settings page's summary). */
export function policySentence(environmentName: string, policy: Policy | undefined): string {
  if (!policy) return "";
  if (!policy.requireApproval) return `${environmentName} requires no approval: members with write access save changes directly${policy.confirmChanges ? ", after a confirmation with a comment" : ""}.`;
  const approvals = policy.minApprovals === 1 ? "one approval" : `${policy.minApprovals} approvals`;
  return `Changes to ${environmentName}'s targeting and config need ${approvals}${policy.allowSelfApproval ? "" : " from someone other than their author"}.`;
}

export function StateBadge({ request }: { request: Pick<ChangeRequest, "state"> }) {
  return <span class={`badge badge-cr badge-cr-${request.state}`}>{STATE_TEXT[request.state]}</span>;
}

/** An environment's change requests (docs/API.md §15): those still pending first, then the rest, newest first in each. */
export function ChangeRequests({ scope }: { scope: Scope }) {
  const { environmentId, environment } = scope;
  const requests = useLoad(() => listRequests(environmentId), [environmentId]);
  const policy = useLoad(() => loadPolicy(environmentId), [environmentId]);
  const pending = requests.data?.filter(isPending);
  const closed = requests.data?.filter((request) => !isPending(request));
  const table = (rows: ChangeRequest[] | undefined, caption: string, empty: string) => (
    <DataTable
      caption={<span class="visually-hidden">{caption}</span>}
      columns={["Request", "State", "Features", "Author", "Created", "Scheduled"]}
      rows={rows}
      row={(request) => (
        <>
          <th scope="row">
            <a href={scope.link("change-requests", request.id)}>{request.title}</a>
            <div class="muted small">revision {request.revision}</div>
          </th>
          <td>
            <StateBadge request={request} />
          </td>
          <td>{request.changes.map((change) => change.feature).join(", ")}</td>
          <td>{actorName(request.createdBy)}</td>
          <td>{when(request.createdAt)}</td>
          <td>{request.scheduledAt ? when(request.scheduledAt) : <span class="muted">by hand</span>}</td>
        </>
      )}
      empty={<p class="empty-inline">{empty}</p>}
    />
  );
  return (
    <Page
      title="Change requests"
      subtitle={
        <>
          {policySentence(environment.name, policy.data)} <a href={scope.link("settings")}>Approval policy</a>
        </>
      }
    >
      <ErrorMessage error={requests.error ?? policy.error} />
      <section class="card" aria-labelledby="pending-title">
        <h2 id="pending-title">Pending</h2>
        {table(pending, `Pending change requests in ${environment.name}`, "Nothing is waiting: a change saved on a feature's page where approval is required appears here.")}
      </section>
      <section class="card" aria-labelledby="closed-title">
        <h2 id="closed-title">Applied, rejected and cancelled</h2>
        {table(closed, `Earlier change requests in ${environment.name}`, "No earlier requests.")}
      </section>
    </Page>
  );
}
