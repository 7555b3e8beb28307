#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>

#include "proto/messages.h"
#include "proto/time.h"

namespace trainyard::inline proto {
namespace {

TEST(Messages, HelloRoundTrips) {
  HelloMsg hello;
  hello.agent_version = "0.1.0";
  hello.name = "node-1";
  hello.cores = 32;
  hello.memory_mb = 1024;
  hello.labels = {{"rack", "r1"}};
  hello.data_addr = "127.0.0.1:4000";
  hello.attempts = {AttemptReport{.attempt_id = 7,
                                  .job_id = 3,
                                  .step = 12,
                                  .last_progress_at = from_unix_ms(1000),
                                  .phase = "forward",
                                  .first_step_at = from_unix_ms(400),
                                  .checkpoint_ms = 35,
                                  .busy_ms = 420}};
  const auto parsed = std::get<HelloMsg>(parse_agent_message(encode(AgentMessage{hello})));
  EXPECT_EQ(parsed.name, "node-1");
  EXPECT_EQ(parsed.labels.at("rack"), "r1");
  EXPECT_EQ(parsed.attempts, hello.attempts);
}

TEST(Messages, HelloSaysHowAttemptsAreContained) {
  HelloMsg hello;
  hello.agent_version = "1";
  hello.name = "node-1";
  hello.cores = 4;
  hello.cgroups = "unavailable: cannot create /sys/fs/cgroup/pids/trainyard/node-1-0: Read-only file system";
  EXPECT_EQ(std::get<HelloMsg>(parse_agent_message(encode(AgentMessage{hello}))).cgroups, hello.cgroups);
  hello.cgroups = "v1\x1b[2J";
  EXPECT_THROW(parse_agent_message(encode(AgentMessage{hello})), InvalidInput) << "printable text only";
}

TEST(Messages, LaunchCarriesTheJobsMemoryLimit) {
  LaunchMsg launch;
  launch.attempt_id = 5;
  launch.job_id = 2;
  launch.command.argv = {"/bin/true"};
  launch.peers = {"127.0.0.1:1"};
  launch.user = "alice";
  launch.data_plane_secret = std::string(32, 'a');
  EXPECT_EQ(std::get<LaunchMsg>(parse_daemon_message(encode(DaemonMessage{launch}))).memory_mb, 0) << "none: no limit";
  launch.memory_mb = 512;
  EXPECT_EQ(std::get<LaunchMsg>(parse_daemon_message(encode(DaemonMessage{launch}))).memory_mb, 512);
}

TEST(Messages, HeartbeatsCarryFreeDiskSpaceAndLogBytes) {
  HeartbeatMsg hb;
  hb.attempts = {AttemptReport{7, 3, 12}};
  hb.attempts[0].log_bytes = 4096;
  hb.disks = {DiskSpace{"work", 500, 1000}, DiskSpace{"checkpoint", 20, 4000}};
  const auto parsed = std::get<HeartbeatMsg>(parse_agent_message(encode(AgentMessage{hb})));
  EXPECT_EQ(parsed.attempts, hb.attempts);
  EXPECT_EQ(parsed.disks, hb.disks);
  const auto bare = std::get<HeartbeatMsg>(parse_agent_message(R"({"type":"heartbeat","attempts":[]})"));
  EXPECT_TRUE(bare.disks.empty()) << "an older agent's heartbeat has none";
}

TEST(Messages, HeartbeatsSayHowLongARankWasIdleAndWhereItsProcessesWere) {
  HeartbeatMsg hb;
  hb.attempts = {AttemptReport{7, 3, 0}};
  hb.attempts[0].idle_ms = 31'000;
  hb.attempts[0].where = {{1, 812, "S", "hrtimer_nanosleep", "/home/u/train.py:17 in load_batch\n/home/u/train.py:40 in <module>"},
                          {0, 77, "T", "do_signal_stop", ""}};
  const auto parsed = std::get<HeartbeatMsg>(parse_agent_message(encode(AgentMessage{hb})));
  EXPECT_EQ(parsed.attempts, hb.attempts);
  hb.attempts[0].where[0].state = "SS";
  EXPECT_THROW(parse_agent_message(encode(AgentMessage{hb})), InvalidInput) << "a state is one letter";
  hb.attempts[0].where[0].state = "S";
  hb.attempts[0].where[0].stack = "/home/u/\x1b]0;owned\x07train.py:17 in load_batch";
  EXPECT_THROW(parse_agent_message(encode(AgentMessage{hb})), InvalidInput) << "printable lines only";
  hb.attempts[0].where[0].stack = std::string(kMaxStackChars + 1, 'x');
  EXPECT_THROW(parse_agent_message(encode(AgentMessage{hb})), InvalidInput) << "a stack has a bound";
  hb.attempts[0].where.assign(kMaxProcsPerNode + 1, ProcessWhere{0, 1, "S", "", ""});
  EXPECT_THROW(parse_agent_message(encode(AgentMessage{hb})), InvalidInput) << "one per process of the node";
}

TEST(Messages, AttemptExitedCarriesGoodputTiming) {
  AttemptExitedMsg exited{9, 0, std::nullopt, "completed 40 steps", 40, "tail"};
  exited.first_step_at = from_unix_ms(5000);
  exited.checkpoint_ms = 120;
  const auto parsed = std::get<AttemptExitedMsg>(parse_agent_message(encode(AgentMessage{exited})));
  EXPECT_EQ(parsed.first_step_at, exited.first_step_at);
  EXPECT_EQ(parsed.checkpoint_ms, 120);
  const auto bare = std::get<AttemptExitedMsg>(parse_agent_message(R"({"type":"attempt_exited","attempt_id":9})"));
  EXPECT_FALSE(bare.first_step_at);
  EXPECT_EQ(bare.checkpoint_ms, 0);
}

TEST(Messages, ReportsAndExitsCarryFailedCheckpointWrites) {
  HeartbeatMsg hb;
  hb.attempts = {AttemptReport{7, 3, 12}};
  hb.attempts[0].checkpoint_failures = {2, "open /ckpt/step-10: Permission denied"};
  EXPECT_EQ(std::get<HeartbeatMsg>(parse_agent_message(encode(AgentMessage{hb}))).attempts, hb.attempts);
  AttemptExitedMsg exited{9, 0, std::nullopt, "completed 40 steps", 40, ""};
  exited.checkpoint_failures = {1, "disk full"};
  EXPECT_EQ(std::get<AttemptExitedMsg>(parse_agent_message(encode(AgentMessage{exited}))).checkpoint_failures,
            exited.checkpoint_failures);
  const auto bare = std::get<AttemptExitedMsg>(parse_agent_message(R"({"type":"attempt_exited","attempt_id":9})"));
  EXPECT_EQ(bare.checkpoint_failures.count, 0) << "none failed, none said";
}

TEST(Messages, AttemptExitedNamesThePeerWhoseConnectionClosed) {
  AttemptExitedMsg exited{9, 1, std::nullopt, "collective_timeout: rank 1 closed the connection", 40, ""};
  exited.peer_closed_rank = 1;
  const auto parsed = std::get<AttemptExitedMsg>(parse_agent_message(encode(AgentMessage{exited})));
  EXPECT_EQ(parsed.peer_closed_rank, 1);
  const auto bare = std::get<AttemptExitedMsg>(parse_agent_message(R"({"type":"attempt_exited","attempt_id":9})"));
  EXPECT_FALSE(bare.peer_closed_rank) << "a rank that saw no peer close names none";
}

TEST(Messages, LaunchRoundTrips) {
  LaunchMsg launch;
  launch.attempt_id = 5;
  launch.job_id = 2;
  launch.kind = JobKind::command;
  launch.command.argv = {"/bin/echo", "hi"};
  launch.rank = 1;
  launch.world_size = 2;
  launch.peers = {"127.0.0.1:1", "127.0.0.1:2"};
  launch.resume_from = "/ckpt/step-10";
  launch.user = "alice";
  launch.data_plane_secret = std::string(64, 'a');
  launch.command.workdir = "/home/alice/exp";
  launch.command.script = "#!/bin/sh\nexec python3 train.py\n";
  launch.command.output = "slurm-%j.out";
  launch.command.error = "%x-%N.err";
  launch.job_name = "train";
  launch.node = "trn-1";
  const auto parsed = std::get<LaunchMsg>(parse_daemon_message(encode(DaemonMessage{launch})));
  EXPECT_EQ(parsed.user, "alice");
  EXPECT_EQ(parsed.command.output, "slurm-%j.out");
  EXPECT_EQ(parsed.command.error, "%x-%N.err");
  EXPECT_EQ(parsed.job_name, "train");
  EXPECT_EQ(parsed.node, "trn-1");
  EXPECT_EQ(parsed.command.workdir, "/home/alice/exp");
  EXPECT_EQ(parsed.command.script, launch.command.script);
  EXPECT_EQ(parsed.command.argv, launch.command.argv);
  EXPECT_EQ(parsed.peers, launch.peers);
  EXPECT_EQ(parsed.resume_from, launch.resume_from);
  EXPECT_EQ(parsed.data_plane_secret, launch.data_plane_secret);
}

LaunchMsg isolated_launch() {
  LaunchMsg launch;
  launch.attempt_id = 5;
  launch.job_id = 2;
  launch.command.argv = {"/bin/true"};
  launch.rank = 1;
  launch.world_size = 2;
  launch.peers = {"10.0.0.1:1", "10.0.0.2:1"};
  launch.user = "alice";
  launch.data_plane_secret = std::string(64, 'a');
  launch.job_network = JobNetworkPlan{parse_ipv4_network("10.240.0.0/16", "pool"),
                                      parse_ipv4_network("10.240.0.4/30", "block"),
                                      {*parse_ipv4("10.240.0.4"), *parse_ipv4("10.240.0.5")}};
  return launch;
}

TEST(Messages, ALaunchCarriesItsAttemptsOwnNetwork) {
  const LaunchMsg launch = isolated_launch();
  const auto parsed = std::get<LaunchMsg>(parse_daemon_message(encode(DaemonMessage{launch})));
  ASSERT_TRUE(parsed.job_network);
  EXPECT_EQ(parsed.job_network->pool.text(), "10.240.0.0/16");
  EXPECT_EQ(parsed.job_network->block.text(), "10.240.0.4/30");
  EXPECT_EQ(parsed.job_network->addresses, launch.job_network->addresses);
  LaunchMsg shared = launch;
  shared.job_network.reset();
  EXPECT_FALSE(std::get<LaunchMsg>(parse_daemon_message(encode(DaemonMessage{shared}))).job_network);
}

TEST(Messages, AJobNetworkWhoseAddressesAreNotItsBlocksIsRefusedNamingTheField) {
  const auto refusal = [](const std::function<void(Json&)>& edit) {
    Json j = Json::parse(encode(DaemonMessage{isolated_launch()}));
    edit(j["job_network"]);
    try {
      parse_daemon_message(j.dump());
    } catch (const InvalidInput& e) {
      return e.field();
    }
    return std::string("accepted");
  };
  EXPECT_EQ(refusal([](Json& n) { n["addresses"][1] = "10.240.0.9"; }), "job_network.addresses[1]");
  EXPECT_EQ(refusal([](Json& n) { n["addresses"][1] = "10.240.0.4"; }), "job_network.addresses[1]");
  EXPECT_EQ(refusal([](Json& n) { n["addresses"][1] = "10.240.0.300"; }), "job_network.addresses[1]");
  EXPECT_EQ(refusal([](Json& n) { n["addresses"].erase(1); }), "job_network.addresses");
  EXPECT_EQ(refusal([](Json& n) { n["block"] = "10.241.0.4/30"; }), "job_network.block");
  EXPECT_EQ(refusal([](Json& n) { n["block"] = "10.240.0.5/30"; }), "job_network.block");
  EXPECT_EQ(refusal([](Json& n) { n["pool"] = "nowhere"; }), "job_network.pool");
}

TEST(Messages, Ipv4AddressesAreFourDecimalOctets) {
  EXPECT_EQ(parse_ipv4("10.240.0.1"), 0x0AF00001u);
  EXPECT_EQ(ipv4_text(0x0AF00001u), "10.240.0.1");
  for (const char* bad : {"", "10.240.0", "10.240.0.1.2", "10.240.0.256", "010.1.1.1", "1.1.1.1 ", "a.b.c.d", "-1.1.1.1"}) {
    EXPECT_FALSE(parse_ipv4(bad)) << bad;
  }
  const Ipv4Network block = parse_ipv4_network("10.240.0.4/30", "block");
  EXPECT_EQ(block.size(), 4u);
  EXPECT_TRUE(block.contains(*parse_ipv4("10.240.0.7")));
  EXPECT_FALSE(block.contains(*parse_ipv4("10.240.0.8")));
  EXPECT_EQ(parse_ipv4_network("0.0.0.0/0", "any").size(), std::uint64_t{1} << 32);
}

TEST(Messages, AKillMayAskTheAttemptToCheckpointFirst) {
  const auto plain = std::get<KillMsg>(parse_daemon_message(encode(DaemonMessage{KillMsg{4, "cancelled", 100}})));
  EXPECT_FALSE(plain.checkpoint);
  EXPECT_EQ(encode(DaemonMessage{KillMsg{4, "cancelled", 100}}).find("checkpoint"), std::string::npos)
      << "a plain kill reads as it did before protocol 9";
  const auto saving = std::get<KillMsg>(parse_daemon_message(encode(DaemonMessage{KillMsg{4, "preempted", 100, true}})));
  EXPECT_TRUE(saving.checkpoint);
  EXPECT_EQ(saving.reason, "preempted");
}

TEST(Messages, LaunchNeedsADataPlaneSecretThatCannotBeGuessed) {
  LaunchMsg launch;
  launch.attempt_id = 5;
  launch.job_id = 2;
  launch.command.argv = {"/bin/true"};
  launch.peers = {"127.0.0.1:1"};
  launch.user = "alice";
  for (const std::string secret : {"", "short"}) {
    launch.data_plane_secret = secret;
    try {
      parse_daemon_message(encode(DaemonMessage{launch}));
      ADD_FAILURE() << "a launch with the data-plane secret \"" << secret << "\" was accepted";
    } catch (const InvalidInput& e) {
      EXPECT_EQ(e.field(), "data_plane_secret");
    }
  }
}

TEST(Messages, LaunchNamesTheSubmittingUser) {
  LaunchMsg launch;
  launch.attempt_id = 5;
  launch.job_id = 2;
  launch.command.argv = {"/bin/true"};
  launch.peers = {"127.0.0.1:1"};
  launch.data_plane_secret = std::string(64, 'a');
  try {
    parse_daemon_message(encode(DaemonMessage{launch}));
    ADD_FAILURE() << "a launch without the submitting user was accepted";
  } catch (const InvalidInput& e) {
    EXPECT_EQ(e.field(), "user");
  }
}

TEST(Messages, WelcomeCarriesTheNodeCredentialOnlyWhenIssued) {
  const std::string plain = encode(DaemonMessage{WelcomeMsg{"1.0", 1000, ""}});
  EXPECT_EQ(plain.find("node_credential"), std::string::npos) << plain;
  EXPECT_EQ(std::get<WelcomeMsg>(parse_daemon_message(plain)).node_credential, "");
  const auto issued = std::get<WelcomeMsg>(parse_daemon_message(encode(DaemonMessage{WelcomeMsg{"1.0", 1000, "ty_secret"}})));
  EXPECT_EQ(issued.node_credential, "ty_secret");
}

// The cluster's name becomes part of the agent's paths: only lowercase hex is taken.
TEST(Messages, WelcomeNamesTheClusterInHexOnly) {
  WelcomeMsg welcome{"1.0", 1000, ""};
  welcome.cluster = "0123456789abcdef";
  EXPECT_EQ(std::get<WelcomeMsg>(parse_daemon_message(encode(DaemonMessage{welcome}))).cluster, "0123456789abcdef");
  for (const char* bad : {"../x", "ABC", "a/b", "0123456789abcdef0123456789abcdef0"}) {
    welcome.cluster = bad;
    try {
      parse_daemon_message(encode(DaemonMessage{welcome}));
      ADD_FAILURE() << "accepted cluster " << bad;
    } catch (const InvalidInput& e) {
      EXPECT_EQ(e.field(), "cluster") << bad;
    }
  }
}

TEST(Messages, RejectsMalformedWithFieldNamed) {
  auto field_of = [](const std::string& text) {
    try {
      parse_agent_message(text);
    } catch (const InvalidInput& e) {
      return e.field();
    }
    return std::string("<accepted>");
  };
  EXPECT_EQ(field_of(R"({"type":"nope"})"), "type");
  EXPECT_EQ(field_of(R"({"type":"attempt_started"})"), "attempt_id");
  EXPECT_EQ(field_of(R"({"type":"attempt_started","attempt_id":"x"})"), "attempt_id");
  EXPECT_EQ(field_of(R"({"type":"heartbeat","attempts":[{"attempt_id":1,"job_id":1,"step":-1}]})"), "attempts[0].step");
  EXPECT_EQ(field_of(R"({"type":"heartbeat","extra":1})"), "extra");
  EXPECT_EQ(field_of(R"({"type":"heartbeat","attempts":[{"attempt_id":1,"job_id":1,"step":1,"checkpoint_ms":-5}]})"),
            "attempts[0].checkpoint_ms");
  EXPECT_EQ(field_of(R"({"type":"attempt_exited","attempt_id":1,"first_step_at":"soon"})"), "first_step_at");
  EXPECT_EQ(field_of(R"({"type":"attempt_exited","attempt_id":1,"checkpoint_failures":{"count":0,"last_error":""}})"),
            "checkpoint_failures.count");
  EXPECT_EQ(field_of(R"({"type":"attempt_exited","attempt_id":1,"checkpoint_failures":{"count":1}})"),
            "checkpoint_failures.last_error");
  EXPECT_EQ(
      field_of(R"({"type":"attempt_exited","attempt_id":1,"checkpoint_failures":{"count":1,"last_error":"x","at":2}})"),
      "checkpoint_failures.at");
  EXPECT_EQ(
      field_of(R"({"type":"heartbeat","attempts":[{"attempt_id":1,"job_id":1,"step":1,"checkpoint_failures":[]}]})"),
      "attempts[0].checkpoint_failures");
  EXPECT_EQ(field_of(R"({"type":"attempt_exited","attempt_id":1,"checkpoint_failures":{"count":1,"last_error":")" +
                     std::string(kMaxCheckpointErrorLength + 1, 'x') + R"("}})"),
            "checkpoint_failures.last_error");
  EXPECT_EQ(field_of(R"({"type":"attempt_exited","attempt_id":1,"peer_closed_rank":-1})"), "peer_closed_rank");
  EXPECT_EQ(field_of(R"({"type":"attempt_exited","attempt_id":1,"peer_closed_rank":1024})"), "peer_closed_rank");
  EXPECT_EQ(field_of(R"({"type":"attempt_exited","attempt_id":1,"peer_closed_rank":"1"})"), "peer_closed_rank");
  EXPECT_EQ(field_of(R"({"type":"heartbeat","disks":[{"role":"tmp","free_mb":1,"total_mb":2}]})"), "disks[0].role");
  EXPECT_EQ(field_of(R"({"type":"heartbeat","disks":[{"role":"work","free_mb":3,"total_mb":2}]})"), "disks[0].free_mb");
  EXPECT_EQ(field_of(R"({"type":"heartbeat","disks":{}})"), "disks");
  EXPECT_EQ(field_of(R"({"type":"heartbeat","attempts":[{"attempt_id":1,"job_id":1,"step":1,"log_bytes":-1}]})"),
            "attempts[0].log_bytes");
  EXPECT_EQ(field_of("[1,2"), "");
  EXPECT_EQ(field_of(R"({"type":"metrics","attempt_id":1})"), "steps");
  EXPECT_EQ(field_of(R"({"type":"metrics","attempt_id":1,"steps":[{"step":0,"loss":1,"grad_norm":1,"param_norm":1,"lr":1,"samples_per_s":1}]})"),
            "steps[0].step");
  EXPECT_EQ(field_of(R"({"type":"metrics","attempt_id":1,"steps":[{"step":1,"loss":"high","grad_norm":1,"param_norm":1,"lr":1,"samples_per_s":1}]})"),
            "steps[0].loss");
  EXPECT_EQ(field_of(R"({"type":"metrics","attempt_id":1,"steps":[{"step":1,"loss":1,"grad_norm":1,"param_norm":1,"lr":1,"samples_per_s":1,"x":0}]})"),
            "steps[0].x");
  EXPECT_EQ(field_of(R"({"type":"faults","faults":[1]})"), "faults[0]");
  const std::string hello =
      R"({"type":"hello","protocol":3,"agent_version":"1","name":"n","cores":1,"memory_mb":0,"data_addr":"a:1",)";
  EXPECT_EQ(field_of(hello + R"("labels":{"rack":"r\u001b[2J"}})"), "labels.rack");
  EXPECT_EQ(field_of(hello + R"("labels":{"ra ck":"r1"}})"), "labels.ra ck");
  EXPECT_EQ(field_of(R"({"type":"hello","protocol":3,"agent_version":"1","name":"n\u0007","cores":1,"memory_mb":0,"data_addr":""})"),
            "name");
}

