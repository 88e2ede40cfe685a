// main() for dp tests: one EAL per binary, with no hugepages, no shared
// config files and no PCI scan, so tests run side by side as any user.
#include <gtest/gtest.h>

#include <rte_eal.h>
#include <rte_errno.h>

#include <cstdio>
#include <string>
#include <unistd.h>
#include <vector>

int main(int argc, char** argv)
{
    testing::InitGoogleTest(&argc, argv);

    const std::string prefix = "--file-prefix=laps-dp-" + std::to_string(getpid());
    std::vector<std::string> args = {argv[0], "--no-huge", "--no-shconf", "--no-pci", "-m", "512",
                                     "-l", "0", prefix, "--log-level=lib.eal:error"};
    std::vector<char*> eal_argv;
    for (auto& a : args) {
        eal_argv.push_back(a.data());
    }
    if (rte_eal_init(static_cast<int>(eal_argv.size()), eal_argv.data()) < 0) {
        std::fprintf(stderr, "dp test: rte_eal_init failed: %s\n", rte_strerror(rte_errno));
        return 1;
    }
    const int rc = RUN_ALL_TESTS();
    rte_eal_cleanup();
    return rc;
}
