import { useEffect, useRef, useState } from "preact/hooks";
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";
import { enc, get } from "../api";
import { AdoptionTable } from "../components/AdoptionTable";
import { Card } from "../components/Card";
import { DataTable } from "../components/DataTable";
import { EntityLink } from "../components/EntityLink";
import { Field } from "../components/Field";
import { Pager, useCursorPages } from "../components/Pager";
import { ErrorMessage, useLoad } from "../ui";

export interface FeatureFigures {
  key: string;
  companies: { none: number; tried: number; retained: number; churned: number; adopted: number };
  satisfaction: { count: number; average: number | null };
  exposure: { companies: number };
}

interface CompanyState {
  companyId: string;
  state: string;
  usageDays: number;
  lastUsedAt: string | null;
  satisfaction: { count: number; average: number | null };
}

const DAY_MS = 86_400_000;
const WEEKS = 8;
const PAGE = 20;

function isoDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** The window ending with today (UTC), as the analytics API's `from`/`to`. */
export function windowOf(days: number): { from: string; to: string } {
  const tomorrow = Math.floor(Date.now() / DAY_MS) * DAY_MS + DAY_MS;
  return { from: isoDay(tomorrow - days * DAY_MS), to: isoDay(tomorrow) };
}

/**
 * A feature's company funnel (none → tried → adopted: retained / churned), satisfaction and exposure over a window,
 * a weekly chart of the same figures, and the companies in each state, paged. Every number comes from the
 * analytics API (docs/ANALYTICS.md).
 */
export function Adoption({ environmentId, featureKey }: { environmentId: string; featureKey: string }) {
  const [days, setDays] = useState(30);
  const base = `/admin/environments/${enc(environmentId)}/analytics`;
  const range = windowOf(days);
  const figures = useLoad(
    () => get<{ features: FeatureFigures[] }>(`${base}/features?from=${range.from}&to=${range.to}`).then((answer) => answer.features.find((each) => each.key === featureKey)),
    [base, featureKey, days],
  );
  const f = figures.data;
  return (
    <Card id="adoption-title" title="Adoption and satisfaction">
      <Field label="Window">
        <select value={String(days)} onChange={(event) => setDays(Number((event.currentTarget as HTMLSelectElement).value))}>
          <option value="7">last 7 days</option>
          <option value="30">last 30 days</option>
          <option value="90">last 90 days</option>
        </select>
      </Field>
      <ErrorMessage error={figures.error} />
      {f && (
        <dl class="figures" data-testid="funnel">
          {(["none", "tried", "adopted", "retained", "churned"] as const).map((state) => (
            <div>
              <dt>{state === "none" ? "Not used" : state}</dt>
              <dd>{f.companies[state]}</dd>
            </div>
          ))}
          <div>
            <dt>Satisfaction</dt>
            <dd>{f.satisfaction.average === null ? "—" : `${f.satisfaction.average.toFixed(1)} / 5 (${f.satisfaction.count})`}</dd>
          </div>
          <div>
            <dt>Exposed companies</dt>
            <dd>{f.exposure.companies}</dd>
          </div>
        </dl>
      )}
      <WeeklyChart base={base} featureKey={featureKey} />
      <CompanyStates base={base} featureKey={featureKey} range={range} />
    </Card>
  );
}