TEST(Messages, MetricsCarryTheCheckpointsRankZeroPublished) {
  MetricsMsg msg;
  msg.attempt_id = 9;
  msg.checkpoints.push_back(CheckpointReport{120, std::string(64, 'a')});
  const auto parsed = std::get<MetricsMsg>(parse_agent_message(encode(AgentMessage{msg})));
  EXPECT_EQ(parsed.attempt_id, 9);
  EXPECT_TRUE(parsed.steps.empty());
  EXPECT_EQ(parsed.checkpoints, msg.checkpoints);

  auto field_of = [](const std::string& text) {
    try {
      parse_agent_message(text);
    } catch (const InvalidInput& e) {
      return e.field();
    }
    return std::string("<accepted>");
  };
  const std::string prefix = R"({"type":"metrics","attempt_id":9,"steps":[],"checkpoints":[{"step":120,"manifest_sha256":")";
  EXPECT_EQ(field_of(prefix + std::string(64, 'G') + R"("}]})"), "checkpoints[0].manifest_sha256");
  EXPECT_EQ(field_of(prefix + std::string(63, 'a') + R"("}]})"), "checkpoints[0].manifest_sha256");
  EXPECT_EQ(field_of(R"({"type":"metrics","attempt_id":9,"steps":[],"checkpoints":[{"step":-1,"manifest_sha256":")" +
                     std::string(64, 'a') + R"("}]})"),
            "checkpoints[0].step");
  EXPECT_EQ(field_of(R"({"type":"metrics","attempt_id":9,"steps":[],"checkpoints":{}})"), "checkpoints");
}

