// Instantiates the four pgas::ep kernels as a program builds them, for check_registers.cmake (compiled, never run).
#include <pgas/host/ep/on_stream.cuh>

int main() { return pgas::ep::resident_blocks(0, 1) > 0 ? 0 : 1; }
