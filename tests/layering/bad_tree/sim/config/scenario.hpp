// Fixture: a config header that exposes yaml-cpp.
#pragma once
#include <yaml-cpp/yaml.h>
