// Fixture: an engine header that needs SimGrid.
#pragma once
#include <simgrid/s4u.hpp>
