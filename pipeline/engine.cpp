// Engine construction, teardown and control edits: the owner of the two
// sides (send_side.cpp and sender.cpp, ack_path.cpp, policies.cpp;
// receive_side.cpp and ack_coalescing.cpp); the fabric's packets come in
// through fabric_input.cpp.
#include "pipeline/engine.hpp"

#include <memory>
#include <string>

namespace laps::pipeline {

namespace {

std::pmr::memory_resource* memory_of(const engine_config& c)
{
    return c.memory != nullptr ? c.memory : std::pmr::get_default_resource();
}

// Tables of one engine: it is their only user, so every ACK may write (the
// paper's behaviour) unless the config asks for a tolerance.
std::unique_ptr<tables::shared_tables> own_tables(const engine_config& c)
{
    tables::shared_tables_options o;
    o.name = c.name;
    o.pst_capacity = c.algo.tables.pst_capacity;
    o.socket_id = c.socket_id;
    if (c.shared_flows != nullptr) {
        o.shared_pst = &c.shared_flows->destinations();
        o.pst_owner = c.flow_index_tag;
    }
    o.paths = config::path_options(c.algo);
    o.paths.update_tolerance = c.algo.tables.pit_update_tolerance.value_or(0.0);
    o.paths.memory = memory_of(c);
    try {
        return std::make_unique<tables::shared_tables>(c.algo.paths, o);
    } catch (const tables::pst_error& e) {
        throw engine_error("engine '" + c.name + "': " + e.what());
    }
}

// The engine's flow slots: its own rte_hash, or its share of flow_index.
flow_slots slots_for(const engine_config& c, const std::string& suffix, std::uint32_t capacity,
                     std::uint32_t key_len, bool send)
{
    if (c.shared_flows == nullptr) {
        return flow_slots(c.name + suffix, capacity, key_len, c.socket_id);
    }
    return flow_slots(send ? c.shared_flows->send() : c.shared_flows->receive(), capacity, memory_of(c));
}

// What the constructor checks before it allocates anything: each error
// names the engine and the setting.
const engine_config& validated(const engine_config& config)
{
    const auto& algo = config.algo;
    if (config.control_pool == nullptr) {
        throw engine_error("engine '" + config.name + "': no control mempool");
    }
    if (algo.tables.flow_capacity > max_flow_capacity) {
        throw engine_error("engine '" + config.name + "': flow_capacity above " + std::to_string(max_flow_capacity));
    }
    if (config.entropy_tag_bits > 8) {
        throw engine_error("engine '" + config.name + "': a steering tag of " +
                           std::to_string(config.entropy_tag_bits) + " bits; at most 8 of the 14 entropy bits");
    }
    if (config.workers == 0 || config.worker >= config.workers ||
        config.workers > (1u << config.entropy_tag_bits)) {
        throw engine_error("engine '" + config.name + "': worker " + std::to_string(config.worker) + " of " +
                           std::to_string(config.workers) + " cannot be reached with " +
                           std::to_string(config.entropy_tag_bits) + " tag bits (" +
                           std::to_string(1u << config.entropy_tag_bits) + " tags)");
    }
    if (algo.retransmit.window_packets > 32768) {
        throw engine_error("engine '" + config.name + "': retransmit.window_packets " +
                           std::to_string(algo.retransmit.window_packets) +
                           " is above 32768 (DATA carries its window offset in 16 bits)");
    }
    if (config.flow_queue_packets == 0 || config.staging_packets == 0) {
        throw engine_error("engine '" + config.name + "': queue sizes must be positive");
    }
    if (config.outer.mtu != 0 && algo.congestion.pacer_burst_bytes < config.outer.mtu + wire::ether_size) {
        throw engine_error("engine '" + config.name + "': congestion.pacer_burst_bytes (" +
                           std::to_string(algo.congestion.pacer_burst_bytes) +
                           ") must hold one full fabric frame (" + std::to_string(config.outer.mtu + wire::ether_size) +
                           " bytes)");
    }
    if (config.shared_flows != nullptr && config.flow_index_tag == 0) {
        throw engine_error("engine '" + config.name + "': a shared flow index needs a non-zero flow_index_tag");
    }
    if (config.auth_key && config.auth_peers == 0) {
        throw engine_error("engine '" + config.name + "': auth_peers must be positive");
    }
    return config;
}

// The signer and verifier of a config with a key; null without one.
std::unique_ptr<wire::authenticator> authenticator_for(const engine_config& config)
{
    if (!config.auth_key) {
        return nullptr;
    }
    try {
        return std::make_unique<wire::authenticator>(*config.auth_key, config.epoch);
    } catch (const wire::auth_error& e) {
        throw engine_error("engine '" + config.name + "': " + e.what());
    }
}

} // namespace

engine::engine(const engine_config& config) : engine(config, own_tables(config), nullptr)
{
}

engine::engine(const engine_config& config, tables::shared_tables& shared) : engine(config, nullptr, &shared)
{
}

engine::engine(const engine_config& config, std::unique_ptr<tables::shared_tables> own, tables::shared_tables* shared)
    : _config(validated(config)), _memory(memory_of(config)), _own_tables(std::move(own)),
      _tables(shared != nullptr ? *shared : *_own_tables), _table(_tables.paths()),
      _staging_storage(_memory), _auth(authenticator_for(config)),
      _sender(send_side::engine_parts{_config, _tables, _counters, _to_fabric, _auth.get()},
              slots_for(config, "_sf", config.algo.tables.flow_capacity, sizeof(wire::flow_key), true), _memory),
      _receiver(receive_side::engine_parts{_config, _counters, _to_host, _to_fabric, _auth.get()},
                slots_for(config, "_rf", receive_side::capacity_for(config), sizeof(receive_key), false), _memory),
      _peers(_memory), _peer_keys(_memory)
{
    // Indexed by a source port's low byte: the tag is its low
    // entropy_tag_bits (at most 8, validated()).
    const std::uint32_t tag_mask = (1u << config.entropy_tag_bits) - 1;
    for (std::uint32_t low = 0; low < _worker_of_tag.size(); ++low) {
        _worker_of_tag[low] = static_cast<std::uint16_t>((low & tag_mask) % config.workers);
    }
    if (_auth) {
        _peer_hash = make_flow_hash(config.name + "_ap", config.auth_peers, sizeof(auth_peer_key), config.socket_id);
        _peers.resize(config.auth_peers);
        _peer_keys.resize(config.auth_peers);
    }
    const std::size_t staging_slots = mbuf_fifo::slots_for(config.staging_packets);
    _staging_storage.assign(2 * staging_slots, nullptr);
    _to_fabric = mbuf_fifo(std::span<rte_mbuf*>(_staging_storage.data(), staging_slots), config.staging_packets);
    _to_host = mbuf_fifo(std::span<rte_mbuf*>(_staging_storage.data() + staging_slots, staging_slots),
                         config.staging_packets);
}

engine::~engine()
{
    release_all();
}

void engine::release_all() noexcept
{
    _sender.release_all();
    _receiver.release_all();
    _counters.stop_free_staged += _to_fabric.size() + _to_host.size();
    _to_fabric.free_all();
    _to_host.free_all();
}

void engine::add_path(const tables::pit_row& row)
{
    if (!owns_tables()) {
        throw engine_error("engine '" + _config.name + "': its tables are shared: edit the instance's tables");
    }
    _tables.add_path(row);
    _sender.reset_path_counters(row.pid);
}

void engine::remove_path(tables::path_id pid)
{
    if (!owns_tables()) {
        throw engine_error("engine '" + _config.name + "': its tables are shared: edit the instance's tables");
    }
    _tables.remove_path(pid);
}

void engine::add_destination(const tables::address& destination, std::span<const tables::path_id> pids,
                             std::uint32_t fabric_ipv4)
{
    if (!owns_tables()) {
        throw engine_error("engine '" + _config.name + "': its tables are shared: edit the instance's tables");
    }
    try {
        const std::uint32_t set =
            _tables.reserve_destination(destination, pids, fabric_ipv4, "destination " + destination.to_string());
        _sender.prepare_set(set);
        _tables.publish_destination(destination, set);
    } catch (const tables::pst_error& e) {
        throw engine_error(e.what());
    }
}

void engine::remove_destination(const tables::address& destination)
{
    if (!owns_tables()) {
        throw engine_error("engine '" + _config.name + "': its tables are shared: edit the instance's tables");
    }
    std::uint32_t set = 0;
    try {
        set = _tables.unpublish_destination(destination);
    } catch (const tables::pst_error& e) {
        throw engine_error(e.what());
    }
    _sender.tear_down_set(set);
    _tables.release_set(set);
}

void engine::set_path_valid(tables::path_id pid, bool valid) noexcept
{
    if (!_table.contains(pid)) {
        return;
    }
    _tables.set_valid(pid, valid);
}

void engine::poll(time_ns now) noexcept
{
    _sender.poll(now);
    _receiver.poll(now);
}

} // namespace laps::pipeline
