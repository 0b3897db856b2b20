import { createContext } from "preact";
import { useContext } from "preact/hooks";
import type { ValidationIssue } from "../api";
import { useScope } from "../scope";
import { COMMON_FIELDS, FILTER_TYPES, filterOfType, inputOf, isKnownOperator, OPERATORS, percentOf, thresholdOf, valuesFor, type Filter, type FilterType, type Operator } from "./model";

/** The app's segments, for the segment picker (loaded once by the feature page). */
export const SegmentsContext = createContext<{ id: string; name: string }[]>([]);

export interface FilterEditorProps {
  filter: Filter;
  onChange(filter: Filter): void;
  /** The filter's path as the server reports validation issues (`rules.0.filter.filters.1`). */
  path: string;
  issues: ValidationIssue[];
  featureKey: string;
  readOnly: boolean;
  onRemove?: () => void;
  /** Config variants cannot name segments (the service refuses them there). */
  allowSegments?: boolean;
  /** What screen readers call this node (`Rule 1`, `Condition 2 of group`). */
  label: string;
}

/** Issues about this node itself, not about the filters nested in it (those show at their own node). */
function ownIssues(issues: ValidationIssue[], path: string): ValidationIssue[] {
  return issues.filter((issue) => {
    if (issue.path === path) return true;
    if (!issue.path.startsWith(`${path}.`)) return false;
    const rest = issue.path.slice(path.length + 1);
    return !/^filters\.\d+(\.|$)/.test(rest) && !rest.startsWith("filter.");
  });
}

let nextId = 0;
const uid = (prefix: string) => `${prefix}-${++nextId}`;

