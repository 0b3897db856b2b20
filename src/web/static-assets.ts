/**
 * The dashboard's built files (Vite's output in dist/dashboard), read once on first request and kept in memory with
 * their brotli and gzip forms: a few hundred KiB, compressed once instead of on every request. Nothing here runs
 * until a dashboard page is asked for, so the SDK paths never pay for it.
 */
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { extname, join, relative, resolve, sep } from "node:path";
import { brotliCompressSync, constants, gzipSync } from "node:zlib";

/** Where `npm run build` puts the dashboard: dist/dashboard, beside dist/src (this file compiles to dist/src/web). */
export const DEFAULT_DASHBOARD_DIR = resolve(import.meta.dirname, "../../dashboard");

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
const COMPRESSIBLE = new Set([".html", ".js", ".css", ".svg", ".json", ".txt", ".map"]);

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
  // Below a packet's worth, compression saves nothing that matters.
  if (COMPRESSIBLE.has(extension) && identity.length > 1024) {
    asset.br = brotliCompressSync(identity, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } });
    asset.gzip = gzipSync(identity, { level: 9 });
  }
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
        const name = relative(this.directory, path).split(sep).join("/");
        files.set(name, assetOf(path, name.startsWith("assets/")));
      }
    }
    this.files = files;
    return files;
  }
}
