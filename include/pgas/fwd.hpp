// Forward declarations of pgas's public types, for headers that only name them.
#pragma once

#include <pgas/core/config.hpp>

PGAS_NAMESPACE_BEGIN
template <class T>
class symmetric_ptr;
template <class T>
class window;
class team;
class error;
class world;
struct world_options;
struct thread;
template <unsigned N>
struct tile;
struct block;
namespace device {
template <class Transport>
struct context;
}
class host;
PGAS_NAMESPACE_END
