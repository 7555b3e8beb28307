// The job's provenance file read as hostile: whatever a job leaves at $TRAINYARD_PROVENANCE_FILE,
// the agent neither follows it, blocks on it, reads more than the limit, nor fails; it records why.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>

#include "agent/provenance_file.h"
#include "proto/provenance.h"
#include "tests/support/temp_dir.h"

namespace trainyard::agent {
namespace {

class ProvenanceFileTest : public ::testing::Test {
 protected:
  std::string write(const std::string& text) {
    std::ofstream(file) << text;
    return file;
  }
  TempDir dir;
  const std::string file = (dir.path() / "rank-0.provenance.json").string();
};

TEST_F(ProvenanceFileTest, AcceptsAnObjectOfFacts) {
  const UserFacts read = read_user_facts(write(R"({"torch":"2.3.1","dataset":{"id":"c4-en","shard":3}})"));
  EXPECT_EQ(read.error, "");
  EXPECT_EQ(read.facts["torch"], "2.3.1");
  EXPECT_EQ(read.facts["dataset"]["shard"], 3);
}

TEST_F(ProvenanceFileTest, NoFileIsNoFactsAndNoError) {
  const UserFacts read = read_user_facts(file);
  EXPECT_TRUE(read.facts.is_null());
  EXPECT_EQ(read.error, "");
}

TEST_F(ProvenanceFileTest, RefusesWhatIsNotAnObject) {
  for (const char* text : {"[1,2]", "\"text\"", "42", "{\"a\":", "", "{\"a\":1} trailing"}) {
    const UserFacts read = read_user_facts(write(text));
    EXPECT_TRUE(read.facts.is_null()) << text;
    EXPECT_NE(read.error.find("TRAINYARD_PROVENANCE_FILE"), std::string::npos) << text;
  }
}

TEST_F(ProvenanceFileTest, RefusesInvalidUtf8) {
  const UserFacts read = read_user_facts(write("{\"a\":\"\xff\xfe\"}"));
  EXPECT_TRUE(read.facts.is_null());
  EXPECT_NE(read.error.find("not valid JSON"), std::string::npos) << read.error;
}

TEST_F(ProvenanceFileTest, RefusesDeepNestingBeforeParsing) {
  const UserFacts read = read_user_facts(write("{\"a\":" + std::string(20000, '[') + std::string(20000, ']') + "}"));
  EXPECT_TRUE(read.facts.is_null());
  EXPECT_NE(read.error.find("nested deeper"), std::string::npos) << read.error;
}

TEST_F(ProvenanceFileTest, AcceptsBracketsInsideStrings) {
  const UserFacts read =
      read_user_facts(write(R"({"note":"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[\"{{{{{{{{{{{{{{{{{{{{{{"})"));
  EXPECT_EQ(read.error, "");
}

TEST_F(ProvenanceFileTest, RefusesAFileOverTheLimitWithoutReadingIt) {
  {
    std::ofstream out(file);
    out << "{\"pad\":\"" << std::string(kMaxUserFactsBytes, 'x') << "\"}";
  }
  const UserFacts read = read_user_facts(file);
  EXPECT_TRUE(read.facts.is_null());
  EXPECT_NE(read.error.find("larger than"), std::string::npos) << read.error;
}

TEST_F(ProvenanceFileTest, RefusesAHugeSparseFileAtOnce) {
  const int fd = ::open(file.c_str(), O_CREAT | O_WRONLY, 0600);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::ftruncate(fd, 10LL << 30), 0);  // 10 GiB, sparse
  ::close(fd);
  const auto began = std::chrono::steady_clock::now();
  const UserFacts read = read_user_facts(file);
  EXPECT_LT(std::chrono::steady_clock::now() - began, std::chrono::seconds(1));
  EXPECT_NE(read.error.find("larger than"), std::string::npos) << read.error;
}

TEST_F(ProvenanceFileTest, DoesNotFollowASymlink) {
  std::filesystem::create_symlink("/etc/shadow", file);
  const UserFacts read = read_user_facts(file);
  EXPECT_TRUE(read.facts.is_null());
  EXPECT_NE(read.error.find("symbolic link"), std::string::npos) << read.error;
}

TEST_F(ProvenanceFileTest, DoesNotReadAHardLinkToAnotherFile) {
  const std::string other = (dir.path() / "someone-elses.json").string();
  std::ofstream(other) << R"({"secret":"theirs"})";
  std::filesystem::create_hard_link(other, file);
  const UserFacts read = read_user_facts(file);
  EXPECT_TRUE(read.facts.is_null());
  EXPECT_NE(read.error.find("hard links"), std::string::npos) << read.error;
}

TEST_F(ProvenanceFileTest, DoesNotBlockOnAFifoWithoutAWriter) {
  ASSERT_EQ(::mkfifo(file.c_str(), 0600), 0);
  const UserFacts read = read_user_facts(file);  // a blocking open would hang here
  EXPECT_NE(read.error.find("not a regular file"), std::string::npos) << read.error;
}

TEST_F(ProvenanceFileTest, RefusesADirectory) {
  std::filesystem::create_directory(file);
  const UserFacts read = read_user_facts(file);
  EXPECT_TRUE(read.facts.is_null());
  EXPECT_FALSE(read.error.empty());
}

}  // namespace
}  // namespace trainyard::agent
