// Fixture for layering_catches_includes: the reports including a SimGrid header through engine/ (and a plain
// engine header, which is allowed).
#include "engine/platform.hpp"
#include "engine/records.hpp"
