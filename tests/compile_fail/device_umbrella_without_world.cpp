// expect: world.* is not a member of .*pgas
// pgas/device.hpp is for kernel-only translation units: it brings no world (and so no bootstrap).
#include <pgas/device.hpp>
void misuse() { pgas::world w = pgas::world::init(); }
