#include "store/store_url.h"

#include "proto/errors.h"
#include "store/postgres.h"
#include "store/postgres_store.h"
#include "store/sqlite_store.h"

namespace trainyard::store {
namespace {

constexpr std::string_view kSqlite = "sqlite://";

bool starts_with_any(std::string_view url, std::initializer_list<std::string_view> prefixes) {
  for (std::string_view prefix : prefixes) {
    if (url.starts_with(prefix)) return true;
  }
  return false;
}

}  // namespace

StoreUrl parse_store_url(std::string_view url, const std::string& field) {
  if (url.starts_with(kSqlite)) {
    const std::string_view file = url.substr(kSqlite.size());
    if (file.empty()) throw InvalidInput(field, "sqlite:// needs a file path, e.g. sqlite:///var/lib/trainyard/trainyard.db");
    return StoreUrl{StoreUrl::Kind::sqlite, std::string(file)};
  }
  if (starts_with_any(url, {"postgresql://", "postgres://"})) {
    const std::string uri(url);
    if (const auto parsed = pg::check_conninfo(uri, field); !parsed) {
      throw InvalidInput(parsed.error().field, parsed.error().message);
    }
    return StoreUrl{StoreUrl::Kind::postgresql, uri};
  }
  throw InvalidInput(field, "must start with sqlite:// or postgresql://");
}

std::unique_ptr<Store> open_store(const StoreUrl& url) {
  if (url.kind == StoreUrl::Kind::postgresql) return std::make_unique<PostgresStore>(url.target);
  return std::make_unique<SqliteStore>(url.target);
}

}  // namespace trainyard::store
