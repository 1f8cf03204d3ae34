// UTF-8 validation (RFC 3629 / Unicode 15 table 3-7): names and metadata in golden files are
// text that other tools decode, so malformed bytes are rejected, not passed through.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

namespace lmo::oracle {

// Offset of the first byte that does not start or continue a well-formed UTF-8 sequence, or
// nullopt when the whole text is well formed. Rejects overlong encodings, UTF-16 surrogates
// (U+D800..U+DFFF), code points above U+10FFFF and truncated sequences.
std::optional<size_t> first_invalid_utf8(std::string_view text);

// A name as a JSON string literal for messages: quoted, control characters escaped, malformed
// UTF-8 replaced (so a message about a bad name is itself valid text).
std::string quote_for_message(std::string_view text);

// A JSON value for messages: compact, malformed UTF-8 in its strings replaced (nlohmann's plain
// dump throws on it), cut to at most 60 characters with "..." when longer.
std::string json_for_message(const nlohmann::json& v);

}  // namespace lmo::oracle
