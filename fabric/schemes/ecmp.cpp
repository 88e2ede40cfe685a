#include "fabric/schemes/ecmp.hpp"

namespace laps::fabric::schemes {

namespace {

class ecmp final : public scheme {
public:
    explicit ecmp(simulation& sim) : scheme(sim) {}
};

} // namespace

std::unique_ptr<scheme> make_ecmp(simulation& sim)
{
    return std::make_unique<ecmp>(sim);
}

} // namespace laps::fabric::schemes
