/** Debian's Chromium, driven by playwright-core (no browser download): where it lives and how tests start it. */
import { existsSync, readFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { chromium, type Browser } from "playwright-core";

export const CHROMIUM = "/usr/bin/chromium";
export const HAS_CHROMIUM = existsSync(CHROMIUM);
/** Headless, and without the background connections that this machine's closed network refuses. */
export const CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"];

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
}

export interface PageServer {
  /** `http://127.0.0.1:<port>/` */
  url: string;
  close(): Promise<void>;
}

/**
 * Serves test pages and their scripts on 127.0.0.1 from another origin than the service (as a product's site is):
 * each path answers its body; `/favicon.ico` answers 204, since a 404 would show up as a console error in the page.
 */
export async function servePages(pages: Record<string, { contentType: string; body: string | Buffer }>): Promise<PageServer> {
  const server = createServer((request, response) => {
    const page = pages[new URL(request.url ?? "/", "http://page").pathname];
    if (page) response.writeHead(200, { "content-type": page.contentType }).end(page.body);
    else if (request.url === "/favicon.ico") response.writeHead(204).end();
    else response.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** Script files (path → file on disk) as `servePages` entries. */
export function scriptFiles(files: Record<string, string>): Record<string, { contentType: string; body: Buffer }> {
  return Object.fromEntries(Object.entries(files).map(([path, file]) => [path, { contentType: "text/javascript", body: readFileSync(file) }]));
}