TEST(Messages, MetricsRoundTripWithNonFiniteValuesAsNull) {
  MetricsMsg msg;
  msg.attempt_id = 9;
  msg.steps.push_back(StepMetric{1, 2.5, 0.75, 10.0, 1e-3, 512.0, false, std::nullopt});
  msg.steps.push_back(StepMetric{2, std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity(),
                                 10.5, 1e-3, 500.0, true, std::nullopt});
  msg.steps.push_back(StepMetric{3, 2.0, 0.5, 10.1, 1e-3, 510.0, false, 1});
  const std::string text = encode(AgentMessage{msg});
  EXPECT_NE(text.find(R"("loss":null)"), std::string::npos) << text;
  const auto parsed = std::get<MetricsMsg>(parse_agent_message(text));
  ASSERT_EQ(parsed.steps.size(), 3u);
  EXPECT_EQ(parsed.attempt_id, 9);
  EXPECT_EQ(parsed.steps[0].loss, 2.5);
  EXPECT_EQ(parsed.steps[0].samples_per_s, 512.0);
  EXPECT_TRUE(std::isnan(parsed.steps[1].loss));
  EXPECT_TRUE(std::isnan(parsed.steps[1].grad_norm));  // Inf cannot travel in JSON; it arrives as "not a number"
  EXPECT_TRUE(parsed.steps[1].spike);
  EXPECT_EQ(parsed.steps[2].spike_steps_to_return, 1);
}

