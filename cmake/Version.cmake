# The git commit this tree was configured from, for --version: "unknown" when the sources are not
# their own git checkout (a release tarball, or a tarball unpacked inside some other repository).
# Configuring again after every commit or checkout keeps it current: CMake watches the worktree's
# HEAD log, which git appends to whenever HEAD moves.
set(TRAINYARD_GIT_COMMIT unknown)
find_package(Git QUIET)
if(GIT_FOUND)
  # rev-parse prints the options' answers first, then the revision's.
  execute_process(COMMAND ${GIT_EXECUTABLE} rev-parse --show-toplevel --git-path logs/HEAD --short=12 HEAD
                  WORKING_DIRECTORY ${PROJECT_SOURCE_DIR} RESULT_VARIABLE git_status OUTPUT_VARIABLE git_out
                  ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(git_status EQUAL 0)
    string(REPLACE "\n" ";" git_out "${git_out}")
    list(GET git_out 0 git_toplevel)
    list(GET git_out 1 git_head_log)
    list(GET git_out 2 git_commit)
    file(REAL_PATH "${git_toplevel}" git_toplevel)
    file(REAL_PATH "${PROJECT_SOURCE_DIR}" source_dir)
    if(git_toplevel STREQUAL source_dir)
      set(TRAINYARD_GIT_COMMIT ${git_commit})
      file(REAL_PATH "${git_head_log}" git_head_log BASE_DIRECTORY ${PROJECT_SOURCE_DIR})
      if(EXISTS ${git_head_log})
        set_property(DIRECTORY ${PROJECT_SOURCE_DIR} APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${git_head_log})
      endif()
    endif()
  endif()
endif()
add_compile_definitions(TRAINYARD_VERSION="${PROJECT_VERSION}")
