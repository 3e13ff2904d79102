// Fixture for scripts/check-layers (never compiled): core/ including host/ runs up the layer order.
#pragma once

#include <pgas/core/config.hpp>
#include <pgas/host/world.hpp>