// The largest gang the protocol allows travels; one rank more is refused by the parser, and
// bounds_error (what the daemon checks before it sends) names the same field before any encoding.
TEST(Messages, TheLargestGangTravelsAndOneRankMoreIsCaughtBeforeSending) {
  std::vector<std::string> peers;
  for (int r = 0; r < kMaxRanks; ++r) peers.push_back("10.0." + std::to_string(r / 250) + "." + std::to_string(r % 250) + ":7000");
  HealthCheckMsg last{7, HealthSuite::collective, Json::object(), kMaxRanks - 1, peers, 99, std::string(64, 'b')};
  EXPECT_EQ(bounds_error(DaemonMessage{last}), "");
  EXPECT_EQ(std::get<HealthCheckMsg>(parse_daemon_message(encode(DaemonMessage{last}))).rank, kMaxRanks - 1);
  LaunchMsg launch;
  launch.attempt_id = 1;
  launch.job_id = 1;
  launch.kind = JobKind::simulated;
  launch.rank = kMaxRanks - 1;
  launch.world_size = kMaxRanks;
  launch.peers = peers;
  launch.user = "alice";
  launch.data_plane_secret = std::string(64, 's');
  EXPECT_EQ(bounds_error(DaemonMessage{launch}), "");
  EXPECT_EQ(std::get<LaunchMsg>(parse_daemon_message(encode(DaemonMessage{launch}))).world_size, kMaxRanks);

  auto refused_field = [](const DaemonMessage& m) {
    try {
      parse_daemon_message(encode(m));
    } catch (const InvalidInput& e) {
      return e.field();
    }
    return std::string("<accepted>");
  };
  peers.push_back("10.0.9.9:7000");
  HealthCheckMsg over = last;
  over.rank = kMaxRanks;
  over.peers = peers;
  EXPECT_EQ(refused_field(DaemonMessage{over}), "rank");
  EXPECT_EQ(bounds_error(DaemonMessage{over}),
            "rank: must be an integer from 0 to " + std::to_string(kMaxRanks - 1) + ", got " + std::to_string(kMaxRanks));
  over.rank = 0;  // a legal rank among too many peers
  EXPECT_EQ(refused_field(DaemonMessage{over}), "peers");
  EXPECT_EQ(bounds_error(DaemonMessage{over}).rfind("peers:", 0), 0u) << bounds_error(DaemonMessage{over});
  LaunchMsg wide = launch;
  wide.world_size = kMaxRanks + 1;
  EXPECT_EQ(refused_field(DaemonMessage{wide}), "world_size");
  EXPECT_EQ(bounds_error(DaemonMessage{wide}).rfind("world_size:", 0), 0u);
  HealthCheckMsg long_address = last;
  long_address.peers[3] = std::string(kMaxPeerAddressChars + 1, 'a');
  EXPECT_EQ(refused_field(DaemonMessage{long_address}), "peers[3]");
  EXPECT_EQ(bounds_error(DaemonMessage{long_address}).rfind("peers[3]:", 0), 0u);
  EXPECT_EQ(bounds_error(DaemonMessage{KillMsg{}}), "") << "messages without ranks have no such bounds";
}

