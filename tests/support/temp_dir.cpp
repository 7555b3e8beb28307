#include "tests/support/temp_dir.h"

#include <stdlib.h>

#include <cerrno>
#include <string>
#include <system_error>

namespace trainyard {

TempDir::TempDir() {
  std::string pattern = (std::filesystem::temp_directory_path() / "trainyard-test-XXXXXX").string();
  if (!mkdtemp(pattern.data())) throw std::system_error(errno, std::generic_category(), "mkdtemp " + pattern);
  path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ignored;  // a destructor must not throw; a leftover temp dir is harmless
  std::filesystem::remove_all(path_, ignored);
}

}  // namespace trainyard
