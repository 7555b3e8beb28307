// Writes src/logic/api.gen.ts, the TypeScript types of the daemon's OpenAPI document, so the
// dashboard's view of the API cannot drift from what the daemon declares. With --check it writes
// nothing and fails when the file differs from what the document generates, so CI catches a schema
// change that was not carried over to the dashboard.
// Usage: node scripts/api-types.mjs [--check] PATH/openapi.json
import { readFileSync, writeFileSync } from "node:fs";
import { relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import openapiTS, { astToString } from "openapi-typescript";
import { firstDifference } from "./first-difference.mjs";

const web = fileURLToPath(new URL("..", import.meta.url));
const target = new URL("../src/logic/api.gen.ts", import.meta.url);
const targetName = "web/src/logic/api.gen.ts";

function fail(message, status = 1) {
  console.error(`api-types: ${message}`);
  process.exit(status);
}

function parseCommandLine() {
  try {
    const { values, positionals } = parseArgs({ options: { check: { type: "boolean" } }, allowPositionals: true });
    if (positionals.length === 1) return { check: values.check === true, documentPath: positionals[0] };
  } catch {
    // An unknown option is a usage error like a missing path.
  }
  fail("usage: npm run api-types -- [--check] PATH/openapi.json", 2);
}

function readDocument(path) {
  let text;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    fail(`cannot read the OpenAPI document ${path}: ${error.message}`);
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    fail(`${path} is not JSON: ${error.message}`);
  }
}

// Names no path: the file must come out the same whichever path the document is given by.
const header = [
  "// Generated from the daemon's OpenAPI document (GET /v1/openapi.json) by scripts/api-types.mjs",
  "// with openapi-typescript: do not edit. Regenerate with `npm run api-types -- PATH/openapi.json`.",
  "",
  "",
].join("\n");

async function generate(document) {
  // defaultNonNullable off: a property the document does not list as required may be absent, default
  // or not. emptyObjectsUnknown: an object without declared properties holds anything, not nothing.
  const ast = await openapiTS(document, { defaultNonNullable: false, emptyObjectsUnknown: true, silent: true });
  return astToString(ast);
}

// null when there is none yet, which --check reports as stale like any other difference.
function readCommitted() {
  try {
    return readFileSync(target, "utf8");
  } catch (error) {
    if (error.code === "ENOENT") return null;
    fail(`cannot read ${targetName}: ${error.message}`);
  }
}

function check(generated, documentPath) {
  const committed = readCommitted();
  if (committed === generated) {
    console.log(`api-types: ${targetName} is up to date with ${documentPath}`);
    return;
  }
  const where =
    committed === null ? "it does not exist" : describe(firstDifference(generated, committed));
  fail(
    `${targetName} is stale: it is not what ${documentPath} generates (${where}).\n` +
      `Regenerate it and commit the result: cd web && npm run api-types -- ${relative(web, resolve(documentPath))}`,
  );
}

function describe({ line, expected, actual }) {
  const quote = (text) => (text === undefined ? "the end of the file" : JSON.stringify(text));
  return `first at line ${line}: expected ${quote(expected)}, found ${quote(actual)}`;
}

const { check: checking, documentPath } = parseCommandLine();
const document = readDocument(documentPath);
let generated;
try {
  generated = header + (await generate(document));
} catch (error) {
  fail(`cannot generate types from ${documentPath}: ${error.message}`);
}
if (checking) {
  check(generated, documentPath);
} else {
  writeFileSync(target, generated);
  console.log(`api-types: wrote ${targetName} from ${documentPath}`);
}
