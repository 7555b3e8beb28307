include(GoogleTest)

# Project-wide helpers: every library and executable of ours gets the same strict warnings, and
# nothing from outside the project (Boost, nlohmann, spdlog) is held to them because those come in
# through imported targets as system headers.
# Warnings are errors only in the project's own builds (deploy/build.sh sets
# TRAINYARD_WERROR=ON): a packager's compiler, newer or older than CI's, may warn where ours does not,
# and that must not break their build.
option(TRAINYARD_WERROR "Treat compiler warnings in the project's own code as errors" OFF)
set(TRAINYARD_WARNINGS -Wall -Wextra -Wnon-virtual-dtor -Woverloaded-virtual -Wno-missing-field-initializers)
if(TRAINYARD_WERROR)
  list(APPEND TRAINYARD_WARNINGS -Werror)
endif()

# Unity ("jumbo") builds: the sources of a library or a test binary compile in batches, one
# translation unit per batch, so the heavy headers (nlohmann-json, spdlog and fmt, Boost, gtest)
# are parsed, and their templates instantiated and given debug information, once per batch instead
# of once per file (figures in docs/decisions/030-unity-builds.md and
# docs/decisions/031-test-binaries-compile-in-batches.md). File-local names (anonymous
# namespaces, statics) must therefore be unique within a library or test binary. The batches are
# written here rather than by CMake's own UNITY_BUILD because CMake's include each source by its
# absolute path, so a fresh clone at another path would miss ccache on every batch; ours include
# paths relative to the repository root. An edit recompiles the edited file's whole batch:
# configure with -DTRAINYARD_UNITY_BUILD=OFF to compile file by file.
option(TRAINYARD_UNITY_BUILD "Compile the sources of each library and test binary in batches (unity build)" ON)
set(TRAINYARD_UNITY_BATCH_SIZE 16 CACHE STRING "Sources per unity batch")

# Deferred to the end of the directory (cmake_language(DEFER)), so sources a folder adds with
# target_sources after creating the library are batched too. A source marked
# SKIP_UNITY_BUILD_INCLUSION (the files that drive Beast, each minutes of compiling on its own, which
# gain nothing from company and would serialise their batch) compiles alone, in parallel with the batches.
function(trainyard_unity_batches name)
  get_target_property(sources ${name} SOURCES)
  list(FILTER sources INCLUDE REGEX "\\.cpp$")
  set(alone "")
  foreach(source IN LISTS sources)
    get_source_file_property(skip ${source} SKIP_UNITY_BUILD_INCLUSION)
    if(skip)
      list(APPEND alone ${source})
    endif()
  endforeach()
  if(alone)
    list(REMOVE_ITEM sources ${alone})
  endif()
  list(LENGTH sources count)
  if(count LESS 2)
    return()
  endif()
  set(batch "")
  set(index 0)
  set(generated "")
  foreach(source IN LISTS sources)
    cmake_path(ABSOLUTE_PATH source BASE_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR} OUTPUT_VARIABLE full)
    cmake_path(RELATIVE_PATH full BASE_DIRECTORY ${PROJECT_SOURCE_DIR} OUTPUT_VARIABLE relative)
    string(APPEND batch "#include \"${relative}\"\n")
    set_source_files_properties(${source} PROPERTIES HEADER_FILE_ONLY ON)
    math(EXPR in_batch "(${index} + 1) % ${TRAINYARD_UNITY_BATCH_SIZE}")
    math(EXPR index "${index} + 1")
    if(in_batch EQUAL 0 OR index EQUAL count)
      list(LENGTH generated number)
      set(file ${CMAKE_CURRENT_BINARY_DIR}/unity/${name}_${number}.cpp)
      # CONFIGURE writes only when the text changed, so a reconfigure recompiles nothing.
      file(CONFIGURE OUTPUT ${file} CONTENT "${batch}" @ONLY)
      list(APPEND generated ${file})
      set(batch "")
    endif()
  endforeach()
  target_sources(${name} PRIVATE ${generated})
endfunction()

# Batches target `name`'s sources once its folder has added them all.
function(trainyard_batch_sources name)
  if(TRAINYARD_UNITY_BUILD)
    cmake_language(EVAL CODE "cmake_language(DEFER CALL trainyard_unity_batches ${name})")
  endif()
endfunction()

function(trainyard_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  add_library(${name} STATIC ${ARG_SOURCES})
  target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR})
  target_compile_options(${name} PRIVATE ${TRAINYARD_WARNINGS})
  target_link_libraries(${name} PUBLIC ${ARG_DEPS})
  trainyard_batch_sources(${name})
endfunction()

function(trainyard_executable name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_compile_options(${name} PRIVATE ${TRAINYARD_WARNINGS})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS})
endfunction()

