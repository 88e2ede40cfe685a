#include "app/telemetry.hpp"

#include "app/inspect.hpp"
#include "app/log.hpp"

#include <rte_ethdev.h>
#include <rte_telemetry.h>

#include <mutex>
#include <cstdlib>
#include <string>

namespace laps::app {

namespace {

// Telemetry callbacks are plain functions on DPDK's telemetry thread: they
// find the app here. Set while a telemetry object lives; the mutex makes its
// destructor wait for a callback in progress.
std::mutex current_mutex;
telemetry* current = nullptr;

// Rows per answer: a reply must fit DPDK telemetry's 16 KB buffer.
constexpr std::size_t page_rows = 24;

std::string row_key(telemetry& t, const instance& inst, const std::string& key)
{
    return t.instances().size() > 1 ? inst.name() + ":" + key : key;
}

std::uint64_t first_from(const char* params)
{
    if (params == nullptr || *params == '\0') {
        return 0;
    }
    char* end = nullptr;
    const unsigned long long v = std::strtoull(params, &end, 10);
    return end != nullptr && *end == '\0' ? v : 0;
}

rte_tel_data* new_dict()
{
    rte_tel_data* d = rte_tel_data_alloc();
    if (d != nullptr) {
        rte_tel_data_start_dict(d);
    }
    return d;
}

// Adds rows whose key (`key_of(row)`, a number) is >= `from`, at most
// page_rows of them, each as a dict filled by `fill`; then `next` when rows
// remain. Rows come sorted by key.
template <typename Rows, typename Key, typename Fill>
void add_page(rte_tel_data* d, telemetry& t, const instance& inst, const Rows& rows, std::uint64_t from, Key&& key_of,
              Fill&& fill)
{
    std::size_t shown = 0;
    for (const auto& r : rows) {
        const std::uint64_t key = key_of(r);
        if (key < from) {
            continue;
        }
        if (shown == page_rows) {
            rte_tel_data_add_dict_u64(d, row_key(t, inst, "next").c_str(), key);
            return;
        }
        rte_tel_data* c = new_dict();
        fill(c, r);
        rte_tel_data_add_dict_container(d, row_key(t, inst, std::to_string(key)).c_str(), c, 0);
        ++shown;
    }
}

// Each callback: the reply dict `d`, filled from the app; -1 when no app.
template <typename F>
int answer(rte_tel_data* d, F&& fill)
{
    const std::lock_guard<std::mutex> lock(current_mutex);
    telemetry* t = current;
    if (t == nullptr) {
        return -1;
    }
    rte_tel_data_start_dict(d);
    try {
        fill(*t);
    } catch (const std::exception& e) {
        rte_tel_data_add_dict_string(d, "error", e.what());
    }
    return 0;
}

int stats(const char*, const char*, rte_tel_data* d)
{
    return answer(d, [d](telemetry& t) {
        for (auto& inst : t.instances()) {
            const auto e = inspect_engine(*inst);
            rte_tel_data* c = new_dict();
            for (const auto& counter : pipeline::engine_counter_list) {
                rte_tel_data_add_dict_u64(c, std::string(counter.name).c_str(), e.counters.*counter.field);
            }
            rte_tel_data_add_dict_u64(c, "active_flows", e.flows);
            rte_tel_data_add_dict_u64(c, "active_receive_flows", e.receive_flows);
            rte_tel_data_add_dict_container(d, row_key(t, *inst, "engine").c_str(), c, 0);
            for (const auto* p : {&inst->host_port(), &inst->fabric_port()}) {
                rte_eth_stats st{};
                rte_eth_stats_get(p->id(), &st);
                rte_tel_data* ps = new_dict();
                rte_tel_data_add_dict_u64(ps, "port_id", p->id());
                rte_tel_data_add_dict_u64(ps, "rx_packets", st.ipackets);
                rte_tel_data_add_dict_u64(ps, "tx_packets", st.opackets);
                rte_tel_data_add_dict_u64(ps, "rx_bytes", st.ibytes);
                rte_tel_data_add_dict_u64(ps, "tx_bytes", st.obytes);
                rte_tel_data_add_dict_u64(ps, "rx_missed", st.imissed);
                rte_tel_data_add_dict_u64(ps, "rx_errors", st.ierrors);
                rte_tel_data_add_dict_u64(ps, "tx_errors", st.oerrors);
                const char* role = p == &inst->host_port() ? "host_port" : "fabric_port";
                rte_tel_data_add_dict_container(d, row_key(t, *inst, role).c_str(), ps, 0);
            }
        }
    });
}

int paths(const char*, const char* params, rte_tel_data* d)
{
    return answer(d, [d, params](telemetry& t) {
        for (auto& inst : t.instances()) {
            add_page(d, t, *inst, inspect_paths(*inst), first_from(params),
                     [](const path_stats_view& r) { return r.pid; },
                     [](rte_tel_data* c, const path_stats_view& r) {
                         rte_tel_data_add_dict_u64(c, "packets", r.packets);
                         rte_tel_data_add_dict_u64(c, "bytes", r.bytes);
                         rte_tel_data_add_dict_u64(c, "share_ppm", static_cast<std::uint64_t>(r.share * 1e6 + 0.5));
                         rte_tel_data_add_dict_u64(c, "real_ns", static_cast<std::uint64_t>(r.real_ns));
                         rte_tel_data_add_dict_u64(c, "base_ns", static_cast<std::uint64_t>(r.base_ns));
                         rte_tel_data_add_dict_u64(c, "probes", r.probes);
                         rte_tel_data_add_dict_u64(c, "losses", r.losses);
                         rte_tel_data_add_dict_u64(c, "valid", r.valid ? 1 : 0);
                     });
        }
    });
}

int pst(const char*, const char* params, rte_tel_data* d)
{
    return answer(d, [d, params](telemetry& t) {
        const std::uint64_t from = first_from(params);
        for (auto& inst : t.instances()) {
            const auto rows = inspect_pst(*inst);
            rte_tel_data_add_dict_u64(d, row_key(t, *inst, "count").c_str(), rows.size());
            for (std::size_t i = from; i < rows.size(); ++i) {
                if (i - from == page_rows) {
                    rte_tel_data_add_dict_u64(d, row_key(t, *inst, "next").c_str(), i);
                    break;
                }
                rte_tel_data* c = new_dict();
                rte_tel_data_add_dict_string(c, "dst", rows[i].destination.to_string().c_str());
                std::string pids;
                for (const auto pid : rows[i].pids) {
                    if (!pids.empty()) {
                        pids += ',';
                    }
                    pids += std::to_string(pid);
                }
                rte_tel_data_add_dict_string(c, "pids", pids.c_str());
                rte_tel_data_add_dict_string(c, "fabric_ip", format_ipv4(rows[i].fabric_ipv4).c_str());
                rte_tel_data_add_dict_container(d, row_key(t, *inst, std::to_string(i)).c_str(), c, 0);
            }
        }
    });
}

int pit(const char*, const char* params, rte_tel_data* d)
{
    return answer(d, [d, params](telemetry& t) {
        for (auto& inst : t.instances()) {
            const auto rows = inspect_pit(*inst);
            rte_tel_data_add_dict_u64(d, row_key(t, *inst, "count").c_str(), rows.size());
            add_page(d, t, *inst, rows, first_from(params), [](const pit_view& r) { return r.pid; },
                     [](rte_tel_data* c, const pit_view& r) {
                         rte_tel_data_add_dict_string(c, "dst",
                                                      r.destination ? r.destination->to_string().c_str() : "");
                         rte_tel_data_add_dict_u64(c, "valid", r.valid ? 1 : 0);
                         rte_tel_data_add_dict_u64(c, "base_ns", static_cast<std::uint64_t>(r.base_ns));
                         rte_tel_data_add_dict_u64(c, "uncongested_ns", static_cast<std::uint64_t>(r.uncongested_ns));
                         rte_tel_data_add_dict_u64(c, "real_ns", static_cast<std::uint64_t>(r.real_ns));
                         rte_tel_data_add_dict_u64(c, "hops", r.hops);
                         std::string anchors;
                         for (const auto a : r.anchors) {
                             if (!anchors.empty()) {
                                 anchors += ',';
                             }
                             anchors += std::to_string(a);
                         }
                         rte_tel_data_add_dict_string(c, "anchors", anchors.c_str());
                     });
        }
    });
}

int flows(const char*, const char* params, rte_tel_data* d)
{
    return answer(d, [d, params](telemetry& t) {
        std::uint64_t n = params != nullptr && *params != '\0' ? first_from(params) : page_rows;
        n = std::min<std::uint64_t>(n, page_rows);
        for (auto& inst : t.instances()) {
            const auto e = inspect_engine(*inst);
            rte_tel_data_add_dict_u64(d, row_key(t, *inst, "count").c_str(), e.flows);
            for (const auto& f : inspect_flows(*inst, static_cast<std::uint32_t>(n))) {
                rte_tel_data* c = new_dict();
                rte_tel_data_add_dict_u64(c, "worker", f.worker);
                rte_tel_data_add_dict_string(c, "flow", describe(f.key).c_str());
                rte_tel_data_add_dict_u64(c, "rate_bps", static_cast<std::uint64_t>(f.rate_bps));
                rte_tel_data_add_dict_u64(c, "expected_bps", static_cast<std::uint64_t>(f.expected_bps));
                rte_tel_data_add_dict_u64(c, "in_flight", f.in_flight);
                rte_tel_data_add_dict_u64(c, "queued", f.queued);
                rte_tel_data_add_dict_u64(c, "lost_pending", f.lost_pending);
                char id[16];
                std::snprintf(id, sizeof id, "0x%08x", f.flow_id);
                rte_tel_data_add_dict_container(d, row_key(t, *inst, id).c_str(), c, 0);
            }
        }
    });
}

int config(const char*, const char*, rte_tel_data* d)
{
    return answer(d, [d](telemetry& t) {
        rte_tel_data_add_dict_string(d, "source", t.config().source.c_str());
        for (auto& inst : t.instances()) {
            const auto sel = inspect_selection(*inst);
            const auto& c = inst->config();
            rte_tel_data* x = new_dict();
            rte_tel_data_add_dict_string(x, "policy", std::string(softmax::to_string(sel.selection.policy)).c_str());
            rte_tel_data_add_dict_string(x, "beta_mode",
                                         sel.selection.beta.mode == softmax::beta_mode::fixed ? "fixed" : "normalized");
            rte_tel_data_add_dict_u64(x, "beta_per_us_milli",
                                      static_cast<std::uint64_t>(sel.selection.beta.fixed_per_ns * 1e6 + 0.5));
            rte_tel_data_add_dict_u64(x, "beta_alpha_milli", static_cast<std::uint64_t>(sel.selection.beta.alpha * 1e3 + 0.5));
            rte_tel_data_add_dict_u64(x, "probing", sel.selection.probing ? 1 : 0);
            rte_tel_data_add_dict_u64(x, "increase_stages", sel.increase_stages);
            rte_tel_data_add_dict_u64(x, "rate_cap_bps", static_cast<std::uint64_t>(c.engine.algo.congestion.aimd.cap_bps));
            rte_tel_data_add_dict_u64(x, "window_packets", c.engine.algo.retransmit.window_packets);
            rte_tel_data_add_dict_u64(x, "destinations", sel.destinations);
            rte_tel_data_add_dict_u64(x, "paths", sel.paths);
            rte_tel_data_add_dict_u64(x, "workers", inst->worker_count());
            rte_tel_data_add_dict_string(x, "host_port", c.host.link ? "link" : c.host.devargs.c_str());
            rte_tel_data_add_dict_string(x, "fabric_port", c.fabric.link ? "link" : c.fabric.devargs.c_str());
            rte_tel_data_add_dict_container(d, inst->name().c_str(), x, 0);
        }
    });
}

void register_once()
{
    static const bool done = [] {
        struct endpoint {
            const char* name;
            telemetry_cb cb;
            const char* help;
        };
        const endpoint endpoints[] = {
            {"/laps/stats", stats, "Engine counters (summed over workers) and port counters. No parameters."},
            {"/laps/paths", paths, "Per path: packets, bytes, share_ppm, real_ns, base_ns, probes, losses. Parameter: first pid."},
            {"/laps/pst", pst, "Destinations and their pids. Parameter: first row index."},
            {"/laps/pit", pit, "Paths: dst, valid, base_ns, uncongested_ns, real_ns, hops, anchors. Parameter: first pid."},
            {"/laps/flows", flows, "Active flows (at most 24). Parameter: how many."},
            {"/laps/config", config, "The running configuration. No parameters."},
        };
        for (const auto& e : endpoints) {
            if (rte_telemetry_register_cmd(e.name, e.cb, e.help) != 0) {
                log_line(std::string("telemetry: cannot register ") + e.name);
            }
        }
        return true;
    }();
    (void)done;
}

} // namespace

telemetry::telemetry(const app_config& config, std::vector<std::unique_ptr<instance>>& instances)
    : _config(config), _instances(instances)
{
    register_once();
    const std::lock_guard<std::mutex> lock(current_mutex);
    current = this;
}

telemetry::~telemetry()
{
    const std::lock_guard<std::mutex> lock(current_mutex);
    current = nullptr;
}

} // namespace laps::app