TEST(Messages, HealthMessagesRoundTripAndAreChecked) {
  HealthCheckMsg check{7, HealthSuite::collective, Json{{"elements", 1024}}, 1, {"127.0.0.1:1", "127.0.0.1:2"}, 99,
                       std::string(64, 'b')};
  const auto parsed = std::get<HealthCheckMsg>(parse_daemon_message(encode(DaemonMessage{check})));
  EXPECT_EQ(parsed.session_secret, check.session_secret);
  EXPECT_EQ(parsed.task_id, 7);
  EXPECT_EQ(parsed.suite, HealthSuite::collective);
  EXPECT_EQ(parsed.options, check.options);
  EXPECT_EQ(parsed.peers, check.peers);
  EXPECT_EQ(parsed.session, 99);
  const auto result = std::get<HealthResultMsg>(parse_agent_message(encode(AgentMessage{HealthResultMsg{7, Json{{"cores", Json::array()}}, ""}})));
  EXPECT_EQ(result.result, (Json{{"cores", Json::array()}}));
  const auto refused = std::get<HealthResultMsg>(parse_agent_message(encode(AgentMessage{HealthResultMsg{7, nullptr, "busy"}})));
  EXPECT_EQ(refused.error, "busy");

  auto daemon_field_of = [](const std::string& text) {
    try {
      parse_daemon_message(text);
    } catch (const InvalidInput& e) {
      return e.field();
    }
    return std::string("<accepted>");
  };
  EXPECT_EQ(daemon_field_of(R"({"type":"health_check","task_id":1,"suite":"gpu","options":{},"rank":0,"session":1})"), "suite");
  EXPECT_EQ(daemon_field_of(R"({"type":"health_check","task_id":1,"suite":"accelerator","options":3,"rank":0,"session":1})"), "options");
  EXPECT_EQ(daemon_field_of(R"({"type":"health_check","task_id":1,"suite":"collective","options":{},"rank":2,"peers":["a:1"],"session":1,"session_secret":"0123456789abcdef0123456789abcdef"})"), "rank");
  EXPECT_EQ(daemon_field_of(R"({"type":"health_check","task_id":1,"suite":"collective","options":{},"rank":0,"peers":["a:1"],"session":1})"), "session_secret");
  EXPECT_EQ(daemon_field_of(R"({"type":"health_check","task_id":1,"suite":"accelerator","options":{},"rank":0,"session":1})"), "<accepted>");
}