function WeeklyChart({ base, featureKey }: { base: string; featureKey: string }) {
  const target = useRef<HTMLDivElement>(null);
  const weeks = useLoad(async () => {
    const end = Math.floor(Date.now() / DAY_MS) * DAY_MS + DAY_MS;
    const starts = Array.from({ length: WEEKS }, (_, index) => end - (WEEKS - index) * 7 * DAY_MS);
    const answers = await Promise.all(
      starts.map((start) => get<{ features: FeatureFigures[] }>(`${base}/features?from=${isoDay(start)}&to=${isoDay(start + 7 * DAY_MS)}`)),
    );
    return starts.map((start, index) => {
      const figures = answers[index]!.features.find((each) => each.key === featureKey);
      return { start, tried: figures?.companies.tried ?? 0, adopted: figures?.companies.adopted ?? 0, exposed: figures?.exposure.companies ?? 0 };
    });
  }, [base, featureKey]);

  useEffect(() => {
    if (!weeks.data || !target.current) return;
    const data: uPlot.AlignedData = [weeks.data.map((week) => week.start / 1000), weeks.data.map((week) => week.tried), weeks.data.map((week) => week.adopted), weeks.data.map((week) => week.exposed)];
    const last = weeks.data.length - 1;
    const chart = target.current;
    // The tick labels drawn on the canvas, kept on the element too (a test reads what a person sees).
    const mark = (name: "xTicks" | "yTicks", labels: string[]) => {
      chart.dataset[name] = labels.filter(Boolean).join("|");
      return labels;
    };
    const weekOf = (seconds: number) => new Date(seconds * 1000).toLocaleDateString(undefined, { month: "short", day: "numeric", timeZone: "UTC" });
    const count = (_: uPlot, value: number | null) => (value === null || value === undefined ? "–" : String(value));
    // The legend shows the newest week until the pointer is over another one (never "--").
    const showLatest = (plot: uPlot) => {
      if (plot.cursor.idx === null || plot.cursor.idx === undefined) plot.setLegend({ idx: last });
    };
    const plot = new uPlot(
      {
        width: Math.max(260, target.current.clientWidth),
        height: 220,
        legend: { live: true },
        series: [
          { label: "Week of", value: (_, seconds) => (seconds === null ? "–" : weekOf(seconds)) },
          { label: "tried", stroke: "#b35c00", width: 2, value: count },
          { label: "adopted", stroke: "#1e6b2f", width: 2, value: count },
          { label: "exposed", stroke: "#0645ad", width: 2, dash: [6, 4], value: count },
        ],
        scales: { x: { time: false }, y: { range: (_, __, max) => [0, Math.max(4, Math.ceil(max))] } },
        axes: [
          // One label per point, at the week it stands for.
          { splits: () => data[0] as number[], values: (_, splits) => mark("xTicks", splits.map(weekOf)), space: 40 },
          // Counts of companies: whole numbers only.
          { label: "companies", incrs: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10_000], values: (_, splits) => mark("yTicks", splits.map((value) => (Number.isInteger(value) ? String(value) : ""))) },
        ],
        hooks: { ready: [showLatest], setCursor: [showLatest] },
      },
      data,
      target.current,
    );
    // The chart follows its box (a phone turned, a window resized) instead of overflowing it.
    const resize = new ResizeObserver(() => plot.setSize({ width: Math.max(260, chart.clientWidth), height: 220 }));
    resize.observe(chart);
    return () => (resize.disconnect(), plot.destroy());
  }, [weeks.data]);

  return (
    <figure class="chart">
      <figcaption>Companies per week, last {WEEKS} weeks</figcaption>
      <ErrorMessage error={weeks.error} />
      <div ref={target} aria-hidden="true" />
      {weeks.data && (
        <DataTable
          class="visually-hidden"
          caption="Companies per week"
          columns={["Week of", "Tried", "Adopted", "Exposed"]}
          rows={weeks.data}
          row={(week) => (
            <>
              <td>{isoDay(week.start)}</td>
              <td>{week.tried}</td>
              <td>{week.adopted}</td>
              <td>{week.exposed}</td>
            </>
          )}
        />
      )}
    </figure>
  );
}

function CompanyStates({ base, featureKey, range }: { base: string; featureKey: string; range: { from: string; to: string } }) {
  const pages = useCursorPages();
  const cursor = pages.cursor;
  useEffect(pages.first, [range.from, featureKey]);
  const page = useLoad(() => {
    const query = new URLSearchParams({ from: range.from, to: range.to, limit: String(PAGE) });
    if (cursor) query.set("after", cursor);
    return get<{ companies: CompanyState[]; next: string | null }>(`${base}/features/${enc(featureKey)}/companies?${query}`);
  }, [base, featureKey, range.from, cursor]);
  return (
    <>
      <h3>Companies</h3>
      <ErrorMessage error={page.error} />
      <AdoptionTable nameColumn="Company" rows={page.data?.companies} name={(company) => <EntityLink kind="companies" id={company.companyId} />} />
      <Pager pages={pages} next={page.data?.next} noun="companies" />
    </>
  );
}
