# fuzz/replay.cmake - each fuzz target (fuzz/fuzz_*.c) linked with
# fuzz/replay.c instead of libFuzzer, in the normal build, and run as a test
# over its seed corpus and its regressions: replay_fuzz_<name>
# (fuzz/corpus/<name>/, fuzz/regressions/<name>/). Included from
# tests/CMakeLists.txt (needs COPROC_TEST_ENV).
file(GLOB COPROC_REPLAY_TARGETS CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/fuzz/fuzz_*.c)
foreach(src ${COPROC_REPLAY_TARGETS})
  get_filename_component(name ${src} NAME_WE)
  string(REGEX REPLACE "^fuzz_" "" short ${name})
  add_executable(replay_${name} ${src} ${PROJECT_SOURCE_DIR}/fuzz/common.c
                 ${PROJECT_SOURCE_DIR}/fuzz/replay.c)
  target_include_directories(replay_${name} PRIVATE ${PROJECT_SOURCE_DIR}/fuzz)
  target_link_libraries(replay_${name} PRIVATE coproc_internal)
  add_test(NAME replay_${name}
           COMMAND replay_${name} ${PROJECT_SOURCE_DIR}/fuzz/corpus/${short}
                   ${PROJECT_SOURCE_DIR}/fuzz/regressions/${short})
  set_tests_properties(replay_${name} PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 600 LABELS pocl
                       ENVIRONMENT "${COPROC_TEST_ENV}")
endforeach()
# replay_fuzz_differential: the differential tester's cases (tests/differential/gen.c,
# SQLite); its regressions are minimised disagreements, each failing until fixed.
if(TARGET replay_fuzz_differential)
  target_sources(replay_fuzz_differential PRIVATE ${PROJECT_SOURCE_DIR}/tests/differential/gen.c)
  target_include_directories(replay_fuzz_differential PRIVATE ${PROJECT_SOURCE_DIR}/tests)
  target_compile_definitions(replay_fuzz_differential PRIVATE
                             COPROC_PROFILES_DIR="${PROJECT_SOURCE_DIR}/profiles")
  target_link_libraries(replay_fuzz_differential PRIVATE PkgConfig::SQLITE3)
endif()