# A unit-test binary; `LABELS unit` lets CI run just these under the sanitizers.
function(trainyard_test name)
  cmake_parse_arguments(ARG "" "LABEL" "SOURCES;DEPS" ${ARGN})
  if(NOT ARG_LABEL)
    set(ARG_LABEL unit)
  endif()
  add_executable(${name} ${ARG_SOURCES})
  target_compile_options(${name} PRIVATE ${TRAINYARD_WARNINGS})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS} GTest::gtest GTest::gmock GTest::gtest_main)
  trainyard_batch_sources(${name})
  if(TRAINYARD_SANITIZE)
    # A sanitized test process takes one to three seconds to start, far longer than most tests
    # take: each binary runs once, whole (the unit tests took 824 s test by test, 78 s so).
    add_test(NAME ${name} COMMAND ${name})
    set_tests_properties(${name} PROPERTIES LABELS ${ARG_LABEL})
  else()
    gtest_discover_tests(${name} PROPERTIES LABELS ${ARG_LABEL} DISCOVERY_TIMEOUT 60)
  endif()
  if(ARG_LABEL STREQUAL "unit")
    add_dependencies(unit_tests ${name})
  endif()
endfunction()

# The folder map: TRAINYARD_MAY_USE_<folder> lists the folders <folder> may use.
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/cmake/folder_map.txt)
file(STRINGS ${PROJECT_SOURCE_DIR}/cmake/folder_map.txt _trainyard_map_lines REGEX "^[a-z_/]+:")
foreach(_trainyard_line ${_trainyard_map_lines})
  string(REGEX MATCH "^([a-z_/]+):(.*)$" _ "${_trainyard_line}")
  string(STRIP "${CMAKE_MATCH_2}" _trainyard_uses)
  separate_arguments(_trainyard_uses UNIX_COMMAND "${_trainyard_uses}")
  set(TRAINYARD_MAY_USE_${CMAKE_MATCH_1} "${_trainyard_uses}")
  set(TRAINYARD_MAPPED_${CMAKE_MATCH_1} ON)
endforeach()

# Refuses a folder library whose DEPS name a folder library its folder's line does not allow.
function(trainyard_check_folder_deps name folder)
  if(NOT TRAINYARD_MAPPED_${folder})
    message(FATAL_ERROR "${name}: folder ${folder}/ has no line in cmake/folder_map.txt")
  endif()
  foreach(dep ${ARGN})
    if(TARGET ${dep})
      get_target_property(dep_folder ${dep} TRAINYARD_FOLDER)
      if(dep_folder AND NOT dep_folder IN_LIST TRAINYARD_MAY_USE_${folder})
        message(FATAL_ERROR "${name}: ${folder}/ may not use ${dep_folder}/ (${dep}); see cmake/folder_map.txt")
      endif()
    endif()
  endforeach()
endfunction()

# One library per folder: every .cpp in the folder except main.cpp. A folder with no sources yet
# is an INTERFACE library so dependents can already name it. A folder with a line in the folder
# map may link only what that line allows.
function(trainyard_folder_library name)
  cmake_parse_arguments(ARG "" "" "DEPS" ${ARGN})
  file(RELATIVE_PATH folder ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_SOURCE_DIR})
  if(NOT folder MATCHES "^tests/")
    trainyard_check_folder_deps(${name} ${folder} ${ARG_DEPS})
  endif()
  file(GLOB sources CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*.cpp)
  list(FILTER sources EXCLUDE REGEX "/main\\.cpp$")
  if(sources)
    trainyard_library(${name} SOURCES ${sources} DEPS ${ARG_DEPS})
  else()
    add_library(${name} INTERFACE)
    target_include_directories(${name} INTERFACE ${PROJECT_SOURCE_DIR})
    target_link_libraries(${name} INTERFACE ${ARG_DEPS})
  endif()
  set_target_properties(${name} PROPERTIES TRAINYARD_FOLDER ${folder})
endfunction()

# A unit-test binary from every .cpp in the calling folder.
function(trainyard_folder_test name)
  cmake_parse_arguments(ARG "" "LABEL" "DEPS" ${ARGN})
  file(GLOB sources CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*.cpp)
  if(sources)
    trainyard_test(${name} SOURCES ${sources} DEPS ${ARG_DEPS} LABEL ${ARG_LABEL})
  endif()
endfunction()

# Adds every immediate subfolder of the current folder that has a CMakeLists.txt, so a new test
# binary or benchmark is one new folder. Must be a macro: add_subdirectory needs the caller's scope.
macro(trainyard_add_child_folders)
  file(GLOB _trainyard_children LIST_DIRECTORIES true CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*)
  foreach(_trainyard_child ${_trainyard_children})
    if(IS_DIRECTORY ${_trainyard_child} AND EXISTS ${_trainyard_child}/CMakeLists.txt)
      add_subdirectory(${_trainyard_child})
    endif()
  endforeach()
endmacro()
