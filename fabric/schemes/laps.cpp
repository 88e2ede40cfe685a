#include "fabric/schemes/laps.hpp"

namespace laps::fabric::schemes {

namespace {

class laps_engines final : public scheme {
public:
    explicit laps_engines(simulation& sim) : scheme(sim) {}
};

} // namespace

std::unique_ptr<scheme> make_laps(simulation& sim)
{
    return std::make_unique<laps_engines>(sim);
}

} // namespace laps::fabric::schemes
