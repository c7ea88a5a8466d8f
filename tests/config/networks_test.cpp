// Placeholder, replaced in the same change that ships the files it checks.
#include <gtest/gtest.h>
TEST(Placeholder, Builds) { SUCCEED(); }
