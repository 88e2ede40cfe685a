#include "softmax/exp_table.hpp"

namespace laps::softmax {

const exp_table& exp_table::shared() noexcept
{
    static const exp_table table;
    return table;
}

} // namespace laps::softmax
