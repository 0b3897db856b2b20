/**
 * The dashboard's built files (Vite's output in dist/dashboard), read once on first request and kept in memory with
 * the brotli and gzip forms `npm run build` wrote beside them (tools/dashboard/precompress.ts): a few hundred KiB,
 * compressed at build time so that the service's event loop only reads files. Nothing here runs until a dashboard
 * page is asked for, so the SDK paths never pay for it.
 */
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { extname, join, relative, resolve, sep } from "node:path";

/** Where `npm run build` puts the dashboard: dist/dashboard, beside dist/src (this file compiles to dist/src/routes/dashboard). */
export const DEFAULT_DASHBOARD_DIR = resolve(import.meta.dirname, "../../../dashboard");

const CONTENT_TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".json": "application/json",
  ".txt": "text/plain; charset=utf-8",
  ".woff2": "font/woff2",
  ".map": "application/json",
};

/** Types worth compressing; images and fonts are compressed already. */
export const COMPRESSIBLE_EXTENSIONS: ReadonlySet<string> = new Set([".html", ".js", ".css", ".svg", ".json", ".txt", ".map"]);
/** Below a packet's worth, compression saves nothing that matters. */
export const COMPRESS_MIN_BYTES = 1024;

export interface StaticAsset {
  contentType: string;
  /** Vite names built assets `name-<hash>.ext`: their bytes never change under that name. */
  immutable: boolean;
  etag: string;
  identity: Uint8Array;
  br?: Uint8Array;
  gzip?: Uint8Array;
}

function listFiles(directory: string): string[] {
  return readdirSync(directory).flatMap((name) => {
    const path = join(directory, name);
    return statSync(path).isDirectory() ? listFiles(path) : [path];
  });
}

function assetOf(path: string, immutable: boolean): StaticAsset {
  const identity = readFileSync(path);
  const extension = extname(path);
  const asset: StaticAsset = {
    contentType: CONTENT_TYPES[extension] ?? "application/octet-stream",
    immutable,
    etag: `"${createHash("sha256").update(identity).digest("base64url").slice(0, 22)}"`,
    identity,
  };
  // Served compressed only when the build wrote the compressed forms (a bare `vite build` serves identity).
  if (existsSync(`${path}.br`)) asset.br = readFileSync(`${path}.br`);
  if (existsSync(`${path}.gz`)) asset.gzip = readFileSync(`${path}.gz`);
  return asset;
}

/** The built dashboard by URL path below `/dashboard/` (`index.html`, `assets/index-abc123.js`). */
export class StaticAssets {
  private files: Map<string, StaticAsset> | undefined;

  constructor(private readonly directory: string = DEFAULT_DASHBOARD_DIR) {}

  /** Whether the dashboard was built at all (a server started from `tsc` output alone has none). */
  available(): boolean {
    return this.load().size > 0;
  }

  get(relativePath: string): StaticAsset | undefined {
    return this.load().get(relativePath);
  }

  private load(): Map<string, StaticAsset> {
    if (this.files) return this.files;
    const files = new Map<string, StaticAsset>();
    if (existsSync(this.directory)) {
      for (const path of listFiles(this.directory)) {
        if (path.endsWith(".br") || path.endsWith(".gz")) continue;
        const name = relative(this.directory, path).split(sep).join("/");
        files.set(name, assetOf(path, name.startsWith("assets/")));
      }
    }
    this.files = files;
    return files;
  }
}
