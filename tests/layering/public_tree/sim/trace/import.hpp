// Fixture: a trace header that needs the model (trace links model PUBLIC: right).
#pragma once
#include "model/spec.hpp"
