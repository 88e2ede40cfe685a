#pragma once
// The laps application's YAML config (docs/app.md): ports by role, lcores,
// mempools, outer addressing, engine options, steering, stats, a stop
// condition, tables (explicit `paths:` or `topology:`), and the algorithm
// sections that config/laps_config.hpp reads. Unknown keys are errors.
//
// A file describes one instance (the usual case) or, with `instances:`, several
// instances in one process joined by an emulated `link:` (net_ring mode).

#include "common/names.hpp"
#include "config/laps_config.hpp"
#include "pipeline/engine_config.hpp"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace laps::app {

// Each enum's names, as the config spells them and the app prints them
// (common/names.hpp); a table's order is the order its errors list them in.
enum class idle_mode : std::uint8_t { spin, yield, sleep };
inline constexpr std::array idle_mode_names{
    common::named<idle_mode>{"spin", idle_mode::spin},
    common::named<idle_mode>{"yield", idle_mode::yield},
    common::named<idle_mode>{"sleep", idle_mode::sleep},
};
enum class host_steering : std::uint8_t { automatic, rss, software, queues };
inline constexpr std::array host_steering_names{
    common::named<host_steering>{"auto", host_steering::automatic},
    common::named<host_steering>{"rss", host_steering::rss},
    common::named<host_steering>{"software", host_steering::software},
    common::named<host_steering>{"queues", host_steering::queues},
};
enum class fabric_steering : std::uint8_t { automatic, rte_flow, software, queues };
inline constexpr std::array fabric_steering_names{
    common::named<fabric_steering>{"auto", fabric_steering::automatic},
    common::named<fabric_steering>{"rte_flow", fabric_steering::rte_flow},
    common::named<fabric_steering>{"software", fabric_steering::software},
    common::named<fabric_steering>{"queues", fabric_steering::queues},
};

// The engine's choices for frames it does not carry as LAPS (pipeline/
// engine_config.hpp), as the app's `engine:` section spells them.
inline constexpr std::array local_frame_policy_names{
    common::named<pipeline::local_frame_policy>{"pass", pipeline::local_frame_policy::pass},
    common::named<pipeline::local_frame_policy>{"drop", pipeline::local_frame_policy::drop},
};
inline constexpr std::array unknown_destination_policy_names{
    common::named<pipeline::unknown_destination_policy>{"pass", pipeline::unknown_destination_policy::pass},
    common::named<pipeline::unknown_destination_policy>{"drop", pipeline::unknown_destination_policy::drop},
};
inline constexpr std::array oversize_policy_names{
    common::named<pipeline::oversize_policy>{"drop", pipeline::oversize_policy::drop},
    common::named<pipeline::oversize_policy>{"pass", pipeline::oversize_policy::pass},
};
inline constexpr std::array reorder_gap_action_names{
    common::named<pipeline::reorder_gap_action>{"deliver", pipeline::reorder_gap_action::deliver},
    common::named<pipeline::reorder_gap_action>{"drop", pipeline::reorder_gap_action::drop},
};

struct port_config {
    // A vdev string ("net_pcap0,rx_pcap=in.pcap") or a device name known to
    // EAL (a PCI address given with -a). Empty when `link` is set.
    std::string devargs;
    // net_ring port joined to the emulated link (instances mode only).
    bool link = false;
    // Host port only (docs/app.md "Host frames"): 0 (auto, the default)
    // sets the port's MTU to the fabric MTU minus the LAPS encapsulation
    // when the driver allows it; `keep` (-1) leaves it; N sets N.
    std::int32_t mtu = 0;
    std::uint16_t rx_desc = 1024;
    std::uint16_t tx_desc = 1024;
};

struct mempool_config {
    std::uint32_t mbufs = 16383;         // packet pool: RX of both ports
    std::uint32_t control_mbufs = 8191;  // header segments, ACKs, probes
    std::uint32_t cache = 256;
    std::uint16_t data_room = 2176;      // RTE_MBUF_DEFAULT_BUF_SIZE
};

struct topology_config {
    std::string file;        // a file or a builder ("rail:clusters=2")
    std::optional<std::uint32_t> host; // default: host.id
    std::string paths = "auto";
};

struct steering_config {
    host_steering host = host_steering::automatic;
    fabric_steering fabric = fabric_steering::automatic;
    std::optional<std::uint8_t> tag_bits; // fabric-wide; default: default_tag_bits (4, ports/steering.hpp)
    std::uint32_t ring_size = 4096;       // software dispatch rings, per worker
};