TEST(Messages, FaultMessagesRoundTrip) {
  const auto set = std::get<SetFaultsMsg>(parse_daemon_message(encode(DaemonMessage{SetFaultsMsg{{"core:3=corrupt", "link=drop"}}})));
  EXPECT_EQ(set.faults, (std::vector<std::string>{"core:3=corrupt", "link=drop"}));
  const auto report = std::get<FaultsMsg>(parse_agent_message(encode(AgentMessage{FaultsMsg{{"core:1=hang"}}})));
  EXPECT_EQ(report.faults, std::vector<std::string>{"core:1=hang"});
  HelloMsg hello;
  hello.agent_version = "0.1.0";
  hello.name = "n";
  hello.cores = 2;
  hello.faults = {"link=throttle:50000000"};
  EXPECT_EQ(std::get<HelloMsg>(parse_agent_message(encode(AgentMessage{hello}))).faults, hello.faults);
}

TEST(Messages, AFenceKeepersStopReportRoundTripsAndIsChecked) {
  const AttemptsStoppedMsg report{kProtocolVersion, "node-a", {7, 9}};
  const auto parsed = std::get<AttemptsStoppedMsg>(parse_agent_message(encode(AgentMessage{report})));
  EXPECT_EQ(parsed.protocol, kProtocolVersion);
  EXPECT_EQ(parsed.node, "node-a");
  EXPECT_EQ(parsed.attempts, (std::vector<AttemptId>{7, 9}));
  EXPECT_TRUE(std::holds_alternative<StopNotedMsg>(parse_daemon_message(encode(DaemonMessage{StopNotedMsg{}}))));

  const auto field_of = [](const std::string& text) {
    try {
      parse_agent_message(text);
    } catch (const InvalidInput& e) {
      return e.field();
    }
    return std::string("<accepted>");
  };
  const std::string head = R"({"type":"attempts_stopped","protocol":20,)";
  EXPECT_EQ(field_of(head + R"("node":"a","attempts":[1]})"), "<accepted>");
  EXPECT_EQ(field_of(head + R"("node":"a b","attempts":[1]})"), "node");
  EXPECT_EQ(field_of(head + R"("attempts":[1]})"), "node");
  EXPECT_EQ(field_of(head + R"("node":"a","attempts":[]})"), "attempts") << "a report of nothing is no report";
  EXPECT_EQ(field_of(head + R"("node":"a","attempts":{}})"), "attempts");
  EXPECT_EQ(field_of(head + R"("node":"a","attempts":[0]})"), "attempts[0]");
  EXPECT_EQ(field_of(head + R"("node":"a","attempts":[1,"2"]})"), "attempts[1]");
  EXPECT_EQ(field_of(head + R"("node":"a","attempts":[18446744073709551615]})"), "attempts[0]");
  EXPECT_EQ(field_of(head + R"("node":"a","attempts":[3,3]})"), "attempts[1]");
  EXPECT_EQ(field_of(head + R"("node":"a","attempts":[1],"extra":1})"), "extra");
  EXPECT_EQ(field_of(R"({"type":"attempts_stopped","node":"a","attempts":[1]})"), "protocol");
  std::string many = head + R"("node":"a","attempts":[)";
  for (std::size_t i = 1; i <= kMaxStoppedAttempts + 1; ++i) many += (i > 1 ? "," : "") + std::to_string(i);
  EXPECT_EQ(field_of(many + "]}"), "attempts");
  try {
    parse_daemon_message(R"({"type":"stop_noted","attempts":1})");
    ADD_FAILURE() << "stop_noted carries nothing";
  } catch (const InvalidInput& e) {
    EXPECT_EQ(e.field(), "attempts");
  }
}

TEST(Time, FormatsAndParsesRfc3339) {
  const TimePoint t = from_unix_ms(1'795'000'000'123);
  EXPECT_EQ(parse_time(format_time(t)), t);
  EXPECT_FALSE(parse_time("yesterday").has_value());
  EXPECT_FALSE(parse_time("2026-13-01T00:00:00Z").has_value());
}

}  // namespace
}  // namespace trainyard::inline proto
