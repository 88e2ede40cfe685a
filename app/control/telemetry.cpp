#include "app/control/telemetry.hpp"

#include "app/control/inspect.hpp"
#include "app/log.hpp"

#include <rte_ethdev.h>
#include <rte_telemetry.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>

namespace laps::app {

namespace {

// Telemetry callbacks are plain functions on DPDK's telemetry thread: they
// find the app here. Set while a telemetry object lives; the mutex makes its
// destructor wait for a callback in progress, and serialises callbacks.
std::mutex current_mutex;
telemetry* current = nullptr;

// Rows per answer, shared by the instances shown: a reply must fit DPDK
// telemetry's 16 KB buffer and 256 entries per dictionary.
constexpr std::size_t page_rows = 24;

// Logs the first failed add of each endpoint (under current_mutex).
void add_failed(const char* endpoint, const std::string& key, int rc)
{
    static std::set<std::string> reported;
    if (!reported.insert(endpoint).second) {
        return;
    }
    std::string why;
    switch (rc) {
    case -EINVAL:
        why = "rejected (DPDK accepts only [A-Za-z0-9_/] in keys)";
        break;
    case -ENOSPC:
        why = "no room (more than " + std::to_string(RTE_TEL_MAX_DICT_ENTRIES) + " entries)";
        break;
    case E2BIG:
        why = "truncated to " + std::to_string(RTE_TEL_MAX_STRING_LEN - 1) + " characters";
        break;
    case -ENOMEM:
        why = "out of memory";
        break;
    default:
        why = "error " + std::to_string(rc);
    }
    log_line(std::string("telemetry: ") + endpoint + ": cannot add '" + key + "': " + why +
             "; replies of this endpoint are incomplete (logged once)");
}

struct tel_data_deleter {
    void operator()(rte_tel_data* d) const noexcept { rte_tel_data_free(d); }
};

// One dictionary of a reply; every add is checked.
class reply {
public:
    reply(rte_tel_data* d, const char* endpoint) : _d(d), _endpoint(endpoint) {}

    void u64(const std::string& key, std::uint64_t v) { check(key, rte_tel_data_add_dict_u64(_d, key.c_str(), v)); }
    void str(const std::string& key, const std::string& v)
    {
        check(key, rte_tel_data_add_dict_string(_d, key.c_str(), v.c_str()));
    }
    // A nested dictionary under `key`, filled by `fill(reply&)`.
    template <typename Fill>
    void child(const std::string& key, Fill&& fill)
    {
        std::unique_ptr<rte_tel_data, tel_data_deleter> c(rte_tel_data_alloc());
        if (!c) {
            check(key, -ENOMEM);
            return;
        }
        rte_tel_data_start_dict(c.get());
        reply r(c.get(), _endpoint);
        fill(r);
        const int rc = rte_tel_data_add_dict_container(_d, key.c_str(), c.get(), 0);
        if (rc >= 0) {
            c.release(); // the parent frees it (E2BIG: added, name truncated)
        }
        check(key, rc);
    }

private:
    void check(const std::string& key, int rc)
    {
        if (rc != 0) {
            add_failed(_endpoint, key, rc);
        }
    }

