// The check the NVSHMEM-API test programs share: a wrong value is printed with the PE and counted, and main returns
// a failure status when any was wrong. Nothing of pgas: these programs include only NVSHMEM's headers.
#pragma once

#include <nvshmem.h>

#include <cstdio>

inline int wrong = 0;

inline void expect(bool ok, const char* what, long long seen, long long expected) {
    if (!ok) {
        std::fprintf(stderr, "PE %d: %s = %lld, expected %lld\n", nvshmem_my_pe(), what, seen, expected);
        ++wrong;
    }
}
