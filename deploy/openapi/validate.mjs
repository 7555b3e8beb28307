// Validates an OpenAPI document (the daemon's GET /v1/openapi.json, written to FILE) against the
// official OpenAPI schema of its version, and checks that every $ref resolves.
// Usage: node validate.mjs FILE
import { Validator } from "@seriousme/openapi-schema-validator";

const file = process.argv[2];
if (!file) {
  console.error("usage: node validate.mjs FILE");
  process.exit(2);
}
const validator = new Validator();
const result = await validator.validate(file);
if (!result.valid) {
  console.error(`openapi: ${file} is not a valid OpenAPI ${validator.version} document:`);
  console.error(JSON.stringify(result.errors, null, 2));
  process.exit(1);
}
const paths = Object.keys(validator.resolveRefs().paths).length;
console.log(`openapi: ${file} is valid OpenAPI ${validator.version} (${paths} paths)`);
