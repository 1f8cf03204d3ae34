// The constants of the fast kernels' f32 exponential (fast/math-inl.h ExpTimes2PowF, and its
// lockstep form in fast/exp_lockstep-inl.h, which must give the same bits): x = k·ln 2 + r with
// k = round(x·log2 e) by the 1.5·2^23 trick, ln 2 split in two (kLn2Hi has 9 significant bits, so
// k·kLn2Hi is exact for |k| < 2^8), and e^r ≈ 1 + r + r²·q(r), q the degree-4 minimax fit whose
// coefficients are kQ4 … kQ0 (error analysis in fast/math-inl.h).
#pragma once

namespace lmo::fast::exp_f32 {

inline constexpr float kMagic = 12582912.0f;  // 1.5·2^23
inline constexpr float kLog2e = 1.44269502162933349609375f;
inline constexpr float kLn2Hi = 0.693359375f;
inline constexpr float kLn2Lo = -2.12194440e-4f;
inline constexpr float kQ4 = 0.0013811651151627302f;
inline constexpr float kQ3 = 0.008370140567421913f;
inline constexpr float kQ2 = 0.04166853055357933f;
inline constexpr float kQ1 = 0.16666509211063385f;
inline constexpr float kQ0 = 0.4999999403953552f;

}  // namespace lmo::fast::exp_f32
