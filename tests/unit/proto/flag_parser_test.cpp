#include "proto/flag_parser.h"
#include "proto/state_list.h"

#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <memory>
#include <set>
#include <string>

namespace trainyard::inline proto {
namespace {

TEST(FlagParser, ASwitchTakesNoValue) {
  bool allow = false;
  std::string name;
  FlagParser flags("test", "");
  flags.add_bool("allow-root-jobs", "", &allow);
  flags.add_string("name", "", &name);
  const char* given[] = {"test", "--allow-root-jobs", "--name", "n1"};
  ASSERT_TRUE(flags.parse(4, given));
  EXPECT_TRUE(allow);
  EXPECT_EQ(name, "n1");

  FlagParser again("test", "");
  again.add_bool("allow-root-jobs", "", &allow);
  const char* with_value[] = {"test", "--allow-root-jobs=yes"};
  try {
    again.parse(2, with_value);
    ADD_FAILURE() << "a switch took a value";
  } catch (const InvalidInput& e) {
    EXPECT_EQ(e.field(), "--allow-root-jobs");
  }
}

TEST(FlagParser, ASwitchNotGivenStaysOff) {
  bool allow = false;
  FlagParser flags("test", "");
  flags.add_bool("allow-root-jobs", "", &allow);
  const char* given[] = {"test"};
  ASSERT_TRUE(flags.parse(1, given));
  EXPECT_FALSE(allow);
}


// An agent-like parser over fake sources: the file system is one map, the environment another.
struct Settings {
  std::string server;
  std::string name;
  std::string token_file;
  std::int64_t cores = 32;
  std::vector<std::string> labels;
  bool allow_root = false;
};

class ConfigSources : public ::testing::Test {
 protected:
  std::map<std::string, std::string> files;
  SettingSources sources{{}, [this](const std::string& path) {
                           const auto it = files.find(path);
                           if (it == files.end()) throw InvalidInput("--config", "cannot read " + path);
                           return it->second;
                         }};
  Settings s;

