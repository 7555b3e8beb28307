#include "daemon/dashboard_files.h"

#include <spdlog/spdlog.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "proto/contained_path.h"
#include "proto/errors.h"

namespace trainyard::daemon {
namespace fs = std::filesystem;
namespace {

constexpr const char* kIndex = "index.html";

std::string read_whole(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  if (!in && !in.eof()) throw InvalidInput("dashboard-dir", "cannot read " + file.string());
  return out.str();
}

// Whether the client takes gzip: it lists "gzip" without a q of 0 ("gzip;q=0" refuses it).
bool accepts_gzip(const net::HttpRequest& request) {
  const std::string accepted = request.header("accept-encoding");
  const auto at = accepted.find("gzip");
  if (at == std::string::npos) return false;
  const std::string item = accepted.substr(at, accepted.find(',', at) - at);
  const auto q = item.find("q=");
  return q == std::string::npos || std::strtod(item.c_str() + q + 2, nullptr) > 0;
}

net::HttpResponse not_found(const std::string& path) {
  auto resp = net::HttpResponse{404, "text/plain; charset=utf-8", "no such dashboard file: " + path + "\n", {}};
  resp.headers.emplace_back("X-Content-Type-Options", "nosniff");
  return resp;
}

}  // namespace

std::string dashboard_content_type(const fs::path& file) {
  static const std::map<std::string, std::string> by_extension = {
      {".html", "text/html; charset=utf-8"},  {".js", "text/javascript; charset=utf-8"},
      {".mjs", "text/javascript; charset=utf-8"}, {".css", "text/css; charset=utf-8"},
      {".json", "application/json"},          {".map", "application/json"},
      {".svg", "image/svg+xml"},              {".png", "image/png"},
      {".ico", "image/x-icon"},               {".webp", "image/webp"},
      {".woff2", "font/woff2"},               {".txt", "text/plain; charset=utf-8"},
      {".webmanifest", "application/manifest+json"}};
  const auto found = by_extension.find(file.extension().string());
  return found == by_extension.end() ? "application/octet-stream" : found->second;
}

void require_dashboard_dir(const fs::path& root) {
  if (!fs::is_regular_file(root / kIndex)) {
    throw InvalidInput("dashboard-dir", "\"" + root.string() + "\" holds no index.html (build web/ with deploy/build.sh)");
  }
}

DashboardFiles DashboardFiles::load(const fs::path& root) {
  require_dashboard_dir(root);
  DashboardFiles loaded;
  for (const auto& entry : fs::recursive_directory_iterator(root)) {
    if (!entry.is_regular_file() || entry.path().extension() == ".gz") continue;
    const std::string relative = entry.path().lexically_relative(root).generic_string();
    File file{dashboard_content_type(entry.path()), read_whole(entry.path()), std::nullopt};
    fs::path gz = entry.path();
    gz += ".gz";
    if (fs::is_regular_file(gz)) file.gzipped = read_whole(gz);
    loaded.files_.emplace(relative, std::move(file));
  }
  spdlog::info("event=dashboard_loaded dir={} files={}", root.string(), loaded.files_.size());
  return loaded;
}

std::optional<net::HttpResponse> DashboardFiles::serve(const net::HttpRequest& request) const {
  if (request.method != "GET") return std::nullopt;
  if (!request.segments.empty() && request.segments[0] == "v1") return std::nullopt;
  if (request.segments.empty()) return respond(kIndex, files_.at(kIndex), accepts_gzip(request));
  std::string relative;
  for (const std::string& segment : request.segments) relative += (relative.empty() ? "" : "/") + segment;
  try {
    // Lexical only (the tree is in memory): refuses `..`, `.`, NUL and empty components.
    plain_absolute_path("/" + relative, "path");
  } catch (const InvalidInput&) {
    return not_found(request.path);
  }
  if (const auto found = files_.find(relative); found != files_.end()) {
    return respond(relative, found->second, accepts_gzip(request));
  }
  const bool view_url = request.segments[0] != "assets" && !fs::path(request.segments.back()).has_extension();
  if (!view_url) return not_found(request.path);
  return respond(kIndex, files_.at(kIndex), accepts_gzip(request));
}

net::HttpResponse DashboardFiles::respond(const std::string& relative, const File& file, bool gzip) const {
  const bool hashed = relative.rfind("assets/", 0) == 0;
  const bool send_gzipped = gzip && file.gzipped;
  net::HttpResponse resp{200, file.content_type, send_gzipped ? *file.gzipped : file.body, {}};
  resp.headers = {{"Cache-Control", hashed ? "public, max-age=31536000, immutable" : "no-cache"},
                  {"Content-Security-Policy", kDashboardCsp},
                  {"X-Content-Type-Options", "nosniff"},
                  {"Referrer-Policy", "no-referrer"}};
  if (file.gzipped) resp.headers.emplace_back("Vary", "Accept-Encoding");
  if (send_gzipped) resp.headers.emplace_back("Content-Encoding", "gzip");
  return resp;
}

}  // namespace trainyard::daemon
