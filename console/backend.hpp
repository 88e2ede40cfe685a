#pragma once
// What the console asks of the running application. The grammar (commands.c)
// and its parsing (dispatch.cpp) live here; the work lives in the app, which
// implements this interface (testpmd keeps cmdline.c apart from config.c the
// same way). Output goes to the stream; errors are thrown as console_error
// (or any std::exception) and printed as "error: <what>", and the app keeps
// running.

#include "congestion/aimd.hpp"
#include "softmax/policy.hpp"
#include "tables/address.hpp"
#include "tables/table_spec.hpp"

#include <cstdint>
#include <optional>
#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

namespace laps::console {

class console_error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// `capture start <file> [side host|fabric|both] [pid N] [count N] [seconds S] [snaplen N]`
struct capture_request {
    std::string file;
    std::string side = "both";
    std::optional<std::uint16_t> pid;
    std::uint64_t count = 0;
    double seconds = 0;
    std::uint32_t snaplen = 65535;
};

class backend {
public:
    virtual ~backend() = default;

    virtual void show_port_stats(std::ostream& out, std::optional<std::uint16_t> port) = 0;
    virtual void clear_port_stats() = 0;
    virtual void show_pst(std::ostream& out, std::optional<tables::address> destination) = 0;
    virtual void show_pit(std::ostream& out, std::optional<tables::path_id> pid,
                          std::optional<tables::address> destination) = 0;
    virtual void show_flows(std::ostream& out, std::uint32_t max) = 0;
    virtual void show_paths_stats(std::ostream& out) = 0;
    virtual void show_engine_stats(std::ostream& out) = 0;
    virtual void show_lcores(std::ostream& out) = 0;
    virtual void show_config(std::ostream& out) = 0;

    virtual void set_beta_fixed(double per_us) = 0;
    virtual void set_beta_normalized(double alpha) = 0;
    virtual void set_policy(softmax::policy policy) = 0;
    virtual void set_aimd_stages(std::uint32_t n) = 0;
    virtual void set_cc(congestion::cc_variant v) = 0;
    virtual void set_path_up(tables::path_id pid, bool up) = 0;

    virtual void pst_add(const tables::address& destination, const std::vector<tables::path_id>& pids,
                         std::uint32_t fabric_ipv4) = 0;
    virtual void pst_del(const tables::address& destination) = 0;
    virtual void pit_add(const tables::pit_row& row) = 0;
    virtual void pit_del(tables::path_id pid) = 0;
    virtual void load(const std::string& file, std::ostream& out) = 0;
    // Returns once `n` more host frames were taken; throws after a timeout.
    virtual void wait_packets(std::uint64_t n) = 0;

    virtual void start() = 0;
    virtual void stop() = 0;
    virtual void quit() = 0;

    // Live capture to pcapng (docs/console.md "capture").
    virtual void capture_start(const capture_request& request, std::ostream& out) = 0;
    virtual void capture_stop(std::ostream& out) = 0;
    virtual void show_capture(std::ostream& out) = 0;
};

} // namespace laps::console