    rte_tel_data* _d;
    const char* _endpoint;
};

std::vector<std::string> names_of(telemetry& t)
{
    std::vector<std::string> out;
    for (const auto& i : t.instances()) {
        out.push_back(i->name());
    }
    return out;
}

// The instances a request shows (all, or the one named).
std::vector<instance*> shown(telemetry& t, const telemetry_params& p)
{
    std::vector<instance*> out;
    for (auto& i : t.instances()) {
        if (!p.instance || i->name() == *p.instance) {
            out.push_back(i.get());
        }
    }
    return out;
}

// Each callback: parses its parameters, then fills the reply dict `d` from the
// app; -1 (null reply) when there is no app yet. A bad parameter answers
// {"error": "..."}.
template <typename F>
int answer(const char* endpoint, const char* params, rte_tel_data* d, bool number_allowed, const char* number_means,
           F&& fill)
{
    const std::lock_guard<std::mutex> lock(current_mutex);
    telemetry* t = current;
    if (t == nullptr) {
        return -1;
    }
    rte_tel_data_start_dict(d);
    reply r(d, endpoint);
    try {
        const telemetry_params p = parse_telemetry_params(params, names_of(*t), number_allowed, number_means);
        const bool several = t->instances().size() > 1;
        fill(*t, r, p, several);
    } catch (const std::exception& e) {
        rte_tel_data_start_dict(d); // drop what was added
        reply(d, endpoint).str("error", std::string(endpoint) + ": " + e.what());
    }
    return 0;
}

// Adds the rows whose key (`key_of(row)`, a number) is >= `from`, at most
// `rows_max` of them, each as a dict filled by `fill`; then `next` when rows
// remain. Rows come sorted by key.
template <typename Rows, typename Key, typename Fill>
void add_page(reply& r, bool several, const instance& inst, const Rows& rows, std::uint64_t from,
              std::size_t rows_max, Key&& key_of, Fill&& fill)
{
    std::size_t count = 0;
    for (const auto& row : rows) {
        const std::uint64_t key = key_of(row);
        if (key < from) {
            continue;
        }
        if (count == rows_max) {
            r.u64(telemetry_key(several, inst.name(), "next"), key);
            return;
        }
        r.child(telemetry_key(several, inst.name(), std::to_string(key)), [&](reply& c) { fill(c, row); });
        ++count;
    }
}

std::size_t rows_each(std::size_t instances)
{
    return std::max<std::size_t>(1, page_rows / std::max<std::size_t>(1, instances));
}

int stats(const char* cmd, const char* params, rte_tel_data* d)
{
    return answer(cmd, params, d, false, nullptr, [](telemetry& t, reply& r, const telemetry_params& p, bool several) {
        for (auto* inst : shown(t, p)) {
            const auto e = inspect_engine(*inst);
            r.child(telemetry_key(several, inst->name(), "engine"), [&](reply& c) {
                for (const auto& counter : pipeline::engine_counter_list) {
                    c.u64(std::string(counter.name), e.counters.*counter.field);
                }
                c.u64("active_flows", e.flows);
                c.u64("active_receive_flows", e.receive_flows);
            });
            for (const auto* port : {&inst->host_port(), &inst->fabric_port()}) {
                rte_eth_stats st{};
                const int rc = rte_eth_stats_get(port->id(), &st);
                const char* role = port == &inst->host_port() ? "host_port" : "fabric_port";
                r.child(telemetry_key(several, inst->name(), role), [&](reply& c) {
                    c.u64("port_id", port->id());
                    if (rc != 0) {
                        c.str("error", std::string("rte_eth_stats_get: ") + std::strerror(-rc));
                        return;
                    }
                    c.u64("rx_packets", st.ipackets);
                    c.u64("tx_packets", st.opackets);
                    c.u64("rx_bytes", st.ibytes);
                    c.u64("tx_bytes", st.obytes);
                    c.u64("rx_missed", st.imissed);
                    c.u64("rx_errors", st.ierrors);
                    c.u64("tx_errors", st.oerrors);
                    c.u64("rx_no_mbuf", st.rx_nombuf);
                });
            }
        }
    });
}

int paths(const char* cmd, const char* params, rte_tel_data* d)
{
    return answer(cmd, params, d, true, "the first pid", [](telemetry& t, reply& r, const telemetry_params& p,
                                                             bool several) {
        const auto insts = shown(t, p);
        for (auto* inst : insts) {
            add_page(r, several, *inst, inspect_paths(*inst), p.number.value_or(0), rows_each(insts.size()),
                     [](const path_stats_view& row) { return row.pid; },
                     [](reply& c, const path_stats_view& row) {
                         c.u64("packets", row.packets);
                         c.u64("bytes", row.bytes);
                         c.u64("share_ppm", static_cast<std::uint64_t>(row.share * 1e6 + 0.5));
                         c.u64("real_ns", static_cast<std::uint64_t>(row.real_ns));
                         c.u64("base_ns", static_cast<std::uint64_t>(row.base_ns));
                         c.u64("probes", row.probes);
                         c.u64("losses", row.losses);
                         c.u64("valid", row.valid ? 1 : 0);
                     });
        }
    });
}

int pst(const char* cmd, const char* params, rte_tel_data* d)
{
    return answer(cmd, params, d, true, "the first row index", [](telemetry& t, reply& r,
                                                                   const telemetry_params& p, bool several) {
        const auto insts = shown(t, p);
        const std::uint64_t from = p.number.value_or(0);
        for (auto* inst : insts) {
            const auto rows = inspect_pst(*inst);
            r.u64(telemetry_key(several, inst->name(), "count"), rows.size());
            for (std::size_t i = from; i < rows.size(); ++i) {
                if (i - from == rows_each(insts.size())) {
                    r.u64(telemetry_key(several, inst->name(), "next"), i);
                    break;
                }
                r.child(telemetry_key(several, inst->name(), std::to_string(i)), [&](reply& c) {
                    c.str("dst", rows[i].destination.to_string());
                    c.str("pids", comma_joined(rows[i].pids));
                    c.str("fabric_ip", format_ipv4(rows[i].fabric_ipv4));
                });
            }
        }
    });
}

int pit(const char* cmd, const char* params, rte_tel_data* d)
{
    return answer(cmd, params, d, true, "the first pid", [](telemetry& t, reply& r, const telemetry_params& p,
                                                             bool several) {
        const auto insts = shown(t, p);
        for (auto* inst : insts) {
            const auto rows = inspect_pit(*inst);
            r.u64(telemetry_key(several, inst->name(), "count"), rows.size());
            add_page(r, several, *inst, rows, p.number.value_or(0), rows_each(insts.size()),
                     [](const pit_view& row) { return row.pid; },
                     [](reply& c, const pit_view& row) {
                         c.str("dst", row.destination ? row.destination->to_string() : "");
                         c.u64("valid", row.valid ? 1 : 0);
                         c.u64("base_ns", static_cast<std::uint64_t>(row.base_ns));
                         c.u64("uncongested_ns", static_cast<std::uint64_t>(row.uncongested_ns));
                         c.u64("real_ns", static_cast<std::uint64_t>(row.real_ns));
                         c.u64("hops", row.hops);
                         c.str("anchors", comma_joined(row.anchors));
                     });
        }
    });
}

int flows(const char* cmd, const char* params, rte_tel_data* d)
{
    return answer(cmd, params, d, true, "how many flows (1 to 24)", [](telemetry& t, reply& r,
                                                                        const telemetry_params& p, bool several) {
        if (p.number && (*p.number == 0 || *p.number > page_rows)) {
            throw std::invalid_argument("parameter '" + std::to_string(*p.number) + "': give 1 to " +
                                        std::to_string(page_rows) + " flows");
        }
        const auto insts = shown(t, p);
        const std::size_t n = std::min<std::size_t>(p.number.value_or(page_rows), rows_each(insts.size()));
        for (auto* inst : insts) {
            const auto e = inspect_engine(*inst);
            r.u64(telemetry_key(several, inst->name(), "count"), e.flows);
            for (const auto& f : inspect_flows(*inst, static_cast<std::uint32_t>(n))) {
                char id[16];
                std::snprintf(id, sizeof id, "0x%08x", f.flow_id);
                r.child(telemetry_key(several, inst->name(), id), [&](reply& c) {
                    c.u64("worker", f.worker);
                    c.str("flow", describe(f.key));
                    c.u64("rate_bps", static_cast<std::uint64_t>(f.rate_bps));
                    c.u64("expected_bps", static_cast<std::uint64_t>(f.expected_bps));
                    c.u64("in_flight", f.in_flight);
                    c.u64("queued", f.queued);
                    c.u64("lost_pending", f.lost_pending);
                });
            }
        }
    });
}

int config(const char* cmd, const char* params, rte_tel_data* d)
{
    return answer(cmd, params, d, false, nullptr, [](telemetry& t, reply& r, const telemetry_params& p, bool) {
        r.str("source", t.config().source);
        for (auto* inst : shown(t, p)) {
            const auto sel = inspect_selection(*inst);
            const auto& c = inst->config();
            // The instance's name is a valid key ([a-z0-9_]), also alone.
            r.child(inst->name(), [&](reply& x) {
                x.str("policy", std::string(softmax::to_string(sel.selection.policy)));
                x.str("beta_mode", std::string(common::name_of(softmax::beta_mode_names, sel.selection.beta.mode)));
                x.u64("beta_per_us_milli", static_cast<std::uint64_t>(sel.selection.beta.fixed_per_ns * 1e6 + 0.5));
                x.u64("beta_alpha_milli", static_cast<std::uint64_t>(sel.selection.beta.alpha * 1e3 + 0.5));
                x.u64("probing", sel.selection.probing ? 1 : 0);
                x.u64("increase_stages", sel.increase_stages);
                x.u64("rate_cap_bps", static_cast<std::uint64_t>(c.engine.algo.congestion.aimd.cap_bps));
                x.u64("window_packets", c.engine.algo.retransmit.window_packets);
                x.u64("destinations", sel.destinations);
                x.u64("paths", sel.paths);
                x.u64("workers", inst->worker_count());
                x.str("host_port", c.host.link ? "link" : c.host.devargs);
                x.str("fabric_port", c.fabric.link ? "link" : c.fabric.devargs);
            });
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
            {"/laps/stats", stats, "Engine counters (summed over workers) and port counters. Parameter: instance."},
            {"/laps/paths", paths,
             "Per path: packets, bytes, share_ppm, real_ns, base_ns, probes, losses. Parameters: first pid, instance."},
            {"/laps/pst", pst, "Destinations and their pids. Parameters: first row index, instance."},
            {"/laps/pit", pit,
             "Paths: dst, valid, base_ns, uncongested_ns, real_ns, hops, anchors. Parameters: first pid, instance."},
            {"/laps/flows", flows, "Active flows (at most 24). Parameters: how many, instance."},
            {"/laps/config", config, "The running configuration. Parameter: instance."},
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

std::string telemetry_key(bool several, const std::string& instance, const std::string& key)
{
    return several ? instance + "/" + key : key;
}

telemetry_params parse_telemetry_params(const char* params, const std::vector<std::string>& names,
                                        bool number_allowed, const char* number_means)
{
    telemetry_params p;
    if (params == nullptr) {
        return p;
    }
    std::string names_text;
    for (const auto& n : names) {
        names_text += (names_text.empty() ? "" : ", ") + n;
    }
    const std::string text(params);
    std::size_t at = 0;
    while (at <= text.size() && !text.empty()) {
        const std::size_t comma = text.find(',', at);
        const std::string token = text.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
        at = comma == std::string::npos ? text.size() + 1 : comma + 1;
        if (token.empty()) {
            throw std::invalid_argument("empty parameter in '" + text + "'");
        }
        const bool digits = token.find_first_not_of("0123456789") == std::string::npos;
        if (digits) {
            if (!number_allowed) {
                throw std::invalid_argument("parameter '" + token + "': this endpoint takes no number" +
                                            (names.size() > 1 ? " (only an instance name: " + names_text + ")" : ""));
            }
            if (p.number) {
                throw std::invalid_argument("parameter '" + token + "': a number was already given");
            }
            if (token.size() > 9) {
                throw std::invalid_argument("parameter '" + token + "': too large");
            }
            p.number = std::stoull(token);
            continue;
        }
        bool known = false;
        for (const auto& n : names) {
            known = known || n == token;
        }
        if (!known) {
            std::string expected = number_allowed ? std::string("a number (") + number_means + ")" : "";
            if (names.size() > 1) {
                expected += (expected.empty() ? "" : " or ") + std::string("an instance name (") + names_text + ")";
            }
            if (expected.empty()) {
                expected = "no parameter";
            }
            throw std::invalid_argument("parameter '" + token + "': expected " + expected);
        }
        if (p.instance) {
            throw std::invalid_argument("parameter '" + token + "': an instance was already given");
        }
        p.instance = token;
    }
    return p;
}

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
