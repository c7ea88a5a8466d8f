// Where this build's source tree and framesim binary are. tests/CMakeLists.txt writes them into test_paths.cpp in
// the build folder (library framesim_test_paths) instead of the compile flags, so that no test object depends on
// where the tree was checked out and a second checkout reuses the compiler cache.
#pragma once

namespace framesim::testing {
extern const char kSourceDir[];       // the source tree, absolute, without a trailing slash
extern const char kFramesimBinary[];  // the framesim executable of this build, absolute
}  // namespace framesim::testing

#define FRAMESIM_SOURCE_DIR ::framesim::testing::kSourceDir
#define FRAMESIM_BINARY ::framesim::testing::kFramesimBinary