/** One node of a rule tree, recursively: the visual editor of API.md §3's filters. */
export function FilterEditor(props: FilterEditorProps) {
  const { filter, onChange, path, issues, featureKey, readOnly, label } = props;
  const segments = useContext(SegmentsContext);
  const scope = useScope();
  const mine = ownIssues(issues, path);
  const errorId = mine.length > 0 ? `${path.replace(/\./g, "-")}-errors` : undefined;
  const invalid = mine.length > 0 ? true : undefined;
  const common = { disabled: readOnly, "aria-invalid": invalid, "aria-describedby": errorId };

  const header = (
    <div class="filter-head">
      <select
        aria-label={`${label}: kind`}
        value={filter.type}
        {...common}
        onChange={(event) => onChange(filterOfType((event.currentTarget as HTMLSelectElement).value as FilterType, featureKey, filter))}
      >
        {FILTER_TYPES.filter((type) => type.value !== "segment" || props.allowSegments !== false).map((type) => (
          <option value={type.value}>{type.label}</option>
        ))}
      </select>
      {props.onRemove && !readOnly && (
        <button type="button" class="link danger" onClick={props.onRemove} aria-label={`Remove ${label}`}>
          Remove
        </button>
      )}
    </div>
  );

  let body;
  switch (filter.type) {
    case "constant":
      body = (
        <label>
          Value{" "}
          <select aria-label="Value" {...common} value={String(filter.value)} onChange={(event) => onChange({ ...filter, value: (event.currentTarget as HTMLSelectElement).value === "true" })}>
            <option value="true">on for everyone</option>
            <option value="false">off for everyone</option>
          </select>
        </label>
      );
      break;
    case "context":
      body = <ContextFields filter={filter} onChange={onChange} common={common} />;
      break;
    case "rolloutPercentage":
      body = <RolloutFields filter={filter} onChange={onChange} common={common} />;
      break;
    case "group":
      body = (
        <div class="group">
          <div role="radiogroup" aria-label={`${label}: combine with`} class="segmented">
            {(["and", "or"] as const).map((operator) => (
              <label>
                <input type="radio" name={`${path}-op`} value={operator} checked={filter.operator === operator} disabled={readOnly} onChange={() => onChange({ ...filter, operator })} />
                {operator === "and" ? "ALL (AND)" : "ANY (OR)"}
              </label>
            ))}
          </div>
          <ol class="members">
            {filter.filters.map((member, index) => (
              <li>
                <FilterEditor
                  {...props}
                  filter={member}
                  path={`${path}.filters.${index}`}
                  label={`${label}, condition ${index + 1}`}
                  onChange={(changed) => onChange({ ...filter, filters: filter.filters.map((each, at) => (at === index ? changed : each)) })}
                  onRemove={() => onChange({ ...filter, filters: filter.filters.filter((_, at) => at !== index) })}
                />
              </li>
            ))}
          </ol>
          {!readOnly && (
            <button type="button" class="secondary" onClick={() => onChange({ ...filter, filters: [...filter.filters, filterOfType("context", featureKey)] })}>
              Add condition to {label}
            </button>
          )}
        </div>
      );
      break;
    case "segment": {
      const chosen = segments.find((segment) => segment.id === filter.segmentId);
      body = (
        <div class="row">
          <label>
            Segment
            <select aria-label="Segment" {...common} value={filter.segmentId} onChange={(event) => onChange({ ...filter, segmentId: (event.currentTarget as HTMLSelectElement).value })}>
              <option value="">choose a segment</option>
              {segments.map((segment) => (
                <option value={segment.id}>{segment.name}</option>
              ))}
              {filter.segmentId && !chosen && <option value={filter.segmentId}>{filter.segmentId}</option>}
            </select>
          </label>
          {scope && chosen && (
            <a href={scope.link("segments", chosen.id)} class="small">
              Open segment {chosen.name}
            </a>
          )}
        </div>
      );
      break;
    }
    case "negation":
      body = (
        <div class="negation">
          <FilterEditor {...props} filter={filter.filter} path={`${path}.filter`} label={`${label}, negated`} onChange={(changed) => onChange({ ...filter, filter: changed })} onRemove={undefined} />
        </div>
      );
      break;
  }

  return (
    <div class={`filter filter-${filter.type}`} role="group" aria-label={label} data-path={path}>
      {header}
      {body}
      {errorId && (
        <ul class="field-errors" id={errorId}>
          {mine.map((issue) => (
            <li>
              {issue.message} <span class="muted">({issue.path})</span>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

type Common = { disabled: boolean; "aria-invalid": boolean | undefined; "aria-describedby": string | undefined };

function ContextFields({ filter, onChange, common }: { filter: Extract<Filter, { type: "context" }>; onChange(filter: Filter): void; common: Common }) {
  const input = inputOf(filter.operator);
  const listId = uid("fields");
  const values = filter.values ?? [];
  const setFirst = (value: string) => onChange({ ...filter, values: [value] });
  return (
    <div class="row">
      <label>
        Field
        <input type="text" list={listId} value={filter.field} {...common} onInput={(event) => onChange({ ...filter, field: (event.currentTarget as HTMLInputElement).value })} />
        <datalist id={listId}>
          {COMMON_FIELDS.map((field) => (
            <option value={field} />
          ))}
        </datalist>
      </label>
      <label>
        Operator
        <select
          aria-label="Operator"
          value={filter.operator}
          {...common}
          onChange={(event) => {
            const operator = (event.currentTarget as HTMLSelectElement).value as Operator;
            const next = { type: "context" as const, field: filter.field, operator };
            const kept = valuesFor(operator, filter.values);
            onChange(kept === undefined ? next : { ...next, values: kept });
          }}
        >
          {OPERATORS.map((operator) => (
            <option value={operator.value}>{operator.label}</option>
          ))}
          {/* An operator the editor does not know (typed as JSON) is shown as it is, never as another one. */}
          {!isKnownOperator(filter.operator) && <option value={filter.operator}>{filter.operator} (unknown)</option>}
        </select>
      </label>
      {input === "text" && (
        <label>
          Value
          <input type="text" value={values[0] ?? ""} {...common} onInput={(event) => setFirst((event.currentTarget as HTMLInputElement).value)} />
        </label>
      )}
      {input === "number" && (
        <label>
          Number
          <input type="number" step="any" value={values[0] ?? ""} {...common} onInput={(event) => setFirst((event.currentTarget as HTMLInputElement).value)} />
        </label>
      )}
      {input === "days" && (
        <label>
          Days
          <input type="number" min="0" step="1" value={values[0] ?? ""} {...common} onInput={(event) => setFirst((event.currentTarget as HTMLInputElement).value)} />
        </label>
      )}
      {input === "date" && (
        <label>
          Date
          <input type="date" value={values[0] ?? ""} {...common} onInput={(event) => setFirst((event.currentTarget as HTMLInputElement).value)} />
        </label>
      )}
      {input === "list" && (
        <label>
          Values (one per line)
          <textarea
            rows={Math.min(6, Math.max(2, values.length))}
            value={values.join("\n")}
            {...common}
            onInput={(event) => onChange({ ...filter, values: (event.currentTarget as HTMLTextAreaElement).value.split("\n") })}
          />
        </label>
      )}
    </div>
  );
}

const ROLLOUT_ATTRIBUTES = ["company.id", "user.id"];

function RolloutFields({ filter, onChange, common }: { filter: Extract<Filter, { type: "rolloutPercentage" }>; onChange(filter: Filter): void; common: Common }) {
  const percent = percentOf(filter.partialRolloutThreshold);
  const listId = uid("attributes");
  const setPercent = (value: string) => {
    const number = Number(value);
    if (value !== "" && Number.isFinite(number)) onChange({ ...filter, partialRolloutThreshold: thresholdOf(number) });
  };
  return (
    <div class="row">
      <label class="grow">
        Rollout
        <input type="range" min="0" max="100" step="1" value={percent} {...common} aria-valuetext={`${percent} percent`} onInput={(event) => setPercent((event.currentTarget as HTMLInputElement).value)} />
      </label>
      <label>
        Percent
        <input type="number" min="0" max="100" step="0.001" value={percent} class="narrow" {...common} onInput={(event) => setPercent((event.currentTarget as HTMLInputElement).value)} />
      </label>
      <label>
        By attribute
        <input type="text" list={listId} value={filter.partialRolloutAttribute} {...common} onInput={(event) => onChange({ ...filter, partialRolloutAttribute: (event.currentTarget as HTMLInputElement).value })} />
        <datalist id={listId}>
          {ROLLOUT_ATTRIBUTES.map((attribute) => (
            <option value={attribute} />
          ))}
        </datalist>
      </label>
      <label>
        Hash key
        <input type="text" value={filter.key} {...common} onInput={(event) => onChange({ ...filter, key: (event.currentTarget as HTMLInputElement).value })} />
      </label>
    </div>
  );
}
