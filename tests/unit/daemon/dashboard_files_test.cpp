// The dashboard's static files as the API serves them: content types, gzip twins, cache headers,
// the Content-Security-Policy, view URLs answered with index.html, traversal refused, and the API's
// own routes keeping priority.
#include "daemon/dashboard_files.h"

#include <gtest/gtest.h>

#include <fstream>

#include "proto/errors.h"
#include "tests/support/temp_dir.h"
#include "tests/unit/daemon/api_fixture.h"
#include "tests/unit/daemon/response_header.h"

namespace trainyard::daemon::testing {
namespace {

void write(const std::filesystem::path& file, const std::string& text) {
  std::filesystem::create_directories(file.parent_path());
  std::ofstream(file, std::ios::binary) << text;
}

net::HttpRequest get(const std::string& target, const std::string& accept_encoding = "") {
  net::HttpRequest req;
  req.method = "GET";
  req.target = target;
  EXPECT_TRUE(net::parse_target(req).ok()) << target;
  if (!accept_encoding.empty()) req.headers["accept-encoding"] = accept_encoding;
  return req;
}

class DashboardFilesTest : public ::testing::Test {
 protected:
  DashboardFilesTest() {
    write(root / "index.html", "<!doctype html><title>Trainyard</title>");
    write(root / "index.html.gz", "GZ-INDEX");
    write(root / "assets/index-abc123.js", "console.log(1)");
    write(root / "assets/index-abc123.js.gz", "GZ-JS");
    write(root / "assets/index-abc123.css", "body{}");
    write(root / "favicon.svg", "<svg/>");
    write(dir.path() / "secret.txt", "SECRET");  // beside the root, where `..` would lead
    files = DashboardFiles::load(root);
  }

  net::HttpResponse serve(const std::string& target, const std::string& accept_encoding = "") {
    auto resp = files.serve(get(target, accept_encoding));
    EXPECT_TRUE(resp) << target;
    return resp.value_or(net::HttpResponse{});
  }

