#include "tables/shared_tables.hpp"

#include <rte_rcu_qsbr.h>

namespace laps::tables {

namespace {

path_table_options with_capacity(path_table_options o, std::uint32_t pst_capacity)
{
    o.set_capacity = pst_capacity;
    return o;
}

std::uint32_t fabric_address(const address& destination, std::uint32_t fabric_ipv4)
{
    if (fabric_ipv4 != 0) {
        return fabric_ipv4;
    }
    if (!destination.is_ipv4()) {
        throw pst_error("destination " + destination.to_string() + " is IPv6 and needs a fabric IPv4 address");
    }
    return destination.ipv4_host_order();
}

table_spec with_fabric_addresses(table_spec spec)
{
    for (auto& row : spec.pst) {
        row.fabric_ipv4 = fabric_address(row.destination, row.fabric_ipv4);
    }
    return spec;
}

} // namespace

shared_tables::shared_tables(const table_spec& spec, const shared_tables_options& options)
    : _paths(with_fabric_addresses(spec), with_capacity(options.paths, std::max<std::uint32_t>(options.pst_capacity, 8))),
      _pst(options.shared_pst != nullptr
               ? pst(*options.shared_pst, options.pst_owner, std::max<std::uint32_t>(options.pst_capacity, 8))
               : pst(options.name + "_pst", std::max<std::uint32_t>(options.pst_capacity, 8), options.socket_id))
{
    for (std::uint32_t i = 0; i < spec.pst.size(); ++i) {
        _pst.add(spec.pst[i].destination, i);
    }
}

void shared_tables::attach_rcu(rte_rcu_qsbr* qsbr)
{
    _pst.attach_rcu(qsbr);
    _rcu = qsbr;
}

void shared_tables::synchronize() noexcept
{
    if (_rcu != nullptr) {
        rte_rcu_qsbr_synchronize(_rcu, RTE_QSBR_THRID_INVALID);
    }
}

std::uint32_t shared_tables::reserve_destination(const address& destination, std::span<const path_id> pids,
                                                 std::uint32_t fabric_ipv4, const std::string& name)
{
    if (_pst.find(destination)) {
        throw pst_error("destination " + destination.to_string() + " is already in the PST; delete it first");
    }
    if (_pst.size() >= _pst.capacity()) {
        throw pst_error("the PST is full (tables.pst_capacity " + std::to_string(_pst.capacity()) + ")");
    }
    return _paths.add_set(pids, name, fabric_address(destination, fabric_ipv4));
}

void shared_tables::publish_destination(const address& destination, std::uint32_t set)
{
    try {
        _pst.add(destination, set);
    } catch (...) {
        _paths.unlink_set(set);
        release_set(set); // a late ACK of its pids may be reading it
        throw;
    }
}

std::uint32_t shared_tables::unpublish_destination(const address& destination)
{
    const auto set = _pst.find(destination);
    if (!set) {
        throw pst_error("destination " + destination.to_string() + " is not in the PST");
    }
    _pst.remove(destination);
    _paths.unlink_set(*set);
    return *set;
}

void shared_tables::release_set(std::uint32_t set) noexcept
{
    synchronize();
    _paths.release_set(set);
}

} // namespace laps::tables
