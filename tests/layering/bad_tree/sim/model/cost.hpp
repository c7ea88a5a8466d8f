// Fixture: the cost model including the YAML reader (upward, and yaml-cpp through it).
#pragma once
#include "config/scenario.hpp"
#include "core/units.hpp"
