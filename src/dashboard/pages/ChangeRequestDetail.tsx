import { useState } from "preact/hooks";
import type { Scope } from "../scope";
import { ApiError, enc, get } from "../api";
import { ChangeDiff } from "../components/ChangeDiff";
import { loadPolicy, loadRequest, type ChangeRequest } from "../governance";
import { actorName, ErrorMessage, Page, useLoad, when } from "../ui";
import { StateBadge } from "./ChangeRequests";
import { RequestActions } from "./RequestActions";

/** One change request: what it changes (rule by rule), its reviews, and what this member may do with it. */
export function ChangeRequestDetail({ scope, requestId }: { scope: Scope; requestId: string }) {
  const { environmentId, environment, app } = scope;
  const request = useLoad(() => loadRequest(environmentId, requestId), [environmentId, requestId]);
  const policy = useLoad(() => loadPolicy(environmentId), [environmentId]);
  const segments = useLoad(() => get<{ segments: { id: string; name: string }[] }>(`/admin/apps/${enc(app.id)}/segments`).then((answer) => new Map(answer.segments.map((segment) => [segment.id, segment.name]))), [app.id]);
  const [notice, setNotice] = useState<string | undefined>();
  // What the last action answered: the request as it now is (diffs included), shown in the same render as its notice.
  const [latest, setLatest] = useState<ChangeRequest | undefined>();

  if (request.error instanceof ApiError && request.error.status === 404) {
    return (
      <Page title="Change request not found">
        <div class="empty">
          <p>
            {environment.name} has no change request <code>{requestId}</code>: the link may name another environment.
          </p>
          <a href={scope.link("change-requests")}>See the change requests of {environment.name}</a>
        </div>
      </Page>
    );
  }
  const data = latest ?? request.data;
  const changed = (next: ChangeRequest, message: string) => {
    setLatest(next);
    setNotice(message);
  };
  return (
    <Page
      title={data?.title ?? "Change request"}
      titleExtra={
        data && (
          <p class="feature-key">
            <StateBadge request={data} />
            <span class="muted small">revision {data.revision}</span>
            <span class="badge badge-env">{environment.name}</span>
          </p>
        )
      }
      subtitle={data?.description ?? undefined}
    >
      <ErrorMessage error={request.error ?? policy.error ?? segments.error} />
      <div aria-live="polite" class="notice-slot">
        {notice && <p class="success">{notice}</p>}
      </div>
      {data && policy.data && (
        <div class="feature-layout request-layout">
          <div class="feature-main">
            <section class="card" aria-labelledby="changes-title">
              <h2 id="changes-title">Changes</h2>
              <p class="muted small">
                {data.state === "applied"
                  ? "Applied: each change is compared with the feature's rules as they are now, which it wrote."
                  : "Each change is compared with the feature's rules as they are now in " + environment.name + "."}
              </p>
              {data.changes.map((change) => (
                <ChangeDiff change={change} link={scope.link("features", change.feature)} segmentNames={segments.data ?? new Map()} settled={data.state === "applied" || data.state === "cancelled"} />
              ))}
            </section>
            <Reviews request={data} />
          </div>
          <div class="feature-side">
            <section class="card" aria-labelledby="request-about">
              <h2 id="request-about">About this request</h2>
              <dl class="facts">
                <dt>State</dt>
                <dd>
                  <StateBadge request={data} />
                  {data.suspendedReason && <div class="small">{data.suspendedReason}</div>}
                </dd>
                <dt>Approvals</dt>
                <dd>
                  {policy.data.requireApproval ? `${data.approvals.length} of ${policy.data.minApprovals} needed, on revision ${data.revision}` : `${data.approvals.length}; ${environment.name} requires none`}
                </dd>
                <dt>Author</dt>
                <dd>{actorName(data.createdBy)}</dd>
                <dt>Created</dt>
                <dd>{when(data.createdAt)}</dd>
                <dt>Applies</dt>
                <dd>{data.appliedAt ? `applied ${when(data.appliedAt)}` : data.scheduledAt ? `at ${when(data.scheduledAt)}${data.state === "scheduled" ? "" : ", once approved"}` : data.state === "approved" ? "by hand: ready now" : "by hand, once approved"}</dd>
              </dl>
            </section>
            <RequestActions scope={scope} request={data} policy={policy.data} onChanged={changed} />
          </div>
        </div>
      )}
    </Page>
  );
}

function Reviews({ request }: { request: ChangeRequest }) {
  return (
    <section class="card" aria-labelledby="reviews-title">
      <h2 id="reviews-title">Reviews</h2>
      {request.reviews.length === 0 ? (
        <p class="empty-inline">No reviews yet.</p>
      ) : (
        <ol class="history">
          {[...request.reviews].reverse().map((review) => (
            <li>
              <strong>{actorName(review.actor)}</strong> {review.decision === "approve" ? "approved" : "rejected"} revision {review.revision}
              <span class="muted small"> · {when(review.at)}</span>
              {review.revision !== request.revision && <span class="muted small"> (an edit since voided it)</span>}
              {review.comment && <blockquote class="review-comment">{review.comment}</blockquote>}
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}
