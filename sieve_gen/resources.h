// Sizes on the command line and the machine's free memory and disk, checked before a
// long run starts so it fails in seconds rather than hours.
#pragma once

#include <cstdint>
#include <string>

#include "core/status.h"

namespace collatz::sievegen {

// "4GiB", "512MiB", "2G", "1.5G", "1000000": K/M/G/T (with or without "iB"/"B") are powers of 1024.
Status ParseByteSize(const std::string& text, uint64_t* bytes);
std::string FormatBytes(uint64_t bytes);

// MemAvailable from /proc/meminfo.
Status AvailableMemory(uint64_t* bytes);
// Bytes an unprivileged user may still write on the file system holding `dir`, and its device id.
Status FreeDiskSpace(const std::string& dir, uint64_t* bytes, uint64_t* device = nullptr);
// The directory part of a file path ("." for a bare name).
std::string DirectoryOf(const std::string& path);

}  // namespace collatz::sievegen
