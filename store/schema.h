#pragma once
// The store's schema and its forward migrations.
//
// Design note: the schema is an ordered list of steps, never edited once released; a change is a
// new step appended at the end. Opening a database applies every step newer than the version it
// records, each in its own transaction together with its row in `schema_version`, so a crash
// between steps leaves a database at a well-defined older version that the next open finishes.
// There are no down-migrations: a database newer than the running code is refused rather than
// guessed at, because an older daemon could silently drop what a newer one stored.
#include <span>
#include <string_view>

#include "store/sqlite.h"

namespace trainyard::store {

struct Migration {
  int version;  // 1, 2, 3, ... in order, no gaps
  std::string_view name;
  std::string_view sql;
};

// Trainyard's schema history, oldest first.
std::span<const Migration> schema_migrations();
// The version a database has once every step of `schema_migrations()` is applied.
int latest_schema_version();

// The version recorded in the database; 0 for a new, empty file.
int recorded_schema_version(sqlite::Connection& db);

// Applies the steps of `migrations` newer than the recorded version and returns the version the
// database is at afterwards. Throws StoreError when the database records a version newer than
// the last step of `migrations`, or when a step fails (that step leaves nothing behind).
int migrate(sqlite::Connection& db, std::span<const Migration> migrations);

}  // namespace trainyard::store
