// Fixture for layering_catches_public_links: a model header.
#pragma once
