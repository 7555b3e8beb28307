// Typo suggestions and shell completion.
#include <gtest/gtest.h>

#include "cli/command_line.h"
#include "cli/completion.h"

namespace trainyard::cli {
namespace {

using Words = std::vector<std::string>;

TEST(NearestWord, SuggestsACloseCommandOnly) {
  const Words commands = {"jobs", "job", "logs", "submit", "history", "nodes", "cancel"};
  EXPECT_EQ(nearest_word("jbos", commands), "jobs");  // a swap
  EXPECT_EQ(nearest_word("sumbit", commands), "submit");
  EXPECT_EQ(nearest_word("histroy", commands), "history");
  EXPECT_EQ(nearest_word("node", commands), "nodes");
  EXPECT_EQ(nearest_word("frobnicate", commands), std::nullopt);
  EXPECT_EQ(nearest_word("x", commands), std::nullopt);  // one letter is not a typo of anything
}

std::string usage_message(const Words& args) {
  try {
    parse_command_line(args);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "<accepted>";
}

TEST(NearestWord, TheParserSaysDidYouMean) {
  EXPECT_EQ(usage_message({"hsitory"}), "hsitory: unknown command; did you mean \"history\"?");
  EXPECT_EQ(usage_message({"token", "lsit"}), "token: unknown subcommand \"lsit\"; did you mean \"list\"?");
  EXPECT_NE(usage_message({"zzzzzz"}).find("(one of: submit, jobs"), std::string::npos);
}

// A typo is never answered with a command that submits, stops or changes something: "queue" was
// once answered "did you mean requeue?".
TEST(NearestWord, NeverSuggestsACommandThatChangesState) {
  for (const Words& typo : {Words{"sumbit", "job.json"}, Words{"requeu", "12"}, Words{"cancle", "12"}, Words{"drian", "n1"},
                            Words{"webhook", "rn", "3"}, Words{"token", "revok", "t1"}}) {
    const std::string message = usage_message(typo);
    EXPECT_EQ(message.find("did you mean"), std::string::npos) << message;
    EXPECT_NE(message.find("(one of: "), std::string::npos) << message;
  }
}

TEST(NearestWord, OtherSchedulersCommandsAreAnsweredWithOurs) {
  EXPECT_EQ(usage_message({"squeue"}), "squeue: unknown command; here, use \"trainyard jobs\"");
  EXPECT_EQ(usage_message({"queue"}), "queue: unknown command; here, use \"trainyard jobs\"");
  EXPECT_EQ(usage_message({"sacct"}), "sacct: unknown command; here, use \"trainyard history\"");
  EXPECT_EQ(usage_message({"sinfo"}), "sinfo: unknown command; here, use \"trainyard nodes\"");
  EXPECT_EQ(usage_message({"scancel", "12"}), "scancel: unknown command; here, use \"trainyard cancel ID [ID ...]\"");
  EXPECT_EQ(usage_message({"kill", "12"}), "kill: unknown command; here, use \"trainyard cancel ID\"");
  EXPECT_NE(usage_message({"show", "12"}).find("\"trainyard job ID\""), std::string::npos);
  EXPECT_NE(usage_message({"describe", "12"}).find("\"trainyard job ID\""), std::string::npos);
  EXPECT_NE(usage_message({"status"}).find("\"trainyard jobs\""), std::string::npos);
  EXPECT_NE(usage_message({"scontrol", "show", "job", "12"}).find("\"trainyard job ID\" (scontrol show job)"), std::string::npos);
}

const ServerNames kNames{[] { return Words{"12", "13"}; }, [] { return Words{"node-a", "node-b"}; }};

TEST(Completion, CommandsThenSubcommands) {
  const Words first = complete({"jo"}, 0, kNames);
  EXPECT_EQ(first, (Words{"jobs", "job"}));
  EXPECT_EQ(complete({"token", ""}, 1, kNames), (Words{"create", "list", "revoke", "rotate-join"}));
  EXPECT_EQ(complete({"comp"}, 0, kNames), Words{"completion"});
  EXPECT_EQ(complete({"completion", ""}, 1, kNames), (Words{"bash", "zsh"}));
}

TEST(Completion, FlagsOfTheCommandAndGlobalOnes) {
  const Words flags = complete({"logs", "12", "--f"}, 2, kNames);
  EXPECT_EQ(flags, Words{"--follow"});
  const Words globals = complete({"--"}, 0, kNames);
  EXPECT_NE(std::find(globals.begin(), globals.end(), "--server"), globals.end());
}

TEST(Completion, JobIdsAndNodeNamesFromTheServer) {
  EXPECT_EQ(complete({"logs"}, 1, kNames), (Words{"12", "13"}));
  EXPECT_EQ(complete({"--server", "http://x", "job", "1"}, 3, kNames), (Words{"12", "13"}));
  EXPECT_EQ(complete({"drain", "node-"}, 1, kNames), (Words{"node-a", "node-b"}));
  EXPECT_EQ(complete({"history", "--state", "F"}, 2, kNames), Words{"FAILED"});
}

TEST(Completion, NamesAreFetchedOnlyWhenNeeded) {
  int fetched = 0;
  const ServerNames counting{[&] {
                               ++fetched;
                               return Words{};
                             },
                             [&] {
                               ++fetched;
                               return Words{};
                             }};
  complete({"jo"}, 0, counting);
  complete({"jobs", "--limit", ""}, 2, counting);
  EXPECT_EQ(fetched, 0);
}

TEST(Completion, ScriptsForBashAndZshOnly) {
  EXPECT_NE(completion_script("bash").find("complete -o default -F _trainyard trainyard"), std::string::npos);
  EXPECT_NE(completion_script("zsh").find("#compdef trainyard"), std::string::npos);
  EXPECT_THROW(completion_script("fish"), InvalidInput);
}

}  // namespace
}  // namespace trainyard::cli
