#pragma once
// The console's work in the running app (console/backend.hpp): reads go to
// the workers' snapshots (inspect.hpp), edits reach every worker's engine
// through its control channel between bursts, so forwarding never stops.
// With several instances (net_ring mode), `show` commands print each one and
// edits apply to each one.

#include "app/control/capture.hpp"
#include "app/config/config.hpp"
#include "app/run/instance.hpp"
#include "console/backend.hpp"

#include <atomic>
#include <memory>
#include <vector>

namespace laps::app {

class console_backend final : public console::backend {
public:
    console_backend(const app_config& config, std::vector<std::unique_ptr<instance>>& instances,
                    std::atomic<bool>& paused, std::atomic<bool>& quit, std::vector<unsigned> other_lcores,
                    capture& live_capture);

    void show_port_stats(std::ostream& out, std::optional<std::uint16_t> port) override;
    void clear_port_stats() override;
    void show_pst(std::ostream& out, std::optional<tables::address> destination) override;
    void show_pit(std::ostream& out, std::optional<tables::path_id> pid,
                  std::optional<tables::address> destination) override;
    void show_flows(std::ostream& out, std::uint32_t max) override;
    void show_paths_stats(std::ostream& out) override;
    void show_engine_stats(std::ostream& out) override;
    void show_lcores(std::ostream& out) override;
    void show_config(std::ostream& out) override;

    void set_beta_fixed(double per_us) override;
    void set_beta_normalized(double alpha) override;
    void set_policy(softmax::policy policy) override;
    void set_aimd_stages(std::uint32_t n) override;
    void set_cc(congestion::cc_variant v) override;
    void set_path_up(tables::path_id pid, bool up) override;

    void pst_add(const tables::address& destination, const std::vector<tables::path_id>& pids,
                 std::uint32_t fabric_ipv4) override;
    void pst_del(const tables::address& destination) override;
    void pit_add(const tables::pit_row& row) override;
    void pit_del(tables::path_id pid) override;
    void load(const std::string& file, std::ostream& out) override;
    void wait_packets(std::uint64_t n) override;

    void start() override;
    void stop() override;
    void quit() override;

    void capture_start(const console::capture_request& request, std::ostream& out) override;
    void capture_stop(std::ostream& out) override;
    void show_capture(std::ostream& out) override;

private:
    // Runs `work` on every worker of every instance; the first failure stops
    // it and is rethrown naming the instance.
    void on_every_engine(const std::function<void(pipeline::engine&)>& work);
    // A table edit on every instance: `edit(instance)` runs with the
    // instance's tables locked; its failure is rethrown as a console_error
    // naming the instance when there are several.
    // `only`: the instance of that name alone (empty: every instance).
    void on_every_instance(const std::function<void(instance&)>& edit, const std::string& only = {});
    // The table edits of `pit add` and `pst add` on one instance (control mutex held).
    static void add_path_on(instance& inst, const tables::pit_row& row);
    static void add_destination_on(instance& inst, const tables::address& destination,
                                   const std::vector<tables::path_id>& pids, std::uint32_t fabric_ipv4);

    const app_config& _config;
    std::vector<std::unique_ptr<instance>>& _instances;
    std::atomic<bool>& _paused;
    std::atomic<bool>& _quit;
    std::vector<unsigned> _other_lcores; // link lcore, if any
    capture& _capture;
};

} // namespace laps::app