  TempDir dir;
  std::filesystem::path root = dir.path() / "dist";
  DashboardFiles files;
};

TEST_F(DashboardFilesTest, EachFileHasTheContentTypeOfItsExtension) {
  EXPECT_EQ(serve("/").content_type, "text/html; charset=utf-8");
  EXPECT_EQ(serve("/assets/index-abc123.js").content_type, "text/javascript; charset=utf-8");
  EXPECT_EQ(serve("/assets/index-abc123.css").content_type, "text/css; charset=utf-8");
  EXPECT_EQ(serve("/favicon.svg").content_type, "image/svg+xml");
  EXPECT_EQ(dashboard_content_type("x.bin"), "application/octet-stream");
  EXPECT_EQ(files.file_count(), 4u) << "the .gz twins are not files of their own";
}

TEST_F(DashboardFilesTest, TheGzipTwinGoesOnlyToClientsThatAcceptIt) {
  const auto zipped = serve("/assets/index-abc123.js", "gzip, deflate, br");
  EXPECT_EQ(zipped.body, "GZ-JS");
  EXPECT_EQ(response_header(zipped, "Content-Encoding"), "gzip");
  EXPECT_EQ(response_header(zipped, "Vary"), "Accept-Encoding");
  const auto plain = serve("/assets/index-abc123.js");
  EXPECT_EQ(plain.body, "console.log(1)");
  EXPECT_EQ(response_header(plain, "Content-Encoding"), "");
  EXPECT_EQ(response_header(plain, "Vary"), "Accept-Encoding");
  EXPECT_EQ(serve("/assets/index-abc123.js", "br, gzip;q=0").body, "console.log(1)");
  EXPECT_EQ(serve("/assets/index-abc123.css", "gzip").body, "body{}") << "no twin: sent as it is";
  EXPECT_EQ(response_header(serve("/assets/index-abc123.css", "gzip"), "Vary"), "");
}

TEST_F(DashboardFilesTest, HashedAssetsAreImmutableAndTheIndexIsRevalidated) {
  EXPECT_EQ(response_header(serve("/assets/index-abc123.js"), "Cache-Control"), "public, max-age=31536000, immutable");
  EXPECT_EQ(response_header(serve("/"), "Cache-Control"), "no-cache");
  EXPECT_EQ(response_header(serve("/favicon.svg"), "Cache-Control"), "no-cache");
}

TEST_F(DashboardFilesTest, EveryAnswerCarriesAStrictPolicyAndNosniff) {
  for (const char* target : {"/", "/jobs/5", "/assets/index-abc123.js"}) {
    const auto resp = serve(target);
    const std::string csp = response_header(resp, "Content-Security-Policy");
    EXPECT_NE(csp.find("default-src 'self'"), std::string::npos) << target;
    EXPECT_NE(csp.find("script-src 'self';"), std::string::npos) << target;
    EXPECT_NE(csp.find("connect-src 'self'"), std::string::npos) << target;
    EXPECT_EQ(csp.find("unsafe-inline"), std::string::npos) << target;
    EXPECT_EQ(response_header(resp, "X-Content-Type-Options"), "nosniff") << target;
  }
}

TEST_F(DashboardFilesTest, ViewUrlsAnswerWithTheIndexAndMissingFilesWith404) {
  for (const char* view : {"/jobs/5", "/nodes/trn-1", "/queue", "/events"}) {
    const auto resp = serve(view, "gzip");
    EXPECT_EQ(resp.status, 200) << view;
    EXPECT_EQ(resp.body, "GZ-INDEX") << view;
  }
  EXPECT_EQ(serve("/assets/gone-123.js").status, 404);
  EXPECT_EQ(serve("/assets/app").status, 404) << "nothing under assets/ is a view";
  EXPECT_EQ(serve("/robots.txt").status, 404);
}

TEST_F(DashboardFilesTest, TraversalIsRefused) {
  for (const char* target : {"/%2e%2e/secret.txt", "/assets/%2e%2e/%2e%2e/secret.txt", "/assets/%2e/index-abc123.js"}) {
    const auto resp = serve(target);
    EXPECT_EQ(resp.status, 404) << target;
    EXPECT_EQ(resp.body.find("SECRET"), std::string::npos) << target;
  }
}

TEST_F(DashboardFilesTest, OnlyGetsOutsideTheApiAreTheDashboards) {
  EXPECT_FALSE(files.serve(get("/v1/anything")));
  auto post = get("/");
  post.method = "POST";
  EXPECT_FALSE(files.serve(post));
}

TEST(DashboardDir, ADirectoryWithoutAnIndexIsRefusedNamingTheSetting) {
  TempDir empty;
  try {
    require_dashboard_dir(empty.path());
    FAIL() << "accepted";
  } catch (const InvalidInput& e) {
    EXPECT_EQ(e.field(), "dashboard-dir");
  }
}

// Through the API: the dashboard answers what no route takes, without a token, and /v1, /healthz
// and /metrics keep theirs.
TEST_F(ApiTest, TheDashboardAnswersUnmatchedGetsWithoutATokenAndTheApiKeepsItsRoutes) {
  TempDir dir;
  write(dir.path() / "index.html", "<!doctype html>");
  api.set_dashboard(DashboardFiles::load(dir.path()));
  api.set_metrics_exposition([] { return std::string("trainyard_up 1\n"); }, true);
  EXPECT_EQ(call("GET", "/", "").text, "<!doctype html>");
  EXPECT_EQ(call("GET", "/jobs/7", "").content_type, "text/html; charset=utf-8");
  EXPECT_EQ(call("GET", "/healthz", "").body.value("status", ""), "ok");
  EXPECT_EQ(call("GET", "/metrics", "").text, "trainyard_up 1\n");
  EXPECT_EQ(call("GET", "/v1/jobs", "").status, 401);
  EXPECT_EQ(call("GET", "/v1/nope", kAdmin).status, 404);
  EXPECT_EQ(call("GET", "/v1/nope", kAdmin).error_code(), "not_found");
  EXPECT_EQ(call("POST", "/jobs/7", "").status, 404) << "only GETs";
}

}  // namespace
}  // namespace trainyard::daemon::testing