// Outer addressing; unset fields come from the port or the tables.
struct outer_section {
    std::optional<std::uint32_t> ip;                // host order
    std::optional<wire::mac_address> mac;           // default: the fabric port's MAC
    wire::mac_address next_hop_mac{};
    std::uint16_t udp_port = wire::default_udp_port;
    std::optional<std::uint16_t> mtu; // default: the fabric port's MTU (1500 if it reports none)
    std::uint8_t ttl = 64;
};

struct instance_config {
    std::string name = "laps";
    port_config host;
    port_config fabric;
    std::vector<unsigned> workers; // empty: every EAL lcore left
    mempool_config mempool;
    outer_section outer;
    steering_config steering;
    std::optional<topology_config> topology;
    std::uint16_t burst = 32;
    bool reorder_hold_max_given = false; // else a quarter of mempool.mbufs
    // Engine options and the algorithm sections; name, outer, steering tag and
    // control pool are filled in at start.
    pipeline::engine_config engine;
};

struct link_path {
    tables::path_id pid = 0;
    common::time_ns delay_ns = 0;
    // Each packet on this pid is lost with this probability, and waits an
    // extra uniform [0, jitter) (so packets of one path can overtake each
    // other): a lossy, reordering fabric for TCP through laps.
    double loss = 0.0;
    common::time_ns jitter_ns = 0;
};

struct link_config {
    std::optional<unsigned> lcore;
    common::time_ns default_delay_ns = 10 * common::ns_per_us;
    std::vector<link_path> paths;
    // Each instance's receiving port on the link: what the link hands an
    // instance leaves it at this rate, in arrival order, behind a queue of
    // ring_size packets (dropped when full). 0: no rate (delivered when due).
    double rate_bps = 0;
    std::uint32_t mbufs = 16383;
    std::uint32_t ring_size = 4096;
};

struct stats_config {
    common::time_ns interval_ns = 0; // 0: no periodic line
};

struct run_config {
    std::uint64_t max_packets = 0;        // host frames taken by the engines
    std::uint64_t max_fabric_packets = 0; // packets received from the fabric
    common::time_ns duration_ns = 0;
    common::time_ns idle_ns = 0;          // nothing received for this long
    common::time_ns drain_ns = 100 * common::ns_per_ms;
    // The longest a packet for the fabric waits in the worker's TX batch
    // (docs/app.md "Timestamps"): DATA and PROBE are stamped as the batch
    // leaves, so this bounds forwarding delay, not timestamp error.
    common::time_ns tx_batch_ns = 2 * common::ns_per_us;
};

// Prometheus/OpenMetrics scrape endpoint (docs/telemetry.md); off unless set.
struct metrics_config {
    std::string host = "127.0.0.1"; // a numeric IPv4 or IPv6 address
    std::uint16_t port = 0;          // 0: any free port (logged at start)
};

enum class capture_side : std::uint8_t { host, fabric, both };
inline constexpr std::array capture_side_names{
    common::named<capture_side>{"host", capture_side::host},
    common::named<capture_side>{"fabric", capture_side::fabric},
    common::named<capture_side>{"both", capture_side::both},
};

// A live capture to pcapng (docs/app.md "Live capture"): from the config at
// start, or from the console's `capture start`.
struct capture_config {
    std::string file;
    capture_side side = capture_side::both;
    std::optional<std::uint16_t> pid; // fabric packets of this path only
    std::uint64_t count = 0;          // stop after this many packets (0: no limit)
    common::time_ns duration_ns = 0;  // stop after this long (0: no limit)
    std::uint32_t snaplen = 65535;    // bytes kept of each packet
};

// The fabric's key (docs/security.md): every instance signs what it sends
// and drops what does not verify. The key itself is never printed.
struct auth_config {
    wire::auth_key key;
    std::string from;             // "auth.key" or the key file's path, for show config
    std::uint32_t peers = 1024;   // replay windows per engine (auth.peers)
};

struct app_config {
    std::string source;
    std::optional<auth_config> auth;
    std::optional<unsigned> control_lcore; // default: the EAL main lcore
    idle_mode idle = idle_mode::spin;
    stats_config stats;
    run_config run;
    std::vector<instance_config> instances;
    std::optional<link_config> link;
    std::optional<metrics_config> metrics;
    std::optional<capture_config> capture;
};

// "127.0.0.1:9464", "[::1]:9464"; nullopt when malformed.
std::optional<metrics_config> parse_listen(const std::string& text);
std::string format_listen(const metrics_config& m);

// Throws config::config_error ("file:line:col: key: what").
app_config load_app_config(const std::string& path);
app_config parse_app_config(const std::string& yaml, const std::string& name);

// "02:00:00:00:00:01" -> bytes; nullopt when malformed.
std::optional<wire::mac_address> parse_mac(const std::string& text);
std::string format_mac(const wire::mac_address& mac);
std::string format_ipv4(std::uint32_t host_order);

} // namespace laps::app
