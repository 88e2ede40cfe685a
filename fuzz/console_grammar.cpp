// The console's grammar (rte_cmdline tables) and its argument parsing on any
// text, one line at a time: every line is either handed to the backend with
// arguments inside their documented ranges or answered with one "error:"
// line; nothing crashes. The backend below is the boundary under test: it
// does no work and traps on an argument the grammar should have refused.
#include "console/backend.hpp"
#include "console/console.hpp"
#include "tables/table_spec.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <set>
#include <string>

namespace {

using namespace laps;

void require(bool ok) noexcept
{
    if (!ok) {
        __builtin_trap();
    }
}

class checking_backend final : public console::backend {
public:
    void show_port_stats(std::ostream&, std::optional<std::uint16_t>) override {}
    void clear_port_stats() override {}
    void show_pst(std::ostream&, std::optional<tables::address>) override {}
    void show_pit(std::ostream&, std::optional<tables::path_id>, std::optional<tables::address>) override {}
    void show_flows(std::ostream&, std::uint32_t) override {}
    void show_paths_stats(std::ostream&) override {}
    void show_engine_stats(std::ostream&) override {}
    void show_lcores(std::ostream&) override {}
    void show_config(std::ostream&) override {}

    void set_beta_fixed(double per_us) override { require(std::isfinite(per_us) && per_us >= 0 && per_us <= 1e6); }
    void set_beta_normalized(double alpha) override { require(std::isfinite(alpha) && alpha >= 0 && alpha <= 1e6); }
    void set_policy(softmax::policy) override {}
    void set_aimd_stages(std::uint32_t) override {}
    void set_cc(laps::congestion::cc_variant) override {}
    void set_path_up(tables::path_id, bool) override {}

    void pst_add(const tables::address&, const std::vector<tables::path_id>& pids, std::uint32_t) override
    {
        require(!pids.empty() && pids.size() <= 16);
        require(std::set<tables::path_id>(pids.begin(), pids.end()).size() == pids.size());
    }
    void pst_del(const tables::address&) override {}
    void pit_add(const tables::pit_row& row) override
    {
        require(row.anchor_count <= row.anchors.size());
        require(row.base_ns >= 0 && row.uncongested_ns >= 0);
    }
    void pit_del(tables::path_id) override {}
    void load(const std::string&, std::ostream&) override {} // reads no file: the config reader has its own targets
    void wait_packets(std::uint64_t) override {}

    void start() override {}
    void stop() override {}
    void quit() override {}

    void capture_start(const console::capture_request& r, std::ostream&) override
    {
        require(!r.file.empty());
        require(r.side == "host" || r.side == "fabric" || r.side == "both");
        require(r.snaplen >= 64 && r.snaplen <= 65535);
        require(std::isfinite(r.seconds) && r.seconds >= 0);
    }
    void capture_stop(std::ostream&) override {}
    void show_capture(std::ostream&) override {}
};

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    static checking_backend backend;
    static console::console console(backend);
    const std::string text(reinterpret_cast<const char*>(data), size);
    // rte_cmdline takes at most a line buffer's worth (RDLINE_BUF_SIZE); a
    // few lines per input lets the fuzzer find sequences.
    std::size_t start = 0;
    for (int lines = 0; lines < 8 && start < text.size(); ++lines) {
        const std::size_t end = std::min(text.find('\n', start), text.size());
        console.run_line(text.substr(start, end - start));
        start = end + 1;
    }
    return 0;
}
