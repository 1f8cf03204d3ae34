// gpu/api_positional.h on top of gpu/launch_positional.h: validate as fast/sinusoidal_pe.cc does,
// form the frequencies in turns on the host (fast/turns.h), copy, launch, wait, copy back.
#include "gpu/api_positional.h"

#include <cstddef>

#include "fast/turns.h"
#include "fast/validate.h"
#include "gpu/host_call.h"
#include "gpu/launch_positional.h"

namespace lmo::gpu {

void sinusoidal_pe(Storage s, const int64_t* positions, void* pe, int64_t tokens, int64_t d,
                   double base) {
  constexpr const char* fn = "gpu::sinusoidal_pe";
  detail::check_storage(fn, s);
  fast::detail::check_sinusoidal_pe(fn, positions, pe, tokens, d, base);
  if (tokens == 0) return;
  const size_t half = static_cast<size_t>(d / 2);
  const fast::Turns turns = fast::turns_of(fast::inverse_powers(base, d / 2, d));
  detail::Call call(fn);
  const auto* dp = static_cast<const int64_t*>(
      call.upload(positions, static_cast<size_t>(tokens) * sizeof(int64_t)));
  const auto* dhi = static_cast<const double*>(call.upload(turns.hi.data(), half * sizeof(double)));
  const auto* dlo = static_cast<const double*>(call.upload(turns.lo.data(), half * sizeof(double)));
  void* dpe = call.alloc(detail::bytes_of(s, tokens * d));
  call.run(launch_sinusoidal_pe(s, dp, dhi, dlo, dpe, tokens, d, nullptr));
  call.download(pe, dpe, detail::bytes_of(s, tokens * d));
  call.finish();
}

}  // namespace lmo::gpu
