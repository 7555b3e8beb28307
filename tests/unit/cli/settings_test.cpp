// Where the CLI finds its daemon and token, and how it reads a server URL.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>

#include "cli/http_client.h"
#include "cli/settings.h"

namespace trainyard::cli {
namespace {

struct FakeFiles {
  std::map<std::string, std::string> files;
  FileLookup lookup() const {
    return [this](const std::string& path) -> std::optional<std::string> {
      auto it = files.find(path);
      return it == files.end() ? std::nullopt : std::optional(it->second);
    };
  }
};

std::string refused_field(const GlobalOptions& global, const Environment& env, const FakeFiles& files) {
  try {
    resolve_connection(global, env, files.lookup());
  } catch (const InvalidInput& e) {
    return e.field();
  }
  return "<accepted>";
}

TEST(Settings, FlagBeatsEnvironmentBeatsLocalFiles) {
  const FakeFiles files{{{".trainyard/daemon.addr", "http://local:1\n"},
                         {".trainyard/admin.token", "ty_local\n"},
                         {"my.token", "  ty_file \n"}}};
  const Environment env{"http://env:2", "ty_env"};
  EXPECT_EQ(resolve_connection({"http://flag:3", "my.token", false}, env, files.lookup()),
            (Connection{"http://flag:3", "ty_file"}));
  EXPECT_EQ(resolve_connection({}, env, files.lookup()), (Connection{"http://env:2", "ty_env"}));
  EXPECT_EQ(resolve_connection({}, {}, files.lookup()), (Connection{"http://local:1", "ty_local"}));
  // An empty environment variable counts as unset.
  EXPECT_EQ(resolve_connection({}, {"", " "}, files.lookup()), (Connection{"http://local:1", "ty_local"}));
}

TEST(Settings, MissingPiecesNameTheFlagThatWouldSupplyThem) {
  EXPECT_EQ(refused_field({}, {}, {}), "--server");
  EXPECT_EQ(refused_field({}, {"http://h:1", std::nullopt}, {}), "--token-file");
  EXPECT_EQ(refused_field({"", std::nullopt, false}, {std::nullopt, "t"}, {}), "--server");
  // A named token file must exist and hold a token, whatever the environment says.
  EXPECT_EQ(refused_field({"http://h:1", "absent.token", false}, {std::nullopt, "t"}, {}), "--token-file");
  EXPECT_EQ(refused_field({"http://h:1", "empty.token", false}, {}, FakeFiles{{{"empty.token", "\n"}}}),
            "--token-file");
}

std::string refusal(const GlobalOptions& global, const Environment& env, const FakeFiles& files) {
  try {
    resolve_connection(global, env, files.lookup());
  } catch (const InvalidInput& e) {
    return e.what();
  }
  return "<accepted>";
}

TEST(Settings, ATokenIsOnlySentToTheServerItCameWith) {
  const FakeFiles planted{{{".trainyard/daemon.addr", "http://attacker:1\n"}, {"my.token", "ty_file"}}};
  // A daemon.addr planted in the current directory must not receive the environment's token.
  EXPECT_EQ(refused_field({}, {std::nullopt, "ty_env"}, planted), "--server");
  EXPECT_THAT(refusal({}, {std::nullopt, "ty_env"}, planted),
              ::testing::AllOf(::testing::HasSubstr("$TRAINYARD_TOKEN is set but $TRAINYARD_SERVER is not"),
                               ::testing::HasSubstr(".trainyard/daemon.addr is not used with $TRAINYARD_TOKEN")));
  // Nor the token of --token-file.
  EXPECT_EQ(refused_field({std::nullopt, "my.token", false}, {"http://env:2", std::nullopt}, planted), "--server");
  EXPECT_THAT(refusal({std::nullopt, "my.token", false}, {"http://env:2", std::nullopt}, planted),
              ::testing::HasSubstr("$TRAINYARD_SERVER is not used with --token-file"));
  // A server named by a flag gets no token from the environment or the files.
  const FakeFiles local{{{".trainyard/admin.token", "ty_local"}}};
  EXPECT_EQ(refused_field({"http://flag:3", std::nullopt, false}, {std::nullopt, "ty_env"}, local), "--token-file");
  EXPECT_EQ(refused_field({"http://flag:3", std::nullopt, false}, {}, local), "--token-file");
  EXPECT_THAT(refusal({"http://flag:3", std::nullopt, false}, {}, local),
              ::testing::HasSubstr("--server is set but --token-file is not; .trainyard/admin.token is not used"));
  // Nor does the environment's server get the local files' token.
  EXPECT_EQ(refused_field({}, {"http://env:2", std::nullopt}, local), "--token-file");
}

TEST(ServerUrl, ParsesTheForms) {
  const ServerUrl full = parse_server_url("http://127.0.0.1:8080");
  EXPECT_EQ(full.host, "127.0.0.1");
  EXPECT_EQ(full.port, "8080");
  EXPECT_EQ(full.text, "http://127.0.0.1:8080");
  EXPECT_EQ(parse_server_url("http://daemon.example/").port, "80");
  EXPECT_EQ(parse_server_url("localhost:9000").host, "localhost");
  const ServerUrl v6 = parse_server_url("http://[::1]:7000");
  EXPECT_EQ(v6.host, "::1");
  EXPECT_EQ(v6.port, "7000");
}

TEST(ServerUrl, RejectsWithClearMessages) {
  for (const char* bad : {"ftp://h:1", "http://h:1/api", "http://:80", "http://h:0", "http://h:99999", "http://h:x",
                          "http://h:", "http://[::1", "http://[::1]x", "https://h:1/api"}) {
    try {
      parse_server_url(bad);
      ADD_FAILURE() << "accepted " << bad;
    } catch (const InvalidInput& e) {
      EXPECT_EQ(e.field(), "--server") << bad;
    }
  }
}

TEST(ServerUrl, HttpsMeansTls) {
  const ServerUrl url = parse_server_url("https://daemon.example");
  EXPECT_TRUE(url.tls);
  EXPECT_EQ(url.port, "443");
  EXPECT_FALSE(parse_server_url("http://daemon.example").tls);
}

TEST(Settings, TheCaComesFromTheFlagThenTheEnvironmentThenBesideTheLocalClusterFiles) {
  const FakeFiles files{{{".trainyard/daemon.addr", "https://127.0.0.1:1\n"},
                         {".trainyard/admin.token", "ty_local\n"},
                         {".trainyard/ca.pem", "PEM"},
                         {"my.token", "ty_file"}}};
  GlobalOptions flags{"https://flag:3", "my.token", false, "flag-ca.pem"};
  Environment env{std::nullopt, std::nullopt, "env-ca.pem"};
  EXPECT_EQ(resolve_connection(flags, env, files.lookup()).ca_from, "--ca-file");
  EXPECT_EQ(resolve_connection(flags, env, files.lookup()).ca_file, "flag-ca.pem");
  EXPECT_EQ(resolve_connection({}, env, files.lookup()).ca_from, "$TRAINYARD_CA");
  const Connection local = resolve_connection({}, {}, files.lookup());
  EXPECT_EQ(local.ca_file, ".trainyard/ca.pem");
  flags.ca_file.reset();
  EXPECT_EQ(resolve_connection(flags, {}, files.lookup()).ca_file, "")
      << "the local cluster's CA is not trusted for a server named elsewhere (the system's store is)";
}

}  // namespace
}  // namespace trainyard::cli
