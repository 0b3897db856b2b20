/**
 * After `vite build`: writes `<file>.br` (brotli, quality 11) and `<file>.gz` (gzip, level 9) beside each text file of
 * the built dashboard over 1 KiB. Compressing at build time keeps the service's event loop free of it: the first
 * dashboard request only reads files (compressing them there took ~150 ms of main-thread time).
 */
import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { extname, join, resolve } from "node:path";
import { brotliCompressSync, constants, gzipSync } from "node:zlib";
import { COMPRESSIBLE_EXTENSIONS, COMPRESS_MIN_BYTES, DEFAULT_DASHBOARD_DIR } from "../../src/routes/dashboard/static-assets.js";

function files(directory: string): string[] {
  return readdirSync(directory).flatMap((name) => {
    const path = join(directory, name);
    return statSync(path).isDirectory() ? files(path) : [path];
  });
}

const directory = resolve(process.argv[2] ?? DEFAULT_DASHBOARD_DIR);
let written = 0;
for (const path of files(directory)) {
  if (!COMPRESSIBLE_EXTENSIONS.has(extname(path))) continue;
  const bytes = readFileSync(path);
  if (bytes.length <= COMPRESS_MIN_BYTES) continue;
  writeFileSync(`${path}.br`, brotliCompressSync(bytes, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }));
  writeFileSync(`${path}.gz`, gzipSync(bytes, { level: 9 }));
  written++;
}
console.log(`dashboard: ${written} file(s) precompressed in ${directory}`);
