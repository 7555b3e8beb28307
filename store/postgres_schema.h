#pragma once
// The PostgreSQL store's schema and its forward migrations: the same numbered steps as SQLite's
// (store/schema.h, the same rules: never edited once released, a change is one step appended), in
// PostgreSQL's dialect. A step added to one list is added to the other under the same number; the
// conformance suite's schema-version test fails on the backend that lags.
#include <span>

#include "store/postgres.h"
#include "store/schema.h"

namespace trainyard::store {

std::span<const Migration> postgres_schema_migrations();

// The version recorded in the database (its current schema); 0 for an empty one.
int recorded_schema_version(pg::Connection& db);

// Applies the steps newer than the recorded version, each in its own transaction with its
// schema_version row, and returns the version afterwards. Daemons starting together on one database
// take turns (an advisory lock), so a step is applied once. Throws StoreError when the database is
// newer than `migrations` or a step fails.
int migrate(pg::Connection& db, std::span<const Migration> migrations);

}  // namespace trainyard::store
