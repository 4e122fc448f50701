#ifndef GOODPUT_SIM_SIM_RANDOM_H_
#define GOODPUT_SIM_SIM_RANDOM_H_

#include <cmath>
#include <cstdint>
#include <random>

namespace goodput::sim {

// The simulator's one source of randomness: a seeded 64-bit Mersenne
// Twister with the few distributions the fleet model uses. The same seed
// gives the same fleet on every platform (only integer engine output and
// <cmath> are used, no std distributions). A value; not thread-safe.
class SimRandom {
 public:
  explicit SimRandom(uint64_t seed) : engine_(seed) {}

  // Uniform in [0, 1).
  double Uniform() { return (engine_() >> 11) * 0x1.0p-53; }

  // Uniform integer in [lo, hi].
  int64_t Between(int64_t lo, int64_t hi) {
    return lo + static_cast<int64_t>(Uniform() * (hi - lo + 1));
  }

  bool Chance(double p) { return Uniform() < p; }

  // Exponential with the given mean.
  double Exponential(double mean) { return -mean * std::log1p(-Uniform()); }

  // Log-normal with the given median and sigma of the log.
  double LogNormal(double median, double sigma) {
    const double u1 = 1.0 - Uniform(), u2 = Uniform();
    const double z =
        std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
    return median * std::exp(sigma * z);
  }

 private:
  std::mt19937_64 engine_;
};

}  // namespace goodput::sim

#endif  // GOODPUT_SIM_SIM_RANDOM_H_
