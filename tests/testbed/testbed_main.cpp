// main() for testbed tests: one EAL per binary (no hugepages, no PCI), with
// room for the mbuf pools of small fabrics.
#include "fabric/eal.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <exception>

int main(int argc, char** argv)
{
    testing::InitGoogleTest(&argc, argv);
    try {
        laps::fabric::start_eal(argv[0], 2048);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "testbed test: %s\n", e.what());
        return 1;
    }
    const int rc = RUN_ALL_TESTS();
    laps::fabric::stop_eal();
    return rc;
}
