// `--max-memory SIZE` of verify, check and golden: the working set of one block of rows at real
// shapes (row_slice.h, block_for_memory), for an op judged or written a block of rows at a time.
#pragma once

#include <cstdint>
#include <string>

// SIZE as bytes: an integer with an optional K, M, G or T suffix (powers of 1024). InputError
// naming `option` for anything else, or less than 1 MiB.
int64_t parse_memory_size(const std::string& text, const std::string& option);

// Sets the row block to what `text` allows; nothing when it is empty.
void apply_max_memory(const std::string& text);
