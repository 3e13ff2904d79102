// The second translation unit of the NVSHMEM GPU program: its kernel reaches the heap through this TU's own device
// state (no -rdc), with an atomic ticket and a put-with-signal the next PE waits for.
#include "nvshmem_gpu.hpp"

#include <nvshmem.h>
#include <nvshmemx.h>

__global__ void ticket_and_signal(shared_words words) {
    const int me = nvshmem_my_pe(), npes = nvshmem_n_pes();
    const int right = (me + 1) % npes;
    words.ticket[0] = nvshmem_int_atomic_fetch_add(words.counter, 1, 0);
    const int payload = 100 + me;
    nvshmem_putmem_signal(words.payload, &payload, sizeof payload, words.signal, 1, NVSHMEM_SIGNAL_SET, right);
    words.seen_signal[0] = nvshmem_signal_wait_until(words.signal, NVSHMEM_CMP_EQ, 1);
    nvshmem_barrier_all();
}

void launch_ticket_and_signal(const shared_words& words, cudaStream_t stream) {
    ticket_and_signal<<<1, 1, 0, stream>>>(words);
}
