// Writes a .gz beside each built file (the daemon sends it to clients that accept gzip and needs no
// zlib of its own) and prints what the first load costs: the gzipped JS and CSS index.html names.
// Fails the build past the first-load budget (250 KB gzipped).
import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { gzipSync, constants } from "node:zlib";

const dist = new URL("../dist/", import.meta.url).pathname;
const budget = 250 * 1024;
const compressible = /\.(html|js|css|svg|json|txt|map)$/;

function walk(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? walk(path) : [path];
  });
}

const gzipped = new Map();
for (const file of walk(dist)) {
  if (!compressible.test(file)) continue;
  const zipped = gzipSync(readFileSync(file), { level: constants.Z_BEST_COMPRESSION });
  writeFileSync(file + ".gz", zipped);
  gzipped.set(file.slice(dist.length), zipped.length);
}

const index = readFileSync(join(dist, "index.html"), "utf8");
const firstLoad = [...index.matchAll(/(?:src|href)="\/(assets\/[^"]+\.(?:js|css))"/g)].map((m) => m[1]);
const total = firstLoad.reduce((sum, file) => sum + (gzipped.get(file) ?? 0), 0);
for (const file of firstLoad) console.log(`  ${file}: ${(gzipped.get(file) / 1024).toFixed(1)} KB gzipped`);
console.log(`dashboard first load: ${(total / 1024).toFixed(1)} KB gzipped JS + CSS (budget ${budget / 1024} KB)`);
if (total > budget) {
  console.error("dashboard: the first load is over budget");
  process.exit(1);
}
