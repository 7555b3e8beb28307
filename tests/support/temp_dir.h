#pragma once
// A fresh directory for one test, removed with everything in it when the object goes away, so
// tests never share or leak files.
#include <filesystem>

namespace trainyard {

class TempDir {
 public:
  TempDir();  // under $TMPDIR, or /tmp
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace trainyard
