#pragma once
// Which store a daemon uses, from its `--store` URL: `sqlite://PATH` (a file; the default is
// DATA_DIR/trainyard.db) or `postgresql://user@host/db?...` (libpq's URI, `postgres://` too).
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

#include "store/store.h"

namespace trainyard::store {

struct StoreUrl {
  enum class Kind { sqlite, postgresql };
  Kind kind = Kind::sqlite;
  std::string target;  // the SQLite file, or the libpq connection URI as given
};

// Throws InvalidInput naming `field` when `url` names no store this build has, or libpq cannot
// parse it; nothing is connected to.
StoreUrl parse_store_url(std::string_view url, const std::string& field = "--store");
std::unique_ptr<Store> open_store(const StoreUrl& url);

}  // namespace trainyard::store
