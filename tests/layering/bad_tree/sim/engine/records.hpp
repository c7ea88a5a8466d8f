// Fixture: a plain engine header.
#pragma once
#include <vector>
