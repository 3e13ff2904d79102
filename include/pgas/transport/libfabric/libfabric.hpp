// The libfabric proxy transport: include this (not part of pgas/pgas.hpp) and link pgas::libfabric.
#pragma once

#include <pgas/transport/libfabric/domain.hpp>
#include <pgas/transport/libfabric/transport.hpp>
