#pragma once
// The operator dashboard's static files (web/, built to web/dist), served on the API's port
// without a token: the page holds no data; every data request it makes carries the user's token.
// The tree is read into memory once at start-up, so serving never touches the disk from the I/O
// thread and a request path can only name a file that was there (a rebuilt dashboard needs a
// restart). Vite's hashed files under assets/ are cached for a year; index.html is revalidated on
// every load, so a new build is picked up at once. Each file's `.gz` twin, written at build time,
// is sent to clients that accept gzip, so the daemon needs no compression of its own.
#include <filesystem>
#include <map>
#include <optional>
#include <string>

#include "net/http_types.h"

namespace trainyard::daemon {

// The Content-Security-Policy of every dashboard response: scripts, styles and connections only
// from this origin, nothing inline, no frames, no plugins.
inline constexpr const char* kDashboardCsp =
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "font-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'";

// The Content-Type of a dashboard file, from its extension.
std::string dashboard_content_type(const std::filesystem::path& file);

// Throws InvalidInput("dashboard-dir") unless `root` holds an index.html.
void require_dashboard_dir(const std::filesystem::path& root);

class DashboardFiles {
 public:
  // Reads every regular file under `root` (a built web/dist); require_dashboard_dir first.
  static DashboardFiles load(const std::filesystem::path& root);

  // The answer to a GET of a path no API route took: a file of the tree, index.html for a view URL
  // (a path without an extension outside assets/, routed by the page itself), a 404 for a missing
  // file, or nullopt when the request is not the dashboard's (not GET, or under /v1).
  std::optional<net::HttpResponse> serve(const net::HttpRequest& request) const;

  std::size_t file_count() const { return files_.size(); }

 private:
  struct File {
    std::string content_type;
    std::string body;
    std::optional<std::string> gzipped;
  };

  net::HttpResponse respond(const std::string& relative, const File& file, bool accepts_gzip) const;

  std::map<std::string, File> files_;  // by path relative to the root, '/'-separated
};

}  // namespace trainyard::daemon
