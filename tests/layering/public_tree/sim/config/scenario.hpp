// Fixture: a config header that needs the model and nothing of trace (config links trace PUBLIC: wrong).
#pragma once
#include "model/spec.hpp"
