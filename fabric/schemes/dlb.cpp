#include "fabric/schemes/dlb.hpp"

#include "fabric/schemes/link_quality.hpp"

namespace laps::fabric::schemes {

namespace {

const std::vector<std::uint8_t> local_only;

class dlb final : public quality_scheme {
public:
    explicit dlb(simulation& sim) : quality_scheme(sim, local_only) {}

    std::span<const std::uint64_t> counts() const noexcept override { return {&_flowlets.count(), 1}; }
};

} // namespace

std::unique_ptr<scheme> make_dlb(simulation& sim)
{
    return std::make_unique<dlb>(sim);
}

} // namespace laps::fabric::schemes
