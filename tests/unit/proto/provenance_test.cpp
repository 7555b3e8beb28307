#include "proto/provenance.h"

#include <gtest/gtest.h>

#include "proto/errors.h"
#include "proto/messages.h"

namespace trainyard::inline proto {
namespace {

TEST(SecretMasking, MasksValuesOfNamesThatLookSecretWhateverTheCase) {
  for (const char* name : {"HF_TOKEN", "github_token", "AWS_SECRET_ACCESS_KEY", "DB_PASSWORD", "MYSQL_PASSWD",
                           "API_KEY", "apikey", "GOOGLE_APPLICATION_CREDENTIALS", "BASIC_AUTH", "SSH_PRIVATE",
                           "SESSION_ID", "COOKIE_JAR", "REQUEST_SIGNATURE"}) {
    EXPECT_TRUE(looks_secret(name)) << name;
  }
  for (const char* name : {"PATH", "LR", "RANK", "MASTER_ADDR", "TRAINYARD_CHECKPOINT_DIR", "HOME", "BATCH_SIZE"}) {
    EXPECT_FALSE(looks_secret(name)) << name;
  }
}

TEST(SecretMasking, KeepsNamesAndOtherValues) {
  const auto masked = mask_secrets({{"HF_TOKEN", "hf_abc"}, {"LR", "3e-4"}, {"WANDB_API_KEY", ""}});
  EXPECT_EQ(masked.at("HF_TOKEN"), kMaskedValue);
  EXPECT_EQ(masked.at("WANDB_API_KEY"), kMaskedValue) << "even an empty secret: its emptiness is a fact too";
  EXPECT_EQ(masked.at("LR"), "3e-4");
  EXPECT_EQ(masked.size(), 3u);
}

TEST(UserFacts, ParsesAnObjectWithinTheLimits) {
  const Json facts = parse_user_facts(R"({"framework":"jax 0.4.30","data":["c4",3]})");
  EXPECT_EQ(facts["framework"], "jax 0.4.30");
}

TEST(UserFacts, RefusesNamingTheField) {
  for (const std::string& text : {std::string("[]"), std::string("null"), std::string("{"),
                                  "{\"a\":\"" + std::string(kMaxUserFactsBytes, 'x') + "\"}",
                                  "{\"a\":" + std::string(17, '[') + std::string(17, ']') + "}"}) {
    try {
      parse_user_facts(text);
      ADD_FAILURE() << text.substr(0, 40);
    } catch (const InvalidInput& e) {
      EXPECT_EQ(e.field(), "provenance");
    }
  }
  EXPECT_NO_THROW(parse_user_facts("{\"a\":" + std::string(15, '[') + std::string(15, ']') + "}"));
}

TEST(UserFacts, TheAgentsMessageIsCheckedAgainOnArrival) {
  AttemptExitedMsg exited;
  exited.attempt_id = 3;
  exited.user_facts = Json::array({1, 2});
  try {
    parse_agent_message(encode(AgentMessage{exited}));
    ADD_FAILURE() << "an array was accepted";
  } catch (const InvalidInput& e) {
    EXPECT_EQ(e.field(), "user_facts");
  }
  exited.user_facts = {{"torch", "2.3"}};
  exited.user_facts_error = "";
  const auto parsed = std::get<AttemptExitedMsg>(parse_agent_message(encode(AgentMessage{exited})));
  EXPECT_EQ(parsed.user_facts["torch"], "2.3");
}

TEST(UserFacts, StartedCarriesTheEnvironment) {
  const AttemptStartedMsg started{4, {{"LR", "1"}, {"HF_TOKEN", std::string(kMaskedValue)}}};
  const auto parsed = std::get<AttemptStartedMsg>(parse_agent_message(encode(AgentMessage{started})));
  EXPECT_EQ(parsed.environment, started.environment);
}

}  // namespace
}  // namespace trainyard::inline proto
