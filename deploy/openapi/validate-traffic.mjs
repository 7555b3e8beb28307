// Checks the API traffic the integration tests recorded (tests/integration/cluster.cpp appends every
// exchange under TRAINYARD_API_TRAFFIC_DIR) against the OpenAPI document the daemon serves. The
// schemas are applied by Ajv (JSON Schema draft 2020-12, as OpenAPI 3.1 uses it, with ajv-formats
// checking formats such as date-time), which shares no
// code or table with the daemon; matching a path to its operation is done here, from the document.
// It fails when:
//   - an answer's body does not match the schema the document gives its operation and status;
//   - a request the daemon accepted (2xx) is not valid by the document (path and query parameters,
//     unknown query parameters, the body);
//   - a /v1 request the document does not describe was answered 2xx.
// It also reports how many of the requests the daemon refused as invalid (400) the document refuses.
// Usage: node validate-traffic.mjs OPENAPI_JSON TRAFFIC_DIR
import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";

const [documentFile, trafficDir] = process.argv.slice(2);
if (!documentFile || !trafficDir) {
  console.error("usage: node validate-traffic.mjs OPENAPI_JSON TRAFFIC_DIR");
  process.exit(2);
}
const doc = JSON.parse(readFileSync(documentFile, "utf8"));
const base = "https://trainyard.invalid/openapi.json";
const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats(ajv);
ajv.addSchema({ $id: base, components: doc.components });

const compiled = new Map();
function validator(schema) {
  const key = JSON.stringify(schema);
  if (!compiled.has(key)) {
    // A component's own $refs ("#/components/...") resolve against the document it came from.
    const rebased = JSON.parse(key.replaceAll('"#/components/', `"${base}#/components/`));
    compiled.set(key, ajv.compile(rebased));
  }
  return compiled.get(key);
}
function problems(schema, value) {
  const validate = validator(schema);
  if (validate(value)) return [];
  return validate.errors.map((e) => `${e.instancePath || "(root)"} ${e.message}`);
}

// Literal segments win over {name} ones, so /v1/jobs/queue is not taken for /v1/jobs/{id}.
const templates = Object.keys(doc.paths)
  .map((template) => {
    const names = [];
    const source = template.replace(/[.*+?^$()|[\]\\]/g, "\\$&").replace(/\{([^}]+)\}/g, (_, name) => {
      names.push(name);
      return "([^/]+)";
    });
    return { template, names, regex: new RegExp(`^${source}$`) };
  })
  .sort((a, b) => a.names.length - b.names.length);

function match(path) {
  for (const t of templates) {
    const m = t.regex.exec(path);
    if (m) return { template: t.template, params: Object.fromEntries(t.names.map((n, i) => [n, decodeURIComponent(m[i + 1])])) };
  }
  return null;
}

// A parameter's text as its schema reads it: a whole number for an integer, else the text itself.
function coerce(text, schema) {
  const type = schema?.type;
  if ((type === "integer" || type === "number") && /^-?[0-9]+$/.test(text)) return Number(text);
  if (type === "boolean" && (text === "true" || text === "false")) return text === "true";
  return text;
}

function requestProblems(operation, params, query, body) {
  const found = [];
  const declared = operation.parameters ?? [];
  for (const p of declared.filter((p) => p.in === "path")) {
    found.push(...problems(p.schema, coerce(params[p.name], p.schema)).map((e) => `path ${p.name}: ${e}`));
  }
  for (const [name, text] of query) {
    const p = declared.find((d) => d.in === "query" && d.name === name);
    if (!p) found.push(`query ${name}: not a parameter of this operation`);
    else found.push(...problems(p.schema, coerce(text, p.schema)).map((e) => `query ${name}: ${e}`));
  }
  for (const p of declared.filter((p) => p.in === "query" && p.required && !query.has(p.name))) {
    found.push(`query ${p.name}: required`);
  }
  const content = operation.requestBody?.content?.["application/json"];
  if (!operation.requestBody) {
    if (body !== "") found.push("body: this operation takes none");
  } else if (body === "") {
    if (operation.requestBody.required) found.push("body: required");
  } else {
    let value;
    try {
      value = JSON.parse(body);
    } catch {
      return [...found, "body: not JSON"];
    }
    if (content) found.push(...problems(content.schema, value).map((e) => `body: ${e}`));
  }
  return found;
}

function responseProblems(operation, status, contentType, body) {
  const response = operation.responses[String(status)] ?? operation.responses.default;
  if (!response) return [`status ${status}: not documented`];
  if (!response.content) return body === "" ? [] : [`status ${status}: documented without a body, answered one`];
  const mediaType = (contentType ?? "").split(";")[0].trim();
  const documented = response.content[mediaType];
  if (!documented) return [`status ${status}: answered ${mediaType}, documented ${Object.keys(response.content).join(", ")}`];
  if (mediaType !== "application/json") return [];
  let value;
  try {
    value = JSON.parse(body);
  } catch {
    return [`status ${status}: the body is not JSON`];
  }
  return problems(documented.schema, value).map((e) => `response ${status}: ${e}`);
}

const failures = [];
let exchanges = 0;
const refused = { total: 0, caught: 0, missed: new Map() };
const operationsSeen = new Set();
for (const file of readdirSync(trafficDir).filter((f) => f.endsWith(".jsonl"))) {
  for (const line of readFileSync(join(trafficDir, file), "utf8").split("\n")) {
    if (line === "") continue;
    const x = JSON.parse(line);
    ++exchanges;
    const url = new URL(x.target, "http://daemon");
    const where = `${x.test}: ${x.method} ${x.target} -> ${x.status}`;
    const m = match(url.pathname);
    const operation = m && doc.paths[m.template][x.method.toLowerCase()];
    if (!operation) {
      if (url.pathname.startsWith("/v1/") && x.status >= 200 && x.status < 300) failures.push(`${where}: not in the document`);
      continue;
    }
    operationsSeen.add(`${x.method} ${m.template}`);
    for (const p of responseProblems(operation, x.status, x.content_type, x.response)) failures.push(`${where}: ${p}`);
    const invalid = requestProblems(operation, m.params, url.searchParams, x.request);
    if (x.status >= 200 && x.status < 300) {
      for (const p of invalid) failures.push(`${where}: accepted, but the document refuses the request: ${p}`);
    } else if (x.status === 400) {
      ++refused.total;
      if (invalid.length > 0) ++refused.caught;
      else {
        const key = `${x.method} ${m.template}: ${JSON.parse(x.response)?.error?.field ?? "?"}`;
        refused.missed.set(key, (refused.missed.get(key) ?? 0) + 1);
      }
    }
  }
}

const operations = Object.values(doc.paths).reduce((n, item) => n + Object.keys(item).length, 0);
console.log(
  `openapi traffic: ${exchanges} exchanges over ${operationsSeen.size} of ${operations} operations; ` +
    `${refused.caught} of ${refused.total} requests the daemon refused as invalid (400) are invalid by the document too`,
);
if (process.env.OPENAPI_TRAFFIC_VERBOSE) {
  for (const [key, n] of [...refused.missed].sort()) console.log(`  refused by the daemon only: ${key} (${n})`);
}
if (exchanges === 0) {
  console.error(`openapi traffic: nothing recorded under ${trafficDir}`);
  process.exit(1);
}
if (failures.length > 0) {
  const distinct = [...new Set(failures)];
  console.error(`openapi traffic: ${distinct.length} exchanges disagree with the document:`);
  for (const f of distinct.slice(0, 60)) console.error(`  ${f}`);
  process.exit(1);
}
