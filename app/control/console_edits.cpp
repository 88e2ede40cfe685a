// The console's edits (`set`, `path`, `pst`, `pit`, `load`): tables edited
// once per instance under its control mutex, per-worker parts done by each
// worker through its control channel (docs/pipeline.md "Shared tables").
#include "app/control/console_backend.hpp"

#include "config/laps_config.hpp"
#include "config/reader.hpp"

#include <mutex>

namespace laps::app {

namespace {

// `work` on each worker of `inst`, done by the worker between its bursts.
void on_workers(instance& inst, const std::function<void(pipeline::engine&)>& work)
{
    for (std::size_t w = 0; w < inst.worker_count(); ++w) {
        inst.worker_at(w).control(work);
    }
}

} // namespace

void console_backend::set_beta_fixed(double per_us)
{
    const auto beta = softmax::beta_params::fixed_per_us(per_us);
    on_every_engine([&](pipeline::engine& e) { e.set_beta(beta); });
}

void console_backend::set_beta_normalized(double alpha)
{
    const auto beta = softmax::beta_params::normalized_alpha(alpha);
    on_every_engine([&](pipeline::engine& e) { e.set_beta(beta); });
}

void console_backend::set_policy(softmax::policy policy)
{
    on_every_engine([&](pipeline::engine& e) { e.set_policy(policy); });
}

void console_backend::set_aimd_stages(std::uint32_t n)
{
    on_every_engine([&](pipeline::engine& e) { e.set_increase_stages(n); });
}

void console_backend::set_cc(congestion::cc_variant v)
{
    on_every_engine([&](pipeline::engine& e) { e.set_cc_variant(v); });
}

void console_backend::set_path_up(tables::path_id pid, bool up)
{
    bool known = false;
    on_every_instance([&](instance& inst) {
        auto& t = inst.tables();
        if (!t.paths().contains(pid)) {
            return;
        }
        known = true;
        // One store in the shared PIT entry, then a grace period: when it
        // ends every worker has started a new loop iteration since, and its
        // next path choice for the set rebuilds without (or with) the path.
        t.set_valid(pid, up);
        t.synchronize();
    });
    if (!known) {
        throw console::console_error("pid " + std::to_string(pid) + " has no PIT row");
    }
}

void console_backend::add_destination_on(instance& inst, const tables::address& destination,
                                         const std::vector<tables::path_id>& pids, std::uint32_t fabric_ipv4)
{
    auto& t = inst.tables();
    const std::uint32_t set =
        t.reserve_destination(destination, pids, fabric_ipv4, "destination " + destination.to_string());
    // Every worker gets a selection cache for the set before any packet
    // can find it in the PST.
    try {
        on_workers(inst, [set](pipeline::engine& e) { e.prepare_set(set); });
    } catch (...) {
        t.paths().unlink_set(set);
        t.release_set(set);
        throw;
    }
    t.publish_destination(destination, set);
}

void console_backend::pst_add(const tables::address& destination, const std::vector<tables::path_id>& pids,
                              std::uint32_t fabric_ipv4)
{
    on_every_instance([&](instance& inst) { add_destination_on(inst, destination, pids, fabric_ipv4); });
}

void console_backend::pst_del(const tables::address& destination)
{
    on_every_instance([&](instance& inst) {
        auto& t = inst.tables();
        // Out of the PST and its pids unlinked: no new flow finds it, no ACK
        // updates it. Each worker then tears down its own flows of the set,
        // and the set's index is reused only after a grace period.
        const std::uint32_t set = t.unpublish_destination(destination);
        on_workers(inst, [set](pipeline::engine& e) { e.tear_down_set(set); });
        t.release_set(set);
    });
}

void console_backend::add_path_on(instance& inst, const tables::pit_row& row)
{
    inst.tables().add_path(row);
    on_workers(inst, [pid = row.pid](pipeline::engine& e) { e.reset_path_counters(pid); });
}

void console_backend::pit_add(const tables::pit_row& row)
{
    on_every_instance([&](instance& inst) { add_path_on(inst, row); });
}

void console_backend::pit_del(tables::path_id pid)
{
    on_every_instance([&](instance& inst) { inst.tables().remove_path(pid); });
}

void console_backend::load(const std::string& file, std::ostream& out)
{
    // A laps config (the algorithm sections, as laps-paths --export writes)
    // or a laps *app* config (with ports:, or instances:): its paths: or
    // topology: tables. With instances, each applies to the running instance
    // of its name; a single-instance file applies to every instance.
    std::vector<std::pair<std::string, tables::table_spec>> tables_of;
    try {
        const YAML::Node doc = config::load_yaml_file(file);
        if (doc["ports"] || doc["instances"]) {
            const app_config app = load_app_config(file);
            for (const auto& i : app.instances) {
                tables_of.emplace_back(app.instances.size() > 1 ? i.name : std::string(), i.engine.algo.paths);
            }
        } else {
            tables_of.emplace_back(std::string(), config::load_laps_config_file(file).paths);
        }
    } catch (const std::exception& e) {
        throw console::console_error(e.what());
    }
    for (const auto& [name, t] : tables_of) {
        if (name.empty()) {
            continue;
        }
        bool running = false;
        for (const auto& inst : _instances) {
            running = running || inst->name() == name;
        }
        if (!running) {
            throw console::console_error(file + ": instance " + name + " is not running here");
        }
    }
    std::size_t paths = 0;
    std::size_t destinations = 0;
    for (const auto& [name, t] : tables_of) {
        // Row by row, as pit add / pst add do, on the named instance (or all).
        for (const auto& row : t.pit) {
            on_every_instance([&](instance& inst) { add_path_on(inst, row); }, name);
        }
        for (const auto& row : t.pst) {
            on_every_instance(
                [&](instance& inst) { add_destination_on(inst, row.destination, row.pids, row.fabric_ipv4); }, name);
        }
        paths += t.pit.size();
        destinations += t.pst.size();
    }
    out << "load: " << file << ": paths " << paths << ", destinations " << destinations << "\n";
}
} // namespace laps::app
