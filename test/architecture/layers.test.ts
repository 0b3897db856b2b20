/**
 * The folders under src/ are layers (docs/ARCHITECTURE.md "The floors, and who may import whom"). Read from
 * the code's own imports (runtime and type imports, tests left out): no two files import each other in a loop, the
 * folders' graph has no loop, and the floors only import downwards.
 */
import { readdirSync, readFileSync, statSync, existsSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "../..");
const IMPORT = /(?:import|export)\s+(?:type\s+)?(?:[^'";]*?\s+from\s+)?["'](\.{1,2}\/[^"']+)["']/g;

function sourceFiles(folder: string): string[] {
  const found: string[] = [];
  for (const name of readdirSync(folder)) {
    const path = join(folder, name);
    if (statSync(path).isDirectory()) found.push(...sourceFiles(path));
    else if (/\.tsx?$/.test(name) && !/\.(test|d)\.tsx?$/.test(name)) found.push(path);
  }
  return found;
}

function resolveImport(from: string, specifier: string): string | undefined {
  const base = resolve(dirname(from), specifier).replace(/\.js$/, "");
  return [`${base}.ts`, `${base}.tsx`, join(base, "index.ts")].find((candidate) => existsSync(candidate));
}

/** File → the files it imports, for every source file under the given roots. */
function importGraph(roots: string[]): Map<string, Set<string>> {
  const graph = new Map<string, Set<string>>();
  for (const file of roots.flatMap((root) => sourceFiles(join(ROOT, root)))) {
    const targets = new Set<string>();
    for (const match of readFileSync(file, "utf8").matchAll(IMPORT)) {
      const target = resolveImport(file, match[1]!);
      if (target !== undefined && target !== file) targets.add(target);
    }
    graph.set(relative(ROOT, file), new Set([...targets].map((target) => relative(ROOT, target))));
  }
  return graph;
}

/** Strongly connected components with more than one member (Tarjan). */
function loops(graph: Map<string, Set<string>>): string[][] {
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (node: string): void => {
    index.set(node, counter);
    low.set(node, counter++);
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!graph.has(next)) continue;
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (onStack.has(next)) low.set(node, Math.min(low.get(node)!, index.get(next)!));
    }
    if (low.get(node) !== index.get(node)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== node);
    if (component.length > 1) found.push(component.sort());
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return found;
}

/** `src/routes/sdk/x.ts` → `routes`; a file directly under src/ is its own room. */
function folderOf(file: string): string {
  const parts = file.split("/");
  if (parts[0] !== "src") return parts[0]!;
  return parts.length === 2 ? parts[1]! : parts[1]!;
}

function folderGraph(graph: Map<string, Set<string>>): Map<string, Set<string>> {
  const folders = new Map<string, Set<string>>();
  for (const [file, targets] of graph) {
    const from = folderOf(file);
    const set = folders.get(from) ?? new Set<string>();
    for (const target of targets) if (folderOf(target) !== from) set.add(folderOf(target));
    folders.set(from, set);
  }
  return folders;
}

/** The floors of docs/ARCHITECTURE.md, top first; a folder may import its own floor's folders (one way) and lower. */
const FLOORS: string[][] = [
  ["main.ts", "cli", "composition"],
  ["routes"],
  ["serving", "cluster"],
  ["management", "accounts", "analytics", "surveys", "tracking", "features", "evaluation", "tenancy"],
  ["http", "storage", "schemas", "config", "observability", "errors"],
];

const graph = importGraph(["src", "native-free", "bench", "tools"]);

describe("layers (docs/ARCHITECTURE.md)", () => {
  it("has no circle of files importing each other", () => {
    expect(loops(graph)).toEqual([]);
  });

  it("has no loop between the folders of src/", () => {
    const srcOnly = new Map([...graph].filter(([file]) => file.startsWith("src/")));
    expect(loops(folderGraph(srcOnly))).toEqual([]);
  });

  it("imports only down the floors", () => {
    const floorOf = new Map(FLOORS.flatMap((folders, floor) => folders.map((folder) => [folder, floor] as const)));
    const upward: string[] = [];
    for (const [file, targets] of graph) {
      if (!file.startsWith("src/") || file.startsWith("src/dashboard/")) continue;
      const from = floorOf.get(folderOf(file));
      expect(from, `${file}: its folder is on no floor of FLOORS`).toBeDefined();
      for (const target of targets) {
        const to = floorOf.get(folderOf(target));
        if (to !== undefined && to < from!) upward.push(`${file} -> ${target}`);
      }
    }
    expect(upward).toEqual([]);
  });

  it("keeps requests and responses in the routes wing and the front ends", () => {
    const knowsHttp = [...graph].filter(
      ([file, targets]) =>
        file.startsWith("src/") &&
        !/^src\/(routes|http|main\.ts|cli|composition)/.test(file) &&
        [...targets].some((target) => target.startsWith("src/routes/")),
    );
    expect(knowsHttp.map(([file]) => file)).toEqual([]);
  });

  it("keeps the routes to the ports: no route imports the cluster", () => {
    const intoCluster = [...graph].filter(([file, targets]) => file.startsWith("src/routes/") && [...targets].some((target) => target.startsWith("src/cluster/")));
    expect(intoCluster.map(([file]) => file)).toEqual([]);
  });

  it("has every folder of src/ on a floor, and at most 20 of them", () => {
    const folders = readdirSync(join(ROOT, "src")).filter((name) => statSync(join(ROOT, "src", name)).isDirectory());
    // The dashboard is the browser's code, built apart: on no floor of the server.
    const onFloors = new Set([...FLOORS.flat(), "dashboard"]);
    expect(folders.filter((folder) => !onFloors.has(folder))).toEqual([]);
    expect(folders.length).toBeLessThanOrEqual(20);
  });

  it("reads the dashboard's rule and feature types from the server's schemas", () => {
    const dashboardImports = [...graph].filter(([file]) => file.startsWith("src/dashboard/")).flatMap(([, targets]) => [...targets]);
    expect(dashboardImports.some((target) => target.startsWith("src/schemas/"))).toBe(true);
  });
});