  std::unique_ptr<FlagParser> parser() {
    auto flags = std::make_unique<FlagParser>("trainyard-agent", "", "TRAINYARD_AGENT_");
    flags->add_string("server", "", &s.server, true);
    flags->add_string("name", "", &s.name);
    flags->add_string("join-token-file", "", &s.token_file);
    flags->add_int("cores", "", &s.cores, 1, 4096);
    flags->add_list("label", "", &s.labels);
    flags->add_bool("allow-root-jobs", "", &s.allow_root);
    return flags;
  }
  bool parse(std::vector<const char*> argv, FlagParser* flags = nullptr) {
    argv.insert(argv.begin(), "trainyard-agent");
    auto own = flags ? nullptr : parser();
    return (flags ? flags : own.get())->parse(static_cast<int>(argv.size()), argv.data(), sources);
  }
  // The InvalidInput's field ("" when parsing succeeded).
  std::string refused_field(std::vector<const char*> argv) {
    try {
      parse(std::move(argv));
    } catch (const InvalidInput& e) {
      return e.field();
    }
    return "";
  }
};

TEST_F(ConfigSources, FlagBeatsEnvironmentBeatsFileBeatsDefault) {
  files["/etc/agent.json"] = R"(// the node's settings
    {
      "server": "http://file:8080",  // overridden by the environment
      "name": "from-file",           /* overridden by the flag */
      "cores": 8,
      "label": ["rack=r1", "zone=a"],
      "allow-root-jobs": true
    })";
  sources.environment = {{"TRAINYARD_AGENT_SERVER", "http://env:8080"}, {"TRAINYARD_AGENT_NAME", "from-env"},
                         {"TRAINYARD_AGENT_LABEL", "rack=r2"}, {"TRAINYARD_SERVER", "http://cli-only:1"},
                         {"TRAINYARD_DAEMON_LISTEN", "0.0.0.0:1"}};
  ASSERT_TRUE(parse({"--config", "/etc/agent.json", "--name", "from-flag"}));
  EXPECT_EQ(s.server, "http://env:8080");
  EXPECT_EQ(s.name, "from-flag");
  EXPECT_EQ(s.cores, 8);
  EXPECT_EQ(s.labels, (std::vector<std::string>{"rack=r2"}));  // a list from a higher source replaces it whole
  EXPECT_TRUE(s.allow_root);
  EXPECT_EQ(s.token_file, "");
}

TEST_F(ConfigSources, SaysWhichSettingsWereGivenRatherThanDefaulted) {
  files["/etc/agent.json"] = R"({"cores": 8})";
  sources.environment = {{"TRAINYARD_AGENT_NAME", "from-env"}};
  auto flags = parser();
  ASSERT_TRUE(parse({"--config", "/etc/agent.json", "--server", "http://flag:1"}, flags.get()));
  EXPECT_TRUE(flags->given("server"));
  EXPECT_TRUE(flags->given("name"));
  EXPECT_TRUE(flags->given("cores"));
  EXPECT_FALSE(flags->given("label"));
  EXPECT_FALSE(flags->given("allow-root-jobs"));
  EXPECT_FALSE(flags->given("no-such-flag"));
}

TEST_F(ConfigSources, TheEnvironmentNamesTheConfigFileAndTurnsSwitchesOff) {
  files["a.json"] = R"({"server": "http://a", "allow-root-jobs": true, "label": ["x=1"]})";
  sources.environment = {{"TRAINYARD_AGENT_CONFIG", "a.json"}, {"TRAINYARD_AGENT_ALLOW_ROOT_JOBS", "0"},
                         {"TRAINYARD_AGENT_LABEL", ""}};
  ASSERT_TRUE(parse({}));
  EXPECT_EQ(s.server, "http://a");
  EXPECT_FALSE(s.allow_root);
  EXPECT_TRUE(s.labels.empty());
}

TEST_F(ConfigSources, RefusesUnknownKeysWrongTypesAndRangesNamingTheSource) {
  files["c.json"] = R"({"server": "http://a", "cpus": 4})";
  EXPECT_EQ(refused_field({"--config", "c.json"}), "c.json: cpus");
  files["c.json"] = R"({"server": "http://a", "cores": "4"})";
  EXPECT_EQ(refused_field({"--config", "c.json"}), "c.json: cores");
  files["c.json"] = R"({"server": "http://a", "cores": 4.5})";
  EXPECT_EQ(refused_field({"--config", "c.json"}), "c.json: cores");
  files["c.json"] = R"({"server": "http://a", "cores": 0})";
  EXPECT_EQ(refused_field({"--config", "c.json"}), "c.json: cores");
  files["c.json"] = R"({"server": "http://a", "label": "rack=r1"})";
  EXPECT_EQ(refused_field({"--config", "c.json"}), "c.json: label");
  files["c.json"] = R"({"server": "http://a", "allow-root-jobs": "yes"})";
  EXPECT_EQ(refused_field({"--config", "c.json"}), "c.json: allow-root-jobs");
  files["c.json"] = R"({"server": "http://a", "cores": 4, "cores": 5})";
  EXPECT_EQ(refused_field({"--config", "c.json"}), "c.json: cores");
  files["c.json"] = R"(["server"])";
  EXPECT_EQ(refused_field({"--config", "c.json"}), "c.json");
  files["c.json"] = R"({"server": "http://a",})";
  EXPECT_EQ(refused_field({"--config", "c.json"}), "c.json");
  EXPECT_EQ(refused_field({"--config", "missing.json"}), "--config");

  sources.environment = {{"TRAINYARD_AGENT_CORES", "99999"}};
  EXPECT_EQ(refused_field({"--server", "http://a"}), "TRAINYARD_AGENT_CORES");
  sources.environment = {{"TRAINYARD_AGENT_CORS", "4"}};
  EXPECT_EQ(refused_field({"--server", "http://a"}), "TRAINYARD_AGENT_CORS");
  sources.environment = {{"TRAINYARD_AGENT_ALLOW_ROOT_JOBS", "yes"}};
  EXPECT_EQ(refused_field({"--server", "http://a"}), "TRAINYARD_AGENT_ALLOW_ROOT_JOBS");
  sources.environment = {};
  EXPECT_EQ(refused_field({"--server", "http://a", "--cores", "-1"}), "--cores");
}

// The command line is read by the same flag table reader as the CLI's (parse_flags).
TEST_F(ConfigSources, CommandLineMistakesNameTheFlagOrArgument) {
  EXPECT_EQ(refused_field({"--server", "http://a", "--cpus", "4"}), "--cpus");
  EXPECT_EQ(refused_field({"--server", "http://a", "stray"}), "stray");
  EXPECT_EQ(refused_field({"--server", "http://a", "--", "x"}), "--");
  EXPECT_EQ(refused_field({"--server"}), "--server");
  EXPECT_EQ(refused_field({"--server", "http://a", "--cores", "4x"}), "--cores");
  EXPECT_EQ(refused_field({"--server", "http://a", "--config", "a.json", "--config", "b.json"}), "--config");

  ASSERT_TRUE(parse({"--server=http://a", "--name", "n1", "--name", "n2", "--label", "x", "--label=y", "--cores=8"}));
  EXPECT_EQ(s.server, "http://a");
  EXPECT_EQ(s.name, "n2");  // given twice, the last counts
  EXPECT_EQ(s.labels, (std::vector<std::string>{"x", "y"}));
  EXPECT_EQ(s.cores, 8);
}

TEST_F(ConfigSources, ARequiredSettingMaySitInAnySource) {
  EXPECT_EQ(refused_field({}), "--server");
  files["c.json"] = R"({"server": "http://a"})";
  EXPECT_EQ(refused_field({"--config", "c.json"}), "");
  sources.environment = {{"TRAINYARD_AGENT_SERVER", "http://b"}};
  EXPECT_EQ(refused_field({}), "");
}

TEST_F(ConfigSources, PrintConfigShowsEachSourceRedactsSecretsAndReadsBack) {
  files["c.json"] = R"({"server": "http://a", "join-token-file": "/etc/trainyard/join-token", "cores": 8})";
  sources.environment = {{"TRAINYARD_AGENT_LABEL", "rack=r1,zone=\"a\""}};
  auto flags = parser();
  ASSERT_FALSE(parse({"--config", "c.json", "--print-config", "--name", "n1"}, flags.get()));
  const std::string printed = flags->output();
  EXPECT_NE(printed.find("config file: c.json"), std::string::npos) << printed;
  EXPECT_NE(printed.find(R"("server": "http://a",)"), std::string::npos) << printed;
  EXPECT_NE(printed.find("// file c.json"), std::string::npos) << printed;
  EXPECT_NE(printed.find(R"("name": "n1",)"), std::string::npos) << printed;
  EXPECT_NE(printed.find("// flag --name"), std::string::npos) << printed;
  EXPECT_NE(printed.find(R"("label": ["rack=r1","zone=\"a\""],)"), std::string::npos) << printed;
  EXPECT_NE(printed.find("// environment TRAINYARD_AGENT_LABEL"), std::string::npos) << printed;
  EXPECT_NE(printed.find(R"("allow-root-jobs": false  )"), std::string::npos) << printed;
  EXPECT_NE(printed.find("// default"), std::string::npos) << printed;
  EXPECT_EQ(printed.find("/etc/trainyard/join-token"), std::string::npos) << printed;
  EXPECT_NE(printed.find(R"("join-token-file": "<redacted>",)"), std::string::npos) << printed;

  // What it prints is a config file giving the same settings (the redacted one aside).
  files["printed.json"] = printed;
  sources.environment = {};
  Settings before = s;
  s = Settings{};
  ASSERT_TRUE(parse({"--config", "printed.json"}));
  EXPECT_EQ(s.server, before.server);
  EXPECT_EQ(s.name, before.name);
  EXPECT_EQ(s.cores, before.cores);
  EXPECT_EQ(s.labels, before.labels);
  EXPECT_EQ(s.token_file, "<redacted>");
}

TEST_F(ConfigSources, VersionAndHelpNeedNoOtherSetting) {
  auto flags = parser();
  ASSERT_FALSE(parse({"--version"}, flags.get()));
  EXPECT_EQ(flags->output().rfind("trainyard-agent " TRAINYARD_VERSION " (commit ", 0), 0u) << flags->output();
  ASSERT_FALSE(parse({"--help"}, flags.get()));
  EXPECT_NE(flags->output().find("TRAINYARD_AGENT_SERVER"), std::string::npos) << flags->output();
}

}  // namespace
}  // namespace trainyard::inline proto

namespace trainyard {
namespace {

// A setting bound to a component's own field: an int, a duration counted in the flag's unit, a
// percent kept as a fraction, or text kept in another form.
TEST(FlagParser, TypedSettingsParseIntoTheirFieldsAndShowInTheFlagsUnits) {
  int nodes = 2;
  std::chrono::milliseconds interval{std::chrono::hours(1)};
  double fraction = 0.5;
  std::set<std::string> shares;
  FlagParser flags("test", "");
  flags.add_int("nodes", "", &nodes, 1, 1024);
  flags.add_duration<std::chrono::seconds>("interval-s", "", &interval, 0, 86'400);
  flags.add_percent("suspect-pct", "", &fraction, 1, 100);
  flags.add_string(
      "shares", "", [&] { return std::to_string(shares.size()) + " shares"; },
      [&](const std::string& text) { shares = {text}; });
  EXPECT_NE(flags.usage().find("default 3600"), std::string::npos) << flags.usage();
  EXPECT_NE(flags.usage().find("default 50"), std::string::npos) << flags.usage();
  EXPECT_NE(flags.usage().find("default \"0 shares\""), std::string::npos) << flags.usage();

  const char* given[] = {"test", "--nodes", "8", "--interval-s", "90", "--suspect-pct", "35", "--shares", "a"};
  ASSERT_TRUE(flags.parse(9, given));
  EXPECT_EQ(nodes, 8);
  EXPECT_EQ(interval, std::chrono::seconds(90));
  EXPECT_DOUBLE_EQ(fraction, 0.35);
  EXPECT_EQ(shares, std::set<std::string>{"a"});

  FlagParser printing("test", "");
  printing.add_duration<std::chrono::seconds>("interval-s", "", &interval, 0, 86'400);
  printing.add_percent("suspect-pct", "", &fraction, 1, 100);
  const char* print[] = {"test", "--print-config"};
  ASSERT_FALSE(printing.parse(2, print));
  EXPECT_NE(printing.output().find(R"("interval-s": 90,)"), std::string::npos) << printing.output();
  EXPECT_NE(printing.output().find(R"("suspect-pct": 35)"), std::string::npos) << printing.output();

  FlagParser bounded("test", "");
  bounded.add_int("nodes", "", &nodes, 1, 1024);
  const char* too_many[] = {"test", "--nodes", "1025"};
  try {
    bounded.parse(3, too_many);
    ADD_FAILURE() << "an int out of its range was taken";
  } catch (const InvalidInput& e) {
    EXPECT_EQ(e.field(), "--nodes");
  }
  EXPECT_EQ(nodes, 8);
}

TEST(FlagTable, AnAliasIsFiledUnderTheFlagItSpells) {
  const std::vector<FlagSpec> flags = {{"--nodes", "K", "nodes", false, {"-N"}}};
  const ParsedArgs parsed = parse_flags({"-N", "3"}, flags, "t");
  EXPECT_EQ(parsed.opt_string("--nodes"), "3");
  EXPECT_FALSE(parsed.has("-N"));
  EXPECT_EQ(parse_flags({"-N=4"}, flags, "t").opt_string("--nodes"), "4");
  try {
    parse_flags({"-N", "3", "--nodes", "4"}, flags, "t");
    ADD_FAILURE() << "a flag given twice under two spellings was accepted";
  } catch (const InvalidInput& e) {
    EXPECT_EQ(e.field(), "--nodes");
  }
  EXPECT_EQ(format_flag_help(flags), "  --nodes, -N K  nodes\n");
}

TEST(JobStateList, CommaSeparatedCaseInsensitiveWithoutRepeats) {
  EXPECT_EQ(parse_job_states("state", "failed,CANCELLED,Failed"), (std::vector{JobState::failed, JobState::cancelled}));
  EXPECT_EQ(job_states_text({JobState::pending, JobState::running}), "PENDING,RUNNING");
  EXPECT_EQ(parse_node_states("--state", "down,Drained,DOWN"), (std::vector{NodeState::down, NodeState::drained}));
  EXPECT_EQ(node_states_text({NodeState::down, NodeState::drained}), "DOWN,DRAINED");
  for (const char* bad : {"", "PENDING,", "DONE", "PENDING,,RUNNING"}) {
    try {
      parse_job_states("state", bad);
      ADD_FAILURE() << "accepted \"" << bad << "\"";
    } catch (const InvalidInput& e) {
      EXPECT_EQ(e.field(), "state");
    }
  }
}

}  // namespace
}  // namespace trainyard
